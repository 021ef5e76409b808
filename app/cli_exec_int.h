/*
 * cli_exec_int.h: what smdplan exec's launch (cli_exec.c) and its account
 * of a run (cli_exec_run.c: the outcome recorded and printed) share. The
 * job, its prediction, its limits, its run directory and the judging of
 * what it came to are exec/'s (exec/exec_host.h).
 */
#ifndef SMD_CLI_EXEC_INT_H
#define SMD_CLI_EXEC_INT_H

#include <stdint.h>

#include "data/db.h"
#include "exec/exec.h"
#include "exec/exec_host.h"

/* A run as it is recorded and printed. */
typedef struct rec_ctx {
    const exec_job *j;
    const exec_pred *h;
    const exec_result *res;
    int have_result;
    const exec_outcome *oc;
    const char *cmd_text, *run_dir, *config_text, *host;
    int exit_status;
    int64_t plan_record;
    int threads;
    const char *device, *transport; /* as CONFIG.json says */
    int64_t run_id;              /* set when recorded */
    double timeout_s;            /* the run's time limit, 0: none (an import) */
} rec_ctx;

/* cli_record's callback: the run, its steps and ranks, and its prediction;
 * sets x->run_id. */
int cli_exec__record_run(db *d, const db_provenance *p, void *vctx, st_err *err);

/* What a run came to, as JSON (--json) and for a person. */
void cli_exec__print_json(const rec_ctx *x, double wall_s);
void cli_exec__print_text(const rec_ctx *x, int cuda);

#endif
