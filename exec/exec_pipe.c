/*
 * exec_pipe.c: the pipeline runner. Each step, a stage walks the op list
 * that the simulator's generator gives it (sim_sched_ops: the same function
 * the simulator plays, so the executed step is the simulated step) and does
 * exactly that: RECV_FWD, F, SEND_FWD, RECV_BWD, B (or zero bubble's Bi and
 * W), SEND_BWD, in order. Receives are posted and waited for right before
 * the compute op that consumes them (the generator puts them there); sends
 * are non-blocking and their buffers return to a pool when they complete,
 * as sim/sim_schedule.h's contract requires (a blocking send deadlocks
 * 1F1B). A send directly followed by a receive is posted with it as one
 * group (run_send_recv). Activations travel on the PP group, gradients on
 * its twin pp_grad (exec_run.c says why). Activations of a (microbatch, chunk) live in a slot from its F to
 * its B (or W); a W store keeps what W needs from Bi. With one pipeline rank
 * and several chunks (virtual stages on pp = 1) the generator lists no
 * communication: a chunk's output is handed to the next chunk in memory.
 *
 * After the op list: the sends are completed, the gradients synced
 * (exec_dp.c), the global norm and the loss summed over the world, and the
 * optimizer steps. Time is charged to compute, TP comm, PP wait, DP comm
 * and optimizer as it is spent.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec_rt.h"

/* ---- pools ---- */

static void *pool_get(exec_rt *rt, exec_pool *p, st_err *err)
{
    if (p->nfree > 0) {
        void *b = p->free[--p->nfree];
        exec_mem *m = &rt->dev->mem;
        m->cur_bytes[p->cls] += (double)p->bytes;
        m->cur_total_bytes += (double)p->bytes;
        if (m->cur_bytes[p->cls] > m->peak_class_bytes[p->cls])
            m->peak_class_bytes[p->cls] = m->cur_bytes[p->cls];
        if (m->cur_total_bytes > m->peak_total_bytes)
            m->peak_total_bytes = m->cur_total_bytes;
        return b;
    }
    return exec_dev_alloc(rt->dev, p->bytes, p->cls, err);
}

static int pool_put(exec_rt *rt, exec_pool *p, void *b, st_err *err)
{
    if (!b)
        return ST_OK;
    if (p->nfree == p->cap) {
        int cap = p->cap ? 2 * p->cap : 8;
        void **f = realloc(p->free, (size_t)cap * sizeof *f);
        if (!f)
            return ST_RAISE(err, ST_ENOMEM, "cannot grow a buffer pool");
        p->free = f;
        p->cap = cap;
    }
    p->free[p->nfree++] = b;
    rt->dev->mem.cur_bytes[p->cls] -= (double)p->bytes;
    rt->dev->mem.cur_total_bytes -= (double)p->bytes;
    return ST_OK;
}

static void pool_fini(exec_rt *rt, exec_pool *p)
{
    for (int i = 0; i < p->nfree; i++)
        rt->dev->ops->free(rt->dev, p->free[i]);
    free(p->free);
    memset(p, 0, sizeof *p);
}

/* ---- setup ---- */

int exec_pipe_init(exec_rt *rt, st_err *err)
{
    const plan_layout *l = &rt->cfg->layout;
    exec_model *x = &rt->x;
    sim_sched_from_layout(&rt->sched, l);
    int rc = sim_sched_check(&rt->sched, err);
    if (rc != ST_OK)
        return rc;
    rt->nops = sim_sched_len(&rt->sched, rt->pp_rank);
    rt->ops = malloc((size_t)(rt->nops > 0 ? rt->nops : 1) * sizeof *rt->ops);
    if (!rt->ops)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate the op list");
    if ((rc = sim_sched_ops(&rt->sched, rt->pp_rank, rt->ops, rt->nops, NULL, err)))
        return rc;
    int m = l->microbatches, v = x->nchunks;
    int64_t N = x->d.N;
    rt->slot = calloc((size_t)v * m, sizeof *rt->slot);
    rt->wstore = calloc((size_t)v * m, sizeof *rt->wstore);
    rt->slot_pool = calloc((size_t)v, sizeof *rt->slot_pool);
    rt->wstore_pool = calloc((size_t)v, sizeof *rt->wstore_pool);
    rt->host_tok = malloc((size_t)(2 * N + 2 * x->d.T) * sizeof *rt->host_tok);
    rt->hand_fwd = calloc((size_t)v * m, sizeof *rt->hand_fwd);
    rt->hand_bwd = calloc((size_t)v * m, sizeof *rt->hand_bwd);
    if (!rt->slot || !rt->wstore || !rt->slot_pool || !rt->wstore_pool || !rt->host_tok ||
        !rt->hand_fwd || !rt->hand_bwd)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate the runner's tables");
    for (int c = 0; c < v; c++) {
        rt->slot_pool[c].bytes = exec_slot_bytes(x, &x->chunk[c]);
        rt->slot_pool[c].cls = EXEC_MEM_ACTIVATIONS;
        rt->wstore_pool[c].bytes = exec_wstore_bytes(x, &x->chunk[c]);
        rt->wstore_pool[c].cls = EXEC_MEM_ACTIVATIONS;
    }
    rt->send_pool.bytes = (size_t)(x->d.Nr * x->d.C) * rt->dev->elem_bytes;
    rt->send_pool.cls = EXEC_MEM_COMM;
    int need_tokens = x->chunk[0].first || x->chunk[v - 1].last;
    if (need_tokens) {
        size_t tb = (size_t)m * (size_t)N * sizeof(int32_t);
        if (!(rt->tok_in = exec_dev_alloc(rt->dev, tb, EXEC_MEM_WORKSPACE, err)) ||
            !(rt->tok_tgt = exec_dev_alloc(rt->dev, tb, EXEC_MEM_WORKSPACE, err)))
            return ST_ENOMEM;
    }
    return ST_OK;
}

void exec_pipe_fini(exec_rt *rt)
{
    if (!rt->dev)
        return;
    const plan_layout *l = &rt->cfg->layout;
    int m = l->microbatches, v = rt->x.nchunks;
    size_t tb = (size_t)m * (size_t)rt->x.d.N * sizeof(int32_t);
    exec_dev_free(rt->dev, rt->tok_in, tb, EXEC_MEM_WORKSPACE);
    exec_dev_free(rt->dev, rt->tok_tgt, tb, EXEC_MEM_WORKSPACE);
    for (int i = 0; rt->slot && i < v * m; i++) {
        int c = i / m;
        if (rt->slot[i])
            exec_dev_free(rt->dev, rt->slot[i], rt->slot_pool[c].bytes, EXEC_MEM_ACTIVATIONS);
        if (rt->wstore[i])
            exec_dev_free(rt->dev, rt->wstore[i], rt->wstore_pool[c].bytes, EXEC_MEM_ACTIVATIONS);
    }
    for (int c = 0; rt->slot_pool && c < v; c++) {
        pool_fini(rt, &rt->slot_pool[c]);
        pool_fini(rt, &rt->wstore_pool[c]);
    }
    for (int i = 0; rt->hand_fwd && i < v * m; i++) {
        exec_dev_free(rt->dev, rt->hand_fwd[i], rt->send_pool.bytes, EXEC_MEM_COMM);
        exec_dev_free(rt->dev, rt->hand_bwd[i], rt->send_pool.bytes, EXEC_MEM_COMM);
    }
    free(rt->hand_fwd);
    free(rt->hand_bwd);
    rt->hand_fwd = rt->hand_bwd = NULL;
    for (int i = 0; i < rt->nsends; i++)
        if (!rt->sends[i].req) /* never free a buffer a send may still read */
            exec_dev_free(rt->dev, rt->sends[i].buf, rt->send_pool.bytes, EXEC_MEM_COMM);
    pool_fini(rt, &rt->send_pool);
    free(rt->sends);
    free(rt->slot);
    free(rt->wstore);
    free(rt->slot_pool);
    free(rt->wstore_pool);
    free(rt->host_tok);
    free(rt->ops);
    rt->sends = NULL;
    rt->slot = rt->wstore = NULL;
    rt->slot_pool = rt->wstore_pool = NULL;
    rt->host_tok = NULL;
    rt->ops = NULL;
}

/* ---- point to point ---- */

/* Tag of the message that global virtual stage g sends for microbatch mb
 * (dir 0 activation, 1 gradient). Messages between two ranks are also
 * ordered, so a tag wrapping around past EXEC_COMM_TAG_MAX stays safe. */
static int p2p_tag(const exec_rt *rt, int mb, int g, int dir)
{
    int64_t P = (int64_t)rt->sched.pp * rt->sched.virtual_stages;
    return (int)((((int64_t)mb * P + g) * 2 + dir) % (EXEC_COMM_TAG_MAX + 1));
}

/* Peer stage of a communication op and the global stage of the sender. */
static int p2p_peer(const exec_rt *rt, const sim_op *op, int *peer_stage, int *sender_g,
                    st_err *err)
{
    sim_op peer;
    int rc = sim_op_peer(&rt->sched, rt->pp_rank, op, peer_stage, &peer, err);
    if (rc != ST_OK)
        return rc;
    int pp = rt->sched.pp;
    int is_send = op->kind == SIM_OP_SEND_FWD || op->kind == SIM_OP_SEND_BWD;
    *sender_g = is_send ? op->chunk * pp + rt->pp_rank : peer.chunk * pp + *peer_stage;
    return ST_OK;
}

static int send_buf(exec_rt *rt, const sim_op *op, void *buf, st_err *err)
{
    int peer, g, rc;
    if ((rc = p2p_peer(rt, op, &peer, &g, err)))
        return rc;
    if (rt->nsends == rt->sends_cap) {
        int cap = rt->sends_cap ? 2 * rt->sends_cap : 16;
        exec_send *s = realloc(rt->sends, (size_t)cap * sizeof *s);
        if (!s)
            return ST_RAISE(err, ST_ENOMEM, "cannot grow the send list");
        rt->sends = s;
        rt->sends_cap = cap;
    }
    exec_send *s = &rt->sends[rt->nsends];
    s->buf = buf;
    s->req = NULL;
    int bwd = op->kind == SIM_OP_SEND_BWD;
    rc = exec_comm_isend(bwd ? rt->pp_grad : rt->pp, buf, (size_t)(rt->x.d.Nr * rt->x.d.C),
                         rt->dev->ops->dtype, peer, p2p_tag(rt, op->microbatch, g, bwd), &s->req,
                         err);
    if (rc != ST_OK)
        return rc;
    rt->nsends++;
    return ST_OK;
}

/* Return the buffers of completed sends to the pool (wait: all of them). */
static int reap_sends(exec_rt *rt, int wait, st_err *err)
{
    int keep = 0, rc = ST_OK;
    for (int i = 0; i < rt->nsends; i++) {
        exec_send *s = &rt->sends[i];
        int done = 0;
        if (rc == ST_OK) {
            if (wait)
                rc = exec_comm_wait(&s->req, "a pipeline send to be received", err);
            else
                rc = exec_comm_test(&s->req, &done, err);
        }
        if (rc == ST_OK && !s->req) {
            rc = pool_put(rt, &rt->send_pool, s->buf, err);
            continue;
        }
        rt->sends[keep++] = *s;
    }
    rt->nsends = keep;
    return rc;
}

/* Post the receive of a RECV op into its buffer (a slot's input or the
 * residual gradient); *req to wait for. */
static int recv_post(exec_rt *rt, const sim_op *op, exec_req **req, st_err *err)
{
    exec_model *x = &rt->x;
    int m = rt->cfg->layout.microbatches, c = op->chunk, idx = c * m + op->microbatch;
    int bwd = op->kind == SIM_OP_RECV_BWD, peer, g, rc;
    void *buf = x->ws.dres;
    if (!bwd) {
        if (!rt->slot[idx] && !(rt->slot[idx] = pool_get(rt, &rt->slot_pool[c], err)))
            return ST_ENOMEM;
        buf = exec_slot_input(x, c, rt->slot[idx]);
    }
    if ((rc = p2p_peer(rt, op, &peer, &g, err)))
        return rc;
    return exec_comm_irecv(bwd ? rt->pp_grad : rt->pp, buf, (size_t)(x->d.Nr * x->d.C),
                           rt->dev->ops->dtype, peer, p2p_tag(rt, op->microbatch, g, bwd), req,
                           err);
}

static int recv_wait(const sim_op *op, exec_req **req, st_err *err)
{
    return exec_comm_wait(req, op->kind == SIM_OP_RECV_FWD ? "an activation from the previous "
                                                             "pipeline stage"
                                                           : "a gradient from the next pipeline "
                                                             "stage",
                          err);
}

static int is_send(const sim_op *op)
{
    return op->kind == SIM_OP_SEND_FWD || op->kind == SIM_OP_SEND_BWD;
}

static int is_recv(const sim_op *op)
{
    return op->kind == SIM_OP_RECV_FWD || op->kind == SIM_OP_RECV_BWD;
}

/* A SEND directly followed by a RECV: both posted as one group, then the
 * receive waited for (Megatron's send_forward_recv_backward and
 * send_backward_recv_forward, p2p_communication.py; sim_schedule.h's
 * contract allows it). On a transport whose sends wait for their receiver
 * on a stream (NCCL), two stages that send to each other before receiving
 * would otherwise each wait for the other's receive behind its own send. */
static int run_send_recv(exec_rt *rt, const sim_op *send, const sim_op *recv, exec_phases *ph,
                         st_err *err)
{
    double t0 = exec_now_s();
    exec_req *req = NULL;
    int rc = exec_comm_group_begin(rt->pp, err), rg;
    if (rc == ST_OK)
        rc = send_buf(rt, send, rt->pending_out, err);
    rt->pending_out = NULL;
    if (rc == ST_OK)
        rc = recv_post(rt, recv, &req, err);
    rg = exec_comm_group_end(rt->pp, err);
    if (rc == ST_OK)
        rc = rg;
    if (rc == ST_OK)
        rc = recv_wait(recv, &req, err);
    ph->pp_wait_s += exec_now_s() - t0;
    return rc;
}

/* ---- the step ---- */

static int load_tokens(exec_rt *rt)
{
    exec_model *x = &rt->x;
    if (!rt->tok_in)
        return ST_OK;
    const plan_layout *l = &rt->cfg->layout;
    int64_t N = x->d.N;
    int32_t *in = rt->host_tok, *tg = in + N, *scratch = tg + N;
    for (int mb = 0; mb < l->microbatches; mb++) {
        exec_data_microbatch(&rt->data, l, rt->step, rt->dp_rank, mb, in, tg, scratch);
        rt->dev->ops->upload(rt->dev, rt->tok_in + mb * N, in, (size_t)N * sizeof *in);
        rt->dev->ops->upload(rt->dev, rt->tok_tgt + mb * N, tg, (size_t)N * sizeof *tg);
    }
    return ST_OK;
}

/* One op of the list. */
static int run_op(exec_rt *rt, const sim_op *op, exec_phases *ph, st_err *err)
{
    exec_model *x = &rt->x;
    const plan_layout *l = &rt->cfg->layout;
    int m = l->microbatches, mb = op->microbatch, c = op->chunk, rc;
    int idx = c * m + mb;
    const exec_chunk *ch = &x->chunk[c];
    const int32_t *tin = rt->tok_in ? rt->tok_in + (int64_t)mb * x->d.N : NULL;
    const int32_t *ttg = rt->tok_tgt ? rt->tok_tgt + (int64_t)mb * x->d.N : NULL;
    double t0 = exec_now_s(), tp0 = rt->timers.tp_s, dp0 = rt->timers.dp_s;
    int compute = 0;
    switch ((sim_op_kind)op->kind) {
    case SIM_OP_RECV_FWD:
    case SIM_OP_RECV_BWD: {
        exec_req *req = NULL;
        if ((rc = recv_post(rt, op, &req, err)) || (rc = recv_wait(op, &req, err)))
            return rc;
        ph->pp_wait_s += exec_now_s() - t0;
        return ST_OK;
    }
    case SIM_OP_SEND_FWD:
    case SIM_OP_SEND_BWD:
        rc = send_buf(rt, op, rt->pending_out, err);
        rt->pending_out = NULL;
        ph->pp_wait_s += exec_now_s() - t0;
        return rc;
    case SIM_OP_FWD: {
        if (!rt->slot[idx] && !(rt->slot[idx] = pool_get(rt, &rt->slot_pool[c], err)))
            return ST_ENOMEM;
        void *out = NULL;
        if (!ch->last && !(out = pool_get(rt, &rt->send_pool, err)))
            return ST_ENOMEM;
        double scale = 1.0 / ((double)l->global_batch * (double)x->d.T);
        const void *input = exec_slot_input(x, c, rt->slot[idx]);
        int local = rt->sched.pp == 1 && c > 0; /* the previous chunk is on this rank */
        if (local)
            input = rt->hand_fwd[idx - m];
        rc = exec_chunk_fwd(x, c, rt->slot[idx], tin, ttg, input, out, scale, err);
        if (local && rc == ST_OK) {
            rc = pool_put(rt, &rt->send_pool, rt->hand_fwd[idx - m], err);
            rt->hand_fwd[idx - m] = NULL;
        }
        if (rt->sched.pp == 1 && !ch->last)
            rt->hand_fwd[idx] = out;
        else
            rt->pending_out = out;
        compute = 1;
        break;
    }
    case SIM_OP_BWD:
    case SIM_OP_BWD_INPUT: {
        int split = op->kind == SIM_OP_BWD_INPUT;
        void *din = NULL;
        if (!ch->first && !(din = pool_get(rt, &rt->send_pool, err)))
            return ST_ENOMEM;
        if (split && !(rt->wstore[idx] = pool_get(rt, &rt->wstore_pool[c], err)))
            return ST_ENOMEM;
        int local = rt->sched.pp == 1 && !ch->last; /* the next chunk is on this rank */
        const void *dout = local ? rt->hand_bwd[idx + m] : x->ws.dres;
        rc = exec_chunk_bwd(x, c, rt->slot[idx], tin, dout, din, split, rt->wstore[idx], err);
        if (local && rc == ST_OK) {
            rc = pool_put(rt, &rt->send_pool, rt->hand_bwd[idx + m], err);
            rt->hand_bwd[idx + m] = NULL;
        }
        if (rt->sched.pp == 1 && !ch->first)
            rt->hand_bwd[idx] = din;
        else
            rt->pending_out = din;
        if (rc == ST_OK && !split) {
            rc = pool_put(rt, &rt->slot_pool[c], rt->slot[idx], err);
            rt->slot[idx] = NULL;
        }
        compute = 1;
        break;
    }
    case SIM_OP_BWD_WEIGHT:
        rc = exec_chunk_wgrad(x, c, rt->slot[idx], tin, rt->wstore[idx], err);
        if (rc == ST_OK)
            rc = pool_put(rt, &rt->slot_pool[c], rt->slot[idx], err);
        if (rc == ST_OK)
            rc = pool_put(rt, &rt->wstore_pool[c], rt->wstore[idx], err);
        rt->slot[idx] = rt->wstore[idx] = NULL;
        compute = 1;
        break;
    default:
        return ST_RAISE(err, ST_EINTERNAL, "unknown schedule op %d", op->kind);
    }
    if (rc == ST_OK)
        rc = rt->dev->ops->sync(rt->dev, err);
    if (compute)
        ph->compute_s += exec_now_s() - t0 - (rt->timers.tp_s - tp0) - (rt->timers.dp_s - dp0);
    return rc;
}

int exec_pipe_grads(exec_rt *rt, exec_phases *ph, st_err *err)
{
    exec_model *x = &rt->x;
    rt->timers.tp_s = rt->timers.dp_s = rt->timers.emb_s = 0;
    exec_dp_step_begin(x);
    int rc = load_tokens(rt);
    for (int i = 0; rc == ST_OK && i < rt->nops; i++) {
        if (is_send(&rt->ops[i]) && i + 1 < rt->nops && is_recv(&rt->ops[i + 1])) {
            rc = run_send_recv(rt, &rt->ops[i], &rt->ops[i + 1], ph, err);
            i++;
        } else {
            rc = run_op(rt, &rt->ops[i], ph, err);
        }
        if (rc == ST_OK)
            rc = reap_sends(rt, 0, err);
        if (rc == ST_OK)
            rc = exec_dp_progress(x, err);
    }
    if (rc != ST_OK)
        return rc;
    double t0 = exec_now_s();
    if ((rc = reap_sends(rt, 1, err)))
        return rc;
    ph->pp_wait_s += exec_now_s() - t0;
    /* the losses of every microbatch, summed on the device, read once */
    rt->loss_sum = rt->dev->ops->acc_take(rt->dev, EXEC_ACC_LOSS);
    return exec_dp_finish(x, err);
}

int exec_pipe_step(exec_rt *rt, st_err *err)
{
    exec_model *x = &rt->x;
    const exec_config *cfg = rt->cfg;
    exec_step_stat *st = &rt->stats[rt->step];
    memset(st, 0, sizeof *st);
    exec_phases *ph = &st->ph;
    double t_step = exec_now_s(), t0;
    int rc = exec_pipe_grads(rt, ph, err);
    if (rc != ST_OK)
        return rc;

    /* optimizer: global norm and loss in one world sum, clip, AdamW */
    t0 = exec_now_s();
    double dp_before = rt->timers.dp_s;
    double sums[2] = {exec_optim_local_sumsq(&rt->opt), 0};
    if (x->chunk[x->nchunks - 1].last && rt->tp_rank == 0)
        sums[1] = rt->loss_sum;
    if ((rc = exec_comm_allreduce(rt->world, sums, sums, 2, EXEC_DT_F64, EXEC_RED_SUM, NULL, err)))
        return rc;
    st->grad_norm = sqrt(sums[0]);
    st->loss = sums[1];
    st->lr = exec_lr_at(&cfg->train, rt->step);
    exec_optim_apply(&rt->opt, &cfg->train, rt->step, st->lr,
                     exec_clip_scale(st->grad_norm, cfg->train.grad_clip));
    if ((rc = exec_dp_gather_params(x, err)) || (rc = rt->dev->ops->sync(rt->dev, err)))
        return rc;
    ph->optimizer_s = exec_now_s() - t0 - (rt->timers.dp_s - dp_before) + rt->timers.emb_s;
    ph->tp_comm_s = rt->timers.tp_s;
    ph->dp_comm_s = rt->timers.dp_s;
    st->wall_s = exec_now_s() - t_step;
    if (!isfinite(st->loss))
        return ST_RAISE(err, ST_ERANGE, "step %lld: the loss is not finite (%g)",
                        (long long)rt->step + 1, st->loss);
    rt->step++;
    return ST_OK;
}
