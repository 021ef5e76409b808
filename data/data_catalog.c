/*
 * data_catalog.c: reading the instance catalog (data/catalog.json) and a
 * user's override file into a plan_catalog.
 *
 * The file is one JSON object with four arrays, "gpus", "instances",
 * "curves" and "efficiencies" (the (framework, chip) fits smdplan calibrate
 * writes, each named "framework@chip"); keys starting with '_' are comments
 * anywhere. Each entry's keys are the fields of plan_gpu, plan_instance,
 * plan_curve and plan_fw_eff (planner/plan.h), listed in the tables below,
 * with one convention for units:
 *
 *   *_bytes   a size string parsed by units_parse_bytes ("80GiB", "40GB")
 *             or a plain JSON number of bytes;
 *   *_bps     a rate string parsed by units_parse_rate ("400Gbps" is bits
 *             per second, "300GB/s" bytes per second) or a plain JSON
 *             number of bytes per second;
 *   others    a plain JSON number in the unit the name says (peak_flops in
 *             FLOP/s, *_latency_s in seconds, price_per_hour in USD);
 *             nvswitch is true/false; aliases an array of strings; a
 *             curve's log2_bytes and eff are arrays of the same length.
 *
 * Every field is required of a new entry except aliases (none), nvswitch
 * (false), price_per_hour (0 = unknown) and source (defaults to the file's
 * name; the shipped file cites one for every entry).
 *
 * Merging (a user file, or the shipped file into an empty catalog): an entry
 * whose name matches an existing one (case-insensitive; for instances also an
 * alias, with or without "ml.") replaces only the fields it gives; any other
 * name adds an entry, which must give every required field. The result is
 * re-linked (plan_catalog_link). Work happens on a copy: on any error the
 * caller's catalog is unchanged and nothing leaks.
 *
 * Errors are one line naming the file, the entry and the field: ST_EPARSE for
 * text that is not JSON (with line and column), ST_EINVAL for JSON of the
 * wrong shape, a wrong type, a missing field or a bad value.
 */
#include "data/data.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/units.h"
#include "data/data_json.h"

/* Entries per array: far more than any catalog, small enough that a corrupt
 * or hostile file cannot make us allocate without bound. */
#define DATA_CATALOG_MAX_ENTRIES 4096

/* ------------------------------------------------------------------------ */
/* Field tables                                                              */
/* ------------------------------------------------------------------------ */

typedef enum ftype {
    F_STR,     /* char[size] */
    F_NUM,     /* double, plain number */
    F_INT,     /* int, whole number in [min, max] */
    F_BYTES,   /* double bytes: size string or number */
    F_RATE,    /* double bytes/s: rate string or number */
    F_BOOL,    /* int 0/1: true/false (or 0/1) */
    F_ALIASES, /* plan_instance aliases + naliases */
    F_CURVE_X, /* plan_curve log2_bytes */
    F_CURVE_Y, /* plan_curve eff */
} ftype;

typedef struct field {
    const char *key;
    ftype type;
    size_t off;
    size_t size;    /* F_STR: buffer size */
    int required;   /* a new entry must give it */
    int min, max;   /* F_INT */
} field;

#define STR(T, k, req) {#k, F_STR, offsetof(T, k), sizeof(((T *)0)->k), req, 0, 0}
#define FLD(T, k, t, req) {#k, t, offsetof(T, k), 0, req, 0, 0}

static const field gpu_fields[] = {
    STR(plan_gpu, name, 1),
    STR(plan_gpu, silicon, 0),
    FLD(plan_gpu, mem_bytes, F_BYTES, 1),
    FLD(plan_gpu, peak_flops, F_NUM, 1),
    FLD(plan_gpu, hbm_bps, F_RATE, 1),
    FLD(plan_gpu, gemm_eff_max, F_NUM, 1),
    FLD(plan_gpu, gemm_dim_half, F_NUM, 1),
    FLD(plan_gpu, misaligned_factor, F_NUM, 1),
    FLD(plan_gpu, hbm_eff, F_NUM, 1),
    FLD(plan_gpu, flash_eff, F_NUM, 1),
    FLD(plan_gpu, flash1_eff, F_NUM, 0),
    FLD(plan_gpu, flash3_eff, F_NUM, 0),
    FLD(plan_gpu, cudnn_attn_eff, F_NUM, 0),
    FLD(plan_gpu, gemm_align_bytes, F_NUM, 0),
    FLD(plan_gpu, align_partial_factor, F_NUM, 0),
    FLD(plan_gpu, fp8_peak_flops, F_NUM, 0),
    FLD(plan_gpu, fp8_gemm_eff, F_NUM, 0),
    FLD(plan_gpu, gemm_ceiling, F_NUM, 0),
    FLD(plan_gpu, alloc_frac, F_NUM, 0),
    FLD(plan_gpu, mem_err_pct, F_NUM, 0),
    FLD(plan_gpu, act_fwd_s, F_NUM, 0),
    FLD(plan_gpu, act_bwd_s, F_NUM, 0),
    FLD(plan_gpu, glu_fwd_s, F_NUM, 0),
    FLD(plan_gpu, glu_bwd_s, F_NUM, 0),
    FLD(plan_gpu, opt_param_s, F_NUM, 0),
    FLD(plan_gpu, attn_fwd_flops, F_NUM, 0),
    FLD(plan_gpu, attn_bwd_flops, F_NUM, 0),
    FLD(plan_gpu, attn_row_fwd_s, F_NUM, 0),
    FLD(plan_gpu, attn_row_bwd_s, F_NUM, 0),
    FLD(plan_gpu, attn_elem_fwd_s, F_NUM, 0),
    FLD(plan_gpu, attn_elem_bwd_s, F_NUM, 0),
    FLD(plan_gpu, flash_score_fwd_s, F_NUM, 0),
    FLD(plan_gpu, flash_score_bwd_s, F_NUM, 0),
    FLD(plan_gpu, flash_row_fwd_s, F_NUM, 0),
    FLD(plan_gpu, flash_row_bwd_s, F_NUM, 0),
    FLD(plan_gpu, fp16_only, F_BOOL, 0),
    FLD(plan_gpu, flash3, F_BOOL, 0),
    {"package_devices", F_INT, offsetof(plan_gpu, package_devices), 0, 0, 0, 16},
    {"sms", F_INT, offsetof(plan_gpu, sms), 0, 0, 1, 100000},
    STR(plan_gpu, measured, 0),
    /* what a measured-rates file gives (plan_gpu_measured), also as fields
     * so that a catalog written back reads the same */
    FLD(plan_gpu, gemm_measured, F_BOOL, 0),
    FLD(plan_gpu, gemm_measured_rms, F_NUM, 0),
    {"gemm_measured_shapes", F_INT, offsetof(plan_gpu, gemm_measured_shapes), 0, 0, 0, 1 << 20},
    FLD(plan_gpu, flash2_fwd_eff, F_NUM, 0),
    FLD(plan_gpu, flash2_bwd_eff, F_NUM, 0),
    FLD(plan_gpu, flash_measured, F_BOOL, 0),
    FLD(plan_gpu, cudnn_fwd_eff, F_NUM, 0),
    FLD(plan_gpu, cudnn_bwd_eff, F_NUM, 0),
    FLD(plan_gpu, exec_attn_fwd_eff, F_NUM, 0),
    FLD(plan_gpu, exec_attn_bwd_eff, F_NUM, 0),
    FLD(plan_gpu, exec_attn_row_fwd_s, F_NUM, 0),
    FLD(plan_gpu, exec_attn_row_bwd_s, F_NUM, 0),
    FLD(plan_gpu, exec_attn_elem_fwd_s, F_NUM, 0),
    FLD(plan_gpu, exec_attn_elem_bwd_s, F_NUM, 0),
    FLD(plan_gpu, copy_bps, F_RATE, 0),
    FLD(plan_gpu, copy_hbm_bps, F_RATE, 0),
    {"ref_node_gpus", F_INT, offsetof(plan_gpu, ref_node_gpus), 0, 0, 0, 1024},
    FLD(plan_gpu, ref_node_net_bps, F_RATE, 0),
    STR(plan_gpu, ref_node_source, 0),
    STR(plan_gpu, source, 0),
};

static const field instance_fields[] = {
    STR(plan_instance, name, 1),
    FLD(plan_instance, aliases, F_ALIASES, 0),
    STR(plan_instance, gpu, 1),
    /* 1..64 is checked by plan_catalog_link; here only what fits an int. */
    {"gpus_per_node", F_INT, offsetof(plan_instance, gpus_per_node), 0, 1, 1, 1 << 20},
    FLD(plan_instance, nvlink_bps, F_RATE, 1),
    FLD(plan_instance, nvswitch, F_BOOL, 0),
    STR(plan_instance, gpu_link, 0),
    FLD(plan_instance, intra_busbw_bps, F_RATE, 1),
    FLD(plan_instance, intra_latency_s, F_NUM, 1),
    FLD(plan_instance, net_bps, F_RATE, 1),
    FLD(plan_instance, net_gpu_bps, F_RATE, 0),
    FLD(plan_instance, net_latency_s, F_NUM, 1),
    {"net_latency_nodes", F_INT, offsetof(plan_instance, net_latency_nodes), 0, 0, 2, 100000},
    FLD(plan_instance, net_ring_eff, F_NUM, 0),
    FLD(plan_instance, net_tree_eff, F_NUM, 0),
    FLD(plan_instance, price_per_hour, F_NUM, 0),
    FLD(plan_instance, host_mem_bytes, F_BYTES, 0),
    FLD(plan_instance, efa, F_BOOL, 0),
    {"nics", F_INT, offsetof(plan_instance, nics), 0, 0, 0, 4096},
    STR(plan_instance, nics_source, 0),
    STR(plan_instance, price_source, 0),
    {"nccl_channels", F_INT, offsetof(plan_instance, nccl_channels), 0, 0, 1, 1024},
    STR(plan_instance, intra_curve, 1),
    STR(plan_instance, net_curve, 1),
    STR(plan_instance, source, 0),
};

static const field curve_fields[] = {
    STR(plan_curve, name, 1),
    FLD(plan_curve, log2_bytes, F_CURVE_X, 1),
    FLD(plan_curve, eff, F_CURVE_Y, 1),
    STR(plan_curve, source, 0),
};

/* A (framework, chip) efficiency fit; an efficiency it gives is one the fit
 * constrained (plan_fw_eff.fitted). */
#define EFF(k, m) {#k, F_NUM, offsetof(plan_fw_eff, m), 0, 0, 0, 0}
static const field eff_fields[] = {
    STR(plan_fw_eff, name, 1),
    STR(plan_fw_eff, framework, 1),
    STR(plan_fw_eff, silicon, 1),
    EFF(gemm_eff_max, eff.gemm_eff_max),
    EFF(hbm_eff, eff.hbm_eff),
    EFF(flash_eff, eff.flash_eff),
    EFF(fp8_gemm_eff, eff.fp8_gemm_eff),
    EFF(gemm_eff_max_stderr, std_err[PLAN_EFF_GEMM]),
    EFF(hbm_eff_stderr, std_err[PLAN_EFF_HBM]),
    EFF(flash_eff_stderr, std_err[PLAN_EFF_FLASH]),
    EFF(fp8_gemm_eff_stderr, std_err[PLAN_EFF_FP8_GEMM]),
    EFF(gemm_dim_half, eff.gemm_dim_half),
    EFF(alloc_frac, eff.alloc_frac),
    EFF(alloc_frac_stderr, std_err[PLAN_EFF_ALLOC]),
    {"rows", F_INT, offsetof(plan_fw_eff, rows), 0, 0, 0, 1 << 24},
    {"sources", F_INT, offsetof(plan_fw_eff, sources), 0, 0, 0, 1 << 16},
    FLD(plan_fw_eff, mean_abs_err_pct, F_NUM, 0),
    STR(plan_fw_eff, source, 0),
};
#undef EFF
/* eff_fields index of each plan_eff_param's value */
static const int eff_field_of[PLAN_EFF__COUNT] = {3, 4, 5, 6, 11, 12};

#define NFIELDS(t) ((int)(sizeof t / sizeof t[0]))

enum { K_GPU, K_INSTANCE, K_CURVE, K_EFF, K__COUNT };

typedef struct kind {
    const char *key;      /* top-level array */
    const char *what;     /* one entry, in messages */
    const field *fields;
    int nfields;
} kind;

static const kind kinds[K__COUNT] = {
    [K_GPU] = {"gpus", "gpu", gpu_fields, NFIELDS(gpu_fields)},
    [K_INSTANCE] = {"instances", "instance", instance_fields, NFIELDS(instance_fields)},
    [K_CURVE] = {"curves", "curve", curve_fields, NFIELDS(curve_fields)},
    [K_EFF] = {"efficiencies", "efficiency", eff_fields, NFIELDS(eff_fields)},
};

/* The most fields any table has: set masks are bits of an unsigned. */
#define DATA_FIELDS_MAX 64
typedef uint64_t fieldset;
#define BIT(i) ((fieldset)1 << (i))
_Static_assert(NFIELDS(gpu_fields) <= DATA_FIELDS_MAX && NFIELDS(instance_fields) <= DATA_FIELDS_MAX,
               "a field table outgrew the set mask");

/* ------------------------------------------------------------------------ */
/* Catalog arrays by kind                                                    */
/* ------------------------------------------------------------------------ */

static int count_of(const plan_catalog *c, int k)
{
    return k == K_GPU ? c->ngpus : k == K_INSTANCE ? c->ninstances
                                 : k == K_CURVE    ? c->ncurves
                                                   : c->neffs;
}

static size_t size_of(int k)
{
    return k == K_GPU ? sizeof(plan_gpu) : k == K_INSTANCE ? sizeof(plan_instance)
                                         : k == K_CURVE    ? sizeof(plan_curve)
                                                           : sizeof(plan_fw_eff);
}

static void *entry_of(plan_catalog *c, int k, int i)
{
    if (k == K_GPU)
        return &c->gpus[i];
    if (k == K_INSTANCE)
        return &c->instances[i];
    if (k == K_CURVE)
        return &c->curves[i];
    return &c->effs[i];
}

static const char *name_of(const plan_catalog *c, int k, int i)
{
    return k == K_GPU ? c->gpus[i].name : k == K_CURVE ? c->curves[i].name : c->effs[i].name;
}

static int find_entry(const plan_catalog *c, int k, const char *name)
{
    if (k == K_INSTANCE) {
        const plan_instance *in = plan_catalog_find(c, name);
        return in ? (int)(in - c->instances) : -1;
    }
    for (int i = 0; i < count_of(c, k); i++)
        if (strcasecmp(name_of(c, k, i), name) == 0)
            return i;
    return -1;
}

/* Append a copy of e (an entry of kind k). */
static int append(plan_catalog *c, int k, const void *e, const char *file, st_err *err)
{
    int n = count_of(c, k);
    if (n >= DATA_CATALOG_MAX_ENTRIES)
        return ST_RAISE(err, ST_EINVAL, "%s: more than %d %s entries", file,
                        DATA_CATALOG_MAX_ENTRIES, kinds[k].key);
    size_t sz = size_of(k);
    void *old = k == K_GPU ? (void *)c->gpus : k == K_INSTANCE ? (void *)c->instances
                                             : k == K_CURVE    ? (void *)c->curves
                                                               : (void *)c->effs;
    void *v = realloc(old, (size_t)(n + 1) * sz);
    if (!v)
        return ST_RAISE(err, ST_ENOMEM, "%s: out of memory reading %s", file, kinds[k].key);
    memcpy((char *)v + (size_t)n * sz, e, sz);
    if (k == K_GPU)
        c->gpus = v, c->ngpus++;
    else if (k == K_INSTANCE)
        c->instances = v, c->ninstances++;
    else if (k == K_CURVE)
        c->curves = v, c->ncurves++;
    else
        c->effs = v, c->neffs++;
    return ST_OK;
}

static void *dup_array(const void *src, int n, size_t sz, int *fail)
{
    if (n <= 0)
        return NULL;
    void *v = malloc((size_t)n * sz);
    if (!v) {
        *fail = 1;
        return NULL;
    }
    memcpy(v, src, (size_t)n * sz);
    return v;
}

static int copy_catalog(plan_catalog *dst, const plan_catalog *src, st_err *err)
{
    int fail = 0;
    memset(dst, 0, sizeof *dst);
    dst->gpus = dup_array(src->gpus, src->ngpus, sizeof(plan_gpu), &fail);
    dst->instances = dup_array(src->instances, src->ninstances, sizeof(plan_instance), &fail);
    dst->curves = dup_array(src->curves, src->ncurves, sizeof(plan_curve), &fail);
    dst->effs = dup_array(src->effs, src->neffs, sizeof(plan_fw_eff), &fail);
    dst->ngpus = dst->gpus ? src->ngpus : 0;
    dst->ninstances = dst->instances ? src->ninstances : 0;
    dst->ncurves = dst->curves ? src->ncurves : 0;
    dst->neffs = dst->effs ? src->neffs : 0;
    if (fail) {
        plan_catalog_free(dst);
        return ST_RAISE(err, ST_ENOMEM, "catalog: out of memory copying");
    }
    return ST_OK;
}

/* ------------------------------------------------------------------------ */
/* Values                                                                    */
/* ------------------------------------------------------------------------ */

/* Where a value sits, for messages: "catalog.json: instance 'p4d.24xlarge'". */
typedef struct ctx {
    const char *file;
    char where[160];
    int nx, ny;           /* curve arrays given: their lengths, else -1 */
} ctx;

static int bad_type(const ctx *x, const field *f, const cJSON *v, const char *want, st_err *err)
{
    return ST_RAISE(err, ST_EINVAL, "%s: field '%s' is %s; expected %s", x->where, f->key,
                    data_json_type_name(v), want);
}

static int get_number(const ctx *x, const field *f, const cJSON *v, const char *want,
                      double *out, st_err *err)
{
    if (!cJSON_IsNumber(v))
        return bad_type(x, f, v, want, err);
    if (!isfinite(v->valuedouble))
        return ST_RAISE(err, ST_EINVAL, "%s: field '%s' is not a finite number", x->where, f->key);
    *out = v->valuedouble;
    return ST_OK;
}

static int set_string(const ctx *x, const field *f, const cJSON *v, char *dst, size_t size,
                      st_err *err)
{
    if (!cJSON_IsString(v))
        return bad_type(x, f, v, "a string", err);
    size_t n = strlen(v->valuestring);
    if (n >= size)
        return ST_RAISE(err, ST_EINVAL, "%s: field '%s' is %zu characters; allowed: at most %zu",
                        x->where, f->key, n, size - 1);
    if (n == 0 && strcmp(f->key, "source") != 0)
        return ST_RAISE(err, ST_EINVAL, "%s: field '%s' is empty", x->where, f->key);
    memset(dst, 0, size); /* whole buffer: entries compare byte for byte */
    memcpy(dst, v->valuestring, n);
    return ST_OK;
}

/* A size or rate: a unit string through the one parser, or a number. */
static int set_quantity(const ctx *x, const field *f, const cJSON *v, double *dst, st_err *err)
{
    int bytes = f->type == F_BYTES;
    const char *want = bytes ? "a size such as \"80GiB\" or a number of bytes"
                             : "a rate such as \"400Gbps\" or \"300GB/s\", or a number of bytes/s";
    if (cJSON_IsString(v)) {
        char what[224];
        snprintf(what, sizeof what, "%s: field '%s'", x->where, f->key);
        return bytes ? units_parse_bytes(v->valuestring, what, dst, err)
                     : units_parse_rate(v->valuestring, what, dst, err);
    }
    return get_number(x, f, v, want, dst, err);
}

static int set_int(const ctx *x, const field *f, const cJSON *v, int *dst, st_err *err)
{
    double d = 0.0;
    int rc = get_number(x, f, v, "a whole number", &d, err);
    if (rc)
        return rc;
    if (d != floor(d) || d < f->min || d > f->max)
        return ST_RAISE(err, ST_EINVAL, "%s: field '%s' is %g; allowed: a whole number %d to %d",
                        x->where, f->key, d, f->min, f->max);
    *dst = (int)d;
    return ST_OK;
}

static int set_bool(const ctx *x, const field *f, const cJSON *v, int *dst, st_err *err)
{
    if (cJSON_IsBool(v)) {
        *dst = cJSON_IsTrue(v) ? 1 : 0;
        return ST_OK;
    }
    if (cJSON_IsNumber(v) && (v->valuedouble == 0 || v->valuedouble == 1)) {
        *dst = (int)v->valuedouble;
        return ST_OK;
    }
    return ST_RAISE(err, ST_EINVAL, "%s: field '%s': allowed: true or false", x->where, f->key);
}

static int set_aliases(const ctx *x, const field *f, const cJSON *v, plan_instance *in,
                       st_err *err)
{
    const int max = (int)(sizeof in->aliases / sizeof in->aliases[0]);
    if (!cJSON_IsArray(v))
        return bad_type(x, f, v, "an array of strings", err);
    int n = cJSON_GetArraySize(v);
    if (n > max)
        return ST_RAISE(err, ST_EINVAL, "%s: field 'aliases' has %d names; allowed: at most %d",
                        x->where, n, max);
    plan_instance scratch; /* all or nothing */
    int i = 0;
    const cJSON *a;
    cJSON_ArrayForEach(a, v) {
        int rc = set_string(x, f, a, scratch.aliases[i], sizeof scratch.aliases[i], err);
        if (rc)
            return rc;
        i++;
    }
    memcpy(in->aliases, scratch.aliases, (size_t)n * sizeof in->aliases[0]);
    in->naliases = n;
    return ST_OK;
}

static int set_curve_array(ctx *x, const field *f, const cJSON *v, double *dst, st_err *err)
{
    if (!cJSON_IsArray(v))
        return bad_type(x, f, v, "an array of numbers", err);
    int n = cJSON_GetArraySize(v);
    if (n < 1 || n > PLAN_CURVE_MAX)
        return ST_RAISE(err, ST_EINVAL, "%s: field '%s' has %d points; allowed: 1 to %d",
                        x->where, f->key, n, PLAN_CURVE_MAX);
    double tmp[PLAN_CURVE_MAX];
    int i = 0;
    const cJSON *a;
    cJSON_ArrayForEach(a, v) {
        int rc = get_number(x, f, a, "an array of numbers", &tmp[i], err);
        if (rc)
            return rc;
        i++;
    }
    memcpy(dst, tmp, (size_t)n * sizeof tmp[0]);
    if (f->type == F_CURVE_X)
        x->nx = n;
    else
        x->ny = n;
    return ST_OK;
}

static int set_field(ctx *x, const field *f, const cJSON *v, void *entry, st_err *err)
{
    char *p = (char *)entry + f->off;
    switch (f->type) {
    case F_STR: return set_string(x, f, v, p, f->size, err);
    case F_NUM: return get_number(x, f, v, "a number", (double *)(void *)p, err);
    case F_INT: return set_int(x, f, v, (int *)(void *)p, err);
    case F_BYTES:
    case F_RATE: return set_quantity(x, f, v, (double *)(void *)p, err);
    case F_BOOL: return set_bool(x, f, v, (int *)(void *)p, err);
    case F_ALIASES: return set_aliases(x, f, v, entry, err);
    case F_CURVE_X:
    case F_CURVE_Y: return set_curve_array(x, f, v, (double *)(void *)p, err);
    }
    return ST_RAISE(err, ST_EINTERNAL, "%s: field '%s' has no reader", x->where, f->key);
}

/* ------------------------------------------------------------------------ */
/* Entries                                                                   */
/* ------------------------------------------------------------------------ */

static int field_index(const kind *k, const char *key)
{
    for (int i = 0; i < k->nfields; i++)
        if (strcmp(k->fields[i].key, key) == 0)
            return i;
    return -1;
}

static int unknown_field(const ctx *x, const kind *k, const char *key, st_err *err)
{
    char list[400] = "";
    for (int i = 0; i < k->nfields; i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", k->fields[i].key);
    }
    return ST_RAISE(err, ST_EINVAL, "%s: unknown field '%s'; allowed: %s (and keys starting with '_')",
                    x->where, key, list);
}

/* Apply the fields of obj to entry; *set gets a bit per field given. The
 * name of an existing entry is kept (it matched by name or alias). */
static int apply_fields(ctx *x, const kind *k, const cJSON *obj, void *entry, int existing,
                        fieldset *set, st_err *err)
{
    const cJSON *v;
    *set = 0;
    cJSON_ArrayForEach(v, obj) {
        const char *key = v->string ? v->string : "";
        if (key[0] == '_')
            continue;
        int i = field_index(k, key);
        if (i < 0)
            return unknown_field(x, k, key, err);
        if (*set & BIT(i))
            return ST_RAISE(err, ST_EINVAL, "%s: field '%s' given twice", x->where, key);
        *set |= BIT(i);
        if (existing && strcmp(key, "name") == 0)
            continue;
        int rc = set_field(x, &k->fields[i], v, entry, err);
        if (rc)
            return rc;
    }
    return ST_OK;
}

static int check_required(const ctx *x, const kind *k, fieldset set, st_err *err)
{
    for (int i = 0; i < k->nfields; i++)
        if (k->fields[i].required && !(set & BIT(i)))
            return ST_RAISE(err, ST_EINVAL, "%s: missing required field '%s'", x->where,
                            k->fields[i].key);
    return ST_OK;
}

/* Curve arrays given in this entry agree in length with each other (or,
 * for an override giving one, with the existing curve). */
static int finish_curve(const ctx *x, plan_curve *c, st_err *err)
{
    int nx = x->nx >= 0 ? x->nx : c->n, ny = x->ny >= 0 ? x->ny : c->n;
    if (nx != ny)
        return ST_RAISE(err, ST_EINVAL, "%s: log2_bytes has %d points but eff has %d", x->where,
                        nx, ny);
    c->n = nx;
    return ST_OK;
}

/* The source of an overridden entry says what the user file changed. */
static void note_override(const ctx *x, const kind *k, fieldset set, char *source)
{
    char was[PLAN_SOURCE_MAX], fields[PLAN_SOURCE_MAX] = "";
    memcpy(was, source, sizeof was);
    for (int i = 0; i < k->nfields; i++) {
        if (!(set & BIT(i)) || strcmp(k->fields[i].key, "name") == 0)
            continue;
        size_t used = strlen(fields);
        snprintf(fields + used, sizeof fields - used, "%s%s", used ? ", " : "", k->fields[i].key);
    }
    if (!fields[0])
        return;
    memset(source, 0, PLAN_SOURCE_MAX);
    /* Cut at PLAN_SOURCE_MAX: a note; the user file has the rest. */
    int n = snprintf(source, PLAN_SOURCE_MAX, "%s set %s; was: %s", x->file, fields, was);
    (void)n;
}

static void init_entry(int k, void *e)
{
    memset(e, 0, size_of(k));
    if (k == K_GPU) {
        /* Without a second alignment tier a GEMM only needs dims that are
         * multiples of 16 bytes (NVIDIA, Matrix Multiplication Background
         * User's Guide, "Tensor Core Requirements"). */
        plan_gpu *g = e;
        g->gemm_align_bytes = 16;
        g->align_partial_factor = 1.0;
        /* No measured GEMM ceiling: nothing above the datasheet peak. */
        g->gemm_ceiling = 1.0;
    }
    if (k == K_INSTANCE) {
        plan_instance *in = e;
        in->gpu_index = in->intra_curve_index = in->net_curve_index = -1;
        /* no measurement: the line rate, latency measured on two nodes */
        in->net_ring_eff = in->net_tree_eff = 1.0;
        in->net_latency_nodes = 2;
    }
}

static void name_where(ctx *x, const kind *k, int idx, const cJSON *obj)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(obj, "name");
    if (cJSON_IsString(n))
        snprintf(x->where, sizeof x->where, "%s: %s '%.64s'", x->file, k->what, n->valuestring);
    else
        snprintf(x->where, sizeof x->where, "%s: %s[%d]", x->file, k->key, idx);
}

/* ---- a GPU's measured rates ----
 * "measured" names a file: an absolute path, or one relative to the
 * directory of the catalog that names it (the working directory for a
 * catalog given without one). It is read only as a regular file, never a
 * device or a FIFO; the entry keeps the path as resolved, so that the
 * catalog written back (smdplan catalog --json) names the same file. */
static int apply_measured(const ctx *x, plan_gpu *g, st_err *err)
{
    char path[4096];
    const char *rel = g->measured, *slash = strrchr(x->file, '/');
    int w = rel[0] == '/' || !slash ? snprintf(path, sizeof path, "%s", rel)
                                    : snprintf(path, sizeof path, "%.*s/%s",
                                               (int)(slash - x->file), x->file, rel);
    if (w < 0 || (size_t)w >= sizeof g->measured)
        return ST_RAISE(err, ST_EINVAL, "%s: field 'measured': the path '%.64s...' is longer "
                        "than %zu characters", x->where, path, sizeof g->measured - 1);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return ST_RAISE(err, ST_EINVAL, "%s: field 'measured': %s is not a readable file",
                        x->where, path);
    plan_measured m;
    int rc = data_measured_load(path, &m, err);
    if (rc)
        return rc;
    st_err e = {0};
    if ((rc = plan_gpu_measured(g, &m, &e)) != ST_OK)
        return ST_RAISE(err, rc, "%s: %s: %s", x->where, path, e.msg);
    memset(g->measured, 0, sizeof g->measured);
    memcpy(g->measured, path, (size_t)w);
    return ST_OK;
}

/* An entry naming a measured-rates file: the file's values first, then the
 * entry's own fields over them (an entry's value wins over its file's);
 * the fields the file gives count as given. */
static int merge_measured(ctx *x, const kind *kd, const cJSON *obj, plan_gpu *g, int existing,
                          fieldset *set, st_err *err)
{
    int rc = apply_measured(x, g, err);
    if (rc)
        return rc;
    char resolved[sizeof g->measured];
    memcpy(resolved, g->measured, sizeof resolved);
    if ((rc = apply_fields(x, kd, obj, g, existing, set, err)) != ST_OK)
        return rc;
    memcpy(g->measured, resolved, sizeof resolved);
    static const char *const gives[] = {"gemm_eff_max", "gemm_dim_half", "gemm_ceiling",
                                        "flash_eff"};
    for (size_t i = 0; i < sizeof gives / sizeof gives[0]; i++)
        *set |= BIT(field_index(kd, gives[i]));
    return ST_OK;
}

static int merge_entry(plan_catalog *cat, int k, int idx, const cJSON *obj, const char *file,
                       st_err *err)
{
    const kind *kd = &kinds[k];
    ctx x = {.file = file, .nx = -1, .ny = -1};
    name_where(&x, kd, idx, obj);
    if (!cJSON_IsObject(obj))
        return ST_RAISE(err, ST_EINVAL, "%s: expected an object, found %s", x.where,
                        data_json_type_name(obj));
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(obj, "name");
    if (!cJSON_IsString(name) || !name->valuestring[0])
        return ST_RAISE(err, ST_EINVAL, "%s: missing required field 'name' (a non-empty string)",
                        x.where);
    union { plan_gpu g; plan_instance i; plan_curve c; plan_fw_eff e; } tmp;
    int at = find_entry(cat, k, name->valuestring);
    if (at >= 0)
        memcpy(&tmp, entry_of(cat, k, at), size_of(k));
    else
        init_entry(k, &tmp);
    fieldset set;
    int rc = apply_fields(&x, kd, obj, &tmp, at >= 0, &set, err);
    if (!rc && k == K_GPU && (set & BIT(field_index(kd, "measured"))) && tmp.g.measured[0])
        rc = merge_measured(&x, kd, obj, &tmp.g, at >= 0, &set, err);
    if (!rc && at < 0)
        rc = check_required(&x, kd, set, err);
    if (!rc && k == K_CURVE)
        rc = finish_curve(&x, &tmp.c, err);
    if (rc)
        return rc;
    int src = field_index(kd, "source");
    char *source = (char *)&tmp + kd->fields[src].off;
    if (at >= 0 && !(set & BIT(src)))
        note_override(&x, kd, set, source);
    else if (!source[0])
        snprintf(source, PLAN_SOURCE_MAX, "%s", file);
    if (k == K_GPU && !tmp.g.silicon[0]) /* a chip of its own */
        memcpy(tmp.g.silicon, tmp.g.name, sizeof tmp.g.silicon);
    if (k == K_EFF)
        for (int p = 0; p < PLAN_EFF__COUNT; p++)
            if (set & BIT(eff_field_of[p]))
                tmp.e.fitted |= 1u << p;
    if (at >= 0) {
        memcpy(entry_of(cat, k, at), &tmp, size_of(k));
        return ST_OK;
    }
    return append(cat, k, &tmp, file, err);
}

/* ------------------------------------------------------------------------ */
/* Files                                                                     */
/* ------------------------------------------------------------------------ */

static int parse_error(const char *text, size_t len, const char *end, const char *file,
                       st_err *err)
{
    int line, col;
    size_t off = data_json_error_at(text, len, end, &line, &col);
    char near[24];
    size_t n = 0;
    for (size_t i = off; i < len && n < sizeof near - 1 && text[i] != '\n'; i++)
        near[n++] = isprint((unsigned char)text[i]) ? text[i] : '?';
    near[n] = '\0';
    if (len == 0)
        return ST_RAISE(err, ST_EPARSE, "%s: empty file; expected a JSON object", file);
    return ST_RAISE(err, ST_EPARSE, "%s:%d:%d: malformed JSON near '%s'", file, line, col, near);
}

static int top_kind(const char *key)
{
    for (int k = 0; k < K__COUNT; k++)
        if (strcmp(kinds[k].key, key) == 0)
            return k;
    return -1;
}

static const char *entry_name(const cJSON *e)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
    if (!cJSON_IsString(n))
        return NULL;
    const char *s = n->valuestring;
    return strncasecmp(s, "ml.", 3) == 0 ? s + 3 : s;
}

/* One file lists a name once: a second entry would silently override the
 * first. (Aliases that clash are caught by plan_catalog_link.) */
static int check_array(const cJSON *arr, int k, const char *file, st_err *err)
{
    int n = cJSON_GetArraySize(arr);
    if (n > DATA_CATALOG_MAX_ENTRIES)
        return ST_RAISE(err, ST_EINVAL, "%s: %d %s entries; allowed: at most %d", file, n,
                        kinds[k].key, DATA_CATALOG_MAX_ENTRIES);
    for (const cJSON *a = arr ? arr->child : NULL; a; a = a->next) {
        const char *na = entry_name(a);
        for (const cJSON *b = a->next; na && b; b = b->next) {
            const char *nb = entry_name(b);
            if (nb && strcasecmp(na, nb) == 0)
                return ST_RAISE(err, ST_EINVAL, "%s: %s '%.64s' is listed twice", file,
                                kinds[k].what, na);
        }
    }
    return ST_OK;
}

/* Merge every entry of a parsed file into cat, kinds in dependency order
 * (gpus and curves before the instances that name them). */
static int merge_json(plan_catalog *cat, const cJSON *root, const char *file, st_err *err)
{
    if (!cJSON_IsObject(root))
        return ST_RAISE(err, ST_EINVAL, "%s: expected a JSON object with gpus, instances, curves, efficiencies; found %s",
                        file, data_json_type_name(root));
    const cJSON *v;
    unsigned seen = 0;
    cJSON_ArrayForEach(v, root) {
        const char *key = v->string ? v->string : "";
        if (key[0] == '_')
            continue;
        int k = top_kind(key);
        if (k < 0)
            return ST_RAISE(err, ST_EINVAL,
                            "%s: unknown key '%s'; allowed: gpus, instances, curves, "
                            "efficiencies (and keys starting with '_')",
                            file, key);
        if (!cJSON_IsArray(v))
            return ST_RAISE(err, ST_EINVAL, "%s: '%s' is %s; expected an array", file, key,
                            data_json_type_name(v));
        if (seen & (1u << k))
            return ST_RAISE(err, ST_EINVAL, "%s: key '%s' given twice", file, key);
        seen |= 1u << k;
    }
    for (int k = 0; k < K__COUNT; k++) {
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, kinds[k].key);
        int rc = check_array(arr, k, file, err);
        if (rc)
            return rc;
        int idx = 0;
        cJSON_ArrayForEach(v, arr) {
            if ((rc = merge_entry(cat, k, idx++, v, file, err)))
                return rc;
        }
    }
    return ST_OK;
}

/* Parse text and merge it into cat (a working copy the caller owns). */
static int merge_text(plan_catalog *cat, const char *text, size_t len, const char *file,
                      st_err *err)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root)
        return parse_error(text, len, end, file, err);
    int rc = merge_json(cat, root, file, err);
    cJSON_Delete(root);
    return rc;
}

/* Link, with the file named in the message. */
static int link_file(plan_catalog *cat, const char *file, st_err *err)
{
    st_err e = {0};
    int rc = plan_catalog_link(cat, &e);
    if (rc)
        return ST_RAISE(err, rc, "%s: %s", file, e.msg);
    return ST_OK;
}

int data_catalog_parse(const char *text, size_t len, const char *name, plan_catalog *cat,
                       st_err *err)
{
    plan_catalog work = {0};
    const char *file = name ? name : "catalog";
    memset(cat, 0, sizeof *cat);
    int rc = text ? merge_text(&work, text, len, file, err)
                  : ST_RAISE(err, ST_EINVAL, "%s: no text", file);
    if (!rc && work.ninstances == 0)
        rc = ST_RAISE(err, ST_EINVAL, "%s: no instance types (\"instances\" is missing or empty)",
                      file);
    if (!rc)
        rc = link_file(&work, file, err);
    if (rc) {
        plan_catalog_free(&work);
        return rc;
    }
    *cat = work;
    return ST_OK;
}

static int load_file(const char *path, plan_catalog *cat, st_err *err)
{
    char *text = NULL;
    size_t len = 0;
    memset(cat, 0, sizeof *cat);
    int rc = data_read_file(path, &text, &len, err);
    if (rc)
        return rc;
    rc = data_catalog_parse(text, len, path, cat, err);
    free(text);
    return rc;
}

int data_catalog_load_base(plan_catalog *cat, st_err *err)
{
    char def[4096];
    snprintf(def, sizeof def, "%s/catalog.json", data_dir());
    return load_file(def, cat, err);
}

const char *data_calibration_path(void)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/calibration.json", data_dir());
    return access(path, F_OK) == 0 ? path : NULL;
}

int data_catalog_load(const char *path, plan_catalog *cat, st_err *err)
{
    if (path)
        return load_file(path, cat, err);
    int rc = data_catalog_load_base(cat, err);
    const char *cal = data_calibration_path();
    if (rc == ST_OK && cal && (rc = data_catalog_merge(cat, cal, err)) != ST_OK)
        plan_catalog_free(cat);
    return rc;
}

int data_catalog_merge(plan_catalog *cat, const char *path, st_err *err)
{
    if (!cat || !path)
        return ST_RAISE(err, ST_EINVAL, "catalog merge: no catalog or file");
    char *text = NULL;
    size_t len = 0;
    int rc = data_read_file(path, &text, &len, err);
    if (rc)
        return rc;
    plan_catalog work;
    rc = copy_catalog(&work, cat, err);
    if (!rc)
        rc = merge_text(&work, text, len, path, err);
    if (!rc)
        rc = link_file(&work, path, err);
    free(text);
    if (rc) {
        plan_catalog_free(&work);
        return rc;
    }
    plan_catalog_free(cat);
    *cat = work;
    return ST_OK;
}
