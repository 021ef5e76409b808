/*
 * data_file.c: locating the data directory and reading whole files.
 */
#include "data/data.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "smd_config.h"

/* Data files are small (the catalog is tens of KiB); refuse anything absurd
 * rather than trying to hold it. */
#define DATA_FILE_MAX_BYTES (64L * 1024 * 1024)

static int is_dir(const char *p)
{
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *data_dir(void)
{
    const char *env = getenv("SMDPLAN_DATA");
    if (env && *env)
        return env;
    if (is_dir(SMD_DATA_DIR_BUILD))
        return SMD_DATA_DIR_BUILD;
    return SMD_DATA_DIR_INSTALL;
}

int data_read_file(const char *path, char **out, size_t *len, st_err *err)
{
    *out = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return ST_RAISE(err, errno == ENOENT ? ST_ENOENT : ST_EIO, "%s: %s", path,
                        strerror(errno));
    int rc = ST_OK;
    char *buf = NULL;
    if (fseek(f, 0, SEEK_END) != 0) {
        rc = ST_RAISE(err, ST_EIO, "%s: cannot seek: %s", path, strerror(errno));
        goto fail;
    }
    long n = ftell(f);
    if (n < 0 || n > DATA_FILE_MAX_BYTES) {
        rc = ST_RAISE(err, ST_EIO, "%s: not a regular file under %ld bytes", path,
                      DATA_FILE_MAX_BYTES);
        goto fail;
    }
    rewind(f);
    buf = malloc((size_t)n + 1);
    if (!buf) {
        rc = ST_RAISE(err, ST_ENOMEM, "%s: cannot allocate %ld bytes", path, n);
        goto fail;
    }
    if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        rc = ST_RAISE(err, ST_EIO, "%s: read failed", path);
        goto fail;
    }
    buf[n] = '\0';
    fclose(f);
    *out = buf;
    *len = (size_t)n;
    return ST_OK;
fail:
    free(buf);
    fclose(f);
    return rc;
}
