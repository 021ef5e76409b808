/*
 * fuzz_args.c: libFuzzer target for smdplan's command-line parsing.
 *
 * The input is split at newlines into arguments after the program name and
 * handed to cli_main, which must return an exit code (never crash, hang or
 * exit) whatever the arguments. The comparison mode is capped with a trailing
 * --max-instances 2 so one input stays a fraction of a second. Run it with
 * -close_fd_mask=3 (as the ctest does) to silence the program's own output. Inputs naming --write are skipped: calibrate would write the
 * file they name. Nothing is recorded ($SMDPLAN_NO_RECORD): the target
 * exercises parsing, not the database, and must not grow a file per input.
 */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli.h"

#define FUZZ_NAME "fuzz_args"
#include "fuzz_util.h"

#define MAX_ARGS 24

static void check_text(char *buf, size_t size)
{
    (void)size;
    char *argv[MAX_ARGS + 4];
    int argc = 0;
    argv[argc++] = (char *)"smdplan";
    char *save = NULL;
    for (char *tok = strtok_r(buf, "\n", &save); tok && argc < MAX_ARGS; tok = strtok_r(NULL, "\n", &save))
        argv[argc++] = tok;
    argv[argc++] = (char *)"--max-instances";
    argv[argc++] = (char *)"2";
    argv[argc] = NULL;
    int rc = cli_main(argc, argv);
    if (rc < 0 || rc > 3)
        abort(); /* exit codes are 0..3 */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setenv("SMDPLAN_NO_RECORD", "1", 1);
    if (size > 4096 || memmem(data, size, "write", 5))
        return 0; /* calibrate --write would let the fuzzer write files */
    return fuzz_run(data, size, FUZZ_CSTR, check_text);
}
