/*
 * cli.c: command dispatch for smdplan.
 *
 *   smdplan [plan] --params 30B --instances 16xp4d ...   recommend layouts
 *   smdplan simulate --params 30B --instances 16xp4d ... play the step out event by event
 *   smdplan catalog                                      list instance types
 *   smdplan frameworks [KEY]                             list the stacks by release
 *   smdplan models                                       open models known by name
 *   smdplan prices import FILE                           SageMaker prices from AWS's Price List
 *   smdplan diff A B                                     two plans side by side, term by term
 *   smdplan validate FILE.csv                            predict published runs
 *   smdplan calibrate FILE.csv                           fit GPU efficiency parameters
 *   smdplan history | show ID | compare                  what earlier commands recorded
 *   smdplan exec --plan ID | [layout flags]              run a plan for real on this host
 *   smdplan bench [cpu | comm] --write-catalog FILE      measure this host for the catalog
 *   smdplan --version | --help
 */
#include "app/cli.h"

#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "app/cli_int.h"
#include "data/data.h"
#include "exec/exec.h"
#include "common/version.h"
#include "smd_config.h"

int cli_fail(const st_err *err)
{
    fprintf(stderr, "smdplan: %s\n", err->msg[0] ? err->msg : st_str(err->code));
    return st_exit_code(err->code);
}

static void print_version(void)
{
    printf("smdplan %s (git %s, build %s)\n", SMD_VERSION, smd_git_rev(), SMD_BUILD_ID);
    exec_features f = exec_features_built();
    printf("build features: CUDA %s, NCCL %s, MPI %s\n", f.cuda ? "yes" : "no",
           f.nccl ? "yes" : "no", f.mpi ? "yes" : "no");
    /* what smdplan exec --device cuda would find here (scripts test it);
     * where CUDA's libraries or the module asking them are missing, none,
     * and why on stderr */
    if (f.cuda) {
        int gpus = 0;
        double bytes = 0;
        st_err err = {0};
        if (exec_device_query("cuda", &gpus, &bytes, &err) != ST_OK)
            fprintf(stderr, "smdplan: %s\n", err.msg);
        printf("GPUs visible to CUDA: %d\n", gpus);
    }
}

int cli_main(int argc, char **argv)
{
    /* GSL's default error handler aborts; the libraries check return codes. */
    gsl_set_error_handler_off();
    /* --wide, an option of every command: tables show every column */
    rpt_term_set_wide(0);
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--wide") == 0) {
            rpt_term_set_wide(1);
            for (int j = i; j < argc; j++)
                argv[j] = argv[j + 1];
            argc--;
            i--;
        }
    cli_record_args(argc, argv);
    if (argc > 1 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0)) {
        print_version();
        return 0;
    }
    /* the stack profiles (data/frameworks.json) and the model traits
     * (data/model_families.json) every command reads */
    st_err err = {0};
    if (data_frameworks_load(NULL, &err) != ST_OK || data_families_load(NULL, &err) != ST_OK)
        return cli_fail(&err);
    if (argc > 1 && strcmp(argv[1], "frameworks") == 0)
        return cli_frameworks_cmd(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "catalog") == 0)
        return cli_catalog_cmd(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "models") == 0)
        return cli_models_cmd(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "prices") == 0)
        return cli_prices_cmd(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "diff") == 0)
        return cli_diff_cmd(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "validate") == 0)
        return cli_validate_cmd(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "simulate") == 0)
        return cli_simulate_cmd(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "report") == 0)
        return cli_report_cmd(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "calibrate") == 0)
        return cli_calibrate_cmd(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "plan") == 0)
        return cli_plan_cmd(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "history") == 0)
        return cli_history_cmd(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "show") == 0)
        return cli_show_cmd(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "compare") == 0)
        return cli_compare_cmd(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "exec") == 0)
        return cli_exec_cmd(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "bench") == 0)
        return cli_bench_cmd(argc - 1, argv + 1);
    if (argc > 1 && argv[1][0] != '-') {
        fprintf(stderr,
                "smdplan: unknown command '%s'; allowed: plan (default), simulate, catalog, frameworks, "
                "models, prices, diff, validate, calibrate, "
                "history, show, compare, report, exec, bench "
                "(see smdplan --help)\n",
                argv[1]);
        return 2;
    }
    return cli_plan_cmd(argc, argv);
}
