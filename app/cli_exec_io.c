/*
 * cli_exec_io.c: CONFIG.json out, RESULT.json in (the launcher's side of
 * the contract in cli_exec.h; every key is the contract's).
 */
#include "app/cli_exec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "data/data.h"

/* GPT-3's optimizer (Brown et al. 2020, Appendix B); the peak rate and the
 * two warm-up steps suit the short runs smdplan exec validates with. */
#define DEFAULT_LR 3e-4
#define DEFAULT_MIN_LR_FRACTION 0.1
#define DEFAULT_WARMUP_STEPS 2
#define DEFAULT_WEIGHT_DECAY 0.1
#define DEFAULT_BETA1 0.9
#define DEFAULT_BETA2 0.95
#define DEFAULT_EPS 1e-8
#define DEFAULT_GRAD_CLIP 1.0
/* The first step pays for first-touch page faults and thread start-up:
 * it is run but not counted in the medians. */
#define DEFAULT_WARMUP_UNMEASURED 1

void cli_exec_train_default(cli_exec_train *t)
{
    memset(t, 0, sizeof *t);
    t->steps = 20;
    t->seed = 1234;
    t->lr = DEFAULT_LR;
    t->min_lr = DEFAULT_LR * DEFAULT_MIN_LR_FRACTION;
    t->warmup_steps = DEFAULT_WARMUP_STEPS;
    t->weight_decay = DEFAULT_WEIGHT_DECAY;
    t->beta1 = DEFAULT_BETA1;
    t->beta2 = DEFAULT_BETA2;
    t->eps = DEFAULT_EPS;
    t->grad_clip = DEFAULT_GRAD_CLIP;
    t->warmup_steps_unmeasured = DEFAULT_WARMUP_UNMEASURED;
}

static void add_str_or_null(cJSON *o, const char *k, const char *v)
{
    if (v && *v)
        cJSON_AddStringToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

char *cli_exec_config_text(const cli_exec_spec *s)
{
    const plan_model *m = &s->model;
    const plan_layout *l = &s->layout;
    const cli_exec_train *t = &s->train;
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON *mo = cJSON_AddObjectToObject(root, "model");
    cJSON_AddStringToObject(mo, "name", m->name);
    cJSON_AddStringToObject(mo, "arch", m->arch == PLAN_ARCH_LLAMA ? "llama" : "gpt");
    cJSON_AddNumberToObject(mo, "layers", (double)m->layers);
    cJSON_AddNumberToObject(mo, "hidden", (double)m->hidden);
    cJSON_AddNumberToObject(mo, "heads", (double)m->heads);
    cJSON_AddNumberToObject(mo, "kv_heads", (double)m->kv_heads);
    cJSON_AddNumberToObject(mo, "ffn", (double)m->ffn);
    cJSON_AddNumberToObject(mo, "seq", (double)m->seq);
    cJSON_AddNumberToObject(mo, "vocab", (double)m->vocab);
    cJSON_AddBoolToObject(mo, "tied_embedding", m->tied_embedding);

    cJSON *lo = cJSON_AddObjectToObject(root, "layout");
    cJSON_AddNumberToObject(lo, "tp", l->tp);
    cJSON_AddNumberToObject(lo, "pp", l->pp);
    cJSON_AddNumberToObject(lo, "dp", l->dp);
    cJSON_AddNumberToObject(lo, "micro_batch", l->micro_batch);
    cJSON_AddNumberToObject(lo, "microbatches", l->microbatches);
    cJSON_AddNumberToObject(lo, "active_microbatches", l->active_microbatches);
    cJSON_AddStringToObject(lo, "schedule", plan_schedule_name(l->schedule));
    cJSON_AddNumberToObject(lo, "virtual_stages", l->virtual_stages);
    cJSON_AddStringToObject(lo, "recompute", plan_recompute_name(l->recompute));
    cJSON_AddNumberToObject(lo, "recompute_group", l->recompute_group);
    cJSON_AddBoolToObject(lo, "sequence_parallel", l->sequence_parallel);
    cJSON_AddStringToObject(lo, "sharding", plan_sharding_name(l->sharding));
    cJSON_AddBoolToObject(lo, "dp_overlap", l->dp_overlap);
    cJSON_AddNumberToObject(lo, "dp_bucket_bytes", l->dp_bucket_bytes);
    cJSON_AddStringToObject(lo, "placement", l->placement);
    cJSON_AddNumberToObject(lo, "cp", l->cp);
    cJSON_AddBoolToObject(lo, "offload_activations", l->offload_activations);

    cJSON *tr = cJSON_AddObjectToObject(root, "train");
    cJSON_AddNumberToObject(tr, "steps", t->steps);
    cJSON_AddNumberToObject(tr, "seed", (double)t->seed);
    cJSON_AddNumberToObject(tr, "lr", t->lr);
    cJSON_AddNumberToObject(tr, "min_lr", t->min_lr);
    cJSON_AddNumberToObject(tr, "warmup_steps", t->warmup_steps);
    cJSON_AddNumberToObject(tr, "weight_decay", t->weight_decay);
    cJSON_AddNumberToObject(tr, "beta1", t->beta1);
    cJSON_AddNumberToObject(tr, "beta2", t->beta2);
    cJSON_AddNumberToObject(tr, "eps", t->eps);
    cJSON_AddNumberToObject(tr, "grad_clip", t->grad_clip);
    cJSON_AddNumberToObject(tr, "warmup_steps_unmeasured", t->warmup_steps_unmeasured);

    cJSON *da = cJSON_AddObjectToObject(root, "data");
    cJSON_AddStringToObject(da, "kind", s->data_kind);
    add_str_or_null(da, "path", s->data_path);
    cJSON_AddStringToObject(root, "device", "cpu");
    cJSON_AddStringToObject(root, "transport", "mpi");
    cJSON_AddNumberToObject(root, "threads_per_rank", s->threads_per_rank);
    cJSON *ck = cJSON_AddObjectToObject(root, "checkpoint");
    add_str_or_null(ck, "save_dir", s->save_dir);
    cJSON_AddNumberToObject(ck, "save_every", s->save_every);
    add_str_or_null(ck, "resume_dir", s->resume_dir);
    cJSON_AddNumberToObject(root, "timeout_s", s->timeout_s);
    cJSON_AddBoolToObject(root, "progress", s->progress);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return NULL;
    /* cJSON's allocator is malloc unless hooked; hand back a malloc'd copy */
    char *out = strdup(text);
    cJSON_free(text);
    return out;
}

/* ---- RESULT.json ---- */

typedef struct rd {
    const char *path;
    st_err *err;
    int rc;
} rd;

static const cJSON *member(rd *x, const cJSON *o, const char *key, const char *where, int required)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if ((!v || cJSON_IsNull(v)) && required && x->rc == ST_OK)
        x->rc = ST_RAISE(x->err, ST_EINVAL, "%s: %s%s\"%s\" is missing", x->path, where,
                         *where ? ": " : "", key);
    return v && !cJSON_IsNull(v) ? v : NULL;
}

static double num(rd *x, const cJSON *o, const char *key, const char *where, int required)
{
    const cJSON *v = member(x, o, key, where, required);
    if (!v)
        return NAN;
    if (!cJSON_IsNumber(v)) {
        if (x->rc == ST_OK)
            x->rc = ST_RAISE(x->err, ST_EINVAL, "%s: %s%s\"%s\" is not a number", x->path, where,
                             *where ? ": " : "", key);
        return NAN;
    }
    return v->valuedouble;
}

static void text(rd *x, const cJSON *o, const char *key, char *dst, size_t n, int required)
{
    const cJSON *v = member(x, o, key, "", required);
    dst[0] = '\0';
    if (!v)
        return;
    if (!cJSON_IsString(v)) {
        if (x->rc == ST_OK)
            x->rc = ST_RAISE(x->err, ST_EINVAL, "%s: \"%s\" is not a string", x->path, key);
        return;
    }
    snprintf(dst, n, "%s", v->valuestring);
}

static void phases(rd *x, const cJSON *o, const char *where, double *c, double *tp, double *pp,
                   double *dp, double *opt)
{
    const cJSON *ph = member(x, o, "phases_s", where, 0);
    double *dst[] = {c, tp, pp, dp, opt};
    static const char *const keys[] = {"compute", "tp_comm", "pp_wait", "dp_comm", "optimizer"};
    for (int i = 0; i < 5; i++)
        *dst[i] = ph ? num(x, ph, keys[i], where, 0) : NAN;
}

void cli_exec_result_free(cli_exec_result *r)
{
    if (!r)
        return;
    free(r->steps);
    free(r->rank_stats);
    r->steps = NULL;
    r->rank_stats = NULL;
    r->nsteps = r->nranks = 0;
}

int cli_exec_result_read(const char *path, cli_exec_result *out, st_err *err)
{
    memset(out, 0, sizeof *out);
    out->failed_rank = -1;
    char *buf = NULL;
    size_t len = 0;
    int rc = data_read_file(path, &buf, &len, err);
    if (rc != ST_OK)
        return rc;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
    free(buf);
    if (!root)
        return ST_RAISE(err, ST_EPARSE, "%s: not JSON", path);
    rd x = {path, err, ST_OK};
    if (!cJSON_IsObject(root))
        x.rc = ST_RAISE(err, ST_EINVAL, "%s: not a JSON object", path);
    double version = x.rc == ST_OK ? num(&x, root, "version", "", 1) : NAN;
    if (x.rc == ST_OK && version != 1)
        x.rc = ST_RAISE(err, ST_EINVAL, "%s: version %g; this smdplan reads version 1", path,
                        version);
    if (x.rc == ST_OK) {
        text(&x, root, "status", out->status, sizeof out->status, 1);
        text(&x, root, "error", out->error, sizeof out->error, 0);
        double fr = num(&x, root, "failed_rank", "", 0);
        out->failed_rank = isfinite(fr) ? (int)fr : -1;
        double ranks = num(&x, root, "ranks", "", 1);
        out->ranks = isfinite(ranks) ? (int)ranks : 0;
        text(&x, root, "device", out->device, sizeof out->device, 0);
        text(&x, root, "transport", out->transport, sizeof out->transport, 0);
        double th = num(&x, root, "threads_per_rank", "", 0);
        out->threads_per_rank = isfinite(th) ? (int)th : 0;
        text(&x, root, "host", out->host, sizeof out->host, 0);
        out->tokens_per_step = num(&x, root, "tokens_per_step", "", 0);
        out->model_flops_per_step = num(&x, root, "model_flops_per_step", "", 0);
        out->hardware_flops_per_step = num(&x, root, "hardware_flops_per_step", "", 0);
    }
    if (x.rc == ST_OK && strcmp(out->status, "ok") && strcmp(out->status, "failed"))
        x.rc = ST_RAISE(err, ST_EINVAL, "%s: status \"%s\"; allowed: ok, failed", path, out->status);
    const cJSON *steps = x.rc == ST_OK ? member(&x, root, "steps", "", 0) : NULL;
    if (steps && !cJSON_IsArray(steps))
        x.rc = ST_RAISE(err, ST_EINVAL, "%s: \"steps\" is not an array", path);
    int n = steps && x.rc == ST_OK ? cJSON_GetArraySize(steps) : 0;
    if (n > 0 && !(out->steps = calloc((size_t)n, sizeof *out->steps)))
        x.rc = ST_RAISE(err, ST_ENOMEM, "%s: out of memory", path);
    for (int i = 0; x.rc == ST_OK && i < n; i++) {
        const cJSON *s = cJSON_GetArrayItem(steps, i);
        char where[32];
        snprintf(where, sizeof where, "steps[%d]", i);
        cli_exec_step *st = &out->steps[out->nsteps++];
        double k = num(&x, s, "step", where, 1);
        st->step = isfinite(k) ? (int)k : i + 1;
        st->time_s = num(&x, s, "time_s", where, 1);
        st->loss = num(&x, s, "loss", where, 0);
        st->lr = num(&x, s, "lr", where, 0);
        st->grad_norm = num(&x, s, "grad_norm", where, 0);
        const cJSON *mv = member(&x, s, "measured", where, 0);
        st->measured = mv ? cJSON_IsTrue(mv) : 1;
        phases(&x, s, where, &st->compute_s, &st->tp_comm_s, &st->pp_wait_s, &st->dp_comm_s,
               &st->optimizer_s);
    }
    const cJSON *ranks = x.rc == ST_OK ? member(&x, root, "rank_stats", "", 0) : NULL;
    if (ranks && !cJSON_IsArray(ranks))
        x.rc = ST_RAISE(err, ST_EINVAL, "%s: \"rank_stats\" is not an array", path);
    n = ranks && x.rc == ST_OK ? cJSON_GetArraySize(ranks) : 0;
    if (n > 0 && !(out->rank_stats = calloc((size_t)n, sizeof *out->rank_stats)))
        x.rc = ST_RAISE(err, ST_ENOMEM, "%s: out of memory", path);
    for (int i = 0; x.rc == ST_OK && i < n; i++) {
        const cJSON *s = cJSON_GetArrayItem(ranks, i);
        char where[32];
        snprintf(where, sizeof where, "rank_stats[%d]", i);
        cli_exec_rank *k = &out->rank_stats[out->nranks++];
        double v[4];
        static const char *const keys[] = {"rank", "tp_rank", "pp_rank", "dp_rank"};
        for (int j = 0; j < 4; j++) {
            v[j] = num(&x, s, keys[j], where, j == 0);
            if (!isfinite(v[j]))
                v[j] = j == 0 ? i : -1;
        }
        k->rank = (int)v[0];
        k->tp_rank = (int)v[1];
        k->pp_rank = (int)v[2];
        k->dp_rank = (int)v[3];
        k->peak_memory_bytes = num(&x, s, "peak_memory_bytes", where, 0);
        phases(&x, s, where, &k->compute_s, &k->tp_comm_s, &k->pp_wait_s, &k->dp_comm_s,
               &k->optimizer_s);
    }
    cJSON_Delete(root);
    if (x.rc != ST_OK)
        cli_exec_result_free(out);
    return x.rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cli_exec_median_step_s(const cli_exec_result *r, int *measured)
{
    *measured = 0;
    double *t = r->nsteps > 0 ? malloc((size_t)r->nsteps * sizeof *t) : NULL;
    if (!t)
        return NAN;
    int n = 0;
    for (int i = 0; i < r->nsteps; i++)
        if (r->steps[i].measured && isfinite(r->steps[i].time_s))
            t[n++] = r->steps[i].time_s;
    *measured = n;
    double med = NAN;
    if (n > 0) {
        qsort(t, (size_t)n, sizeof *t, cmp_double);
        med = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    }
    free(t);
    return med;
}
