/*
 * exec_ckpt.c: checkpoints. A checkpoint of step S is a directory
 * DIR/step-SSSSSSSS/ with one file per rank (rank-NNNNN.bin: a header
 * naming the layout, the model, the seed and the step, then the rank's
 * parameters, or its ZeRO-3 shards, and its AdamW m and v), and
 * DIR/latest.json naming the newest complete one. Every file is written
 * atomically (temp file, fsync, rename); latest.json is replaced only after
 * every rank's file is in place (a barrier), so a crash while saving leaves
 * the previous checkpoint in force. The data position is the step (the
 * sequences of a step are a function of it, exec_data.h) and the
 * initialisation and the synthetic data are counter-based functions of the
 * seed, so no generator state needs keeping: a resumed run on the same
 * layout continues bit for bit.
 *
 * A checkpoint loads only on the layout that wrote it (resharding is not
 * done): the header's layout and model must match, else the load fails
 * with the difference named.
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
    size_t total = sizeof h + pbytes + 2 * sbytes;
    char *buf = malloc(total);
    if (!buf) {
        rc = ST_RAISE(err, ST_ENOMEM, "out of memory writing a checkpoint");
    } else {
        memcpy(buf, &h, sizeof h);
        dev->ops->download(dev, buf + sizeof h, param_buf(rt), pbytes);
        dev->ops->download(dev, buf + sizeof h + pbytes, rt->opt.m, sbytes);
        dev->ops->download(dev, buf + sizeof h + pbytes + sbytes, rt->opt.v, sbytes);
        snprintf(path, sizeof path, "%s/rank-%05d.bin", sub, rt->rank);
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

/* The first field where a and b differ, NULL if none. */
static const char *differs(const ckpt_head *a, const ckpt_head *b)
{
#define CMP(f)                                                                                  \
    if (a->f != b->f)                                                                           \
        return #f;
    CMP(version) CMP(world) CMP(rank) CMP(tp) CMP(pp) CMP(dp) CMP(virt) CMP(sharding)
    CMP(layers) CMP(hidden) CMP(heads) CMP(kv_heads) CMP(ffn) CMP(seq) CMP(vocab) CMP(arch)
    CMP(tied) CMP(gated) CMP(elem_bytes) CMP(state_bytes) CMP(param_numel) CMP(held_numel)
    CMP(seed)
#undef CMP
    return NULL;
}

int exec_ckpt_load(exec_rt *rt, const char *dir, st_err *err)
{
    char path[EXEC_PATH_MAX + 64], *text = NULL, *buf = NULL;
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
    snprintf(path, sizeof path, "%s/%s/rank-%05d.bin", dir, sub->valuestring, rt->rank);
    cJSON_Delete(j);
    rc = exec__read_file(path, &buf, &len, err);
    ckpt_head want, got;
    fill_head(rt, &want);
    size_t pbytes = (size_t)want.param_numel * rt->dev->elem_bytes;
    size_t sbytes = (size_t)want.held_numel * rt->dev->state_bytes;
    if (rc == ST_OK) {
        const char *bad = NULL;
        if (len < sizeof got) {
            rc = ST_RAISE(err, ST_EPARSE, "%s: truncated checkpoint", path);
        } else {
            memcpy(&got, buf, sizeof got);
            if (memcmp(got.magic, CKPT_MAGIC, 8) != 0)
                rc = ST_RAISE(err, ST_EPARSE, "%s: not a checkpoint", path);
            else if ((bad = differs(&got, &want)))
                rc = ST_RAISE(err, ST_EINVAL, "%s: written with %s different from this run's (a "
                              "checkpoint loads on the layout and model that wrote it)",
                              path, bad);
            else if (len != sizeof got + pbytes + 2 * sbytes)
                rc = ST_RAISE(err, ST_EPARSE, "%s: %zu bytes, expected %zu", path, len,
                              sizeof got + pbytes + 2 * sbytes);
        }
    }
    if (rc == ST_OK) {
        exec_dev *dev = rt->dev;
        dev->ops->upload(dev, param_buf(rt), buf + sizeof got, pbytes);
        dev->ops->upload(dev, rt->opt.m, buf + sizeof got + pbytes, sbytes);
        dev->ops->upload(dev, rt->opt.v, buf + sizeof got + pbytes + sbytes, sbytes);
        if (got.step < 0 || got.step > rt->cfg->train.steps)
            rc = ST_RAISE(err, ST_EINVAL, "%s: step %lld outside this run's %lld steps", path,
                          (long long)got.step, (long long)rt->cfg->train.steps);
        else
            rt->step = got.step;
    }
    free(buf);
    return agree(rt, rc, err);
}
