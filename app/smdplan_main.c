/*
 * smdplan_main.c: the smdplan program. Parses the command word and hands the
 * rest to the command's function in app/; turns its status into an exit code.
 * Its stdout and stderr print control characters escaped (cli_term.c).
 */
#include "app/cli.h"
#include "app/cli_int.h"

int main(int argc, char **argv)
{
    /* names from data files reach the terminal with control characters escaped */
    cli_term_install();
    return cli_main(argc, argv);
}
