/*
 * exec_run.h: run a config on this rank (what the rank program calls).
 */
#ifndef SMD_EXEC_RUN_H
#define SMD_EXEC_RUN_H

#include "exec/exec.h"
#include "exec/exec_comm.h"

/* Train cfg on this rank, one of world->size ranks (collective over the
 * world: every rank calls it with the same cfg). Fills res on every rank
 * (the per-step figures and every rank's stats are reduced to all of them);
 * rank 0 writes it. On failure returns the error: the caller records it and
 * ends the job (exec_comm_abort), since the other ranks may be waiting on
 * this one. ST_EINVAL: a config that does not fit the world (checked before
 * any work, the same on every rank). */
int exec_run(const exec_config *cfg, exec_comm *world, exec_result *res, st_err *err);

/* One line of progress, what rank 0 prints after each step:
 * "step 3/50 loss 5.4321 tokens/s 1234.5 eta 12.3 s". */
void exec_progress_line(char *buf, size_t n, int64_t step, int64_t steps, double loss,
                        double tokens_per_s, double eta_s);

#endif
