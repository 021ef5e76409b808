/*
 * fuzz_hostfile.c: libFuzzer target for the hostfile reader of smdplan exec
 * (launch_hostfile_parse, app/launch_hostfile.c), the file given to mpirun
 * --hostfile.
 *
 * Each input is a hostfile's bytes, not NUL-terminated: the parser must
 * respect the length (an exact-size copy, so ASan catches a read past it).
 * Besides what ASan/UBSan catch, it checks the contract of launch_job.h:
 *   - failure: ST_EINVAL in both the return and the context, one line of
 *     message naming the input, and a zeroed result;
 *   - success: counts that add up: no more hosts with slots than hosts, no
 *     more hosts than lines, and a largest slots=N of 0 ..
 *     LAUNCH_HOSTFILE_SLOTS_MAX, 0 when no host gives one;
 *   - the same text parses the same way twice (no hidden state).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch/launch_job.h"

#define FUZZ_NAME "fuzz_hostfile"
#include "fuzz_util.h"

static void check_text(char *text, size_t size)
{
    launch_hostfile hf, again;
    st_err err = {0}, err2 = {0};
    int rc = launch_hostfile_parse(text, size, "fuzz.hosts", &hf, &err);
    CHECK(launch_hostfile_parse(text, size, "fuzz.hosts", &again, &err2) == rc);
    CHECK(memcmp(&hf, &again, sizeof hf) == 0);
    if (rc == ST_OK) {
        size_t lines = 1;
        for (size_t i = 0; i < size; i++)
            lines += text[i] == '\n';
        CHECK(err.code == ST_OK);
        CHECK(hf.hosts >= 0 && (size_t)hf.hosts <= lines);
        CHECK(hf.slots_given >= 0 && hf.slots_given <= hf.hosts);
        CHECK(hf.most_slots >= 0 && hf.most_slots <= LAUNCH_HOSTFILE_SLOTS_MAX);
        CHECK(hf.slots_given > 0 || hf.most_slots == 0);
    } else {
        CHECK(rc == ST_EINVAL);
        fuzz_check_err_msg(rc, &err, 1);
        CHECK(strstr(err.msg, "fuzz.hosts") != NULL);
        CHECK(hf.hosts == 0 && hf.slots_given == 0 && hf.most_slots == 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_run(data, size, FUZZ_EXACT, check_text);
}
