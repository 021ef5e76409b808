/*
 * exec_run.c: one rank's run from start to finish: the rank's place in the
 * layout, its groups, device, model, optimizer and data; the step loop with
 * progress, checkpoints and the test-mode weight dump; and the results of
 * every rank reduced into RESULT.json's figures.
 *
 * Placement: the layout's placement string orders D, P, T from outermost to
 * innermost rank stride ("DPT": TP ranks adjacent); the strides are the
 * planner's (plan_layout_stride), so the executor's groups are the ranks the
 * planner's communication model assumed. Groups come from exec_comm_split
 * (MPI_Comm_split): TP (same d, p), PP (same d, t), DP (same p, t), and with
 * a tied embedding on pp > 1 the embedding group (stages 0 and pp - 1 of
 * the same d, t; Megatron's embedding group).
 *
 * Figures: a step's time is the slowest rank's; its phases the mean over
 * ranks; a rank's phases its totals over the measured steps; hardware
 * FLOPs what the devices counted in this process's steps (recompute
 * included; the count is exact and the same every step) per step, model
 * FLOPs the planner's training FLOPs per token (plan_model_train_flops_per_
 * token: 3x forward, no recompute) times the tokens of a step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "exec/exec_rt.h"
#include "exec/exec_run.h"

void exec_progress_line(char *buf, size_t n, int64_t step, int64_t steps, double loss,
                        double tokens_per_s, double eta_s)
{
    snprintf(buf, n, "step %lld/%lld loss %.4f tokens/s %.1f eta %.1f s", (long long)step,
             (long long)steps, loss, tokens_per_s, eta_s);
}

static int setup_groups(exec_rt *rt, st_err *err)
{
    const plan_layout *l = &rt->cfg->layout;
    int r = rt->world->rank, tp = l->tp, pp = l->pp, dp = l->dp;
    int sT = plan_layout_stride(l, 'T'), sP = plan_layout_stride(l, 'P'),
        sD = plan_layout_stride(l, 'D');
    rt->rank = r;
    rt->tp_rank = r / sT % tp;
    rt->pp_rank = r / sP % pp;
    rt->dp_rank = r / sD % dp;
    int t = rt->tp_rank, p = rt->pp_rank, d = rt->dp_rank, rc;
    if ((rc = exec_comm_split(rt->world, d * pp + p, t, "tp", &rt->tp, err)) ||
        (rc = exec_comm_split(rt->world, d * tp + t, p, "pp", &rt->pp, err)) ||
        (rc = exec_comm_split(rt->world, p * tp + t, d, "dp", &rt->dp, err)))
        return rc;
    if (rt->cfg->model.tied_embedding && pp > 1) {
        int member = p == 0 || p == pp - 1;
        int color = member ? d * tp + t : tp * dp + r; /* others: groups of one */
        if ((rc = exec_comm_split(rt->world, color, p, "embedding", &rt->emb, err)))
            return rc;
    }
    if (rt->tp->size != tp || rt->pp->size != pp || rt->dp->size != dp)
        return ST_RAISE(err, ST_EINTERNAL, "groups of %d/%d/%d ranks for tp %d pp %d dp %d",
                        rt->tp->size, rt->pp->size, rt->dp->size, tp, pp, dp);
    return ST_OK;
}

void exec_rt_free(exec_rt *rt)
{
    exec_pipe_fini(rt);
    exec_optim_fini(&rt->opt);
    exec_model_free(&rt->x);
    exec_data_close(&rt->data);
    exec_dev_close(rt->dev);
    exec_comm_free(rt->emb);
    exec_comm_free(rt->dp);
    exec_comm_free(rt->pp);
    exec_comm_free(rt->tp);
    free(rt->stats);
}

int exec_rt_init(exec_rt *rt, const exec_config *cfg, exec_comm *world, st_err *err)
{
    memset(rt, 0, sizeof *rt);
    rt->cfg = cfg;
    rt->world = world;
    int rc;
    if ((rc = setup_groups(rt, err)))
        return rc;
    if ((rc = exec_dev_open(cfg->device, cfg->threads_per_rank, &rt->dev, err)) ||
        (rc = exec_comm_check_device(world, rt->dev->ops->host_memory, rt->dev->ops->name, err)))
        return rc;
    void *stream = rt->dev->ops->stream(rt->dev);
    exec_comm_set_stream(rt->tp, stream);
    exec_comm_set_stream(rt->pp, stream);
    exec_comm_set_stream(rt->dp, stream);
    if (rt->emb)
        exec_comm_set_stream(rt->emb, stream);
    exec_model *x = &rt->x;
    x->m = &cfg->model;
    x->l = &cfg->layout;
    x->dev = rt->dev;
    x->tp = rt->tp;
    x->dp = rt->dp;
    x->emb = rt->emb;
    x->tp_rank = rt->tp_rank;
    x->dp_rank = rt->dp_rank;
    x->timers = &rt->timers;
    if ((rc = exec_model_build(x, rt->pp_rank, cfg->train.seed, err)) ||
        (rc = exec_optim_init(&rt->opt, x, err)) || (rc = exec_data_open(&rt->data, cfg, err)) ||
        (rc = exec_pipe_init(rt, err)))
        return rc;
    rt->stats = calloc((size_t)cfg->train.steps, sizeof *rt->stats);
    if (!rt->stats)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate the step records");
    return ST_OK;
}

/* Every rank's figures into res (collective). */
static int gather_results(exec_rt *rt, int64_t first_step, exec_result *res, st_err *err)
{
    const exec_config *cfg = rt->cfg;
    int R = rt->world->size, rc;
    int64_t nsteps = rt->step - first_step;
    /* per step: time (max), phases (sum) */
    double *tmax = calloc((size_t)(nsteps > 0 ? nsteps : 1), sizeof *tmax);
    double *phs = calloc((size_t)(nsteps > 0 ? nsteps : 1) * 5, sizeof *phs);
    /* per rank: 4 coordinates, peak, 6 class peaks, rss, 5 phases */
    enum { PER_RANK = 17 };
    double *mine = calloc(PER_RANK, sizeof *mine), *all = calloc((size_t)R * PER_RANK, sizeof *all);
    if (!tmax || !phs || !mine || !all) {
        free(tmax), free(phs), free(mine), free(all);
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate the results");
    }
    exec_phases tot = {0};
    for (int64_t i = 0; i < nsteps; i++) {
        const exec_step_stat *s = &rt->stats[first_step + i];
        tmax[i] = s->wall_s;
        phs[5 * i + 0] = s->ph.compute_s;
        phs[5 * i + 1] = s->ph.tp_comm_s;
        phs[5 * i + 2] = s->ph.pp_wait_s;
        phs[5 * i + 3] = s->ph.dp_comm_s;
        phs[5 * i + 4] = s->ph.optimizer_s;
        if (first_step + i >= cfg->train.warmup_steps_unmeasured) {
            tot.compute_s += s->ph.compute_s;
            tot.tp_comm_s += s->ph.tp_comm_s;
            tot.pp_wait_s += s->ph.pp_wait_s;
            tot.dp_comm_s += s->ph.dp_comm_s;
            tot.optimizer_s += s->ph.optimizer_s;
        }
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    const exec_mem *mem = &rt->dev->mem;
    mine[0] = rt->rank;
    mine[1] = rt->tp_rank;
    mine[2] = rt->pp_rank;
    mine[3] = rt->dp_rank;
    mine[4] = mem->peak_total_bytes;
    for (int c = 0; c < EXEC_MEM__COUNT; c++)
        mine[5 + c] = mem->peak_class_bytes[c];
    mine[11] = (double)ru.ru_maxrss * 1024.0; /* Linux reports kilobytes */
    mine[12] = tot.compute_s;
    mine[13] = tot.tp_comm_s;
    mine[14] = tot.pp_wait_s;
    mine[15] = tot.dp_comm_s;
    mine[16] = tot.optimizer_s;
    double flops = rt->dev->flops;
    if ((rc = exec_comm_allreduce(rt->world, tmax, tmax, (size_t)nsteps, EXEC_DT_F64, EXEC_RED_MAX,
                                  NULL, err)) ||
        (rc = exec_comm_allreduce(rt->world, phs, phs, (size_t)nsteps * 5, EXEC_DT_F64,
                                  EXEC_RED_SUM, NULL, err)) ||
        (rc = exec_comm_allreduce(rt->world, &flops, &flops, 1, EXEC_DT_F64, EXEC_RED_SUM, NULL,
                                  err)) ||
        (rc = exec_comm_allgather(rt->world, mine, all, PER_RANK, EXEC_DT_F64, NULL, err)))
        goto done;
    res->ranks = R;
    snprintf(res->device, sizeof res->device, "%s", cfg->device);
    snprintf(res->transport, sizeof res->transport, "%s", rt->world->ops->name);
    res->threads_per_rank = cfg->threads_per_rank;
    if (gethostname(res->host, sizeof res->host) != 0)
        snprintf(res->host, sizeof res->host, "unknown");
    res->host[sizeof res->host - 1] = '\0';
    const plan_model *m = &cfg->model;
    res->tokens_per_step = (double)cfg->layout.global_batch * (double)m->seq;
    res->model_flops_per_step = plan_model_train_flops_per_token(m) * res->tokens_per_step;
    res->hardware_flops_per_step = nsteps > 0 ? flops / (double)nsteps : 0;
    res->steps = calloc((size_t)(nsteps > 0 ? nsteps : 1), sizeof *res->steps);
    res->rank_stats = calloc((size_t)R, sizeof *res->rank_stats);
    if (!res->steps || !res->rank_stats) {
        rc = ST_RAISE(err, ST_ENOMEM, "cannot allocate the results");
        goto done;
    }
    res->nsteps = (int)nsteps;
    for (int64_t i = 0; i < nsteps; i++) {
        const exec_step_stat *s = &rt->stats[first_step + i];
        exec_step_result *o = &res->steps[i];
        o->step = first_step + i + 1;
        o->time_s = tmax[i];
        o->loss = s->loss;
        o->lr = s->lr;
        o->grad_norm = s->grad_norm;
        o->measured = first_step + i >= cfg->train.warmup_steps_unmeasured;
        o->phases.compute_s = phs[5 * i] / R;
        o->phases.tp_comm_s = phs[5 * i + 1] / R;
        o->phases.pp_wait_s = phs[5 * i + 2] / R;
        o->phases.dp_comm_s = phs[5 * i + 3] / R;
        o->phases.optimizer_s = phs[5 * i + 4] / R;
    }
    res->nranks = R;
    for (int k = 0; k < R; k++) {
        const double *a = all + (size_t)k * PER_RANK;
        exec_rank_stat *s = &res->rank_stats[(int)a[0]];
        s->rank = (int)a[0];
        s->tp_rank = (int)a[1];
        s->pp_rank = (int)a[2];
        s->dp_rank = (int)a[3];
        s->peak_memory_bytes = a[4];
        for (int c = 0; c < EXEC_MEM__COUNT; c++)
            s->peak_class_bytes[c] = a[5 + c];
        s->max_rss_bytes = a[11];
        s->phases = (exec_phases){a[12], a[13], a[14], a[15], a[16]};
    }
done:
    free(tmax), free(phs), free(mine), free(all);
    return rc;
}

/* debug.fail_*: fail now, or stop answering for longer than any wait. */
static int inject_failure(const exec_config *cfg, const exec_rt *rt, st_err *err)
{
    if (cfg->fail_hang) {
        double until = exec_now_s() + 10 * cfg->timeout_s + 30;
        while (exec_now_s() < until) {
            struct timespec ts = {0, 100000000};
            nanosleep(&ts, NULL);
        }
    }
    return ST_RAISE(err, ST_EIO, "failure injected at step %lld (debug.fail_rank %d)",
                    (long long)rt->step + 1, cfg->fail_rank);
}

int exec_run(const exec_config *cfg, exec_comm *world, exec_result *res, st_err *err)
{
    exec_result_init(res);
    int rc = exec_config_check(cfg, world->size, err);
    if (rc != ST_OK)
        return rc;
    exec_rt rt;
    if ((rc = exec_rt_init(&rt, cfg, world, err)))
        goto done;
    if (*cfg->resume_dir && (rc = exec_ckpt_load(&rt, cfg->resume_dir, err)))
        goto done;
    int64_t first = rt.step;
    double run_s = 0;
    int64_t timed = 0;
    int64_t end = cfg->train.steps;
    if (cfg->train.stop_after > 0 && cfg->train.stop_after < end)
        end = cfg->train.stop_after;
    for (; rt.step < end;) {
        if (cfg->fail_rank == rt.rank && cfg->fail_step == rt.step + 1 &&
            (rc = inject_failure(cfg, &rt, err)))
            goto done;
        if ((rc = exec_pipe_step(&rt, err)))
            goto done;
        const exec_step_stat *s = &rt.stats[rt.step - 1];
        run_s += s->wall_s;
        timed++;
        if (cfg->progress && rt.rank == 0) {
            double tps = (double)cfg->layout.global_batch * (double)cfg->model.seq / s->wall_s;
            double eta = run_s / (double)timed * (double)(cfg->train.steps - rt.step);
            char line[160];
            exec_progress_line(line, sizeof line, rt.step, cfg->train.steps, s->loss, tps, eta);
            printf("%s\n", line);
            fflush(stdout);
        }
        int save = *cfg->save_dir &&
                   ((cfg->save_every > 0 && rt.step % cfg->save_every == 0) ||
                    rt.step == end);
        if (save && (rc = exec_ckpt_save(&rt, cfg->save_dir, err)))
            goto done;
    }
    if (*cfg->dump_dir && (rc = exec_dump_weights(&rt, cfg->dump_dir, err)))
        goto done;
    rc = gather_results(&rt, first, res, err);
done:
    exec_rt_free(&rt);
    return rc;
}
