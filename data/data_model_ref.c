/*
 * data_model_ref.c: --model FILE|NAME to a model shape (see data_model_ref.h).
 * A name looks like "org/model" or "model"; a file that exists under that
 * name wins, so a config.json in the working directory is still read.
 */
#include "data/data_model_ref.h"

#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

int data_model_ref_load(const char *ref, plan_model *m, st_err *err)
{
    struct stat st;
    const char *slash = strchr(ref, '/');
    size_t len = strlen(ref);
    int name_like = ref[0] != '/' && ref[0] != '.' && (!slash || !strchr(slash + 1, '/')) &&
                    !(len > 5 && strcasecmp(ref + len - 5, ".json") == 0);
    if (name_like && stat(ref, &st) != 0 && errno == ENOENT)
        return data_hf_named_load(ref, m, err);
    return data_hfconfig_load(ref, m, err);
}
