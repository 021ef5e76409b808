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
 *
 * A rank file is checked whole before any of it is used (exec_ckpt_parse:
 * every header field in range, the length, a sum per payload, see
 * exec_ckpt.h), and its header against the run: the model and device, and
 * for resharding a layout this model can have, each file the rank it is
 * named for and each place in the layout held by one file. A damaged or
 * crafted file is refused with one line, never read out of bounds.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "exec/exec_ckpt.h"
#include "exec/exec_int.h"
#include "exec/exec_rt.h"
#include "sim/sim_schedule.h"

typedef exec_ckpt_head ckpt_head;

/* Every field is 8 bytes, so the header has no padding (its sum covers
 * every byte of it but the sum) and reads the same on every compiler. */
_Static_assert(sizeof(exec_ckpt_head) == 31 * 8, "exec_ckpt_head has padding");
_Static_assert(offsetof(exec_ckpt_head, head_sum) == sizeof(exec_ckpt_head) - 8,
               "head_sum is not the header's last field");

/* ---- the file format (exec_ckpt.h) ---- */

/* FNV-1a, 64 bits (Fowler, Noll and Vo; IETF draft-eastlake-fnv: offset
 * basis 14695981039346656037, prime 1099511628211), taken over 8-byte words
 * (the tail zero-padded) instead of bytes, eight times fewer
 * multiplications, then the length. A step h = (h ^ w) * prime is a
 * bijection of h for any word w (the prime is odd, so multiplying by it is
 * invertible modulo 2^64): two inputs of one length that differ in one word
 * differ after that word and stay different to the end, so any single
 * flipped bit, or any damage within one word, always changes the sum;
 * wider damage goes unnoticed with probability about 2^-64. */
#define FNV64_BASIS 14695981039346656037ull
#define FNV64_PRIME 1099511628211ull

uint64_t exec_ckpt_sum(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = FNV64_BASIS, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, b + i, 8);
        h = (h ^ w) * FNV64_PRIME;
    }
    if (i < n) {
        w = 0;
        memcpy(&w, b + i, n - i);
        h = (h ^ w) * FNV64_PRIME;
    }
    return (h ^ (uint64_t)n) * FNV64_PRIME;
}

size_t exec_ckpt_layout(const exec_ckpt_head *h, size_t off[EXEC_CKPT__PARTS],
                        size_t bytes[EXEC_CKPT__PARTS])
{
    size_t state = (size_t)h->held_numel * (size_t)h->state_bytes;
    bytes[EXEC_CKPT_PARAMS] = (size_t)h->param_numel * (size_t)h->elem_bytes;
    bytes[EXEC_CKPT_MASTER] = h->has_master ? state : 0;
    bytes[EXEC_CKPT_M] = state;
    bytes[EXEC_CKPT_V] = state;
    size_t at = sizeof *h;
    for (int i = 0; i < EXEC_CKPT__PARTS; i++) {
        off[i] = at;
        at += bytes[i] + EXEC_CKPT_SUM_BYTES;
    }
    return at;
}

void exec_ckpt_seal(char *file, const exec_ckpt_head *h)
{
    size_t off[EXEC_CKPT__PARTS], bytes[EXEC_CKPT__PARTS];
    exec_ckpt_layout(h, off, bytes);
    exec_ckpt_head sealed = *h;
    sealed.head_sum = exec_ckpt_sum(&sealed, offsetof(exec_ckpt_head, head_sum));
    memcpy(file, &sealed, sizeof sealed);
    for (int i = 0; i < EXEC_CKPT__PARTS; i++) {
        uint64_t sum = exec_ckpt_sum(file + off[i], bytes[i]);
        memcpy(file + off[i] + bytes[i], &sum, sizeof sum);
    }
}

/* The ranges of the header's integer fields: the config's own limits
 * (exec_config.c) for the model and the layout. Element counts stop at
 * 2^53, more than any rank holds, so no size computed from them overflows. */
#define CKPT_NUMEL_MAX ((int64_t)1 << 53)
static const struct {
    const char *name;
    size_t off;
    int64_t lo, hi;
} head_fields[] = {
#define F(f, lo, hi) {#f, offsetof(exec_ckpt_head, f), (lo), (hi)}
    F(world, 1, INT_MAX), F(rank, 0, INT_MAX - 1), F(tp, 1, 4096), F(pp, 1, PLAN_PP_MAX),
    F(dp, 1, 1 << 20), F(virt, 1, SIM_SCHED_MAX_VIRTUAL), F(sharding, 0, PLAN_SHARD__COUNT - 1),
    F(layers, 1, PLAN_MAX_LAYERS), F(hidden, 1, PLAN_MAX_HIDDEN), F(heads, 1, PLAN_MAX_HEADS),
    F(kv_heads, 1, PLAN_MAX_HEADS), F(ffn, 1, 16 * (int64_t)PLAN_MAX_HIDDEN),
    F(seq, 1, PLAN_MAX_SEQ), F(vocab, 2, PLAN_MAX_VOCAB), F(arch, PLAN_ARCH_GPT, PLAN_ARCH_LLAMA),
    F(tied, 0, 1), F(gated, 0, 1), F(elem_bytes, 2, 8), F(state_bytes, 4, 8),
    F(param_numel, 0, CKPT_NUMEL_MAX), F(held_numel, 0, CKPT_NUMEL_MAX),
    F(seed, 0, (int64_t)1 << 53), F(step, 0, (int64_t)1 << 40), F(tp_rank, 0, 4095),
    F(pp_rank, 0, PLAN_PP_MAX - 1), F(dp_rank, 0, (1 << 20) - 1), F(has_master, 0, 1),
#undef F
};

int exec_ckpt_parse(const void *buf, size_t len, const char *path, exec_ckpt_view *v,
                    st_err *err)
{
    const char *file = buf;
    exec_ckpt_head *h = &v->h;
    memset(v, 0, sizeof *v);
    int64_t version = 0;
    if (len < 16 || memcmp(file, EXEC_CKPT_MAGIC, 8) != 0)
        return ST_RAISE(err, ST_EPARSE, "%s: not a checkpoint (it does not start with %s)",
                        path, EXEC_CKPT_MAGIC);
    memcpy(&version, file + 8, sizeof version);
    if (version == 1)
        return ST_RAISE(err, ST_EPARSE, "%s: checkpoint format version 1, without checksums: "
                        "this build reads version %d (resume with the build that wrote it, or "
                        "start afresh)", path, EXEC_CKPT_VERSION);
    if (version != EXEC_CKPT_VERSION)
        return ST_RAISE(err, ST_EPARSE, "%s: checkpoint format version %lld: this build reads "
                        "version %d", path, (long long)version, EXEC_CKPT_VERSION);
    if (len < sizeof *h)
        return ST_RAISE(err, ST_EPARSE, "%s: truncated checkpoint: %zu bytes, its header alone "
                        "has %zu", path, len, sizeof *h);
    memcpy(h, file, sizeof *h);
    if (exec_ckpt_sum(file, offsetof(exec_ckpt_head, head_sum)) != h->head_sum)
        return ST_RAISE(err, ST_EPARSE, "%s: the checkpoint's header is damaged (its checksum "
                        "does not match)", path);
    for (size_t i = 0; i < sizeof head_fields / sizeof head_fields[0]; i++) {
        int64_t x;
        memcpy(&x, (const char *)h + head_fields[i].off, sizeof x);
        if (x < head_fields[i].lo || x > head_fields[i].hi)
            return ST_RAISE(err, ST_EPARSE, "%s: header field %s %lld: must be in %lld..%lld",
                            path, head_fields[i].name, (long long)x,
                            (long long)head_fields[i].lo, (long long)head_fields[i].hi);
    }
    if (h->elem_bytes != 2 && h->elem_bytes != 4 && h->elem_bytes != 8)
        return ST_RAISE(err, ST_EPARSE, "%s: header field elem_bytes %lld: must be 2, 4 or 8",
                        path, (long long)h->elem_bytes);
    if (h->state_bytes != 4 && h->state_bytes != 8)
        return ST_RAISE(err, ST_EPARSE, "%s: header field state_bytes %lld: must be 4 or 8",
                        path, (long long)h->state_bytes);
    if (!(h->dp_bucket_bytes >= 0 && h->dp_bucket_bytes <= 1e15))
        return ST_RAISE(err, ST_EPARSE, "%s: header field dp_bucket_bytes %g: must be in 0..1e15",
                        path, h->dp_bucket_bytes);
    if (h->tp * h->pp * h->dp != h->world)
        return ST_RAISE(err, ST_EPARSE, "%s: header: tp %lld x pp %lld x dp %lld is not its "
                        "world of %lld ranks", path, (long long)h->tp, (long long)h->pp,
                        (long long)h->dp, (long long)h->world);
    if (h->rank >= h->world || h->tp_rank >= h->tp || h->pp_rank >= h->pp || h->dp_rank >= h->dp)
        return ST_RAISE(err, ST_EPARSE, "%s: header: rank %lld (tp %lld, pp %lld, dp %lld) is "
                        "outside its layout of tp %lld x pp %lld x dp %lld", path,
                        (long long)h->rank, (long long)h->tp_rank, (long long)h->pp_rank,
                        (long long)h->dp_rank, (long long)h->tp, (long long)h->pp,
                        (long long)h->dp);
    if (h->kv_heads > h->heads || h->held_numel > h->param_numel)
        return ST_RAISE(err, ST_EPARSE, "%s: header: %lld kv heads of %lld heads, %lld elements "
                        "held of %lld: more than the whole", path, (long long)h->kv_heads,
                        (long long)h->heads, (long long)h->held_numel,
                        (long long)h->param_numel);
    size_t off[EXEC_CKPT__PARTS], bytes[EXEC_CKPT__PARTS];
    size_t want = exec_ckpt_layout(h, off, bytes);
    if (len != want)
        return ST_RAISE(err, ST_EPARSE, "%s: %zu bytes, its header makes it %zu (truncated or "
                        "damaged)", path, len, want);
    static const char *const part_names[EXEC_CKPT__PARTS] = {"parameters", "master weights",
                                                             "first moments", "second moments"};
    for (int i = 0; i < EXEC_CKPT__PARTS; i++) {
        uint64_t sum;
        memcpy(&sum, file + off[i] + bytes[i], sizeof sum);
        if (exec_ckpt_sum(file + off[i], bytes[i]) != sum)
            return ST_RAISE(err, ST_EPARSE, "%s: its %s are damaged (their checksum does not "
                            "match)", path, part_names[i]);
        v->part[i] = file + off[i];
        v->part_bytes[i] = bytes[i];
    }
    return ST_OK;
}

/* ---- saving and loading ---- */

static void fill_head(const exec_rt *rt, ckpt_head *h)
{
    const plan_model *m = &rt->cfg->model;
    const plan_layout *l = &rt->cfg->layout;
    const exec_model *x = &rt->x;
    memset(h, 0, sizeof *h);
    memcpy(h->magic, EXEC_CKPT_MAGIC, 8);
    h->version = EXEC_CKPT_VERSION;
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
    h->has_master = rt->opt.master != NULL;
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
    size_t off[EXEC_CKPT__PARTS], bytes[EXEC_CKPT__PARTS];
    size_t total = exec_ckpt_layout(&h, off, bytes);
    char *buf = malloc(total);
    if (!buf) {
        rc = ST_RAISE(err, ST_ENOMEM, "out of memory writing a checkpoint");
    } else {
        dev->ops->download(dev, buf + off[EXEC_CKPT_PARAMS], param_buf(rt),
                           bytes[EXEC_CKPT_PARAMS]);
        if (bytes[EXEC_CKPT_MASTER])
            dev->ops->download(dev, buf + off[EXEC_CKPT_MASTER], rt->opt.master,
                               bytes[EXEC_CKPT_MASTER]);
        dev->ops->download(dev, buf + off[EXEC_CKPT_M], rt->opt.m, bytes[EXEC_CKPT_M]);
        dev->ops->download(dev, buf + off[EXEC_CKPT_V], rt->opt.v, bytes[EXEC_CKPT_V]);
        /* a device whose copies can fail later (CUDA) says so at its sync;
         * the sums are of what arrived */
        rc = dev->ops->sync(dev, err);
        if (rc == ST_OK)
            exec_ckpt_seal(buf, &h);
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
        cJSON_AddNumberToObject(j, "version", EXEC_CKPT_VERSION);
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
        CMP(has_master)
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

/* Check the header of rank r's file against the first file's (first) and
 * this run: the model and device, the world, the step and the layout the
 * first names; the rank it is named for; a place in the layout no other
 * file held (seen: one flag per place). Then the layout must be one this
 * model can have (exec__layout_check), as exec_model_tables needs. */
static int check_other(const exec_rt *rt, const char *path, int64_t r, const ckpt_head *h,
                       const ckpt_head *first, const plan_layout *ol, unsigned char *seen,
                       st_err *err)
{
    const char *bad = differs(h, first, 0);
    if (!bad && h->world != first->world)
        bad = "world";
    if (!bad && h->step != first->step)
        bad = "step";
#define SAME(f)                                                                                 \
    if (!bad && h->f != first->f)                                                               \
        bad = #f;
    SAME(tp) SAME(pp) SAME(dp) SAME(virt) SAME(sharding) SAME(dp_bucket_bytes)
#undef SAME
    if (bad)
        return ST_RAISE(err, ST_EINVAL, "%s: written with %s different from the other files "
                        "or this run", path, bad);
    if (h->rank != r)
        return ST_RAISE(err, ST_EINVAL, "%s: its header names rank %lld", path,
                        (long long)h->rank);
    int64_t place = (h->tp_rank * h->pp + h->pp_rank) * h->dp + h->dp_rank;
    if (seen[place]++)
        return ST_RAISE(err, ST_EINVAL, "%s: tp rank %lld, pp rank %lld, dp rank %lld: another "
                        "file holds that place", path, (long long)h->tp_rank,
                        (long long)h->pp_rank, (long long)h->dp_rank);
    int master = rt->opt.master != NULL;
    int64_t eb = master ? h->state_bytes : h->elem_bytes;
    if (eb != 4 && eb != 8)
        return ST_RAISE(err, ST_EUNSUPPORTED, "%s: %lld-byte parameters cannot be resharded",
                        path, (long long)eb);
    st_err e = {0};
    if (exec__layout_check(&rt->cfg->model, ol, &e) != ST_OK)
        return ST_RAISE(err, ST_EINVAL, "%s: written on a layout this model cannot have: %s",
                        path, e.msg);
    return ST_OK;
}

/* The whole model's parameters and moments (global order) from the files
 * of every rank of the layout that wrote the checkpoint (first: the header
 * exec_ckpt_load read, already checked against this run). With master
 * weights (master: this device keeps them, and so did the writer, whose
 * device type was checked) a parameter is its master's value, taken from
 * the rank that updates it. */
static int read_global(exec_rt *rt, const char *subdir, const ckpt_head *first, double *P,
                       double *M, double *V, int64_t *step, st_err *err)
{
    char path[EXEC_PATH_MAX + 96];
    int master = rt->opt.master != NULL;
    unsigned char *seen = calloc((size_t)first->world, 1);
    if (!seen)
        return ST_RAISE(err, ST_ENOMEM, "out of memory resharding a checkpoint of %lld ranks",
                        (long long)first->world);
    int rc = ST_OK;
    for (int64_t r = 0; rc == ST_OK && r < first->world; r++) {
        char *buf = NULL;
        size_t len = 0;
        snprintf(path, sizeof path, "%s/rank-%05lld.bin", subdir, (long long)r);
        if ((rc = exec__read_file(path, &buf, &len, err)))
            break;
        exec_ckpt_view cv;
        memset(&cv, 0, sizeof cv);
        const ckpt_head *h = &cv.h;
        plan_layout ol = rt->cfg->layout;
        exec_model om;
        memset(&om, 0, sizeof om);
        rc = exec_ckpt_parse(buf, len, path, &cv, err);
        if (rc == ST_OK) {
            ol.tp = (int)h->tp;
            ol.pp = (int)h->pp;
            ol.dp = (int)h->dp;
            ol.virtual_stages = (int)h->virt;
            ol.sharding = (plan_sharding)h->sharding;
            ol.dp_bucket_bytes = h->dp_bucket_bytes;
            ol.sequence_parallel = 0; /* does not change how parameters are held */
            rc = check_other(rt, path, r, h, first, &ol, seen, err);
        }
        if (rc == ST_OK) {
            om.m = &rt->cfg->model;
            om.l = &ol;
            om.tp_rank = (int)h->tp_rank;
            om.dp_rank = (int)h->dp_rank;
            rc = exec_model_tables(&om, (int)h->pp_rank, (size_t)h->elem_bytes, err);
        }
        if (rc == ST_OK && (h->param_numel != (om.zero3 ? om.held_numel : om.flat_numel) ||
                            h->held_numel != om.held_numel))
            rc = ST_RAISE(err, ST_EPARSE, "%s: its sizes do not match the layout it names", path);
        size_t eb = (size_t)h->elem_bytes, sb = (size_t)h->state_bytes;
        const char *pp = cv.part[EXEC_CKPT_PARAMS], *pmaster = cv.part[EXEC_CKPT_MASTER],
                   *pm = cv.part[EXEC_CKPT_M], *pv = cv.part[EXEC_CKPT_V];
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
        *step = h->step;
        exec_model_free(&om);
        free(buf);
    }
    free(seen);
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

static int reshard(exec_rt *rt, const char *subdir, const ckpt_head *got, st_err *err)
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
    int64_t step = 0;
    int rc = read_global(rt, subdir, got, P, M, V, &step, err);
    if (rc == ST_OK && (rc = take_global(rt, P, M, V, err)) == ST_OK)
        rt->step = step;
    free(P), free(M), free(V);
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
    if (!cJSON_IsString(sub) || strchr(sub->valuestring, '/') || !strcmp(sub->valuestring, "") ||
        !strcmp(sub->valuestring, ".") || !strcmp(sub->valuestring, "..")) {
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
    ckpt_head want;
    fill_head(rt, &want);
    exec_ckpt_view cv;
    memset(&cv, 0, sizeof cv);
    const ckpt_head *got = &cv.h;
    const char *bad = NULL;
    int same = 0;
    if (rc == ST_OK && (rc = exec_ckpt_parse(buf, len, path, &cv, err)) == ST_OK) {
        if ((bad = differs(got, &want, 0)))
            rc = ST_RAISE(err, ST_EINVAL, "%s: written with %s different from this run's (a "
                          "checkpoint loads on the model and device that wrote it)", path, bad);
        else if (got->step > rt->cfg->train.steps)
            rc = ST_RAISE(err, ST_EINVAL, "%s: step %lld outside this run's %lld steps", path,
                          (long long)got->step, (long long)rt->cfg->train.steps);
        else
            same = got->rank == rt->rank && !differs(got, &want, 1);
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
        /* the same layout, model and device (differs): each payload has
         * the size of the buffer it fills */
        exec_dev *dev = rt->dev;
        dev->ops->upload(dev, param_buf(rt), cv.part[EXEC_CKPT_PARAMS],
                         cv.part_bytes[EXEC_CKPT_PARAMS]);
        if (cv.part_bytes[EXEC_CKPT_MASTER]) /* the master weights as saved, not widened again */
            dev->ops->upload(dev, rt->opt.master, cv.part[EXEC_CKPT_MASTER],
                             cv.part_bytes[EXEC_CKPT_MASTER]);
        dev->ops->upload(dev, rt->opt.m, cv.part[EXEC_CKPT_M], cv.part_bytes[EXEC_CKPT_M]);
        dev->ops->upload(dev, rt->opt.v, cv.part[EXEC_CKPT_V], cv.part_bytes[EXEC_CKPT_V]);
        rc = dev->ops->sync(dev, err);
        if (rc == ST_OK)
            rt->step = got->step;
    } else if (rc == ST_OK) {
        rc = reshard(rt, subdir, got, err);
    }
    free(buf);
    return agree(rt, rc, err);
}
