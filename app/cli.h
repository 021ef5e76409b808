/*
 * cli.h: the smdplan command line. cli_main() dispatches on the first word
 * (plan is the default command) and returns the process exit code:
 * 0 ok, 2 bad input, 3 no feasible layout / fixed layout does not fit, 1 other.
 */
#ifndef SMD_CLI_H
#define SMD_CLI_H

int cli_main(int argc, char **argv);

#endif
