/*
 * cli_main.c: command dispatch (temporary minimal version while the commands land).
 */
#include "app/cli.h"

#include <stdio.h>
#include <string.h>

#include "exec/exec.h"
#include "smd_config.h"

int cli_main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--version") == 0) {
        printf("smdplan %s (%s) %s\n", SMD_VERSION, SMD_GIT_REV, exec_features_str());
        return 0;
    }
    fprintf(stderr, "smdplan: no command yet\n");
    return 2;
}
