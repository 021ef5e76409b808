/*
 * data_frameworks.c: reading the stack profiles (data/frameworks.json) and
 * installing them in the planner (plan_frameworks_set).
 *
 * The file is one JSON object whose "frameworks" array lists one entry per
 * release of a stack, keyed "stack@release" ("megatron@2022"; a stack with
 * a single release may be keyed by its name alone, "smdplan"). An entry
 * either starts a stack (every behaviour field required) or "inherits" an
 * earlier release, of its stack or another, and gives only what changed.
 * Inherited are the knobs, the behaviour and the defaults (the fields of
 * plan_framework, planner/plan_framework.h, named as there); never the
 * entry's own identity: its label, the date it came into force
 * ("released": "YYYY-MM"), the documented names it answers to ("names",
 * "release_names", "versions", "calendar_names"), old keys ("aliases"),
 * "default" and "source".
 *
 * A value's citation is the string of the key "_" + its field name beside it
 * in the same entry ("_attention": "Korthikanti et al. 2022, Sec. 5 ..."),
 * shown by `smdplan frameworks KEY` (data_frameworks_describe); keys
 * starting with '_' are otherwise comments. Units: *_bytes a size ("25MB",
 * "80GiB") or a number of bytes, host_op_s seconds, optimizer_bytes bytes
 * per parameter.
 *
 * Errors are one line naming the file, the entry and the field, with what
 * is allowed: ST_EPARSE for text that is not JSON, ST_EINVAL otherwise.
 * Nothing is installed unless the whole file reads.
 */
#include "common/text.h"
#include "data/data.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/units.h"
#include "data/data_json.h"
#include "planner/plan_framework.h"

/* Entries per file: far more than the releases of every stack. */
#define FW_MAX_ENTRIES PLAN_FW_MAX

typedef enum ftype {
    F_BOOL,      /* int 0/1 */
    F_INT,       /* int in [min, max] */
    F_I64,       /* int64_t in [min, max] */
    F_NUM,       /* double >= 0 */
    F_BYTES,     /* double bytes: size string or number */
    F_BUCKET,    /* dp_bucket_bytes: a size, "whole buffer" or "layer" */
    F_MASK,      /* unsigned bits of an enum's names (array of names) */
    F_ENUM,      /* int: one of an enum's names */
    F_PLACEMENT, /* char[4]: a permutation of D, P, T */
    F_TYPES,     /* instance_types */
} ftype;

typedef enum ekind {
    E_NONE = 0,
    E_SCHED,
    E_SHARD,
    E_RECOMP,
    E_ATTN,
    E_SYNC,
    E_PREC,
    E_TP_OVERLAP,
    E_FAMILY,
    E_ACCUM,
} ekind;

typedef struct field {
    const char *key;
    ftype type;
    size_t off;
    ekind kind;
    int required;   /* an entry that inherits nothing must give it */
    long long min, max;
} field;

#define FLD(k, t, e, req) {#k, t, offsetof(plan_framework, k), e, req, 0, 0}
#define INT(k, req, lo, hi) {#k, F_INT, offsetof(plan_framework, k), E_NONE, req, lo, hi}

/* The inherited fields, in plan_framework's order. */
static const field fields[] = {
    FLD(family, F_ENUM, E_FAMILY, 1),
    FLD(schedules, F_MASK, E_SCHED, 1),
    FLD(shardings, F_MASK, E_SHARD, 1),
    FLD(shardings_with_pp, F_MASK, E_SHARD, 1),
    FLD(shardings_with_tp, F_MASK, E_SHARD, 1),
    FLD(recomputes, F_MASK, E_RECOMP, 1),
    FLD(recompute_groups, F_BOOL, E_NONE, 0),
    FLD(sequence_parallel, F_BOOL, E_NONE, 0),
    FLD(context_parallel, F_BOOL, E_NONE, 0),
    FLD(cp_all_to_all, F_BOOL, E_NONE, 0),
    FLD(active_cap, F_BOOL, E_NONE, 0),
    FLD(offload, F_BOOL, E_NONE, 0),
    INT(offload_layers_held, 0, 0, 1024),
    FLD(prescaled, F_BOOL, E_NONE, 0),
    FLD(placement_search, F_BOOL, E_NONE, 0),
    FLD(fp8, F_BOOL, E_NONE, 0),
    FLD(tp_max_in_node, F_BOOL, E_NONE, 0),
    FLD(instance_types, F_TYPES, E_NONE, 0),
    FLD(placement, F_PLACEMENT, E_NONE, 1),
    FLD(attention, F_ENUM, E_ATTN, 1),
    FLD(dp_overlap, F_BOOL, E_NONE, 1),
    FLD(dp_bucket_bytes, F_BUCKET, E_NONE, 1),
    FLD(sync_sharded, F_ENUM, E_SYNC, 1),
    FLD(param_gather_overlap, F_BOOL, E_NONE, 0),
    FLD(pp_sync_once, F_BOOL, E_NONE, 0),
    FLD(pipeline_ends, F_BOOL, E_NONE, 0),
    FLD(virtual_even, F_BOOL, E_NONE, 0),
    FLD(pipeline_embedding_loss, F_BOOL, E_NONE, 0),
    FLD(fused_with_tp, F_BOOL, E_NONE, 0),
    FLD(wgrad_accum, F_ENUM, E_ACCUM, 0),
    FLD(tflops_model, F_BOOL, E_NONE, 0),
    FLD(tp_overlap, F_ENUM, E_TP_OVERLAP, 1),
    FLD(tp_overlaps, F_MASK, E_TP_OVERLAP, 0),
    FLD(async_tp, F_BOOL, E_NONE, 0),
    INT(ub_pipeline_sms, 0, 0, 1024),
    INT(ub_pipeline_splits, 0, 0, 64),
    INT(ub_bulk_sms, 0, 0, 1024),
    FLD(pp_overlap, F_BOOL, E_NONE, 0),
    INT(zero3_prefetch, 0, 0, 64),
    FLD(zero3_regather, F_BOOL, E_NONE, 0),
    FLD(zero2_gathers, F_BOOL, E_NONE, 0),
    FLD(fp32_grads, F_BOOL, E_NONE, 0),
    FLD(launch_blocking, F_BOOL, E_NONE, 0),
    FLD(no_dropout, F_BOOL, E_NONE, 0),
    FLD(recompute_block, F_BOOL, E_NONE, 0),
    FLD(recompute_every, F_BOOL, E_NONE, 0),
    FLD(remat_policies, F_BOOL, E_NONE, 0),
    FLD(remat_dce, F_BOOL, E_NONE, 0),
    FLD(selective_ops, F_BOOL, E_NONE, 0),
    FLD(compile, F_BOOL, E_NONE, 0),
    FLD(unfused_pointwise, F_BOOL, E_NONE, 0),
    FLD(residual_epilogue, F_BOOL, E_NONE, 0),
    FLD(gelu_epilogue, F_BOOL, E_NONE, 0),
    FLD(measured_kernels, F_BOOL, E_NONE, 0),
    FLD(host_op_s, F_NUM, E_NONE, 1),
    FLD(local_batch, F_BOOL, E_NONE, 0),
    FLD(optimizer_bytes, F_NUM, E_NONE, 0),
    FLD(grad_buffer_bytes, F_BYTES, E_NONE, 0),
    FLD(context_bytes, F_BYTES, E_NONE, 0),
    FLD(loss_bytes_per_logit, F_NUM, E_NONE, 0),
    {"default_vocab", F_I64, offsetof(plan_framework, default_vocab), E_NONE, 0, 0,
     PLAN_MAX_VOCAB},
    INT(vocab_multiple, 0, 0, 65536),
    FLD(recompute_default, F_ENUM, E_RECOMP, 1),
    FLD(sharding_default, F_ENUM, E_SHARD, 1),
    FLD(sp_default, F_BOOL, E_NONE, 0),
    FLD(precision_default, F_ENUM, E_PREC, 0),
    FLD(schedules_unknown, F_MASK, E_SCHED, 0),
};
#undef FLD
#undef INT
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))

/* The entry's own keys, never inherited. */
static const char *const own_keys[] = {
    "name", "inherits", "label", "released", "names", "release_names", "versions",
    "calendar_names", "aliases", "joins", "default", "source",
};
#define NOWN ((int)(sizeof own_keys / sizeof own_keys[0]))

/* Names of the tp_overlap levels (plan_framework.tp_overlap). */
static const char *const tp_overlap_names[] = {"none", "backward", "pipelined"};
static const char *const sync_names[] = {"per-step", "per-microbatch"};
static const char *const accum_names[] = {"fused", "main_grad", "autograd"};

/* ------------------------------------------------------------------------ */
/* Messages and names                                                        */
/* ------------------------------------------------------------------------ */

typedef struct ctx {
    const char *file;
    char where[160];     /* "frameworks.json: framework 'megatron@2022'" */
} ctx;

static int enum_count(ekind k)
{
    switch (k) {
    case E_SCHED: return PLAN_SCHED__COUNT;
    case E_SHARD: return PLAN_SHARD__COUNT;
    case E_RECOMP: return PLAN_RECOMP__COUNT;
    case E_ATTN: return PLAN_ATTN__COUNT;
    case E_SYNC: return 2;
    case E_PREC: return PLAN_PREC__COUNT;
    case E_TP_OVERLAP: return 3;
    case E_FAMILY: return PLAN_FW__COUNT;
    case E_ACCUM: return 3;
    case E_NONE:
    default: return 0;
    }
}

static const char *enum_name(ekind k, int v)
{
    switch (k) {
    case E_SCHED: return plan_schedule_name((plan_schedule)v);
    case E_SHARD: return plan_sharding_name((plan_sharding)v);
    case E_RECOMP: return plan_recompute_name((plan_recompute)v);
    case E_ATTN: return plan_attn_name((plan_attn)v);
    case E_SYNC: return sync_names[v];
    case E_PREC: return plan_precision_name((plan_precision)v);
    case E_TP_OVERLAP: return tp_overlap_names[v];
    case E_FAMILY: return plan_fw_family_key((plan_fw_family)v);
    case E_ACCUM: return accum_names[v];
    case E_NONE:
    default: return "?";
    }
}

static int enum_value(ekind k, const char *s)
{
    for (int v = 0; v < enum_count(k); v++)
        if (strcasecmp(enum_name(k, v), s) == 0)
            return v;
    return -1;
}

static int bad_enum(const ctx *x, const char *key, ekind k, const char *s, st_err *err)
{
    char allowed[160] = "";
    for (int v = 0; v < enum_count(k); v++) {
        size_t u = strlen(allowed);
        snprintf(allowed + u, sizeof allowed - u, "%s%s", v ? ", " : "", enum_name(k, v));
    }
    return ST_RAISE(err, ST_EINVAL, "%s: field '%s' is '%.40s'; allowed: %s", x->where, key, s,
                    allowed);
}

/* ------------------------------------------------------------------------ */
/* Values                                                                    */
/* ------------------------------------------------------------------------ */

static int get_bool(const ctx *x, const char *key, const cJSON *v, int *out, st_err *err)
{
    if (cJSON_IsBool(v)) {
        *out = cJSON_IsTrue(v) ? 1 : 0;
        return ST_OK;
    }
    return ST_RAISE(err, ST_EINVAL, "%s: field '%s' is %s; allowed: true or false", x->where, key,
                    data_json_type_name(v));
}

static int get_num(const ctx *x, const char *key, const cJSON *v, double *out, st_err *err)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
        return ST_RAISE(err, ST_EINVAL, "%s: field '%s' is %s; allowed: a number >= 0",
                        x->where, key, cJSON_IsNumber(v) ? "negative" : data_json_type_name(v));
    *out = v->valuedouble;
    return ST_OK;
}

static int get_whole(const ctx *x, const field *f, const cJSON *v, long long *out, st_err *err)
{
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
        v->valuedouble < (double)f->min || v->valuedouble > (double)f->max)
        return ST_RAISE(err, ST_EINVAL, "%s: field '%s': allowed: a whole number %lld to %lld",
                        x->where, f->key, f->min, f->max);
    *out = (long long)v->valuedouble;
    return ST_OK;
}

static int get_bytes(const ctx *x, const char *key, const cJSON *v, double *out, st_err *err)
{
    if (cJSON_IsString(v)) {
        char what[224];
        snprintf(what, sizeof what, "%s: field '%s'", x->where, key);
        return units_parse_bytes(v->valuestring, what, out, err);
    }
    return get_num(x, key, v, out, err);
}

/* One string of at most size - 1 characters, not empty. */
static int get_text(const ctx *x, const char *key, const cJSON *v, char *dst, size_t size,
                    st_err *err)
{
    if (!cJSON_IsString(v))
        return ST_RAISE(err, ST_EINVAL, "%s: field '%s' is %s; expected a string", x->where, key,
                        data_json_type_name(v));
    size_t n = strlen(v->valuestring);
    if (n == 0 || n >= size)
        return ST_RAISE(err, ST_EINVAL, "%s: field '%s' has %zu characters; allowed: 1 to %zu",
                        x->where, key, n, size - 1);
    memcpy(dst, v->valuestring, n + 1);
    return ST_OK;
}

/* An array of at most max strings into dst[max][size] (the rest cleared). */
static int get_words(const ctx *x, const char *key, const cJSON *v, char *dst, int max,
                     size_t size, st_err *err)
{
    if (!cJSON_IsArray(v))
        return ST_RAISE(err, ST_EINVAL, "%s: field '%s' is %s; expected an array of strings",
                        x->where, key, data_json_type_name(v));
    int n = cJSON_GetArraySize(v);
    if (n > max)
        return ST_RAISE(err, ST_EINVAL, "%s: field '%s' has %d names; allowed: at most %d",
                        x->where, key, n, max);
    memset(dst, 0, (size_t)max * size);
    int i = 0;
    const cJSON *a;
    cJSON_ArrayForEach(a, v) {
        int rc = get_text(x, key, a, dst + (size_t)i * size, size, err);
        if (rc)
            return rc;
        i++;
    }
    return ST_OK;
}

static int get_mask(const ctx *x, const field *f, const cJSON *v, unsigned *out, st_err *err)
{
    if (!cJSON_IsArray(v))
        return ST_RAISE(err, ST_EINVAL, "%s: field '%s' is %s; expected an array of names",
                        x->where, f->key, data_json_type_name(v));
    unsigned m = 0;
    const cJSON *a;
    cJSON_ArrayForEach(a, v) {
        if (!cJSON_IsString(a))
            return ST_RAISE(err, ST_EINVAL, "%s: field '%s' holds %s; expected names",
                            x->where, f->key, data_json_type_name(a));
        int e = enum_value(f->kind, a->valuestring);
        if (e < 0)
            return bad_enum(x, f->key, f->kind, a->valuestring, err);
        m |= 1u << e;
    }
    *out = m;
    return ST_OK;
}

static int set_field(const ctx *x, const field *f, const cJSON *v, plan_framework *fw,
                     st_err *err)
{
    char *p = (char *)fw + f->off;
    switch (f->type) {
    case F_BOOL: return get_bool(x, f->key, v, (int *)(void *)p, err);
    case F_INT: {
        long long w = 0;
        int rc = get_whole(x, f, v, &w, err);
        if (!rc)
            *(int *)(void *)p = (int)w;
        return rc;
    }
    case F_I64: {
        long long w = 0;
        int rc = get_whole(x, f, v, &w, err);
        if (!rc)
            *(int64_t *)(void *)p = (int64_t)w;
        return rc;
    }
    case F_NUM: return get_num(x, f->key, v, (double *)(void *)p, err);
    case F_BYTES: return get_bytes(x, f->key, v, (double *)(void *)p, err);
    case F_BUCKET:
        /* "whole buffer": one message; "layer": one transformer layer's
         * gradients a message (dp_bucket_layer) */
        if (cJSON_IsString(v) && strcasecmp(v->valuestring, "whole buffer") == 0) {
            fw->dp_bucket_bytes = PLAN_FW_WHOLE_BUFFER;
            fw->dp_bucket_layer = 0;
            return ST_OK;
        }
        if (cJSON_IsString(v) && strcasecmp(v->valuestring, "layer") == 0) {
            fw->dp_bucket_bytes = 0;
            fw->dp_bucket_layer = 1;
            return ST_OK;
        }
        fw->dp_bucket_layer = 0;
        st_err local = {0};
        if (get_bytes(x, f->key, v, &fw->dp_bucket_bytes, &local) != ST_OK ||
            fw->dp_bucket_bytes <= 0)
            return ST_RAISE(err, ST_EINVAL, "%s: field 'dp_bucket_bytes': allowed: a size such "
                            "as \"25MB\" (> 0), \"whole buffer\" or \"layer\"", x->where);
        return ST_OK;
    case F_MASK: return get_mask(x, f, v, (unsigned *)(void *)p, err);
    case F_ENUM: {
        if (!cJSON_IsString(v))
            return ST_RAISE(err, ST_EINVAL, "%s: field '%s' is %s; expected a name", x->where,
                            f->key, data_json_type_name(v));
        int e = enum_value(f->kind, v->valuestring);
        if (e < 0)
            return bad_enum(x, f->key, f->kind, v->valuestring, err);
        *(int *)(void *)p = e;
        return ST_OK;
    }
    case F_PLACEMENT: {
        char t[8];
        int rc = get_text(x, f->key, v, t, sizeof t, err);
        if (rc)
            return rc;
        if (strlen(t) != 3 || !strchr(t, 'D') || !strchr(t, 'P') || !strchr(t, 'T'))
            return ST_RAISE(err, ST_EINVAL, "%s: field 'placement' is '%s'; allowed: an order "
                            "of D, P and T such as \"PDT\"", x->where, t);
        memcpy(fw->placement, t, 4);
        return ST_OK;
    }
    case F_TYPES:
        return get_words(x, f->key, v, &fw->instance_types[0][0], PLAN_FW_TYPES_MAX,
                         sizeof fw->instance_types[0], err);
    }
    return ST_RAISE(err, ST_EINTERNAL, "%s: field '%s' has no reader", x->where, f->key);
}

static int field_index(const char *key)
{
    for (int i = 0; i < NFIELDS; i++)
        if (strcmp(fields[i].key, key) == 0)
            return i;
    return -1;
}

static int own_index(const char *key)
{
    for (int i = 0; i < NOWN; i++)
        if (strcmp(own_keys[i], key) == 0)
            return i;
    return -1;
}

/* "2024-07" -> year * 12 + month - 1. */
static int get_released(const ctx *x, const cJSON *v, int *out, st_err *err)
{
    /* digits and a dash where YYYY-MM has them (sscanf's %d alone would
     * take " 7" for a month) */
    const char *s = cJSON_IsString(v) ? v->valuestring : "";
    int shape = strlen(s) == 7 && s[4] == '-';
    for (int i = 0; shape && i < 7; i++)
        shape = i == 4 || isdigit((unsigned char)s[i]);
    int y = shape ? atoi(s) : 0, m = shape ? atoi(s + 5) : 0;
    if (!shape || y < 1990 || y > 2099 || m < 1 || m > 12)
        return ST_RAISE(err, ST_EINVAL, "%s: field 'released': allowed: a month \"YYYY-MM\" "
                        "(1990 to 2099)", x->where);
    *out = y * 12 + m - 1;
    return ST_OK;
}

/* "versions": {"Megatron-Core": "0.6", ...}. */
static int get_versions(const ctx *x, const cJSON *v, plan_framework *fw, st_err *err)
{
    if (!cJSON_IsObject(v))
        return ST_RAISE(err, ST_EINVAL, "%s: field 'versions' is %s; expected an object of "
                        "names and version numbers", x->where, data_json_type_name(v));
    fw->nversions = 0;
    const cJSON *a;
    cJSON_ArrayForEach(a, v) {
        if (fw->nversions == PLAN_FW_VERSIONS_MAX)
            return ST_RAISE(err, ST_EINVAL, "%s: field 'versions': at most %d names", x->where,
                            PLAN_FW_VERSIONS_MAX);
        plan_fw_version *pv = &fw->versions[fw->nversions];
        memset(pv, 0, sizeof *pv);
        size_t n = strlen(a->string ? a->string : "");
        int k = 0;
        if (n == 0 || n >= sizeof pv->name || !cJSON_IsString(a) ||
            (k = sscanf(a->valuestring, "%d.%d.%d", &pv->v[0], &pv->v[1], &pv->v[2])) < 1 ||
            pv->v[0] < 0 || pv->v[1] < 0 || pv->v[2] < 0)
            return ST_RAISE(err, ST_EINVAL, "%s: field 'versions': each a name and a version "
                            "number such as \"0.6\"", x->where);
        memcpy(pv->name, a->string, n + 1);
        fw->nversions++;
    }
    return ST_OK;
}

/* A key: a stack name of lower-case letters, digits, '-', '_' and '.', then
 * optionally '@' and a release of the same characters. */
static int check_key(const ctx *x, const char *key, plan_framework *fw, st_err *err)
{
    size_t n = strlen(key);
    const char *at = strchr(key, '@');
    int ok = n > 0 && n < PLAN_FW_KEY_MAX && key[0] != '@' && (!at || (at[1] && !strchr(at + 1, '@')));
    for (size_t i = 0; ok && i < n; i++)
        ok = key[i] == '@' || islower((unsigned char)key[i]) || isdigit((unsigned char)key[i]) ||
             key[i] == '-' || key[i] == '_' || key[i] == '.';
    if (!ok)
        return ST_RAISE(err, ST_EINVAL, "%s: name '%.40s': allowed: STACK or STACK@RELEASE of "
                        "lower-case letters, digits, '-', '_' and '.', under %d characters",
                        x->where, key, PLAN_FW_KEY_MAX);
    memcpy(fw->key, key, n + 1);
    size_t s = at ? (size_t)(at - key) : n;
    memcpy(fw->stack, key, s);
    fw->stack[s] = '\0';
    return ST_OK;
}

/* ------------------------------------------------------------------------ */
/* Entries and inheritance                                                   */
/* ------------------------------------------------------------------------ */

typedef struct entries {
    const cJSON *obj[FW_MAX_ENTRIES];
    const char *name[FW_MAX_ENTRIES];
    int parent[FW_MAX_ENTRIES];  /* index, -1 none */
    int state[FW_MAX_ENTRIES];   /* 0 unread, 1 reading, 2 read */
    plan_framework fw[FW_MAX_ENTRIES];
    int n;
    int def;
} entries;

static void name_where(ctx *x, const entries *e, int i)
{
    snprintf(x->where, sizeof x->where, "%s: framework '%.40s'", x->file,
             e->name[i] ? e->name[i] : "?");
}

/* Checks of a whole profile, after inheritance. */
static int check_profile(const ctx *x, const plan_framework *f, st_err *err)
{
    if (!f->schedules)
        return ST_RAISE(err, ST_EINVAL, "%s: 'schedules' is empty; a stack runs at least one",
                        x->where);
    if (!f->recomputes || !(f->shardings & ((1u << PLAN_SHARD__COUNT) - 1)))
        return ST_RAISE(err, ST_EINVAL, "%s: 'recomputes' and 'shardings' need at least one "
                        "name each", x->where);
    if ((f->shardings_with_pp & ~f->shardings) || (f->shardings_with_tp & ~f->shardings))
        return ST_RAISE(err, ST_EINVAL, "%s: 'shardings_with_pp' and 'shardings_with_tp' may "
                        "name only what 'shardings' does", x->where);
    if (f->schedules_unknown & ~f->schedules)
        return ST_RAISE(err, ST_EINVAL, "%s: 'schedules_unknown' may name only what "
                        "'schedules' does", x->where);
    if (!((f->recomputes >> f->recompute_default) & 1))
        return ST_RAISE(err, ST_EINVAL, "%s: 'recompute_default' %s is not in 'recomputes'",
                        x->where, plan_recompute_name(f->recompute_default));
    if (f->sharding_default != PLAN_SHARD_NONE && !((f->shardings >> f->sharding_default) & 1))
        return ST_RAISE(err, ST_EINVAL, "%s: 'sharding_default' %s is not in 'shardings'",
                        x->where, plan_sharding_name(f->sharding_default));
    if (f->precision_default == PLAN_PREC_FP8 && !f->fp8)
        return ST_RAISE(err, ST_EINVAL, "%s: 'precision_default' fp8 needs 'fp8': true",
                        x->where);
    return ST_OK;
}

static int read_entry(entries *e, int i, const char *file, int depth, st_err *err);

/* The entry's own keys (identity, never inherited). */
static int read_own(const ctx *x, entries *e, int i, st_err *err)
{
    plan_framework *fw = &e->fw[i];
    const cJSON *v;
    int rc = ST_OK;
    cJSON_ArrayForEach(v, e->obj[i]) {
        const char *key = v->string ? v->string : "";
        if (key[0] == '_' || own_index(key) < 0)
            continue;
        if (!strcmp(key, "label"))
            rc = get_text(x, key, v, fw->label, sizeof fw->label, err);
        else if (!strcmp(key, "released"))
            rc = get_released(x, v, &fw->released_ym, err);
        else if (!strcmp(key, "names"))
            rc = get_words(x, key, v, &fw->names[0][0], PLAN_FW_NAMES_MAX, PLAN_FW_WORD_MAX, err);
        else if (!strcmp(key, "release_names"))
            rc = get_words(x, key, v, &fw->release_names[0][0], PLAN_FW_RELNAMES_MAX,
                           PLAN_FW_WORD_MAX, err);
        else if (!strcmp(key, "calendar_names"))
            rc = get_words(x, key, v, &fw->calendar_names[0][0], PLAN_FW_RELNAMES_MAX,
                           PLAN_FW_WORD_MAX, err);
        else if (!strcmp(key, "aliases"))
            rc = get_words(x, key, v, &fw->aliases[0][0], PLAN_FW_RELNAMES_MAX, PLAN_FW_KEY_MAX,
                           err);
        else if (!strcmp(key, "joins"))
            rc = get_text(x, key, v, fw->joins, sizeof fw->joins, err);
        else if (!strcmp(key, "versions"))
            rc = get_versions(x, v, fw, err);
        else if (!strcmp(key, "default")) {
            int d = 0;
            rc = get_bool(x, key, v, &d, err);
            if (!rc && d) {
                if (e->def >= 0)
                    return ST_RAISE(err, ST_EINVAL, "%s: 'default' is true here and for '%s'; "
                                    "allowed: one default", x->where, e->name[e->def]);
                e->def = i;
            }
        } else if (!strcmp(key, "source")) {
            if (!cJSON_IsString(v))
                rc = ST_RAISE(err, ST_EINVAL, "%s: field 'source' is %s; expected a string",
                              x->where, data_json_type_name(v));
        }
        if (rc)
            return rc;
    }
    if (!fw->label[0])
        return ST_RAISE(err, ST_EINVAL, "%s: missing required field 'label'", x->where);
    return ST_OK;
}

static int read_entry(entries *e, int i, const char *file, int depth, st_err *err)
{
    ctx x = {.file = file};
    name_where(&x, e, i);
    if (e->state[i] == 2)
        return ST_OK;
    if (e->state[i] == 1 || depth > e->n)
        return ST_RAISE(err, ST_EINVAL, "%s: 'inherits' goes round in a circle", x.where);
    e->state[i] = 1;
    plan_framework *fw = &e->fw[i];
    int p = e->parent[i];
    if (p >= 0) {
        int rc = read_entry(e, p, file, depth + 1, err);
        if (rc)
            return rc;
        /* the knobs, behaviour and defaults; never the identity */
        *fw = e->fw[p];
        memset(fw->label, 0, sizeof fw->label);
        fw->released_ym = 0;
        memset(fw->names, 0, sizeof fw->names);
        memset(fw->release_names, 0, sizeof fw->release_names);
        memset(fw->calendar_names, 0, sizeof fw->calendar_names);
        memset(fw->aliases, 0, sizeof fw->aliases);
        memset(fw->joins, 0, sizeof fw->joins);
        memset(fw->versions, 0, sizeof fw->versions);
        fw->nversions = 0;
        memcpy(fw->inherits, e->fw[p].key, sizeof fw->inherits);
    } else {
        memset(fw, 0, sizeof *fw);
        memcpy(fw->placement, "DPT", 4);
    }
    int rc = check_key(&x, e->name[i], fw, err);
    if (rc)
        return rc;
    unsigned char set[NFIELDS]; /* a field given, by its index */
    memset(set, 0, sizeof set);
    const cJSON *v;
    cJSON_ArrayForEach(v, e->obj[i]) {
        const char *key = v->string ? v->string : "";
        if (key[0] == '_' || own_index(key) >= 0)
            continue;
        int f = field_index(key);
        if (f < 0) {
            /* the nearest field by name: the whole list would not fit
             * one message line (ST_MSG_MAX) */
            const char *near = own_keys[0];
            int best = text_edit_distance(key, near);
            for (int k = 0; k < NOWN + NFIELDS; k++) {
                const char *c = k < NOWN ? own_keys[k] : fields[k - NOWN].key;
                int d = text_edit_distance(key, c);
                if (d < best)
                    best = d, near = c;
            }
            return ST_RAISE(err, ST_EINVAL, "%s: unknown field '%.40s' (nearest: '%s'); allowed: "
                            "a field of plan_framework (planner/plan_framework.h) or "
                            "a key starting with '_'", x.where, key, near);
        }
        if (set[f])
            return ST_RAISE(err, ST_EINVAL, "%s: field '%s' given twice", x.where, key);
        set[f] = 1;
        if ((rc = set_field(&x, &fields[f], v, fw, err)))
            return rc;
    }
    if (p < 0)
        for (int f = 0; f < NFIELDS; f++)
            if (fields[f].required && !set[f])
                return ST_RAISE(err, ST_EINVAL, "%s: missing required field '%s' (an entry that "
                                "inherits nothing gives every behaviour)", x.where,
                                fields[f].key);
    fw->flash_attention = fw->attention != PLAN_ATTN_UNFUSED;
    if ((rc = read_own(&x, e, i, err)) || (rc = check_profile(&x, fw, err)))
        return rc;
    e->state[i] = 2;
    return ST_OK;
}

static int parse_error(const char *text, size_t len, const char *end, const char *file,
                       st_err *err)
{
    int line, col;
    data_json_error_at(text, len, end, &line, &col);
    if (len == 0)
        return ST_RAISE(err, ST_EPARSE, "%s: empty file; expected a JSON object", file);
    return ST_RAISE(err, ST_EPARSE, "%s:%d:%d: malformed JSON", file, line, col);
}

/* The "frameworks" array of a parsed file, or an error. */
static int frameworks_array(const cJSON *root, const char *file, const cJSON **out, st_err *err)
{
    if (!cJSON_IsObject(root))
        return ST_RAISE(err, ST_EINVAL, "%s: expected a JSON object with \"frameworks\"; found %s",
                        file, data_json_type_name(root));
    const cJSON *v;
    cJSON_ArrayForEach(v, root) {
        const char *key = v->string ? v->string : "";
        if (key[0] != '_' && strcmp(key, "frameworks") != 0)
            return ST_RAISE(err, ST_EINVAL, "%s: unknown key '%.40s'; allowed: frameworks (and "
                            "keys starting with '_')", file, key);
    }
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "frameworks");
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0)
        return ST_RAISE(err, ST_EINVAL, "%s: \"frameworks\" is missing or empty; expected an "
                        "array of releases", file);
    if (cJSON_GetArraySize(arr) > FW_MAX_ENTRIES)
        return ST_RAISE(err, ST_EINVAL, "%s: %d frameworks; allowed: at most %d", file,
                        cJSON_GetArraySize(arr), FW_MAX_ENTRIES);
    *out = arr;
    return ST_OK;
}

/* Index the entries of arr: names present and unique, parents found. */
static int index_entries(const cJSON *arr, const char *file, entries *e, st_err *err)
{
    memset(e, 0, sizeof *e);
    e->def = -1;
    const cJSON *v;
    cJSON_ArrayForEach(v, arr) {
        int i = e->n++;
        e->obj[i] = v;
        e->parent[i] = -1;
        if (!cJSON_IsObject(v))
            return ST_RAISE(err, ST_EINVAL, "%s: frameworks[%d] is %s; expected an object", file,
                            i, data_json_type_name(v));
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(v, "name");
        if (!cJSON_IsString(n) || !n->valuestring[0])
            return ST_RAISE(err, ST_EINVAL, "%s: frameworks[%d]: missing required field 'name' "
                            "(a string such as \"megatron@2022\")", file, i);
        e->name[i] = n->valuestring;
        for (int j = 0; j < i; j++)
            if (strcasecmp(e->name[j], e->name[i]) == 0)
                return ST_RAISE(err, ST_EINVAL, "%s: framework '%.40s' is listed twice", file,
                                e->name[i]);
    }
    for (int i = 0; i < e->n; i++) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(e->obj[i], "inherits");
        if (!p)
            continue;
        int found = -1;
        for (int j = 0; cJSON_IsString(p) && j < e->n; j++)
            if (strcasecmp(e->name[j], p->valuestring) == 0)
                found = j;
        if (found < 0 || found == i)
            return ST_RAISE(err, ST_EINVAL, "%s: framework '%.40s': 'inherits' names no other "
                            "framework of the file", file, e->name[i]);
        e->parent[i] = found;
    }
    return ST_OK;
}

/* Entry i's "joins": another stack of the file, not its own nor the one it
 * inherits from (the text must name both of two stacks). */
static int check_joins(const char *file, const entries *e, int i, st_err *err)
{
    const plan_framework *f = &e->fw[i];
    if (!f->joins[0])
        return ST_OK;
    const char *base = e->parent[i] >= 0 ? e->fw[e->parent[i]].stack : "";
    int known = 0;
    for (int j = 0; j < e->n; j++)
        known |= strcasecmp(e->fw[j].stack, f->joins) == 0;
    if (!known || !strcasecmp(f->joins, f->stack) || !strcasecmp(f->joins, base) ||
        !base[0] || !strcasecmp(base, f->stack))
        return ST_RAISE(err, ST_EINVAL, "%s: framework '%.40s': 'joins' is '%.40s'; allowed: a "
                        "stack of the file other than its own and the one it inherits from "
                        "(which must be another stack)", file, f->key, f->joins);
    return ST_OK;
}

int data_frameworks_parse(const char *text, size_t len, const char *name, plan_framework **out,
                          int *n, int *def, st_err *err)
{
    const char *file = name ? name : "frameworks";
    *out = NULL;
    *n = 0;
    *def = 0;
    if (!text)
        return ST_RAISE(err, ST_EINVAL, "%s: no text", file);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root)
        return parse_error(text, len, end, file, err);
    entries *e = calloc(1, sizeof *e);
    const cJSON *arr = NULL;
    int rc = e ? frameworks_array(root, file, &arr, err)
               : ST_RAISE(err, ST_ENOMEM, "%s: out of memory", file);
    if (!rc)
        rc = index_entries(arr, file, e, err);
    for (int i = 0; !rc && i < e->n; i++)
        rc = read_entry(e, i, file, 0, err);
    if (!rc && e->def < 0)
        rc = ST_RAISE(err, ST_EINVAL, "%s: no framework has \"default\": true; allowed: one",
                      file);
    for (int i = 0; !rc && i < e->n; i++)
        rc = check_joins(file, e, i, err);
    for (int i = 0; !rc && i < e->n; i++)
        for (int j = 0; j < e->n; j++)
            for (int k = 0; k < PLAN_FW_RELNAMES_MAX && e->fw[j].aliases[k][0]; k++)
                if (strcasecmp(e->fw[i].key, e->fw[j].aliases[k]) == 0)
                    rc = ST_RAISE(err, ST_EINVAL, "%s: '%s' is a framework and an alias of '%s'",
                                  file, e->fw[i].key, e->fw[j].key);
    if (!rc) {
        *out = malloc((size_t)e->n * sizeof **out);
        if (!*out)
            rc = ST_RAISE(err, ST_ENOMEM, "%s: out of memory", file);
        else {
            memcpy(*out, e->fw, (size_t)e->n * sizeof **out);
            *n = e->n;
            *def = e->def;
        }
    }
    free(e);
    cJSON_Delete(root);
    return rc;
}

const char *data_frameworks_path(void)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/frameworks.json", data_dir());
    return path;
}

int data_frameworks_load(const char *path, st_err *err)
{
    const char *file = path ? path : data_frameworks_path();
    char *text = NULL;
    size_t len = 0;
    int rc = data_read_file(file, &text, &len, err);
    if (rc)
        return rc;
    plan_framework *v = NULL;
    int n = 0, def = 0;
    rc = data_frameworks_parse(text, len, file, &v, &n, &def, err);
    free(text);
    if (!rc)
        rc = plan_frameworks_set(v, n, def, err);
    free(v);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Describe: every value of a profile with the entry it comes from and its   */
/* citation                                                                  */
/* ------------------------------------------------------------------------ */

int data_frameworks_describe(const char *path, const char *key, data_fw_line **out, int *n,
                             st_err *err)
{
    const char *file = path ? path : data_frameworks_path();
    *out = NULL;
    *n = 0;
    char *text = NULL;
    size_t len = 0;
    int rc = data_read_file(file, &text, &len, err);
    if (rc)
        return rc;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    entries *e = calloc(1, sizeof *e);
    data_fw_line *lines = calloc((size_t)(NFIELDS + NOWN), sizeof *lines);
    const cJSON *arr = NULL;
    if (!root)
        rc = parse_error(text, len, end, file, err);
    else if (!e || !lines)
        rc = ST_RAISE(err, ST_ENOMEM, "%s: out of memory", file);
    else
        rc = frameworks_array(root, file, &arr, err);
    if (!rc)
        rc = index_entries(arr, file, e, err);
    int at = -1;
    for (int i = 0; !rc && i < e->n; i++)
        if (strcasecmp(e->name[i], key) == 0)
            at = i;
    if (!rc && at < 0)
        rc = ST_RAISE(err, ST_EINVAL, "framework '%.40s': not in %s", key, file);
    int k = 0;
    /* the entry's own keys, then each behaviour from the nearest entry of
     * its chain that gives it */
    for (int pass = 0; !rc && pass < 2; pass++) {
        int nkeys = pass == 0 ? NOWN : NFIELDS;
        for (int f = 0; f < nkeys; f++) {
            const char *fk = pass == 0 ? own_keys[f] : fields[f].key;
            if (pass == 0 && (!strcmp(fk, "name") || !strcmp(fk, "source")))
                continue;
            int from = at, depth = 0;
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(e->obj[from], fk);
            while (pass == 1 && !v && e->parent[from] >= 0 && depth++ < e->n) {
                from = e->parent[from];
                v = cJSON_GetObjectItemCaseSensitive(e->obj[from], fk);
            }
            if (!v)
                continue;
            data_fw_line *l = &lines[k++];
            snprintf(l->field, sizeof l->field, "%s", fk);
            snprintf(l->from, sizeof l->from, "%s", e->name[from]);
            char *s = cJSON_PrintUnformatted(v);
            snprintf(l->value, sizeof l->value, "%s", s ? s : "?");
            free(s);
            char cite_key[48];
            snprintf(cite_key, sizeof cite_key, "_%s", fk);
            const cJSON *c = cJSON_GetObjectItemCaseSensitive(e->obj[from], cite_key);
            if (!cJSON_IsString(c))
                c = cJSON_GetObjectItemCaseSensitive(e->obj[from], "source");
            snprintf(l->cite, sizeof l->cite, "%s", cJSON_IsString(c) ? c->valuestring : "");
        }
    }
    free(e);
    cJSON_Delete(root);
    free(text);
    if (rc) {
        free(lines);
        return rc;
    }
    *out = lines;
    *n = k;
    return ST_OK;
}

int data_frameworks_uncited(const char *path, char *what, size_t size, st_err *err)
{
    const char *file = path ? path : data_frameworks_path();
    char *text = NULL;
    size_t len = 0;
    int rc = data_read_file(file, &text, &len, err);
    if (rc)
        return rc;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    const cJSON *arr = NULL;
    rc = root ? frameworks_array(root, file, &arr, err) : parse_error(text, len, end, file, err);
    int missing = 0;
    what[0] = '\0';
    const cJSON *obj;
    if (!rc)
        cJSON_ArrayForEach(obj, arr) {
            const cJSON *v;
            cJSON_ArrayForEach(v, obj) {
                const char *key = v->string ? v->string : "";
                if (key[0] == '_' || field_index(key) < 0)
                    continue;
                char cite_key[48];
                snprintf(cite_key, sizeof cite_key, "_%s", key);
                const cJSON *c = cJSON_GetObjectItemCaseSensitive(obj, cite_key);
                if (cJSON_IsString(c) && c->valuestring[0])
                    continue;
                const cJSON *nm = cJSON_GetObjectItemCaseSensitive(obj, "name");
                if (!missing++)
                    snprintf(what, size, "%s.%s",
                             cJSON_IsString(nm) ? nm->valuestring : "?", key);
            }
        }
    cJSON_Delete(root);
    free(text);
    return rc ? -1 : missing;
}
