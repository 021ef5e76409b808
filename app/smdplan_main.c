/*
 * smdplan_main.c: the smdplan program. Parses the command word and hands the
 * rest to the command's function in app/; turns its status into an exit code.
 */
#include "app/cli.h"

int main(int argc, char **argv)
{
    return cli_main(argc, argv);
}
