/*
 * exec_bench_comm.c: the transport between the ranks of a job, measured as
 * nccl-tests measures NCCL (see exec_bench.h for the definitions).
 *
 * Every call goes through the transport table (exec_comm.h), so the same
 * code measures MPI now and NCCL when it is built. For each operation and
 * message size, doubling from min_bytes to max_bytes (nccl-tests' -b, -e,
 * -f 2): the result is checked once on patterned data (nccl-tests' #wrong
 * column), then warm-up iterations, a barrier, and timed iterations; each
 * rank's time is its elapsed time over the iterations, and the time
 * reported is the mean over ranks (nccl-tests' default -a 1, "report
 * average iteration time"). Warm-up 5 and 20 iterations are nccl-tests'
 * defaults (-w 5 -n 20); past LARGE_BYTES the iterations shrink so that
 * every size moves about the same bytes (at least 2, warm-up 1).
 *
 * Sizes as nccl-tests reports them: S = count x 4 bytes (fp32 sum) for
 * all-reduce and send/recv; the whole array for reduce-scatter and
 * all-gather, S = n x (count per rank) x 4, rounded down to a multiple of
 * n elements (a size with less than one element per rank is skipped).
 * Send/recv: every rank sends S to the next rank and receives S from the
 * previous one at once (nccl-tests' sendrecv_perf), the two posted as one
 * group (ncclGroupStart/End on NCCL, where a send waits for its receiver).
 *
 * On a transport that takes device buffers (NCCL, cfg.dev the cuda device)
 * the buffers are device memory: the pattern is uploaded, the checked
 * points downloaded, and the timed iterations are posted back to back and
 * waited for together (the operations queue on the group's stream, as
 * nccl-tests launches its iterations before synchronising once), so the
 * time is the GPUs', not the host's round trip per operation. On a host
 * transport every iteration completes before the next starts, as before.
 */
#include "exec/exec_bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "exec/exec_comm.h"
#include "exec/exec_dev.h"
#include "exec/exec_int.h"

#define DEFAULT_MIN_BYTES 8.0
#define DEFAULT_MAX_BYTES (1024.0 * 1048576.0)
#define NCCL_TESTS_WARMUP 5
#define NCCL_TESTS_ITERS 20
#define LARGE_BYTES (64.0 * 1048576.0)
#define CHECK_POINTS 64

static const char *const op_names[EXEC_BENCH_OP__COUNT] = {"allreduce", "reducescatter",
                                                           "allgather", "sendrecv"};

const char *exec_bench_op_name(exec_bench_op op)
{
    return (unsigned)op < EXEC_BENCH_OP__COUNT ? op_names[op] : "?";
}

int exec_bench_op_parse(const char *s, exec_bench_op *out, st_err *err)
{
    for (int i = 0; i < EXEC_BENCH_OP__COUNT; i++)
        if (!strcmp(s, op_names[i])) {
            *out = (exec_bench_op)i;
            return ST_OK;
        }
    return ST_RAISE(err, ST_EINVAL, "operation '%s': allowed are allreduce, reducescatter, "
                    "allgather, sendrecv", s);
}

void exec_bench_comm_config_default(exec_bench_comm_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->min_bytes = DEFAULT_MIN_BYTES;
    cfg->max_bytes = DEFAULT_MAX_BYTES;
    cfg->ops = (1u << EXEC_BENCH_OP__COUNT) - 1;
    cfg->warmup = NCCL_TESTS_WARMUP;
    cfg->iters = NCCL_TESTS_ITERS;
}

double exec_bench_comm_max_bytes(double want, int ranks_on_host)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double mem = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
    if (ranks_on_host < 1)
        ranks_on_host = 1;
    /* two buffers of the largest size per rank, in at most half the memory */
    double cap = mem > 0 ? mem / (4.0 * ranks_on_host) : want;
    double b = want < cap ? want : cap;
    return exp2(floor(log2(b))); /* a size of the doubling sequence */
}

/* Value of element i on rank r before the operation: small whole numbers,
 * so every fp32 sum is exact. */
static float pattern(int r, size_t i)
{
    return (float)(r + 1) + (float)(i % 7);
}

/* Elements and the size reported for op at nominal size bytes; 0 elements
 * when the size cannot be made. */
static size_t elems_of(exec_bench_op op, double bytes, int n, double *reported)
{
    size_t count = (size_t)(bytes / sizeof(float));
    if (op == EXEC_BENCH_REDUCESCATTER || op == EXEC_BENCH_ALLGATHER) {
        size_t per = count / (size_t)n;
        *reported = (double)(per * (size_t)n * sizeof(float));
        return per; /* per rank */
    }
    *reported = (double)(count * sizeof(float));
    return count;
}

/* Post one operation; with reqs NULL it completes before returning,
 * otherwise its requests (one, or two for send/recv) go to reqs[*nreq...]. */
static int post_once(exec_comm *w, exec_bench_op op, void *a, void *b, size_t cnt,
                     exec_req **reqs, int *nreq, st_err *err)
{
    int n = w->size, r = w->rank;
    exec_req *one = NULL, **rq = reqs ? &one : NULL;
    int rc;
    switch (op) {
    case EXEC_BENCH_ALLREDUCE:
        rc = exec_comm_allreduce(w, a, b, cnt, EXEC_DT_F32, EXEC_RED_SUM, rq, err);
        break;
    case EXEC_BENCH_REDUCESCATTER:
        rc = exec_comm_reduce_scatter(w, a, b, cnt, EXEC_DT_F32, EXEC_RED_SUM, rq, err);
        break;
    case EXEC_BENCH_ALLGATHER:
        rc = exec_comm_allgather(w, a, b, cnt, EXEC_DT_F32, rq, err);
        break;
    case EXEC_BENCH_SENDRECV:
    default: {
        exec_req *req[2] = {NULL, NULL};
        rc = exec_comm_group_begin(w, err);
        if (rc == ST_OK)
            rc = exec_comm_irecv(w, b, cnt, EXEC_DT_F32, (r + n - 1) % n, 1, &req[1], err);
        if (rc == ST_OK)
            rc = exec_comm_isend(w, a, cnt, EXEC_DT_F32, (r + 1) % n, 1, &req[0], err);
        int rg = exec_comm_group_end(w, err);
        if (rc == ST_OK)
            rc = rg;
        if (reqs) {
            reqs[(*nreq)++] = req[0];
            reqs[(*nreq)++] = req[1];
            return rc;
        }
        int rw = exec_comm_waitall(req, 2, "send/recv benchmark", err);
        return rc != ST_OK ? rc : rw;
    }
    }
    if (reqs)
        reqs[(*nreq)++] = one;
    return rc;
}

static int run_once(exec_comm *w, exec_bench_op op, void *a, void *b, size_t cnt, st_err *err)
{
    return post_once(w, op, a, b, cnt, NULL, NULL, err);
}

/* The result of one checked run of op, at CHECK_POINTS elements. a and b
 * are host buffers; da and db the buffers the operation uses (device
 * memory of dev, or a and b themselves). */
static int verify(exec_comm *w, exec_bench_op op, float *a, float *b, void *da, void *db,
                  exec_dev *dev, size_t cnt, st_err *err)
{
    int n = w->size, r = w->rank;
    size_t send = op == EXEC_BENCH_REDUCESCATTER ? cnt * (size_t)n : cnt;
    for (size_t i = 0; i < send; i++)
        a[i] = pattern(r, i);
    if (dev) {
        dev->ops->upload(dev, da, a, send * sizeof *a);
        if ((dev->ops->sync(dev, err)) != ST_OK)
            return err->code;
    }
    int rc = run_once(w, op, da, db, cnt, err);
    if (rc != ST_OK)
        return rc;
    size_t out = op == EXEC_BENCH_ALLGATHER ? cnt * (size_t)n : cnt;
    int wrong = 0;
    for (int k = 0; k < CHECK_POINTS && out > 0; k++) {
        size_t i = out * (size_t)k / CHECK_POINTS;
        if (dev)
            dev->ops->download(dev, &b[i], (const float *)db + i, sizeof *b);
        double want;
        switch (op) {
        case EXEC_BENCH_ALLREDUCE:
            want = n * (n + 1) / 2.0 + (double)n * (double)(i % 7);
            break;
        case EXEC_BENCH_REDUCESCATTER: { /* block r of the sum */
            size_t g = (size_t)r * cnt + i;
            want = n * (n + 1) / 2.0 + (double)n * (double)(g % 7);
            break;
        }
        case EXEC_BENCH_ALLGATHER: /* element i of rank i / cnt's send */
            want = pattern((int)(i / cnt), i % cnt);
            break;
        case EXEC_BENCH_SENDRECV:
        default:
            want = pattern((r + n - 1) % n, i);
            break;
        }
        wrong += b[i] != (float)want;
    }
    if (dev && (rc = dev->ops->sync(dev, err)) != ST_OK)
        return rc;
    long long total = wrong;
    rc = exec_comm_allreduce(w, &total, &total, 1, EXEC_DT_I64, EXEC_RED_SUM, NULL, err);
    if (rc == ST_OK && total > 0)
        rc = ST_RAISE(err, ST_EINTERNAL, "bench: %s of %zu elements gave %lld wrong values",
                      exec_bench_op_name(op), cnt, total);
    return rc;
}

/* iters operations timed: one after the other, or (queued) all posted
 * and then waited for together. */
static int timed(exec_comm *w, exec_bench_op op, void *a, void *b, size_t cnt, int iters,
                 int queued, st_err *err)
{
    if (!queued) {
        int rc = ST_OK;
        for (int i = 0; rc == ST_OK && i < iters; i++)
            rc = run_once(w, op, a, b, cnt, err);
        return rc;
    }
    exec_req **reqs = calloc((size_t)iters * 2, sizeof *reqs);
    if (!reqs)
        return ST_RAISE(err, ST_ENOMEM, "bench: cannot allocate %d requests", 2 * iters);
    int nreq = 0, rc = ST_OK;
    for (int i = 0; rc == ST_OK && i < iters; i++)
        rc = post_once(w, op, a, b, cnt, reqs, &nreq, err);
    int rw = exec_comm_waitall(reqs, nreq, "the timed operations", err);
    free(reqs);
    return rc != ST_OK ? rc : rw;
}

int exec_bench_comm_run(exec_comm *w, const exec_bench_comm_config *cfg_in, exec_bench_comm *out,
                        st_err *err)
{
    exec_bench_comm_config cfg;
    exec_bench_comm_config_default(&cfg);
    if (cfg_in)
        cfg = *cfg_in;
    if (!(cfg.min_bytes >= 4) || !(cfg.max_bytes >= cfg.min_bytes) || cfg.iters < 1 ||
        cfg.warmup < 0)
        return ST_RAISE(err, ST_EINVAL, "bench: sizes %g to %g bytes, %d iterations; allowed from "
                        "4 bytes up, at least 1 iteration", cfg.min_bytes, cfg.max_bytes,
                        cfg.iters);
    memset(out, 0, sizeof *out);
    snprintf(out->transport, sizeof out->transport, "%s", w->ops->name);
    if (gethostname(out->host, sizeof out->host - 1) != 0)
        snprintf(out->host, sizeof out->host, "unknown");
    out->ranks = w->size;
    size_t cap = (size_t)(cfg.max_bytes / sizeof(float)) + 1;
    float *a = malloc(cap * sizeof *a), *b = malloc(cap * sizeof *b);
    exec_dev *dev = w->ops->device_buffers ? cfg.dev : NULL;
    if (w->ops->device_buffers && !dev) {
        free(a);
        free(b);
        return ST_RAISE(err, ST_EINVAL, "bench: the %s transport takes device buffers: give it "
                        "a device", w->ops->name);
    }
    st_err aerr = {0};
    void *da = dev ? exec_dev_alloc(dev, cap * sizeof *a, EXEC_MEM_COMM, &aerr) : a;
    void *db = dev ? exec_dev_alloc(dev, cap * sizeof *b, EXEC_MEM_COMM, &aerr) : b;
    int rc = ST_OK, ok = a && b && da && db;
    long long all_ok = ok;
    /* every rank must have its buffers before any rank starts */
    rc = exec_comm_allreduce(w, &all_ok, &all_ok, 1, EXEC_DT_I64, EXEC_RED_SUM, NULL, err);
    if (rc == ST_OK && all_ok != w->size)
        rc = ST_RAISE(err, ST_ENOMEM, "bench: %lld of %d ranks could not allocate two buffers of "
                      "%.0f bytes", (long long)w->size - all_ok, w->size, cfg.max_bytes);
    if (rc == ST_OK)
        memset(b, 0, cap * sizeof *b);
    for (int op = 0; rc == ST_OK && op < EXEC_BENCH_OP__COUNT; op++) {
        if (!(cfg.ops & (1u << op)))
            continue;
        for (double s = cfg.min_bytes; rc == ST_OK && s <= cfg.max_bytes; s *= 2) {
            double bytes;
            size_t cnt = elems_of((exec_bench_op)op, s, w->size, &bytes);
            if (cnt == 0)
                continue;
            if (out->n == EXEC_BENCH_COLL_MAX)
                break;
            if ((rc = verify(w, (exec_bench_op)op, a, b, da, db, dev, cnt, err)) != ST_OK)
                break;
            int iters = cfg.iters, warm = cfg.warmup;
            if (bytes > LARGE_BYTES) {
                iters = (int)fmax(2.0, floor(cfg.iters * LARGE_BYTES / bytes));
                warm = warm > 1 ? 1 : warm;
            }
            if (warm > 0)
                rc = timed(w, (exec_bench_op)op, da, db, cnt, warm, dev != NULL, err);
            if (rc == ST_OK)
                rc = exec_comm_barrier(w, NULL, err);
            double t0 = exec_now_s();
            if (rc == ST_OK)
                rc = timed(w, (exec_bench_op)op, da, db, cnt, iters, dev != NULL, err);
            double t = (exec_now_s() - t0) / iters;
            if (rc == ST_OK)
                rc = exec_comm_allreduce(w, &t, &t, 1, EXEC_DT_F64, EXEC_RED_SUM, NULL, err);
            if (rc != ST_OK)
                break;
            t /= w->size;
            exec_bench_coll *c = &out->v[out->n++];
            snprintf(c->op, sizeof c->op, "%s", op_names[op]);
            c->ranks = w->size;
            c->bytes = bytes;
            c->iters = iters;
            c->time_s = t;
            c->algbw_bps = bytes / t;
            c->busbw_bps = c->algbw_bps * plan_bench_busbw_factor(c->op, w->size);
        }
    }
    if (dev) {
        exec_dev_free(dev, da, cap * sizeof *a, EXEC_MEM_COMM);
        exec_dev_free(dev, db, cap * sizeof *b, EXEC_MEM_COMM);
    }
    free(a);
    free(b);
    return rc;
}

char *exec_bench_comm_json(const exec_bench_comm *b)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "transport", b->transport);
    cJSON_AddStringToObject(root, "host", b->host);
    cJSON_AddNumberToObject(root, "ranks", b->ranks);
    cJSON_AddNumberToObject(root, "threads_per_rank", b->threads_per_rank);
    cJSON *arr = cJSON_AddArrayToObject(root, "results");
    for (int i = 0; arr && i < b->n; i++) {
        const exec_bench_coll *c = &b->v[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "op", c->op);
        cJSON_AddNumberToObject(o, "ranks", c->ranks);
        cJSON_AddNumberToObject(o, "bytes", c->bytes);
        cJSON_AddNumberToObject(o, "iters", c->iters);
        cJSON_AddNumberToObject(o, "time_s", c->time_s);
        cJSON_AddNumberToObject(o, "algbw_bps", c->algbw_bps);
        cJSON_AddNumberToObject(o, "busbw_bps", c->busbw_bps);
        cJSON_AddItemToArray(arr, o);
    }
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}

int exec_bench_comm_parse(const char *text, exec_bench_comm *b, st_err *err)
{
    memset(b, 0, sizeof *b);
    cJSON *root = cJSON_Parse(text);
    if (!root)
        return ST_RAISE(err, ST_EPARSE, "bench result: not JSON");
    int rc = ST_OK;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "version");
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(root, "transport");
    const cJSON *host = cJSON_GetObjectItemCaseSensitive(root, "host");
    const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(root, "ranks");
    const cJSON *th = cJSON_GetObjectItemCaseSensitive(root, "threads_per_rank");
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(root, "results");
    if (!cJSON_IsNumber(v) || v->valuedouble != 1)
        rc = ST_RAISE(err, ST_EINVAL, "bench result: version is not 1");
    else if (!cJSON_IsString(tr) || !cJSON_IsString(host) || !cJSON_IsNumber(ranks) ||
             !cJSON_IsArray(res))
        rc = ST_RAISE(err, ST_EINVAL, "bench result: transport, host, ranks or results missing");
    if (rc == ST_OK) {
        snprintf(b->transport, sizeof b->transport, "%s", tr->valuestring);
        snprintf(b->host, sizeof b->host, "%s", host->valuestring);
        b->ranks = (int)ranks->valuedouble;
        b->threads_per_rank = cJSON_IsNumber(th) ? (int)th->valuedouble : 1;
    }
    const cJSON *o;
    cJSON_ArrayForEach(o, res)
    {
        if (rc != ST_OK || b->n == EXEC_BENCH_COLL_MAX)
            break;
        const char *keys[] = {"ranks", "bytes", "iters", "time_s", "algbw_bps", "busbw_bps"};
        double val[6];
        const cJSON *op = cJSON_GetObjectItemCaseSensitive(o, "op");
        if (!cJSON_IsString(op))
            rc = ST_RAISE(err, ST_EINVAL, "bench result: results[%d].op missing", b->n);
        for (int k = 0; rc == ST_OK && k < 6; k++) {
            const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, keys[k]);
            if (!cJSON_IsNumber(x))
                rc = ST_RAISE(err, ST_EINVAL, "bench result: results[%d].%s missing", b->n,
                              keys[k]);
            else
                val[k] = x->valuedouble;
        }
        if (rc != ST_OK)
            break;
        exec_bench_coll *c = &b->v[b->n++];
        snprintf(c->op, sizeof c->op, "%s", op->valuestring);
        c->ranks = (int)val[0];
        c->bytes = val[1];
        c->iters = (int)val[2];
        c->time_s = val[3];
        c->algbw_bps = val[4];
        c->busbw_bps = val[5];
    }
    cJSON_Delete(root);
    return rc;
}

int exec_bench_comm_write(const char *path, const exec_bench_comm *b, st_err *err)
{
    char *s = exec_bench_comm_json(b);
    if (!s)
        return ST_RAISE(err, ST_ENOMEM, "bench result: out of memory");
    int rc = exec__write_atomic(path, s, strlen(s), err);
    cJSON_free(s);
    return rc;
}
