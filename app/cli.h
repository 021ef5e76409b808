/*
 * cli.h: the smdplan command line. cli_main() dispatches on the first word
 * (plan is the default command) and returns the process exit code:
 * 0 ok, 2 bad input, 3 no feasible layout / fixed layout does not fit, 1 other.
 *
 * Each command is one function taking the arguments after its word
 * (argv[0] is the command word) and returning an exit code.
 */
#ifndef SMD_CLI_H
#define SMD_CLI_H

int cli_main(int argc, char **argv);

int cli_plan_cmd(int argc, char **argv);     /* smdplan [plan] --params ... (cli_plan.c) */
int cli_simulate_cmd(int argc, char **argv); /* smdplan simulate ... (cli_plan.c) */
int cli_plan_run(int argc, char **argv, int simulate); /* shared by plan and simulate */
int cli_catalog_cmd(int argc, char **argv);  /* smdplan catalog (cli_catalog.c) */
int cli_frameworks_cmd(int argc, char **argv); /* smdplan frameworks [KEY] (cli_frameworks.c) */
int cli_models_cmd(int argc, char **argv);   /* smdplan models (cli_models.c) */
int cli_prices_cmd(int argc, char **argv);   /* smdplan prices [import FILE] (cli_prices.c) */
int cli_diff_cmd(int argc, char **argv);     /* smdplan diff A B (cli_diff.c) */
int cli_validate_cmd(int argc, char **argv); /* smdplan validate FILE.csv (cli_validate.c) */
int cli_report_cmd(int argc, char **argv);   /* smdplan report (cli_report.c) */
int cli_calibrate_cmd(int argc, char **argv);/* smdplan calibrate FILE.csv (cli_calibrate.c) */
int cli_history_cmd(int argc, char **argv);  /* smdplan history (cli_history.c) */
int cli_show_cmd(int argc, char **argv);     /* smdplan show ID (cli_history.c) */
int cli_compare_cmd(int argc, char **argv);  /* smdplan compare (cli_history.c) */

#endif
