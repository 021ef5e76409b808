/*
 * exec_ckpt.c: checkpoints. A checkpoint of step S is a directory
 * DIR/step-SSSSSSSS/ with one file per rank (rank-NNNNN.bin: a header
 * naming the layout, the model, the seed and the step, then the rank's
 * parameters, or its ZeRO-3 shards, on a device with master weights
 * (has_master: bf16 on CUDA) the fp32 master weights of the elements it
 * updates, and its AdamW m and v), and
 * DIR/latest.json naming the newest complete one. Every file is written
 * atomically (temp file, fsync, rename); latest.json is replaced only after
 * every rank's file is in place (a barrier), so a crash while saving leaves
 * the previous checkpoint in force. The data position is the step (the
 * sequences of a step are a function of it, exec_data.h) and the
 * initialisation and the synthetic data are counter-based functions of the
 * seed, so no generator state needs keeping: a resumed run on the same
 * layout continues bit for bit.
 *
 * On the layout that wrote it a checkpoint loads as it was written. On
 * another layout of the same model (other tp, pp, dp, virtual stages,
 * sharding or buckets) it is resharded: every rank reads every old rank's
 * file, rebuilds how that rank held the model (exec_model_tables with the
 * old layout and the old rank's coordinates, all in the header), maps each
 * parameter and each AdamW moment it held to its global element, and takes
 * the elements it holds itself; with master weights the master is the
 * parameter's value (the narrow parameter is its rounding: AdamW writes
 * param = bf16(master), round to nearest even, and upload_f64 rounds the
 * same way), so a resharded bf16 run continues from exactly the state it
 * left. A different model, device type or seed's model shape is refused
 * with the difference named. Every buffer moves through the device table
 * (download, upload), so a checkpoint of GPU buffers is written and read
 * as one of host buffers is.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "exec/exec_int.h"
#include "exec/exec_rt.h"

#define CKPT_MAGIC "SMDCKPT1"
#define CKPT_VERSION 1

/* What a checkpoint must agree on with the run that loads it. */
typedef struct ckpt_head {
    char magic[8];
    int64_t version, world, rank, tp, pp, dp, virt, sharding;
    int64_t layers, hidden, heads, kv_heads, ffn, seq, vocab, arch, tied, gated;
    int64_t elem_bytes, state_bytes, param_numel, held_numel;
    int64_t seed, step;
    int64_t tp_rank, pp_rank, dp_rank; /* the writer's place in its layout */
    double dp_bucket_bytes;      /* the writer's buckets (they set its shards) */
} ckpt_head;

static void fill_head(const exec_rt *rt, ckpt_head *h)
{
    const plan_model *m = &rt->cfg->model;
    const plan_layout *l = &rt->cfg->layout;
    const exec_model *x = &rt->x;
    memset(h, 0, sizeof *h);
    memcpy(h->magic, CKPT_MAGIC, 8);
    h->version = CKPT_VERSION;
    h->world = rt->world->size;
    h->rank = rt->rank;
    h->tp = l->tp;
    h->pp = l->pp;
    h->dp = l->dp;
    h->virt = l->virtual_stages;
    h->sharding = l->sharding;
    h->layers = m->layers;
    h->hidden = m->hidden;
    h->heads = m->heads;
    h->kv_heads = m->kv_heads;
    h->ffn = m->ffn;
    h->seq = m->seq;
    h->vocab = m->vocab;
    h->arch = m->arch;
    h->tied = m->tied_embedding;
    h->gated = plan_model_gated(m);
    h->elem_bytes = (int64_t)rt->dev->elem_bytes;
    h->state_bytes = (int64_t)rt->dev->state_bytes;
    h->param_numel = x->zero3 ? x->held_numel : x->flat_numel;
    h->held_numel = x->held_numel;
    h->seed = (int64_t)rt->cfg->train.seed;
    h->step = rt->step;
    h->tp_rank = rt->tp_rank;
    h->pp_rank = rt->pp_rank;
    h->dp_rank = rt->dp_rank;
    h->dp_bucket_bytes = l->dp_bucket_bytes;
}

static void *param_buf(const exec_rt *rt)
{
    return rt->x.zero3 ? rt->x.pshard : rt->x.params;
}

static int make_dir(const char *path, st_err *err)
{
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return ST_RAISE(err, ST_EIO, "%s: cannot create the checkpoint directory: %s", path,
                        strerror(errno));
    return ST_OK;
}

/* Agree on a status over the world: the worst code of any rank (so a
 * failure on one rank fails the save everywhere instead of hanging). */
static int agree(exec_rt *rt, int rc, st_err *err)
{
    int64_t v = rc;
    int arc = exec_comm_allreduce(rt->world, &v, &v, 1, EXEC_DT_I64, EXEC_RED_MAX, NULL, err);
    if (arc != ST_OK)
        return arc;
    if (v != ST_OK && rc == ST_OK)
        return ST_RAISE(err, (int)v, "another rank failed to write its checkpoint");
    return rc;
}

int exec_ckpt_save(exec_rt *rt, const char *dir, st_err *err)
{
    char sub[EXEC_PATH_MAX + 32], path[EXEC_PATH_MAX + 64], name[32];
    snprintf(name, sizeof name, "step-%08lld", (long long)rt->step);
    snprintf(sub, sizeof sub, "%s/%s", dir, name);
    int rc = ST_OK;
    if (rt->rank == 0 && (rc = make_dir(dir, err)) == ST_OK)
        rc = make_dir(sub, err);
    if ((rc = agree(rt, rc, err)))
        return rc;
    /* this rank's file */
    ckpt_head h;
    fill_head(rt, &h);
    exec_dev *dev = rt->dev;
    size_t pbytes = (size_t)h.param_numel * dev->elem_bytes;
    size_t sbytes = (size_t)h.held_numel * dev->state_bytes;
    size_t mbytes = rt->opt.master ? sbytes : 0;
    size_t total = sizeof h + pbytes + mbytes + 2 * sbytes;
    char *buf = malloc(total);
    if (!buf) {
        rc = ST_RAISE(err, ST_ENOMEM, "out of memory writing a checkpoint");
    } else {
        memcpy(buf, &h, sizeof h);
        char *at = buf + sizeof h;
        dev->ops->download(dev, at, param_buf(rt), pbytes);
        at += pbytes;
        if (mbytes)
            dev->ops->download(dev, at, rt->opt.master, mbytes);
        at += mbytes;
        dev->ops->download(dev, at, rt->opt.m, sbytes);
        dev->ops->download(dev, at + sbytes, rt->opt.v, sbytes);
        /* a device whose copies can fail later (CUDA) says so at its sync */
        rc = dev->ops->sync(dev, err);
        snprintf(path, sizeof path, "%s/rank-%05d.bin", sub, rt->rank);
        if (rc == ST_OK)
            rc = exec__write_atomic(path, buf, total, err);
        free(buf);
    }
    if ((rc = agree(rt, rc, err)))
        return rc;
    /* every rank's file is in place: point latest.json at it */
    if (rt->rank == 0) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "version", CKPT_VERSION);
        cJSON_AddNumberToObject(j, "step", (double)rt->step);
        cJSON_AddStringToObject(j, "dir", name);
        cJSON_AddNumberToObject(j, "ranks", rt->world->size);
        char *text = cJSON_PrintUnformatted(j);
        cJSON_Delete(j);
        snprintf(path, sizeof path, "%s/latest.json", dir);
        if (!text)
            rc = ST_RAISE(err, ST_ENOMEM, "out of memory writing %s", path);
        else
            rc = exec__write_atomic(path, text, strlen(text), err);
        free(text);
        /* the previous checkpoint of this run is superseded: remove what we wrote */
        if (rc == ST_OK && *rt->saved_dir && strcmp(rt->saved_dir, sub) != 0) {
            for (int r = 0; r < rt->world->size; r++) {
                snprintf(path, sizeof path, "%s/rank-%05d.bin", rt->saved_dir, r);
                unlink(path);
            }
            rmdir(rt->saved_dir);
        }
    }
    snprintf(rt->saved_dir, sizeof rt->saved_dir, "%s", sub);
    return agree(rt, rc, err);
}

/* The first field where a and b differ, NULL if none: the layout's
 * fields (layout != 0) or the model's and the device's. */
static const char *differs(const ckpt_head *a, const ckpt_head *b, int layout)
{
#define CMP(f)                                                                                  \
    if (a->f != b->f)                                                                           \
        return #f;
    if (layout) {
        CMP(world) CMP(rank) CMP(tp) CMP(pp) CMP(dp) CMP(virt) CMP(sharding) CMP(param_numel)
        CMP(held_numel) CMP(dp_bucket_bytes)
    } else {
        CMP(version) CMP(layers) CMP(hidden) CMP(heads) CMP(kv_heads) CMP(ffn) CMP(seq)
        CMP(vocab) CMP(arch) CMP(tied) CMP(gated) CMP(elem_bytes) CMP(state_bytes)
    }
#undef CMP
    return NULL;
}

/* Element i of a raw buffer of elements of size eb (the CPU devices' f32
 * and f64). */
static double raw_at(const char *p, size_t eb, int64_t i)
{
    if (eb == 4) {
        float f;
        memcpy(&f, p + (size_t)i * 4, 4);
        return f;
    }
    double d;
    memcpy(&d, p + (size_t)i * 8, 8);
    return d;
}

/* The whole model's parameters and moments (global order) from the files
 * of every rank of the layout that wrote the checkpoint. With master
 * weights (master: this device keeps them, and so did the writer, whose
 * device type was checked) a parameter is its master's value, taken from
 * the rank that updates it. */
static int read_global(exec_rt *rt, const char *subdir, const ckpt_head *mine, double *P,
                       double *M, double *V, int64_t *step, st_err *err)
{
    char path[EXEC_PATH_MAX + 96];
    int rc = ST_OK;
    int master = rt->opt.master != NULL;
    for (int64_t r = 0; rc == ST_OK && r < mine->world; r++) {
        char *buf = NULL;
        size_t len = 0;
        snprintf(path, sizeof path, "%s/rank-%05d.bin", subdir, (int)r);
        if ((rc = exec__read_file(path, &buf, &len, err)))
            break;
        ckpt_head h;
        const char *bad = NULL;
        if (len < sizeof h || memcmp(buf, CKPT_MAGIC, 8) != 0) {
            rc = ST_RAISE(err, ST_EPARSE, "%s: not a checkpoint", path);
        } else {
            memcpy(&h, buf, sizeof h);
            if ((bad = differs(&h, mine, 0)) || h.world != mine->world || h.step != mine->step)
                rc = ST_RAISE(err, ST_EINVAL, "%s: written with %s different from the other "
                              "files or this run", path, bad ? bad : "world or step");
            else if ((master ? h.state_bytes : h.elem_bytes) != 4 &&
                     (master ? h.state_bytes : h.elem_bytes) != 8)
                rc = ST_RAISE(err, ST_EUNSUPPORTED, "%s: %lld-byte parameters cannot be "
                              "resharded", path,
                              (long long)(master ? h.state_bytes : h.elem_bytes));
        }
        plan_layout ol = rt->cfg->layout;
        exec_model om;
        memset(&om, 0, sizeof om);
        if (rc == ST_OK) {
            ol.tp = (int)h.tp;
            ol.pp = (int)h.pp;
            ol.dp = (int)h.dp;
            ol.virtual_stages = (int)h.virt;
            ol.sharding = (plan_sharding)h.sharding;
            ol.dp_bucket_bytes = h.dp_bucket_bytes;
            ol.sequence_parallel = 0; /* does not change how parameters are held */
            om.m = &rt->cfg->model;
            om.l = &ol;
            om.tp_rank = (int)h.tp_rank;
            om.dp_rank = (int)h.dp_rank;
            rc = exec_model_tables(&om, (int)h.pp_rank, (size_t)h.elem_bytes, err);
        }
        size_t eb = (size_t)h.elem_bytes, sb = (size_t)h.state_bytes;
        size_t mb = master ? (size_t)h.held_numel * sb : 0;
        if (rc == ST_OK && (h.param_numel != (om.zero3 ? om.held_numel : om.flat_numel) ||
                            h.held_numel != om.held_numel ||
                            len != sizeof h + (size_t)h.param_numel * eb + mb +
                                       2 * (size_t)h.held_numel * sb))
            rc = ST_RAISE(err, ST_EPARSE, "%s: its sizes do not match the layout it names", path);
        const char *pp = buf + sizeof h, *pmaster = pp + (size_t)h.param_numel * eb,
                   *pm = pmaster + mb, *pv = pm + (size_t)h.held_numel * sb;
        for (int bi = 0; rc == ST_OK && bi < om.nb; bi++) {
            const exec_bucket *b = &om.b[bi];
            for (int ui = b->unit0; ui < b->unit0 + b->nunits; ui++)
                for (int role = 0; role < R__COUNT; role++) {
                    int ti = om.u[ui].tensor[role];
                    if (ti < 0)
                        continue;
                    const exec_tensor *t = &om.t[ti];
                    int64_t e0 = om.u[ui].off + t->off;
                    for (int64_t k = 0; k < t->numel; k++) {
                        int64_t e = e0 + k, g = exec_tensor_global(&om, t, k);
                        int held = e >= b->held_off && e < b->held_off + b->held_len;
                        if (held) {
                            int64_t s = b->shard_off + (e - b->held_off);
                            M[g] = raw_at(pm, sb, s);
                            V[g] = raw_at(pv, sb, s);
                            if (master)
                                P[g] = raw_at(pmaster, sb, s);
                            else if (om.zero3)
                                P[g] = raw_at(pp, eb, s);
                        }
                        if (!om.zero3 && !master)
                            P[g] = raw_at(pp, eb, e);
                    }
                }
        }
        *step = h.step;
        exec_model_free(&om);
        free(buf);
    }
    return rc;
}

/* Upload n doubles into a buffer of the device's state type (f32 or f64),
 * each rounded as C converts (to nearest even). */
static void upload_state(exec_dev *dev, void *dst, const double *src, int64_t n)
{
    if (dev->state_bytes == sizeof(double)) {
        dev->ops->upload(dev, dst, src, (size_t)n * sizeof(double));
        return;
    }
    float *f = malloc((size_t)(n > 0 ? n : 1) * sizeof *f);
    if (!f)
        return;
    for (int64_t i = 0; i < n; i++)
        f[i] = (float)src[i];
    dev->ops->upload(dev, dst, f, (size_t)n * sizeof *f);
    free(f);
}

/* Fill this rank's parameters and moments (and master weights) from the
 * global arrays. ST_ENOMEM when the host buffers cannot be had. */
static int take_global(exec_rt *rt, const double *P, const double *M, const double *V,
                       st_err *err)
{
    exec_model *x = &rt->x;
    exec_dev *dev = rt->dev;
    double *pbuf = malloc((size_t)(x->zero3 ? x->held_numel : x->flat_numel) * sizeof *pbuf);
    double *mbuf = malloc((size_t)x->held_numel * sizeof *mbuf);
    double *vbuf = malloc((size_t)x->held_numel * sizeof *vbuf);
    double *kbuf = rt->opt.master ? malloc((size_t)x->held_numel * sizeof *kbuf) : NULL;
    if (!pbuf || !mbuf || !vbuf || (rt->opt.master && !kbuf)) {
        free(pbuf), free(mbuf), free(vbuf), free(kbuf);
        return ST_RAISE(err, ST_ENOMEM, "out of memory resharding a checkpoint");
    }
    memset(pbuf, 0, (size_t)(x->zero3 ? x->held_numel : x->flat_numel) * sizeof *pbuf);
    memset(mbuf, 0, (size_t)x->held_numel * sizeof *mbuf);
    memset(vbuf, 0, (size_t)x->held_numel * sizeof *vbuf);
    for (int bi = 0; bi < x->nb; bi++) {
        const exec_bucket *b = &x->b[bi];
        for (int ui = b->unit0; ui < b->unit0 + b->nunits; ui++)
            for (int role = 0; role < R__COUNT; role++) {
                int ti = x->u[ui].tensor[role];
                if (ti < 0)
                    continue;
                const exec_tensor *t = &x->t[ti];
                int64_t e0 = x->u[ui].off + t->off;
                for (int64_t k = 0; k < t->numel; k++) {
                    int64_t e = e0 + k, g = exec_tensor_global(x, t, k);
                    if (e >= b->held_off && e < b->held_off + b->held_len) {
                        int64_t s = b->shard_off + (e - b->held_off);
                        mbuf[s] = M[g];
                        vbuf[s] = V[g];
                        if (kbuf)
                            kbuf[s] = P[g];
                        if (x->zero3)
                            pbuf[s] = P[g];
                    }
                    if (!x->zero3)
                        pbuf[e] = P[g];
                }
            }
    }
    /* the parameters in their own type (a bf16 one the rounding of its
     * master), the moments and master weights in the state type */
    dev->ops->upload_f64(dev, x->zero3 ? x->pshard : x->params, pbuf,
                         x->zero3 ? x->held_numel : x->flat_numel);
    upload_state(dev, rt->opt.m, mbuf, x->held_numel);
    upload_state(dev, rt->opt.v, vbuf, x->held_numel);
    if (kbuf)
        upload_state(dev, rt->opt.master, kbuf, x->held_numel);
    free(pbuf), free(mbuf), free(vbuf), free(kbuf);
    return dev->ops->sync(dev, err);
}

static int reshard(exec_rt *rt, const char *subdir, const ckpt_head *want, const ckpt_head *got,
                   st_err *err)
{
    if (rt->dev->ops->state_dtype != rt->dev->ops->dtype && !rt->opt.master)
        return ST_RAISE(err, ST_EUNSUPPORTED, "device %s: resharding needs moments of the "
                        "parameters' type, or master weights", rt->dev->ops->name);
    int64_t n = 0;
    for (int g = 0; g < rt->x.ngt; g++)
        n += rt->x.gt[g].rows * rt->x.gt[g].cols;
    double *P = calloc((size_t)n, sizeof *P), *M = calloc((size_t)n, sizeof *M),
           *V = calloc((size_t)n, sizeof *V);
    if (!P || !M || !V) {
        free(P), free(M), free(V);
        return ST_RAISE(err, ST_ENOMEM, "out of memory resharding a checkpoint of %lld "
                        "parameters", (long long)n);
    }
    ckpt_head old = *got;
    old.step = got->step;
    int64_t step = 0;
    int rc = read_global(rt, subdir, &old, P, M, V, &step, err);
    if (rc == ST_OK && (rc = take_global(rt, P, M, V, err)) == ST_OK)
        rt->step = step;
    free(P), free(M), free(V);
    (void)want;
    return rc;
}

int exec_ckpt_load(exec_rt *rt, const char *dir, st_err *err)
{
    char path[EXEC_PATH_MAX + 64], subdir[EXEC_PATH_MAX + 32], *text = NULL, *buf = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/latest.json", dir);
    int rc = exec__read_file(path, &text, NULL, err);
    if (rc != ST_OK)
        return agree(rt, rc, err);
    cJSON *j = cJSON_Parse(text);
    free(text);
    const cJSON *sub = j ? cJSON_GetObjectItemCaseSensitive(j, "dir") : NULL;
    if (!cJSON_IsString(sub) || strchr(sub->valuestring, '/')) {
        cJSON_Delete(j);
        return agree(rt, ST_RAISE(err, ST_EPARSE, "%s: no checkpoint directory named", path), err);
    }
    snprintf(subdir, sizeof subdir, "%s/%s", dir, sub->valuestring);
    cJSON_Delete(j);
    /* this rank's file if the layout is the same, rank 0's otherwise */
    snprintf(path, sizeof path, "%s/rank-%05d.bin", subdir, rt->rank);
    rc = exec__read_file(path, &buf, &len, err);
    if (rc == ST_ENOENT) {
        st_err_clear(err);
        snprintf(path, sizeof path, "%s/rank-%05d.bin", subdir, 0);
        rc = exec__read_file(path, &buf, &len, err);
    }
    ckpt_head want, got;
    fill_head(rt, &want);
    size_t pbytes = (size_t)want.param_numel * rt->dev->elem_bytes;
    size_t sbytes = (size_t)want.held_numel * rt->dev->state_bytes;
    size_t mbytes = rt->opt.master ? sbytes : 0;
    const char *bad = NULL;
    int same = 0;
    if (rc == ST_OK) {
        if (len < sizeof got) {
            rc = ST_RAISE(err, ST_EPARSE, "%s: truncated checkpoint", path);
        } else {
            memcpy(&got, buf, sizeof got);
            if (memcmp(got.magic, CKPT_MAGIC, 8) != 0)
                rc = ST_RAISE(err, ST_EPARSE, "%s: not a checkpoint", path);
            else if ((bad = differs(&got, &want, 0)))
                rc = ST_RAISE(err, ST_EINVAL, "%s: written with %s different from this run's (a "
                              "checkpoint loads on the model and device that wrote it)",
                              path, bad);
            else if (got.step < 0 || got.step > rt->cfg->train.steps)
                rc = ST_RAISE(err, ST_EINVAL, "%s: step %lld outside this run's %lld steps", path,
                              (long long)got.step, (long long)rt->cfg->train.steps);
            else
                same = got.rank == rt->rank && !differs(&got, &want, 1);
        }
    }
    /* every rank takes the same path (resharding reads every file): agree
     * on the status first, then on whether every rank has its own file */
    if ((rc = agree(rt, rc, err))) {
        free(buf);
        return rc;
    }
    int64_t all_same = same;
    if ((rc = exec_comm_allreduce(rt->world, &all_same, &all_same, 1, EXEC_DT_I64, EXEC_RED_SUM,
                                  NULL, err))) {
        free(buf);
        return rc;
    }
    same = all_same == rt->world->size;
    if (rc == ST_OK && same) {
        if (len != sizeof got + pbytes + mbytes + 2 * sbytes) {
            rc = ST_RAISE(err, ST_EPARSE, "%s: %zu bytes, expected %zu", path, len,
                          sizeof got + pbytes + mbytes + 2 * sbytes);
        } else {
            exec_dev *dev = rt->dev;
            const char *at = buf + sizeof got;
            dev->ops->upload(dev, param_buf(rt), at, pbytes);
            at += pbytes;
            if (mbytes) /* the master weights as saved, not widened again */
                dev->ops->upload(dev, rt->opt.master, at, mbytes);
            at += mbytes;
            dev->ops->upload(dev, rt->opt.m, at, sbytes);
            dev->ops->upload(dev, rt->opt.v, at + sbytes, sbytes);
            rc = dev->ops->sync(dev, err);
            if (rc == ST_OK)
                rt->step = got.step;
        }
    } else if (rc == ST_OK) {
        rc = reshard(rt, subdir, &want, &got, err);
    }
    free(buf);
    return agree(rt, rc, err);
}
