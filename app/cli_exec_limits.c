/*
 * cli_exec_limits.c: what a run of smdplan exec may take of the host it
 * launches on, set before anything launches.
 *
 * Time. Without --timeout a run is stopped after DEFAULT_TIMEOUT_FACTOR
 * times its predicted time, and never before DEFAULT_TIMEOUT_FLOOR_S: a
 * launcher that hangs (a stopped mpirun, a rank waiting on a host that is
 * gone) is then ended and recorded rather than waited on forever. The
 * predicted time is the steps times the planner's step on this host's
 * catalog entry, or, without one, the model's FLOPs at FLOOR_FLOPS_PER_RANK
 * per rank. --timeout S sets another limit; --timeout 0, none.
 */
#include <math.h>
#include <stdio.h>

#include "app/cli_exec_int.h"
#include "app/cli_int.h"

/* The default limit: ten times the prediction (the planner's step on this
 * host is within 10 % of the measured one in README's table; the factor
 * leaves room for a host that other work slows down and for checkpoint
 * writes), at least ten minutes (mpirun's start-up, the first step's
 * allocations, a prediction that is only a floor). */
#define DEFAULT_TIMEOUT_FACTOR 10.0
#define DEFAULT_TIMEOUT_FLOOR_S 600.0
/* A rate every core of the last decade beats at sgemm by ten times or more
 * (smdplan bench measures tens of GFLOP/s per core): the predicted time of
 * a run without a catalog entry, a bound from above. */
#define FLOOR_FLOPS_PER_RANK 1e9

double cli_exec__default_timeout(const exec_job *j, const host_pred *h, int64_t steps,
                                 char *why, size_t n)
{
    double step_s;
    const char *from;
    if (h->have_est && h->est.time.step_s > 0) {
        step_s = h->est.time.step_s;
        from = "the planner's step on this host";
    } else {
        double tokens = (double)j->layout.global_batch * (double)j->model.seq;
        step_s = plan_model_train_flops_per_token(&j->model) * tokens /
                 ((double)j->ranks * FLOOR_FLOPS_PER_RANK);
        from = "the model's FLOPs at 1 GFLOP/s per rank";
    }
    double run_s = step_s * (double)steps;
    double limit = DEFAULT_TIMEOUT_FACTOR * run_s;
    if (!(limit >= DEFAULT_TIMEOUT_FLOOR_S))
        limit = DEFAULT_TIMEOUT_FLOOR_S;
    snprintf(why, n, "the default: %.0f x the predicted %.3g s (%s), at least %.0f s; --timeout "
             "S to change, 0 for none", DEFAULT_TIMEOUT_FACTOR, run_s, from,
             DEFAULT_TIMEOUT_FLOOR_S);
    return ceil(limit);
}
