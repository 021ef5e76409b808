/*
 * exec_config.c: CONFIG.json (version 1) and RESULT.json (version 1), the
 * contract between the rank program and `smdplan exec`, read and written
 * with cJSON.
 *
 * Reading is strict: an unknown key, a wrong type or a value out of range is
 * one line naming the key and what is allowed (a typo never silently falls
 * back to a default). A missing key keeps exec_config_default's value. Knobs
 * of the layout the executor does not run are refused by name here, on every
 * rank, before any work starts.
 */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "exec/exec.h"
#include "exec/exec_dev.h"
#include "exec/exec_int.h"
#include "planner/plan_fields.h"
#include "sim/sim_schedule.h"

static const char *const data_names[EXEC_DATA__COUNT] = {"synthetic", "text", "tokens"};

const char *exec_data_kind_name(exec_data_kind k)
{
    return (unsigned)k < EXEC_DATA__COUNT ? data_names[k] : "?";
}

static const char *const mem_names[EXEC_MEM__COUNT] = {
    "params", "grads", "optimizer", "activations", "workspace", "comm",
};

const char *exec_mem_class_name(exec_mem_class c)
{
    return (unsigned)c < EXEC_MEM__COUNT ? mem_names[c] : "?";
}

void exec_config_default(exec_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->version = EXEC_CONFIG_VERSION;
    plan_model *m = &cfg->model;
    snprintf(m->name, sizeof m->name, "gpt-tiny");
    snprintf(m->source, sizeof m->source, "executor config");
    m->arch = PLAN_ARCH_GPT;
    m->layers = 4;
    m->hidden = 64;
    m->heads = 4;
    m->kv_heads = 4;
    m->ffn = 256;
    m->seq = 32;
    m->vocab = 256;
    m->tied_embedding = 1;
    m->mlp = PLAN_MLP_ARCH;
    m->dropout = PLAN_DROPOUT_OFF;
    plan_layout *l = &cfg->layout;
    plan_layout_default(l);
    /* the executor's own behaviour, as its profile in data/frameworks.json
     * ("smdplan") describes it to the planner: no overlapped TP or pipeline
     * transfers, gradients reduced in the precision they are kept in, ranks
     * in any order (the rank program reads this layout, not the profiles) */
    l->tp_overlap = 0;
    l->pp_overlap = 0;
    l->fp32_grads = 0;
    l->launch_blocking = 0;
    l->active_microbatches = 1;
    l->dp_overlap = 1;
    l->dp_bucket_bytes = 25e6;
    l->flash_attention = 0;
    l->attention = PLAN_ATTN_UNFUSED;
    l->precision = PLAN_PREC_FP32;
    l->global_batch = 1;
    exec_train *t = &cfg->train;
    t->steps = 20;
    t->seed = 1234;
    t->lr = 3e-4;
    t->min_lr = 3e-5;
    t->warmup_steps = 2;
    t->weight_decay = 0.1;
    t->beta1 = 0.9;
    t->beta2 = 0.95;
    t->eps = 1e-8;
    t->grad_clip = 1.0;
    t->warmup_steps_unmeasured = 1;
    cfg->data_kind = EXEC_DATA_SYNTHETIC;
    snprintf(cfg->device, sizeof cfg->device, "cpu");
    snprintf(cfg->transport, sizeof cfg->transport, "mpi");
    cfg->threads_per_rank = 1;
    cfg->timeout_s = 60;
    cfg->progress = 1;
    cfg->fail_rank = -1;
}

/* ---- reading ---------------------------------------------------------- */

/* One object being read: its path for messages ("layout") and which of its
 * keys were used, so that any other key is reported. */
typedef struct obj {
    const cJSON *j;
    const char *path;
} obj;

static int check_keys(const obj *o, const char *const *allowed, st_err *err)
{
    for (const cJSON *c = o->j->child; c; c = c->next) {
        int ok = 0;
        for (int i = 0; allowed[i]; i++)
            ok |= c->string && strcmp(c->string, allowed[i]) == 0;
        if (!ok) {
            char list[512] = "";
            for (int i = 0; allowed[i]; i++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                         allowed[i]);
            const char *now = plan_field_renamed(c->string);
            return ST_RAISE(err, ST_EINVAL, "config: unknown key %s%s%s%s%s (allowed: %s)",
                            o->path, *o->path ? "." : "", c->string ? c->string : "?",
                            now ? ": it is now " : "", now ? now : "", list);
        }
    }
    return ST_OK;
}

static const cJSON *get(const obj *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o->j, key);
}

static int get_int(const obj *o, const char *key, int64_t lo, int64_t hi, int64_t *out,
                   st_err *err)
{
    const cJSON *v = get(o, key);
    if (!v)
        return ST_OK;
    double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!cJSON_IsNumber(v) || d != floor(d) || d < (double)lo || d > (double)hi)
        return ST_RAISE(err, ST_EINVAL, "config: %s.%s: must be an integer in %lld..%lld",
                        o->path, key, (long long)lo, (long long)hi);
    *out = (int64_t)d;
    return ST_OK;
}

static int get_i(const obj *o, const char *key, int lo, int hi, int *out, st_err *err)
{
    int64_t v = *out;
    int rc = get_int(o, key, lo, hi, &v, err);
    *out = (int)v;
    return rc;
}

static int get_num(const obj *o, const char *key, double lo, double hi, double *out, st_err *err)
{
    const cJSON *v = get(o, key);
    if (!v)
        return ST_OK;
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi))
        return ST_RAISE(err, ST_EINVAL, "config: %s.%s: must be a number in %g..%g", o->path,
                        key, lo, hi);
    *out = v->valuedouble;
    return ST_OK;
}

static int get_bool(const obj *o, const char *key, int *out, st_err *err)
{
    const cJSON *v = get(o, key);
    if (!v)
        return ST_OK;
    if (!cJSON_IsBool(v))
        return ST_RAISE(err, ST_EINVAL, "config: %s%s%s: must be true or false", o->path,
                        *o->path ? "." : "", key);
    *out = cJSON_IsTrue(v);
    return ST_OK;
}

/* A string, or null (empty) when nullable. */
static int get_str(const obj *o, const char *key, int nullable, char *out, size_t n,
                   st_err *err)
{
    const cJSON *v = get(o, key);
    if (!v)
        return ST_OK;
    if (nullable && cJSON_IsNull(v)) {
        out[0] = '\0';
        return ST_OK;
    }
    if (!cJSON_IsString(v))
        return ST_RAISE(err, ST_EINVAL, "config: %s%s%s: must be a string%s", o->path,
                        *o->path ? "." : "", key, nullable ? " or null" : "");
    if (strlen(v->valuestring) >= n)
        return ST_RAISE(err, ST_EINVAL, "config: %s%s%s: longer than %zu characters", o->path,
                        *o->path ? "." : "", key, n - 1);
    snprintf(out, n, "%s", v->valuestring);
    return ST_OK;
}

static int get_obj(const obj *parent, const char *key, obj *out, st_err *err)
{
    out->j = NULL;
    out->path = key;
    const cJSON *v = get(parent, key);
    if (!v)
        return ST_OK;
    if (!cJSON_IsObject(v))
        return ST_RAISE(err, ST_EINVAL, "config: %s: must be an object", key);
    out->j = v;
    return ST_OK;
}

/* The shape's counts (plan_model_finish); a size past the planner's limits
 * is a bad value of the file like any other: ST_EINVAL, as exec.h promises
 * every reader of CONFIG.json (the planner says ST_ERANGE). */
static int finish_model(plan_model *m, st_err *err)
{
    int rc = plan_model_finish(m, err);
    if (rc == ST_ERANGE)
        rc = err->code = ST_EINVAL;
    return rc;
}

static int read_model(const obj *o, plan_model *m, st_err *err)
{
    static const char *const keys[] = {"name", "arch", "layers", "hidden", "heads", "kv_heads",
                                       "head_dim", "sliding_window", "sliding_window_pattern",
                                       "ffn", "seq", "vocab", "tied_embedding", "mlp",
                                       "dropout", NULL};
    int rc;
    char arch[16] = "", mlp[16] = "";
    int dropout = 0;
    if ((rc = check_keys(o, keys, err)) ||
        (rc = get_str(o, "name", 0, m->name, sizeof m->name, err)) ||
        (rc = get_str(o, "arch", 0, arch, sizeof arch, err)) ||
        (rc = get_int(o, "layers", 1, PLAN_MAX_LAYERS, &m->layers, err)) ||
        (rc = get_int(o, "hidden", 1, PLAN_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = get_int(o, "heads", 1, PLAN_MAX_HEADS, &m->heads, err)) ||
        (rc = get_int(o, "kv_heads", 1, PLAN_MAX_HEADS, &m->kv_heads, err)) ||
        (rc = get_int(o, "head_dim", 1, PLAN_MAX_ATTN_WIDTH, &m->head_dim, err)) ||
        (rc = get_int(o, "sliding_window", 0, PLAN_MAX_SEQ, &m->sliding_window, err)) ||
        (rc = get_i(o, "sliding_window_pattern", 0, PLAN_MAX_LAYERS, &m->sliding_window_pattern,
                    err)) ||
        (rc = get_int(o, "ffn", 1, 16 * (int64_t)PLAN_MAX_HIDDEN, &m->ffn, err)) ||
        (rc = get_int(o, "seq", 1, PLAN_MAX_SEQ, &m->seq, err)) ||
        (rc = get_int(o, "vocab", 2, PLAN_MAX_VOCAB, &m->vocab, err)) ||
        (rc = get_bool(o, "tied_embedding", &m->tied_embedding, err)) ||
        (rc = get_str(o, "mlp", 0, mlp, sizeof mlp, err)) ||
        (rc = get_bool(o, "dropout", &dropout, err)))
        return rc;
    if (*arch) {
        if (strcmp(arch, "gpt") == 0)
            m->arch = PLAN_ARCH_GPT;
        else if (strcmp(arch, "llama") == 0)
            m->arch = PLAN_ARCH_LLAMA;
        else
            return ST_RAISE(err, ST_EINVAL, "config: model.arch \"%s\": allowed are gpt, llama",
                            arch);
        if (!get(o, "tied_embedding"))
            m->tied_embedding = m->arch == PLAN_ARCH_GPT;
        if (!get(o, "kv_heads"))
            m->kv_heads = m->heads;
    }
    if (*mlp) {
        if (strcmp(mlp, "plain") == 0)
            m->mlp = PLAN_MLP_PLAIN;
        else if (strcmp(mlp, "gated") == 0)
            m->mlp = PLAN_MLP_GATED;
        else
            return ST_RAISE(err, ST_EINVAL, "config: model.mlp \"%s\": allowed are plain, gated",
                            mlp);
    } else {
        m->mlp = PLAN_MLP_ARCH;
    }
    /* Dropout makes runs on different layouts draw different masks; the
     * executor trains without it (Llama's published configs do too). */
    if (dropout)
        return ST_RAISE(err, ST_EINVAL, "config: model.dropout true: the executor trains "
                        "without dropout");
    m->dropout = PLAN_DROPOUT_OFF;
    return finish_model(m, err);
}

static int read_layout(const obj *o, plan_layout *l, st_err *err)
{
    /* the layout fields the executor carries, by the planner's table */
    const char *keys[64];
    int nk = 0;
    for (int i = 0; i < plan_layout_fields.n && nk < 63; i++)
        if (plan_layout_fields.f[i].carry & PLAN_FIELD_EXEC)
            keys[nk++] = plan_layout_fields.f[i].name;
    keys[nk] = NULL;
    int rc;
    char sched[32] = "", recomp[32] = "", shard[32] = "", place[32] = "";
    if ((rc = check_keys(o, keys, err)) || (rc = get_i(o, "tp", 1, 4096, &l->tp, err)) ||
        (rc = get_i(o, "pp", 1, PLAN_PP_MAX, &l->pp, err)) ||
        (rc = get_i(o, "dp", 1, 1 << 20, &l->dp, err)) ||
        (rc = get_i(o, "cp", 1, 4096, &l->cp, err)) ||
        (rc = get_i(o, "micro_batch", 1, 1 << 20, &l->micro_batch, err)) ||
        (rc = get_i(o, "microbatches", 1, SIM_SCHED_MAX_MICROBATCHES, &l->microbatches, err)) ||
        (rc = get_i(o, "active_microbatches", 1, SIM_SCHED_MAX_MICROBATCHES,
                    &l->active_microbatches, err)) ||
        (rc = get_i(o, "virtual_stages", 1, SIM_SCHED_MAX_VIRTUAL, &l->virtual_stages, err)) ||
        (rc = get_i(o, "recompute_group", 1, PLAN_MAX_LAYERS, &l->recompute_group, err)) ||
        (rc = get_bool(o, "sequence_parallel", &l->sequence_parallel, err)) ||
        (rc = get_bool(o, "dp_overlap", &l->dp_overlap, err)) ||
        (rc = get_num(o, "dp_bucket_bytes", 1, 1e15, &l->dp_bucket_bytes, err)) ||
        (rc = get_bool(o, "offload_activations", &l->offload_activations, err)) ||
        (rc = get_bool(o, "flash_attention", &l->flash_attention, err)) ||
        (rc = get_str(o, "schedule", 0, sched, sizeof sched, err)) ||
        (rc = get_str(o, "recompute", 0, recomp, sizeof recomp, err)) ||
        (rc = get_str(o, "sharding", 0, shard, sizeof shard, err)) ||
        (rc = get_str(o, "placement", 0, place, sizeof place, err)))
        return rc;
    if (!get(o, "active_microbatches"))
        l->active_microbatches = l->microbatches;
    int one_stage = 0;
    if (*sched && (rc = plan_layout_schedule_parse(sched, &l->schedule, &one_stage, err)))
        return rc;
    if (one_stage && l->pp > 1)
        return ST_RAISE(err, ST_EINVAL, "layout.schedule none: the layout has %d pipeline "
                        "stages; allowed: simple, interleaved, virtual, zb-h1", l->pp);
    if (*recomp && (rc = plan_recompute_parse(recomp, &l->recompute, err)))
        return rc;
    if (*shard && (rc = plan_sharding_parse(shard, &l->sharding, err)))
        return rc;
    if (*place && (rc = plan_placement_parse(place, l->placement, err)))
        return rc;
    l->sharding_degree = l->dp;
    l->global_batch = (int64_t)l->dp * l->micro_batch * l->microbatches;
    return ST_OK;
}

static int read_train(const obj *o, exec_train *t, st_err *err)
{
    static const char *const keys[] = {"steps", "seed", "lr", "min_lr", "warmup_steps",
                                       "weight_decay", "beta1", "beta2", "eps", "grad_clip",
                                       "warmup_steps_unmeasured", "stop_after", NULL};
    int64_t seed = (int64_t)t->seed;
    int rc;
    if ((rc = check_keys(o, keys, err)) ||
        (rc = get_int(o, "steps", 1, (int64_t)1 << 40, &t->steps, err)) ||
        (rc = get_int(o, "seed", 0, ((int64_t)1 << 53), &seed, err)) ||
        (rc = get_num(o, "lr", 0, 1e3, &t->lr, err)) ||
        (rc = get_num(o, "min_lr", 0, 1e3, &t->min_lr, err)) ||
        (rc = get_int(o, "warmup_steps", 0, (int64_t)1 << 40, &t->warmup_steps, err)) ||
        (rc = get_num(o, "weight_decay", 0, 1e3, &t->weight_decay, err)) ||
        (rc = get_num(o, "beta1", 0, 0.999999999, &t->beta1, err)) ||
        (rc = get_num(o, "beta2", 0, 0.999999999, &t->beta2, err)) ||
        (rc = get_num(o, "eps", 1e-30, 1, &t->eps, err)) ||
        (rc = get_num(o, "grad_clip", 0, 1e30, &t->grad_clip, err)) ||
        (rc = get_int(o, "warmup_steps_unmeasured", 0, (int64_t)1 << 40,
                      &t->warmup_steps_unmeasured, err)) ||
        (rc = get_int(o, "stop_after", 0, (int64_t)1 << 40, &t->stop_after, err)))
        return rc;
    t->seed = (uint64_t)seed;
    if (t->min_lr > t->lr)
        return ST_RAISE(err, ST_EINVAL, "config: train.min_lr %g: must not exceed lr %g",
                        t->min_lr, t->lr);
    return ST_OK;
}

int exec_config_parse(const char *json, exec_config *cfg, st_err *err)
{
    exec_config_default(cfg);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(json, &end, 1);
    if (!root) {
        long off = end ? (long)(end - json) : 0;
        return ST_RAISE(err, ST_EPARSE, "config: malformed JSON near byte %ld", off);
    }
    int rc = ST_OK;
    obj top = {root, ""}, o;
    static const char *const keys[] = {"version", "model", "layout", "train", "data",
                                       "device", "transport", "threads_per_rank", "checkpoint",
                                       "timeout_s", "progress", "debug", NULL};
    if (!cJSON_IsObject(root)) {
        rc = ST_RAISE(err, ST_EINVAL, "config: the top level must be an object");
        goto done;
    }
    int64_t version = -1;
    if ((rc = check_keys(&top, keys, err)) ||
        (rc = get_int(&top, "version", 0, 1000, &version, err)))
        goto done;
    if (version != EXEC_CONFIG_VERSION) {
        rc = ST_RAISE(err, ST_EINVAL, "config: version %lld: this executor reads version %d",
                      (long long)version, EXEC_CONFIG_VERSION);
        goto done;
    }
    if ((rc = get_obj(&top, "model", &o, err)) || (o.j && (rc = read_model(&o, &cfg->model, err))))
        goto done;
    if (!o.j && (rc = finish_model(&cfg->model, err)))
        goto done;
    if ((rc = get_obj(&top, "layout", &o, err)) ||
        (o.j && (rc = read_layout(&o, &cfg->layout, err))))
        goto done;
    if ((rc = get_obj(&top, "train", &o, err)) || (o.j && (rc = read_train(&o, &cfg->train, err))))
        goto done;
    if ((rc = get_obj(&top, "data", &o, err)))
        goto done;
    if (o.j) {
        static const char *const dkeys[] = {"kind", "path", NULL};
        char kind[32] = "";
        if ((rc = check_keys(&o, dkeys, err)) ||
            (rc = get_str(&o, "kind", 0, kind, sizeof kind, err)) ||
            (rc = get_str(&o, "path", 1, cfg->data_path, sizeof cfg->data_path, err)))
            goto done;
        if (*kind) {
            int k = 0;
            while (k < EXEC_DATA__COUNT && strcmp(kind, data_names[k]) != 0)
                k++;
            if (k == EXEC_DATA__COUNT) {
                rc = ST_RAISE(err, ST_EINVAL, "config: data.kind \"%s\": allowed are synthetic, "
                              "text, tokens", kind);
                goto done;
            }
            cfg->data_kind = (exec_data_kind)k;
        }
    }
    if (cfg->data_kind != EXEC_DATA_SYNTHETIC && !*cfg->data_path) {
        rc = ST_RAISE(err, ST_EINVAL, "config: data.kind %s needs data.path",
                      data_names[cfg->data_kind]);
        goto done;
    }
    if ((rc = get_str(&top, "device", 0, cfg->device, sizeof cfg->device, err)) ||
        (rc = get_str(&top, "transport", 0, cfg->transport, sizeof cfg->transport, err)) ||
        (rc = get_i(&top, "threads_per_rank", 1, 1024, &cfg->threads_per_rank, err)) ||
        (rc = get_num(&top, "timeout_s", 0.001, 1e7, &cfg->timeout_s, err)) ||
        (rc = get_bool(&top, "progress", &cfg->progress, err)))
        goto done;
    if ((rc = get_obj(&top, "checkpoint", &o, err)))
        goto done;
    if (o.j) {
        static const char *const ckeys[] = {"save_dir", "save_every", "resume_dir", NULL};
        if ((rc = check_keys(&o, ckeys, err)) ||
            (rc = get_str(&o, "save_dir", 1, cfg->save_dir, sizeof cfg->save_dir, err)) ||
            (rc = get_int(&o, "save_every", 0, (int64_t)1 << 40, &cfg->save_every, err)) ||
            (rc = get_str(&o, "resume_dir", 1, cfg->resume_dir, sizeof cfg->resume_dir, err)))
            goto done;
    }
    if ((rc = get_obj(&top, "debug", &o, err)))
        goto done;
    if (o.j) {
        static const char *const gkeys[] = {"dump_weights", "fail_rank", "fail_step",
                                            "fail_mode", NULL};
        char mode[16] = "";
        if ((rc = check_keys(&o, gkeys, err)) ||
            (rc = get_str(&o, "dump_weights", 1, cfg->dump_dir, sizeof cfg->dump_dir, err)) ||
            (rc = get_i(&o, "fail_rank", -1, 1 << 30, &cfg->fail_rank, err)) ||
            (rc = get_int(&o, "fail_step", 0, (int64_t)1 << 40, &cfg->fail_step, err)) ||
            (rc = get_str(&o, "fail_mode", 0, mode, sizeof mode, err)))
            goto done;
        if (*mode && strcmp(mode, "error") != 0 && strcmp(mode, "hang") != 0) {
            rc = ST_RAISE(err, ST_EINVAL, "config: debug.fail_mode \"%s\": allowed are error, "
                          "hang", mode);
            goto done;
        }
        cfg->fail_hang = strcmp(mode, "hang") == 0;
    }
    /* Devices by name from the registry (exec_features.c): one that this
     * build lacks is named with what was built. Nothing is opened: a device
     * in a module (cuda) is opened by the rank program, which says so when
     * its module cannot be, so a config for a GPU host is written and
     * checked on a host without CUDA's libraries. (A transport is looked
     * up when the rank program opens it, with the same messages.) */
    if (!exec_dev_built(cfg->device)) {
        rc = ST_RAISE(err, ST_EINVAL, "config: device \"%s\" is not in this build (built: %s)",
                      cfg->device, exec_dev_names());
        goto done;
    }
    if (cfg->layout.flash_attention && !exec_dev_flash(cfg->device)) {
        rc = ST_RAISE(err, ST_EINVAL, "config: layout.flash_attention: the %s device has no "
                      "fused attention kernel (allowed: false, or device cuda)", cfg->device);
        goto done;
    }
    /* What the executor does not run is refused by name, never ignored. */
    const plan_layout *l = &cfg->layout;
    if (l->cp > 1)
        rc = ST_RAISE(err, ST_EINVAL, "config: layout.cp %d: the executor does not run context "
                      "parallelism (cp must be 1)", l->cp);
    else if (l->offload_activations)
        rc = ST_RAISE(err, ST_EINVAL, "config: layout.offload_activations: the %s device does "
                      "not offload activations", cfg->device);
done:
    cJSON_Delete(root);
    return rc;
}

int exec_config_read(const char *path, exec_config *cfg, st_err *err)
{
    char *text = NULL;
    int rc = exec__read_file(path, &text, NULL, err);
    if (rc != ST_OK)
        return rc;
    rc = exec_config_parse(text, cfg, err);
    free(text);
    return rc;
}

int exec_config_check(const exec_config *cfg, int ranks, st_err *err)
{
    const plan_layout *l = &cfg->layout;
    long want = (long)l->tp * l->pp * l->dp;
    if (want != ranks)
        return ST_RAISE(err, ST_EINVAL, "layout tp %d x pp %d x dp %d = %ld ranks, the job has %d",
                        l->tp, l->pp, l->dp, want, ranks);
    int rc = exec__layout_check(&cfg->model, l, err);
    if (rc != ST_OK)
        return rc;
    sim_sched s;
    sim_sched_from_layout(&s, l);
    return sim_sched_check(&s, err);
}

int exec__layout_check(const plan_model *m, const plan_layout *l, st_err *err)
{
    if (l->tp < 1 || l->pp < 1 || l->pp > PLAN_PP_MAX || l->virtual_stages < 1)
        return ST_RAISE(err, ST_EINVAL, "layout: tp %d, pp %d, virtual_stages %d: each must be at "
                        "least 1, pp at most %d", l->tp, l->pp, l->virtual_stages, PLAN_PP_MAX);
    if (m->heads % l->tp != 0)
        return ST_RAISE(err, ST_EINVAL, "layout.tp %d: must divide the %lld heads", l->tp,
                        (long long)m->heads);
    if (m->kv_heads % l->tp != 0)
        return ST_RAISE(err, ST_EINVAL, "layout.tp %d: must divide the %lld kv heads (the "
                        "executor does not replicate KV heads across TP ranks)", l->tp,
                        (long long)m->kv_heads);
    if (m->ffn % l->tp != 0)
        return ST_RAISE(err, ST_EINVAL, "layout.tp %d: must divide ffn %lld", l->tp,
                        (long long)m->ffn);
    if (m->vocab % l->tp != 0)
        return ST_RAISE(err, ST_EINVAL, "layout.tp %d: must divide vocab %lld (vocab-parallel "
                        "embedding)", l->tp, (long long)m->vocab);
    if (l->sequence_parallel && m->seq % l->tp != 0)
        return ST_RAISE(err, ST_EINVAL, "layout.sequence_parallel: tp %d must divide seq %lld",
                        l->tp, (long long)m->seq);
    if ((int64_t)l->pp * l->virtual_stages > m->layers)
        return ST_RAISE(err, ST_EINVAL, "layout: %d pipeline chunks (pp x virtual_stages) for "
                        "%lld layers", l->pp * l->virtual_stages, (long long)m->layers);
    if (m->arch == PLAN_ARCH_LLAMA && plan_model_head_dim(m) % 2 != 0)
        return ST_RAISE(err, ST_EINVAL, "model: head dimension %lld must be even for rotary "
                        "positions", (long long)plan_model_head_dim(m));
    /* the model's attention (exec_model.c) projects hidden to hidden and
     * attends over the whole sequence */
    if (plan_model_attn_width(m) != m->hidden)
        return ST_RAISE(err, ST_EINVAL, "model: heads x head size %lld is not hidden %lld: the "
                        "executor's attention projections are hidden x hidden",
                        (long long)plan_model_attn_width(m), (long long)m->hidden);
    if (plan_model_local_layers(m) > 0)
        return ST_RAISE(err, ST_EINVAL, "model: sliding window %lld: the executor attends over "
                        "the whole sequence", (long long)m->sliding_window);
    return ST_OK;
}

int exec_config_check_files(const exec_config *cfg, st_err *err)
{
    char path[EXEC_PATH_MAX + 32];
    if (cfg->data_kind != EXEC_DATA_SYNTHETIC && access(cfg->data_path, R_OK) != 0)
        return ST_RAISE(err, ST_ENOENT, "config: data.path %s: cannot read it: %s",
                        cfg->data_path, strerror(errno));
    if (*cfg->resume_dir) {
        snprintf(path, sizeof path, "%s/latest.json", cfg->resume_dir);
        if (access(path, R_OK) != 0)
            return ST_RAISE(err, ST_ENOENT, "config: checkpoint.resume_dir %s: no checkpoint "
                            "there (%s: %s)", cfg->resume_dir, path, strerror(errno));
    }
    if (*cfg->save_dir) {
        snprintf(path, sizeof path, "%s", cfg->save_dir);
        char *slash = strrchr(path, '/');
        if (slash && slash != path) {
            *slash = '\0';
            if (access(path, W_OK) != 0)
                return ST_RAISE(err, ST_ENOENT, "config: checkpoint.save_dir %s: its directory "
                                "%s is not writable: %s", cfg->save_dir, path, strerror(errno));
        }
    }
    return ST_OK;
}

/* ---- writing ---------------------------------------------------------- */

static cJSON *str_or_null(const char *s)
{
    return *s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

/* The fields of table t the executor carries (PLAN_FIELD_EXEC), of the
 * struct at v, into o under their table names (data/data_json.c writes
 * every field the same way for smdplan's other outputs; exec/ does not link
 * data/). */
static void add_fields(cJSON *o, const plan_fields *t, const void *v)
{
    char buf[PLAN_SOURCE_MAX];
    for (int i = 0; i < t->n; i++) {
        const plan_field *f = &t->f[i];
        if (!(f->carry & PLAN_FIELD_EXEC))
            continue;
        if (f->kind == PLAN_FK_BOOL)
            cJSON_AddBoolToObject(o, f->name, plan_field_num(f, v) != 0);
        else if (plan_field_text(f, v, buf, sizeof buf))
            cJSON_AddStringToObject(o, f->name, buf);
        else
            cJSON_AddNumberToObject(o, f->name, plan_field_num(f, v));
    }
}

char *exec_config_json(const exec_config *cfg)
{
    const plan_model *m = &cfg->model;
    const plan_layout *l = &cfg->layout;
    const exec_train *t = &cfg->train;
    cJSON *root = cJSON_CreateObject(), *o;
    if (!root)
        return NULL;
    cJSON_AddNumberToObject(root, "version", cfg->version);
    o = cJSON_AddObjectToObject(root, "model");
    /* the fields the executor carries, by the planner's table, as the
     * planner resolves them (the head size in force, the MLP): the names
     * and values SQLite and smdplan --json give */
    plan_model rm = plan_model_resolved(m);
    add_fields(o, &plan_model_fields, &rm);
    o = cJSON_AddObjectToObject(root, "layout");
    /* the fields the executor carries, by the planner's table: the names
     * SQLite and smdplan --json use */
    add_fields(o, &plan_layout_fields, l);
    o = cJSON_AddObjectToObject(root, "train");
    cJSON_AddNumberToObject(o, "steps", (double)t->steps);
    cJSON_AddNumberToObject(o, "seed", (double)t->seed);
    cJSON_AddNumberToObject(o, "lr", t->lr);
    cJSON_AddNumberToObject(o, "min_lr", t->min_lr);
    cJSON_AddNumberToObject(o, "warmup_steps", (double)t->warmup_steps);
    cJSON_AddNumberToObject(o, "weight_decay", t->weight_decay);
    cJSON_AddNumberToObject(o, "beta1", t->beta1);
    cJSON_AddNumberToObject(o, "beta2", t->beta2);
    cJSON_AddNumberToObject(o, "eps", t->eps);
    cJSON_AddNumberToObject(o, "grad_clip", t->grad_clip);
    cJSON_AddNumberToObject(o, "warmup_steps_unmeasured", (double)t->warmup_steps_unmeasured);
    if (t->stop_after > 0)
        cJSON_AddNumberToObject(o, "stop_after", (double)t->stop_after);
    o = cJSON_AddObjectToObject(root, "data");
    cJSON_AddStringToObject(o, "kind", exec_data_kind_name(cfg->data_kind));
    cJSON_AddItemToObject(o, "path", str_or_null(cfg->data_path));
    cJSON_AddStringToObject(root, "device", cfg->device);
    cJSON_AddStringToObject(root, "transport", cfg->transport);
    cJSON_AddNumberToObject(root, "threads_per_rank", cfg->threads_per_rank);
    o = cJSON_AddObjectToObject(root, "checkpoint");
    cJSON_AddItemToObject(o, "save_dir", str_or_null(cfg->save_dir));
    cJSON_AddNumberToObject(o, "save_every", (double)cfg->save_every);
    cJSON_AddItemToObject(o, "resume_dir", str_or_null(cfg->resume_dir));
    cJSON_AddNumberToObject(root, "timeout_s", cfg->timeout_s);
    cJSON_AddBoolToObject(root, "progress", cfg->progress);
    if (*cfg->dump_dir || cfg->fail_rank >= 0) {
        o = cJSON_AddObjectToObject(root, "debug");
        if (*cfg->dump_dir)
            cJSON_AddStringToObject(o, "dump_weights", cfg->dump_dir);
        if (cfg->fail_rank >= 0) {
            cJSON_AddNumberToObject(o, "fail_rank", cfg->fail_rank);
            cJSON_AddNumberToObject(o, "fail_step", (double)cfg->fail_step);
            cJSON_AddStringToObject(o, "fail_mode", cfg->fail_hang ? "hang" : "error");
        }
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

/* Write text (plus a newline) atomically. */
static int write_text(const char *path, char *text, st_err *err)
{
    if (!text)
        return ST_RAISE(err, ST_ENOMEM, "%s: out of memory formatting it", path);
    size_t n = strlen(text);
    char *nl = realloc(text, n + 2);
    if (!nl) {
        free(text);
        return ST_RAISE(err, ST_ENOMEM, "%s: out of memory formatting it", path);
    }
    nl[n] = '\n';
    nl[n + 1] = '\0';
    int rc = exec__write_atomic(path, nl, n + 1, err);
    free(nl);
    return rc;
}

int exec_config_write(const char *path, const exec_config *cfg, st_err *err)
{
    return write_text(path, exec_config_json(cfg), err);
}

/* ---- RESULT.json ------------------------------------------------------ */

void exec_result_init(exec_result *r)
{
    memset(r, 0, sizeof *r);
    r->version = EXEC_RESULT_VERSION;
    snprintf(r->status, sizeof r->status, "ok");
    r->failed_rank = -1;
}

void exec_result_free(exec_result *r)
{
    if (!r)
        return;
    free(r->steps);
    free(r->rank_stats);
    r->steps = NULL;
    r->rank_stats = NULL;
    r->nsteps = r->nranks = 0;
}

static void add_phases(cJSON *parent, const exec_phases *p)
{
    cJSON *o = cJSON_AddObjectToObject(parent, "phases_s");
    cJSON_AddNumberToObject(o, "compute", p->compute_s);
    cJSON_AddNumberToObject(o, "tp_comm", p->tp_comm_s);
    cJSON_AddNumberToObject(o, "pp_wait", p->pp_wait_s);
    cJSON_AddNumberToObject(o, "dp_comm", p->dp_comm_s);
    cJSON_AddNumberToObject(o, "optimizer", p->optimizer_s);
}

char *exec_result_json(const exec_result *r)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON_AddNumberToObject(root, "version", r->version);
    cJSON_AddStringToObject(root, "status", r->status);
    cJSON_AddItemToObject(root, "error", str_or_null(r->error));
    if (r->failed_rank >= 0)
        cJSON_AddNumberToObject(root, "failed_rank", r->failed_rank);
    else
        cJSON_AddNullToObject(root, "failed_rank");
    cJSON_AddNumberToObject(root, "ranks", r->ranks);
    cJSON_AddStringToObject(root, "device", r->device);
    cJSON_AddStringToObject(root, "transport", r->transport);
    cJSON_AddNumberToObject(root, "threads_per_rank", r->threads_per_rank);
    cJSON_AddStringToObject(root, "host", r->host);
    cJSON_AddStringToObject(root, "device_name", r->device_name);
    cJSON_AddNumberToObject(root, "tokens_per_step", r->tokens_per_step);
    cJSON_AddNumberToObject(root, "model_flops_per_step", r->model_flops_per_step);
    cJSON_AddNumberToObject(root, "hardware_flops_per_step", r->hardware_flops_per_step);
    cJSON *steps = cJSON_AddArrayToObject(root, "steps");
    for (int i = 0; i < r->nsteps; i++) {
        const exec_step_result *s = &r->steps[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(steps, o);
        cJSON_AddNumberToObject(o, "step", (double)s->step);
        cJSON_AddNumberToObject(o, "time_s", s->time_s);
        cJSON_AddNumberToObject(o, "loss", s->loss);
        cJSON_AddNumberToObject(o, "lr", s->lr);
        cJSON_AddNumberToObject(o, "grad_norm", s->grad_norm);
        cJSON_AddBoolToObject(o, "measured", s->measured);
        add_phases(o, &s->phases);
    }
    cJSON *ranks = cJSON_AddArrayToObject(root, "rank_stats");
    for (int i = 0; i < r->nranks; i++) {
        const exec_rank_stat *s = &r->rank_stats[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(ranks, o);
        cJSON_AddNumberToObject(o, "rank", s->rank);
        cJSON_AddNumberToObject(o, "tp_rank", s->tp_rank);
        cJSON_AddNumberToObject(o, "pp_rank", s->pp_rank);
        cJSON_AddNumberToObject(o, "dp_rank", s->dp_rank);
        cJSON_AddNumberToObject(o, "peak_memory_bytes", s->peak_memory_bytes);
        cJSON *mem = cJSON_AddObjectToObject(o, "peak_memory_by_class_bytes");
        for (int c = 0; c < EXEC_MEM__COUNT; c++)
            cJSON_AddNumberToObject(mem, mem_names[c], s->peak_class_bytes[c]);
        cJSON_AddNumberToObject(o, "max_rss_bytes", s->max_rss_bytes);
        cJSON_AddNumberToObject(o, "device_memory_peak_bytes", s->device_memory_peak_bytes);
        add_phases(o, &s->phases);
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

int exec_result_write(const char *path, const exec_result *r, st_err *err)
{
    return write_text(path, exec_result_json(r), err);
}

/* Reading RESULT.json is strict about what it reads: each key has its type
 * and range (a rank program writes nothing else), so a file from elsewhere
 * is refused with the key named rather than read into impossible numbers.
 * Keys it does not know are ignored (a newer rank program may add some).
 * null, which cJSON writes for a number that is not finite (a diverged
 * loss), keeps the default. The limits: */
#define RES_RANKS_MAX INT_MAX        /* an MPI world's size is an int */
#define RES_STEPS_MAX ((int64_t)1 << 40) /* train.steps' own limit */
#define RES_SECONDS_MAX 1e9          /* about 32 years */
#define RES_BYTES_MAX 1e18           /* an exabyte per rank */
#define RES_TOKENS_MAX 9007199254740992.0 /* 2^53: a count a double holds exactly */
#define RES_FLOPS_MAX 1e30
#define RES_LR_MAX 1e3               /* train.lr's own limit */

/* One object being read and its path for messages ("steps[3].phases_s"). */
typedef struct robj {
    const cJSON *j;
    char path[64];
} robj;

static int res_bad(const robj *o, const char *key, const char *what, st_err *err)
{
    return ST_RAISE(err, ST_EINVAL, "result: %s%s%s: must be %s", o->path, *o->path ? "." : "",
                    key, what);
}

/* A number in lo..hi; absent or null keeps *out unless required. */
static int res_num(const robj *o, const char *key, double lo, double hi, int required,
                   double *out, st_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o->j, key);
    char what[96];
    if (hi < DBL_MAX)
        snprintf(what, sizeof what, "a number in %g..%g", lo, hi);
    else if (lo > -DBL_MAX)
        snprintf(what, sizeof what, "a finite number >= %g", lo);
    else
        snprintf(what, sizeof what, "a finite number");
    if (!v || cJSON_IsNull(v))
        return required ? res_bad(o, key, what, err) : ST_OK;
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi))
        return res_bad(o, key, what, err);
    *out = v->valuedouble;
    return ST_OK;
}

/* An integer in lo..hi (|lo|, |hi| <= 2^53); absent or null keeps *out
 * unless required. */
static int res_int(const robj *o, const char *key, int64_t lo, int64_t hi, int required,
                   int64_t *out, st_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o->j, key);
    char what[96];
    snprintf(what, sizeof what, "an integer in %lld..%lld", (long long)lo, (long long)hi);
    if (!v || cJSON_IsNull(v))
        return required ? res_bad(o, key, what, err) : ST_OK;
    double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!(d >= (double)lo && d <= (double)hi) || d != floor(d))
        return res_bad(o, key, what, err);
    *out = (int64_t)d;
    return ST_OK;
}

static int res_int32(const robj *o, const char *key, int lo, int hi, int required, int *out,
                     st_err *err)
{
    int64_t v = *out;
    int rc = res_int(o, key, lo, hi, required, &v, err);
    *out = (int)v;
    return rc;
}

/* A string shorter than n (null, when nullable, is ""); absent keeps out. */
static int res_str(const robj *o, const char *key, int nullable, char *out, size_t n,
                   st_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o->j, key);
    if (!v)
        return ST_OK;
    if (nullable && cJSON_IsNull(v)) {
        out[0] = '\0';
        return ST_OK;
    }
    char what[96];
    snprintf(what, sizeof what, "a string of at most %zu bytes%s", n - 1,
             nullable ? ", or null" : "");
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= n)
        return res_bad(o, key, what, err);
    snprintf(out, n, "%s", v->valuestring);
    return ST_OK;
}

/* Member key of o as an object (out->j NULL when absent or null). */
static int res_obj(const robj *o, const char *key, robj *out, st_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o->j, key);
    out->j = NULL;
    if (snprintf(out->path, sizeof out->path, "%s%s%s", o->path, *o->path ? "." : "", key) >=
        (int)sizeof out->path)
        out->path[sizeof out->path - 2] = '~'; /* cut: the message still names the key's start */
    if (!v || cJSON_IsNull(v))
        return ST_OK;
    if (!cJSON_IsObject(v))
        return res_bad(o, key, "an object", err);
    out->j = v;
    return ST_OK;
}

/* Member key of o as an array of at most max objects: *out NULL and *n 0
 * when absent or null. */
static int res_array(const robj *o, const char *key, int max, const cJSON **out, int *n,
                     st_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o->j, key);
    *out = NULL;
    *n = 0;
    if (!v || cJSON_IsNull(v))
        return ST_OK;
    if (!cJSON_IsArray(v))
        return res_bad(o, key, "an array of objects", err);
    int count = 0;
    for (const cJSON *it = v->child; it; it = it->next, count++)
        if (!cJSON_IsObject(it))
            return ST_RAISE(err, ST_EINVAL, "result: %s[%d]: must be an object", key, count);
    if (count > max)
        return ST_RAISE(err, ST_EINVAL, "result: %s: %d entries, at most %d", key, count, max);
    *out = v;
    *n = count;
    return ST_OK;
}

static int res_phases(const robj *o, exec_phases *p, st_err *err)
{
    robj ph;
    int rc = res_obj(o, "phases_s", &ph, err);
    if (rc != ST_OK || !ph.j)
        return rc;
    if ((rc = res_num(&ph, "compute", 0, RES_SECONDS_MAX, 0, &p->compute_s, err)) ||
        (rc = res_num(&ph, "tp_comm", 0, RES_SECONDS_MAX, 0, &p->tp_comm_s, err)) ||
        (rc = res_num(&ph, "pp_wait", 0, RES_SECONDS_MAX, 0, &p->pp_wait_s, err)) ||
        (rc = res_num(&ph, "dp_comm", 0, RES_SECONDS_MAX, 0, &p->dp_comm_s, err)) ||
        (rc = res_num(&ph, "optimizer", 0, RES_SECONDS_MAX, 0, &p->optimizer_s, err)))
        return rc;
    return ST_OK;
}

static int res_step(const robj *o, exec_step_result *s, st_err *err)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o->j, "measured");
    int rc;
    if ((rc = res_int(o, "step", 1, RES_STEPS_MAX, 1, &s->step, err)) ||
        (rc = res_num(o, "time_s", 0, RES_SECONDS_MAX, 0, &s->time_s, err)) ||
        (rc = res_num(o, "loss", -DBL_MAX, DBL_MAX, 0, &s->loss, err)) ||
        (rc = res_num(o, "lr", 0, RES_LR_MAX, 0, &s->lr, err)) ||
        (rc = res_num(o, "grad_norm", 0, DBL_MAX, 0, &s->grad_norm, err)) ||
        (rc = res_phases(o, &s->phases, err)))
        return rc;
    if (m && !cJSON_IsBool(m))
        return res_bad(o, "measured", "true or false", err);
    s->measured = cJSON_IsTrue(m);
    return ST_OK;
}

static int res_rank(const robj *o, int ranks, exec_rank_stat *s, st_err *err)
{
    int hi = ranks > 0 ? ranks - 1 : 0;
    robj mem;
    int rc;
    if ((rc = res_int32(o, "rank", 0, hi, 1, &s->rank, err)) ||
        (rc = res_int32(o, "tp_rank", 0, hi, 0, &s->tp_rank, err)) ||
        (rc = res_int32(o, "pp_rank", 0, hi, 0, &s->pp_rank, err)) ||
        (rc = res_int32(o, "dp_rank", 0, hi, 0, &s->dp_rank, err)) ||
        (rc = res_num(o, "peak_memory_bytes", 0, RES_BYTES_MAX, 0, &s->peak_memory_bytes, err)) ||
        (rc = res_num(o, "max_rss_bytes", 0, RES_BYTES_MAX, 0, &s->max_rss_bytes, err)) ||
        (rc = res_num(o, "device_memory_peak_bytes", 0, RES_BYTES_MAX, 0,
                      &s->device_memory_peak_bytes, err)) ||
        (rc = res_phases(o, &s->phases, err)) ||
        (rc = res_obj(o, "peak_memory_by_class_bytes", &mem, err)))
        return rc;
    for (int c = 0; mem.j && c < EXEC_MEM__COUNT; c++)
        if ((rc = res_num(&mem, mem_names[c], 0, RES_BYTES_MAX, 0, &s->peak_class_bytes[c], err)))
            return rc;
    return ST_OK;
}

int exec_result_parse(const char *json, exec_result *r, st_err *err)
{
    exec_result_init(r);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(json, &end, 1);
    if (!root)
        return ST_RAISE(err, ST_EPARSE, "result: malformed JSON near byte %ld",
                        end ? (long)(end - json) : 0L);
    robj top = {root, ""};
    int rc = ST_OK, version = 0, nsteps = 0, nranks = 0;
    const cJSON *steps = NULL, *ranks = NULL, *it;
    if (!cJSON_IsObject(root)) {
        rc = ST_RAISE(err, ST_EINVAL, "result: the top level must be an object");
        goto done;
    }
    if ((rc = res_int32(&top, "version", 0, 1000, 1, &version, err)))
        goto done;
    if (version != EXEC_RESULT_VERSION) {
        rc = ST_RAISE(err, ST_EINVAL, "result: version %d: this reader reads version %d",
                      version, EXEC_RESULT_VERSION);
        goto done;
    }
    if (!cJSON_GetObjectItemCaseSensitive(root, "status")) {
        rc = res_bad(&top, "status", "ok or failed", err);
        goto done;
    }
    if ((rc = res_str(&top, "status", 0, r->status, sizeof r->status, err)) ||
        (rc = res_str(&top, "error", 1, r->error, sizeof r->error, err)) ||
        (rc = res_str(&top, "device", 0, r->device, sizeof r->device, err)) ||
        (rc = res_str(&top, "transport", 0, r->transport, sizeof r->transport, err)) ||
        (rc = res_str(&top, "host", 0, r->host, sizeof r->host, err)) ||
        (rc = res_str(&top, "device_name", 0, r->device_name, sizeof r->device_name, err)) ||
        (rc = res_int32(&top, "ranks", 0, RES_RANKS_MAX, 1, &r->ranks, err)) ||
        (rc = res_int32(&top, "failed_rank", -1, RES_RANKS_MAX - 1, 0, &r->failed_rank, err)) ||
        (rc = res_int32(&top, "threads_per_rank", 0, 1024, 0, &r->threads_per_rank, err)) ||
        (rc = res_num(&top, "tokens_per_step", 0, RES_TOKENS_MAX, 0, &r->tokens_per_step, err)) ||
        (rc = res_num(&top, "model_flops_per_step", 0, RES_FLOPS_MAX, 0,
                      &r->model_flops_per_step, err)) ||
        (rc = res_num(&top, "hardware_flops_per_step", 0, RES_FLOPS_MAX, 0,
                      &r->hardware_flops_per_step, err)))
        goto done;
    if (strcmp(r->status, "ok") != 0 && strcmp(r->status, "failed") != 0) {
        rc = ST_RAISE(err, ST_EINVAL, "result: status \"%s\": allowed are ok, failed", r->status);
        goto done;
    }
    /* a rank program that failed before its world was open knows no size
     * (ranks 0); otherwise its ranks are of that world */
    if (r->ranks > 0 && r->failed_rank >= r->ranks) {
        rc = ST_RAISE(err, ST_EINVAL, "result: failed_rank %d: must be below ranks %d",
                      r->failed_rank, r->ranks);
        goto done;
    }
    if ((rc = res_array(&top, "steps", INT_MAX, &steps, &nsteps, err)) ||
        (rc = res_array(&top, "rank_stats", r->ranks, &ranks, &nranks, err)))
        goto done;
    if ((nsteps && !(r->steps = calloc((size_t)nsteps, sizeof *r->steps))) ||
        (nranks && !(r->rank_stats = calloc((size_t)nranks, sizeof *r->rank_stats)))) {
        rc = ST_RAISE(err, ST_ENOMEM, "result: out of memory");
        goto done;
    }
    cJSON_ArrayForEach(it, steps) /* objects, nsteps of them (res_array) */
    {
        robj o = {it, ""};
        snprintf(o.path, sizeof o.path, "steps[%d]", r->nsteps);
        if ((rc = res_step(&o, &r->steps[r->nsteps], err)))
            goto done;
        r->nsteps++;
    }
    cJSON_ArrayForEach(it, ranks)
    {
        robj o = {it, ""};
        snprintf(o.path, sizeof o.path, "rank_stats[%d]", r->nranks);
        if ((rc = res_rank(&o, r->ranks, &r->rank_stats[r->nranks], err)))
            goto done;
        r->nranks++;
    }
done:
    cJSON_Delete(root);
    if (rc != ST_OK)
        exec_result_free(r);
    return rc;
}

int exec_result_read(const char *path, exec_result *r, st_err *err)
{
    char *text = NULL;
    exec_result_init(r);
    int rc = exec__read_file(path, &text, NULL, err);
    if (rc != ST_OK)
        return rc;
    rc = exec_result_parse(text, r, err);
    free(text);
    return rc;
}
