/*
 * plan_catalog.c: the instance catalog in memory: linking and checking it,
 * finding instance types by name, "did you mean" suggestions, cluster specs
 * ("16xp4d") and the collective efficiency curves.
 *
 * Pure computation: the catalog is read from its data file by data/ and
 * handed in. plan_curve_eval() runs in the planner's inner loop, so it
 * allocates nothing and does a binary search over at most PLAN_CURVE_MAX
 * points.
 *
 * Names are matched case-insensitively; an "ml." prefix (SageMaker spells
 * its instance types "ml.p4d.24xlarge" for the EC2 type "p4d.24xlarge") is
 * ignored in lookups, and names and aliases must be unique under that rule.
 * Units: bandwidths in bytes/s, latencies in s, curve x in log2(bytes).
 */
#include "common/text.h"
#include "planner/plan.h"
#include "planner/plan_framework.h"
#include "planner/plan_int.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Node counts a cluster spec may ask for: more than any cluster built. */
#define PLAN_NODES_MAX 100000
/* GPUs per node the planner's rank arithmetic is checked for: DGX-2 has
 * 16, a rack-scale NVLink domain (GB200 NVL72) 72, one node of the
 * catalog. */
#define PLAN_GPUS_PER_NODE_MAX 72
/* A per-collective latency above one second is a unit mistake (us vs s). */
#define PLAN_LATENCY_MAX_S 1.0
/* Longest name compared for suggestions (names are shorter, see plan.h). */
#define PLAN_SUGGEST_NAME_MAX 64
/* How many close names an unknown-type message lists, and the most
 * plan_catalog_suggest() ranks. */
#define PLAN_SUGGEST_SHOWN 3
#define PLAN_SUGGEST_MAX 128

static const char *strip_ml(const char *s)
{
    return strncasecmp(s, "ml.", 3) == 0 ? s + 3 : s;
}

/* Equal ignoring case, an "ml." prefix on either side and the separators
 * between a name's parts ("DGX A100" is dgx-a100, "Jean Zay" jean-zay,
 * "p4d.24xlarge" p4d24xlarge): letters and digits compared alone. */
static int same_name(const char *a, const char *b)
{
    a = strip_ml(a);
    b = strip_ml(b);
    for (;;) {
        while (*a && !isalnum((unsigned char)*a))
            a++;
        while (*b && !isalnum((unsigned char)*b))
            b++;
        if (!*a || !*b)
            return !*a && !*b;
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
        a++, b++;
    }
}

void plan_catalog_free(plan_catalog *cat)
{
    if (!cat)
        return;
    free(cat->gpus);
    free(cat->instances);
    free(cat->curves);
    free(cat->effs);
    memset(cat, 0, sizeof *cat);
}

/* ------------------------------------------------------------------------ */
/* Checking and linking                                                      */
/* ------------------------------------------------------------------------ */

static int positive(double v)
{
    return isfinite(v) && v > 0.0;
}

static int fraction(double v)
{
    return isfinite(v) && v > 0.0 && v <= 1.0;
}

static int check_gpu(const plan_gpu *g, st_err *err)
{
    if (!g->name[0])
        return ST_RAISE(err, ST_EINVAL, "gpu with an empty name");
    if (!positive(g->mem_bytes) || !positive(g->peak_flops) || !positive(g->hbm_bps))
        return ST_RAISE(err, ST_EINVAL,
                        "gpu '%s': mem_bytes, peak_flops and hbm_bps must be positive", g->name);
    const struct { const char *what; double v; } frac[] = {
        {"gemm_eff_max", g->gemm_eff_max},   {"misaligned_factor", g->misaligned_factor},
        {"hbm_eff", g->hbm_eff},             {"flash_eff", g->flash_eff},
        {"align_partial_factor", g->align_partial_factor},
        {"gemm_ceiling", g->gemm_ceiling > 0 ? g->gemm_ceiling : 1.0},
    };
    for (size_t i = 0; i < sizeof frac / sizeof frac[0]; i++)
        if (!fraction(frac[i].v))
            return ST_RAISE(err, ST_EINVAL, "gpu '%s': %s %g; allowed: (0, 1]", g->name,
                            frac[i].what, frac[i].v);
    double a = g->gemm_align_bytes;
    if (!isfinite(a) || (a != 0 && (a < 16 || a > 1024 || fmod(a, 16.0) != 0)))
        return ST_RAISE(err, ST_EINVAL, "gpu '%s': gemm_align_bytes %g; allowed: a multiple of 16 "
                        "from 16 to 1024 (0: 16)", g->name, a);
    if (!isfinite(g->alloc_frac) || g->alloc_frac < 0 || g->alloc_frac > 1)
        return ST_RAISE(err, ST_EINVAL, "gpu '%s': alloc_frac %g; allowed: 0 to 1", g->name,
                        g->alloc_frac);
    if (!isfinite(g->mem_err_pct) || g->mem_err_pct < 0 || g->mem_err_pct > 100)
        return ST_RAISE(err, ST_EINVAL, "gpu '%s': mem_err_pct %g; allowed: 0 to 100", g->name,
                        g->mem_err_pct);
    if (g->gemm_ceiling > 0 && g->gemm_eff_max > g->gemm_ceiling)
        return ST_RAISE(err, ST_EINVAL, "gpu '%s': gemm_eff_max %g above its measured GEMM "
                        "ceiling %g", g->name, g->gemm_eff_max, g->gemm_ceiling);
    if (!isfinite(g->fp8_peak_flops) || g->fp8_peak_flops < 0 ||
        (g->fp8_peak_flops > 0 && !fraction(g->fp8_gemm_eff)))
        return ST_RAISE(err, ST_EINVAL, "gpu '%s': fp8_peak_flops %g, fp8_gemm_eff %g; allowed: "
                        "no FP8 (0), or a positive peak with an efficiency in (0, 1]", g->name,
                        g->fp8_peak_flops, g->fp8_gemm_eff);
    const struct { const char *what; double v; } floors[] = {
        {"act_fwd_s", g->act_fwd_s}, {"act_bwd_s", g->act_bwd_s}, {"glu_fwd_s", g->glu_fwd_s},
        {"glu_bwd_s", g->glu_bwd_s}, {"opt_param_s", g->opt_param_s},
    };
    for (size_t i = 0; i < sizeof floors / sizeof floors[0]; i++)
        if (!isfinite(floors[i].v) || floors[i].v < 0 || floors[i].v > 1e-3)
            return ST_RAISE(err, ST_EINVAL, "gpu '%s': %s %g; allowed: 0 (none) to 1e-3 s per "
                            "element", g->name, floors[i].what, floors[i].v);
    if (!isfinite(g->attn_fwd_flops) || g->attn_fwd_flops < 0 || !isfinite(g->attn_bwd_flops) ||
        g->attn_bwd_flops < 0)
        return ST_RAISE(err, ST_EINVAL, "gpu '%s': attn_fwd_flops %g, attn_bwd_flops %g; allowed: "
                        "0 (none) or a positive rate", g->name, g->attn_fwd_flops,
                        g->attn_bwd_flops);
    if (!isfinite(g->attn_row_fwd_s) || g->attn_row_fwd_s < 0 || !isfinite(g->attn_row_bwd_s) ||
        g->attn_row_bwd_s < 0 || g->attn_row_fwd_s > 1e-3 || g->attn_row_bwd_s > 1e-3)
        return ST_RAISE(err, ST_EINVAL, "gpu '%s': attn_row_fwd_s %g, attn_row_bwd_s %g; "
                        "allowed: 0 (none) to 1e-3 s per score row", g->name, g->attn_row_fwd_s,
                        g->attn_row_bwd_s);
    if (!isfinite(g->attn_elem_fwd_s) || g->attn_elem_fwd_s < 0 ||
        !isfinite(g->attn_elem_bwd_s) || g->attn_elem_bwd_s < 0 || g->attn_elem_fwd_s > 1e-5 ||
        g->attn_elem_bwd_s > 1e-5)
        return ST_RAISE(err, ST_EINVAL, "gpu '%s': attn_elem_fwd_s %g, attn_elem_bwd_s %g; "
                        "allowed: 0 (none) to 1e-5 s per score row and head element", g->name,
                        g->attn_elem_fwd_s, g->attn_elem_bwd_s);
    const struct { const char *what; double v, max; } flash[] = {
        {"flash_score_fwd_s", g->flash_score_fwd_s, 1e-6},
        {"flash_score_bwd_s", g->flash_score_bwd_s, 1e-6},
        {"flash_row_fwd_s", g->flash_row_fwd_s, 1e-3},
        {"flash_row_bwd_s", g->flash_row_bwd_s, 1e-3},
    };
    for (size_t i = 0; i < sizeof flash / sizeof flash[0]; i++)
        if (!isfinite(flash[i].v) || flash[i].v < 0 || flash[i].v > flash[i].max)
            return ST_RAISE(err, ST_EINVAL, "gpu '%s': %s %g; allowed: 0 (none) to %g s per %s",
                            g->name, flash[i].what, flash[i].v, flash[i].max,
                            i < 2 ? "score" : "score row");
    if (!isfinite(g->gemm_dim_half) || g->gemm_dim_half < 0)
        return ST_RAISE(err, ST_EINVAL, "gpu '%s': gemm_dim_half %g; allowed: >= 0", g->name,
                        g->gemm_dim_half);
    return ST_OK;
}

static int check_curve(const plan_curve *c, st_err *err)
{
    if (!c->name[0])
        return ST_RAISE(err, ST_EINVAL, "curve with an empty name");
    if (c->n < 1 || c->n > PLAN_CURVE_MAX)
        return ST_RAISE(err, ST_EINVAL, "curve '%s': %d points; allowed: 1 to %d", c->name, c->n,
                        PLAN_CURVE_MAX);
    for (int i = 0; i < c->n; i++) {
        if (!isfinite(c->log2_bytes[i]) || c->log2_bytes[i] < 0 || c->log2_bytes[i] > 64)
            return ST_RAISE(err, ST_EINVAL, "curve '%s': log2_bytes[%d] %g; allowed: 0 to 64",
                            c->name, i, c->log2_bytes[i]);
        if (i > 0 && !(c->log2_bytes[i] > c->log2_bytes[i - 1]))
            return ST_RAISE(err, ST_EINVAL,
                            "curve '%s': log2_bytes must increase (point %d: %g after %g)",
                            c->name, i, c->log2_bytes[i], c->log2_bytes[i - 1]);
        if (!fraction(c->eff[i]))
            return ST_RAISE(err, ST_EINVAL, "curve '%s': eff[%d] %g; allowed: (0, 1]", c->name,
                            i, c->eff[i]);
    }
    return ST_OK;
}

static int find_gpu(const plan_catalog *cat, const char *name)
{
    for (int i = 0; i < cat->ngpus; i++)
        if (strcasecmp(cat->gpus[i].name, name) == 0)
            return i;
    return -1;
}

static int find_curve(const plan_catalog *cat, const char *name)
{
    for (int i = 0; i < cat->ncurves; i++)
        if (strcasecmp(cat->curves[i].name, name) == 0)
            return i;
    return -1;
}

static int check_instance_values(const plan_instance *in, st_err *err)
{
    if (!in->name[0])
        return ST_RAISE(err, ST_EINVAL, "instance with an empty name");
    if (in->gpus_per_node < 1 || in->gpus_per_node > PLAN_GPUS_PER_NODE_MAX)
        return ST_RAISE(err, ST_EINVAL, "instance '%s': gpus_per_node %d; allowed: 1 to %d",
                        in->name, in->gpus_per_node, PLAN_GPUS_PER_NODE_MAX);
    const struct { const char *what; double v; } bw[] = {
        {"nvlink_bps", in->nvlink_bps},
        {"intra_busbw_bps", in->intra_busbw_bps},
        {"net_bps", in->net_bps},
    };
    for (size_t i = 0; i < sizeof bw / sizeof bw[0]; i++)
        if (!positive(bw[i].v))
            return ST_RAISE(err, ST_EINVAL, "instance '%s': %s %g; must be positive", in->name,
                            bw[i].what, bw[i].v);
    const struct { const char *what; double v; } lat[] = {
        {"intra_latency_s", in->intra_latency_s},
        {"net_latency_s", in->net_latency_s},
    };
    for (size_t i = 0; i < sizeof lat / sizeof lat[0]; i++)
        if (!isfinite(lat[i].v) || lat[i].v < 0 || lat[i].v > PLAN_LATENCY_MAX_S)
            return ST_RAISE(err, ST_EINVAL, "instance '%s': %s %g; allowed: 0 to %g s",
                            in->name, lat[i].what, lat[i].v, PLAN_LATENCY_MAX_S);
    if (!isfinite(in->price_per_hour) || in->price_per_hour < 0)
        return ST_RAISE(err, ST_EINVAL, "instance '%s': price_per_hour %g; allowed: >= 0 (0 = unknown)",
                        in->name, in->price_per_hour);
    if (!fraction(in->net_ring_eff) || !fraction(in->net_tree_eff))
        return ST_RAISE(err, ST_EINVAL, "instance '%s': net_ring_eff %g, net_tree_eff %g; allowed: "
                        "(0, 1]", in->name, in->net_ring_eff, in->net_tree_eff);
    if (in->net_latency_nodes < 2)
        return ST_RAISE(err, ST_EINVAL, "instance '%s': net_latency_nodes %d; allowed: 2 or more",
                        in->name, in->net_latency_nodes);
    if (in->nvswitch != 0 && in->nvswitch != 1)
        return ST_RAISE(err, ST_EINVAL, "instance '%s': nvswitch %d; allowed: 0 or 1", in->name,
                        in->nvswitch);
    if (in->naliases < 0 || in->naliases > (int)(sizeof in->aliases / sizeof in->aliases[0]))
        return ST_RAISE(err, ST_EINVAL, "instance '%s': %d aliases; allowed: 0 to %d", in->name,
                        in->naliases, (int)(sizeof in->aliases / sizeof in->aliases[0]));
    return ST_OK;
}

static int resolve_instance(const plan_catalog *cat, plan_instance *in, st_err *err)
{
    int g = find_gpu(cat, in->gpu);
    if (g < 0)
        return ST_RAISE(err, ST_EINVAL, "instance '%s': unknown gpu '%s' (not in the catalog's gpus)",
                        in->name, in->gpu);
    int ic = find_curve(cat, in->intra_curve), nc = find_curve(cat, in->net_curve);
    if (ic < 0 || nc < 0)
        return ST_RAISE(err, ST_EINVAL, "instance '%s': unknown %s '%s' (not in the catalog's curves)",
                        in->name, ic < 0 ? "intra_curve" : "net_curve",
                        ic < 0 ? in->intra_curve : in->net_curve);
    in->gpu_index = g;
    in->intra_curve_index = ic;
    in->net_curve_index = nc;
    return ST_OK;
}

/* Does any name or alias of instance j (j < i) or an alias of i itself
 * clash with name s of instance i? */
static const char *clash(const plan_catalog *cat, int i, const char *s, int self_from)
{
    const plan_instance *me = &cat->instances[i];
    for (int a = self_from; a < me->naliases; a++)
        if (same_name(s, me->aliases[a]))
            return me->name;
    for (int j = 0; j < i; j++) {
        const plan_instance *o = &cat->instances[j];
        if (same_name(s, o->name))
            return o->name;
        for (int a = 0; a < o->naliases; a++)
            if (same_name(s, o->aliases[a]))
                return o->name;
    }
    return NULL;
}

static int check_unique(const plan_catalog *cat, st_err *err)
{
    for (int i = 0; i < cat->ngpus; i++)
        if (find_gpu(cat, cat->gpus[i].name) != i)
            return ST_RAISE(err, ST_EINVAL, "gpu '%s' is listed twice", cat->gpus[i].name);
    for (int i = 0; i < cat->ncurves; i++)
        if (find_curve(cat, cat->curves[i].name) != i)
            return ST_RAISE(err, ST_EINVAL, "curve '%s' is listed twice", cat->curves[i].name);
    for (int i = 0; i < cat->ninstances; i++) {
        const plan_instance *in = &cat->instances[i];
        const char *other = clash(cat, i, in->name, 0);
        if (other)
            return ST_RAISE(err, ST_EINVAL, "instance name '%s' is also a name or alias of '%s'",
                            in->name, other);
        for (int a = 0; a < in->naliases; a++) {
            if (!in->aliases[a][0])
                return ST_RAISE(err, ST_EINVAL, "instance '%s': empty alias", in->name);
            other = clash(cat, i, in->aliases[a], a + 1);
            if (other || same_name(in->aliases[a], in->name))
                return ST_RAISE(err, ST_EINVAL, "instance '%s': alias '%s' is also a name or alias of '%s'",
                                in->name, in->aliases[a], other ? other : in->name);
        }
    }
    return ST_OK;
}

/* A (framework, chip) fit: a known family, a chip of the catalog, values in
 * (0, 1], GEMM efficiencies no higher than the chip's measured ceiling. */
static int check_eff(const plan_catalog *cat, const plan_fw_eff *e, st_err *err)
{
    int fam = -1;
    for (int f = 0; f < PLAN_FW__COUNT; f++)
        if (strcasecmp(e->framework, plan_fw_family_key((plan_fw_family)f)) == 0)
            fam = f;
    if (fam < 0)
        return ST_RAISE(err, ST_EINVAL, "efficiency entry: framework '%s'; allowed: smp, megatron, "
                        "deepspeed, fsdp, jax, smdplan, pytorch", e->framework);
    const plan_gpu *chip = NULL;
    for (int i = 0; i < cat->ngpus && !chip; i++)
        if (strcasecmp(cat->gpus[i].silicon[0] ? cat->gpus[i].silicon : cat->gpus[i].name,
                       e->silicon) == 0)
            chip = &cat->gpus[i];
    if (!chip)
        return ST_RAISE(err, ST_EINVAL, "efficiency entry %s on '%s': no catalog GPU is that chip",
                        e->framework, e->silicon);
    if (e->fitted & (1u << PLAN_EFF_DIM_HALF))
        return ST_RAISE(err, ST_EINVAL, "efficiency entry %s on %s: gemm_dim_half is the chip's "
                        "(a GPU field), not a framework's", e->framework, e->silicon);
    for (int p = 0; p < PLAN_EFF__COUNT; p++) {
        double v = *plan_eff_ref((plan_eff *)&e->eff, (plan_eff_param)p);
        if (p == PLAN_EFF_ALLOC ? (e->fitted & (1u << p)) && !(isfinite(v) && v >= 0 && v <= 1)
                                : (e->fitted & (1u << p)) && !fraction(v))
            return ST_RAISE(err, ST_EINVAL, "efficiency entry %s on %s: %s %g; allowed: (0, 1]",
                            e->framework, e->silicon, plan_eff_param_name((plan_eff_param)p), v);
    }
    if ((e->fitted & (1u << PLAN_EFF_GEMM)) && chip->gemm_ceiling > 0 &&
        e->eff.gemm_eff_max > chip->gemm_ceiling)
        return ST_RAISE(err, ST_EINVAL, "efficiency entry %s on %s: gemm_eff_max %g above the "
                        "chip's measured GEMM ceiling %g", e->framework, e->silicon,
                        e->eff.gemm_eff_max, chip->gemm_ceiling);
    return ST_OK;
}

int plan_catalog_link(plan_catalog *cat, st_err *err)
{
    if (!cat || cat->ngpus < 0 || cat->ninstances < 0 || cat->ncurves < 0)
        return ST_RAISE(err, ST_EINVAL, "catalog: not initialised");
    int rc;
    for (int i = 0; i < cat->ngpus; i++)
        if ((rc = check_gpu(&cat->gpus[i], err)))
            return rc;
    for (int i = 0; i < cat->ncurves; i++)
        if ((rc = check_curve(&cat->curves[i], err)))
            return rc;
    for (int i = 0; i < cat->ninstances; i++)
        if ((rc = check_instance_values(&cat->instances[i], err)))
            return rc;
    if ((rc = check_unique(cat, err)))
        return rc;
    for (int i = 0; i < cat->ninstances; i++)
        if ((rc = resolve_instance(cat, &cat->instances[i], err)))
            return rc;
    for (int i = 0; i < cat->neffs; i++)
        if ((rc = check_eff(cat, &cat->effs[i], err)))
            return rc;
    return ST_OK;
}

/* ------------------------------------------------------------------------ */
/* Lookup and suggestions                                                    */
/* ------------------------------------------------------------------------ */

const plan_instance *plan_catalog_find(const plan_catalog *cat, const char *name)
{
    if (!cat || !name)
        return NULL;
    for (int i = 0; i < cat->ninstances; i++) {
        const plan_instance *in = &cat->instances[i];
        if (same_name(name, in->name))
            return in;
        for (int a = 0; a < in->naliases; a++)
            if (same_name(name, in->aliases[a]))
                return in;
    }
    return NULL;
}

static int instance_distance(const plan_instance *in, const char *q)
{
    int d = text_edit_distance(q, strip_ml(in->name));
    for (int a = 0; a < in->naliases; a++) {
        int da = text_edit_distance(q, strip_ml(in->aliases[a]));
        if (da < d)
            d = da;
    }
    return d;
}

int plan_catalog_suggest(const plan_catalog *cat, const char *name, const char **out, int max)
{
    if (!cat || !name || !out || max <= 0)
        return 0;
    const char *q = strip_ml(name);
    int n = 0, dist[PLAN_SUGGEST_MAX];
    if (max > PLAN_SUGGEST_MAX)
        max = PLAN_SUGGEST_MAX;
    /* Insertion into a short sorted list: closest first, catalog order on
     * ties (the file lists the common types first). */
    for (int i = 0; i < cat->ninstances; i++) {
        int d = instance_distance(&cat->instances[i], q);
        int k = n < max ? n : max - 1;
        if (n == max && d >= dist[k])
            continue;
        while (k > 0 && dist[k - 1] > d) {
            dist[k] = dist[k - 1];
            out[k] = out[k - 1];
            k--;
        }
        dist[k] = d;
        out[k] = cat->instances[i].name;
        if (n < max)
            n++;
    }
    return n;
}

/* ------------------------------------------------------------------------ */
/* Clusters                                                                  */
/* ------------------------------------------------------------------------ */

int plan_cluster_make(const plan_catalog *cat, const plan_instance *inst, int nodes,
                      plan_cluster *out, st_err *err)
{
    if (!cat || !inst || !out)
        return ST_RAISE(err, ST_EINVAL, "cluster: no catalog or instance type");
    if (nodes < 1 || nodes > PLAN_NODES_MAX)
        return ST_RAISE(err, ST_EINVAL, "cluster of %d x %s: node count allowed 1 to %d", nodes,
                        inst->name, PLAN_NODES_MAX);
    if (inst->gpu_index < 0 || inst->gpu_index >= cat->ngpus ||
        inst->intra_curve_index < 0 || inst->intra_curve_index >= cat->ncurves ||
        inst->net_curve_index < 0 || inst->net_curve_index >= cat->ncurves)
        return ST_RAISE(err, ST_EINTERNAL, "instance '%s' is not linked to the catalog",
                        inst->name);
    memset(out, 0, sizeof *out);
    out->inst = inst;
    out->gpu = &cat->gpus[inst->gpu_index];
    out->intra_curve = &cat->curves[inst->intra_curve_index];
    out->net_curve = &cat->curves[inst->net_curve_index];
    out->nodes = nodes;
    out->gpus = nodes * inst->gpus_per_node;
    plan_cluster_use(cat, NULL, out);
    return ST_OK;
}

const plan_fw_eff *plan_catalog_eff(const plan_catalog *cat, const char *family_key,
                                    const char *silicon)
{
    for (int i = 0; cat && family_key && silicon && i < cat->neffs; i++)
        if (strcasecmp(cat->effs[i].framework, family_key) == 0 &&
            strcasecmp(cat->effs[i].silicon, silicon) == 0)
            return &cat->effs[i];
    return NULL;
}

const plan_fw_eff *plan_cluster_use(const plan_catalog *cat, const char *family_key,
                                    plan_cluster *c)
{
    const plan_gpu *g = c->gpu;
    c->eff.gemm_eff_max = g->gemm_eff_max;
    c->eff.hbm_eff = g->hbm_eff;
    c->eff.flash_eff = g->flash_eff;
    c->eff.fp8_gemm_eff = g->fp8_gemm_eff > 0 ? g->fp8_gemm_eff : g->gemm_eff_max;
    c->eff.gemm_dim_half = g->gemm_dim_half;
    c->eff.alloc_frac = g->alloc_frac;
    c->eff_fit = plan_catalog_eff(cat, family_key, g->silicon[0] ? g->silicon : g->name);
    if (c->eff_fit) {
        /* only the values the fit constrained replace the chip's */
        for (int p = 0; p < PLAN_EFF__COUNT; p++)
            if (c->eff_fit->fitted & (1u << p))
                *plan_eff_ref(&c->eff, (plan_eff_param)p) =
                    *plan_eff_ref((plan_eff *)&c->eff_fit->eff, (plan_eff_param)p);
    }
    return c->eff_fit;
}

static const char *const eff_names[PLAN_EFF__COUNT] = {
    [PLAN_EFF_GEMM] = "gemm_eff_max",
    [PLAN_EFF_HBM] = "hbm_eff",
    [PLAN_EFF_FLASH] = "flash_eff",
    [PLAN_EFF_FP8_GEMM] = "fp8_gemm_eff",
    [PLAN_EFF_DIM_HALF] = "gemm_dim_half",
    [PLAN_EFF_ALLOC] = "alloc_frac",
};

const char *plan_eff_param_name(plan_eff_param p)
{
    return (unsigned)p < PLAN_EFF__COUNT ? eff_names[p] : "?";
}

double *plan_eff_ref(plan_eff *e, plan_eff_param p)
{
    switch (p) {
    case PLAN_EFF_HBM: return &e->hbm_eff;
    case PLAN_EFF_FLASH: return &e->flash_eff;
    case PLAN_EFF_FP8_GEMM: return &e->fp8_gemm_eff;
    case PLAN_EFF_DIM_HALF: return &e->gemm_dim_half;
    case PLAN_EFF_ALLOC: return &e->alloc_frac;
    case PLAN_EFF_GEMM:
    default: return &e->gemm_eff_max;
    }
}

/* Parse a node count of plain digits, the whole of [s, e). */
static int parse_nodes(const char *text, const char *s, const char *e, int *out, st_err *err)
{
    long v = 0;
    if (s == e)
        return ST_RAISE(err, ST_EINVAL,
                        "instances '%s': missing node count; expected COUNTxTYPE (16xp4d), "
                        "TYPE:COUNT (p4d:16) or TYPE",
                        text);
    for (const char *p = s; p < e; p++) {
        if (!isdigit((unsigned char)*p))
            return ST_RAISE(err, ST_EINVAL,
                            "instances '%s': node count '%.*s' is not a whole number; expected "
                            "COUNTxTYPE (16xp4d), TYPE:COUNT (p4d:16) or TYPE",
                            text, (int)(e - s), s);
        if (v <= PLAN_NODES_MAX)
            v = v * 10 + (*p - '0');
    }
    if (v < 1 || v > PLAN_NODES_MAX)
        return ST_RAISE(err, ST_EINVAL, "instances '%s': node count allowed 1 to %d", text,
                        PLAN_NODES_MAX);
    *out = (int)v;
    return ST_OK;
}

static int unknown_type(const plan_catalog *cat, const char *text, const char *type, st_err *err)
{
    const char *near[PLAN_SUGGEST_SHOWN];
    int n = plan_catalog_suggest(cat, type, near, PLAN_SUGGEST_SHOWN);
    char list[3 * 64] = "";
    for (int i = 0; i < n; i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", near[i]);
    }
    if (n == 0)
        return ST_RAISE(err, ST_ENOENT, "unknown instance type '%s' in '%s': the catalog is empty",
                        type, text);
    return ST_RAISE(err, ST_ENOENT, "unknown instance type '%s': closest are %s (see 'smdplan catalog')",
                    type, list);
}

/* Split text (spaces trimmed) into a type [ts, te) and a count [cs, ce);
 * cs == NULL when no count is given. */
static int split_spec(const char *text, const char *b, const char *e, const char **ts,
                      const char **te, const char **cs, const char **ce, st_err *err)
{
    const char *colon = memchr(b, ':', (size_t)(e - b));
    *cs = *ce = NULL;
    if (colon) { /* TYPE:COUNT */
        *ts = b, *te = colon, *cs = colon + 1, *ce = e;
    } else if (isdigit((unsigned char)*b) || *b == '-' || *b == '+') { /* COUNT x TYPE */
        const char *p = b + 1;
        while (p < e && isdigit((unsigned char)*p))
            p++;
        *cs = b, *ce = p;
        while (p < e && isspace((unsigned char)*p))
            p++;
        if (p == e || (*p != 'x' && *p != 'X'))
            return ST_RAISE(err, ST_EINVAL,
                            "instances '%s': expected COUNTxTYPE (16xp4d), TYPE:COUNT (p4d:16) "
                            "or TYPE",
                            text);
        *ts = p + 1, *te = e;
    } else { /* TYPE alone: one node */
        *ts = b, *te = e;
    }
    while (*ts < *te && isspace((unsigned char)**ts))
        (*ts)++;
    while (*te > *ts && isspace((unsigned char)(*te)[-1]))
        (*te)--;
    if (*cs) {
        while (*cs < *ce && isspace((unsigned char)**cs))
            (*cs)++;
        while (*ce > *cs && isspace((unsigned char)(*ce)[-1]))
            (*ce)--;
    }
    if (*ts == *te)
        return ST_RAISE(err, ST_EINVAL,
                        "instances '%s': missing instance type; expected COUNTxTYPE (16xp4d), "
                        "TYPE:COUNT (p4d:16) or TYPE",
                        text);
    return ST_OK;
}

int plan_cluster_parse(const plan_catalog *cat, const char *text, plan_cluster *out, st_err *err)
{
    if (!cat || !text || !out)
        return ST_RAISE(err, ST_EINVAL, "instances: no catalog or text");
    const char *b = text, *e = text + strlen(text);
    while (b < e && isspace((unsigned char)*b))
        b++;
    while (e > b && isspace((unsigned char)e[-1]))
        e--;
    if (b == e)
        return ST_RAISE(err, ST_EINVAL,
                        "instances: empty; expected COUNTxTYPE (16xp4d), TYPE:COUNT (p4d:16) or TYPE");
    const char *ts = NULL, *te = NULL, *cs = NULL, *ce = NULL;
    int rc = split_spec(text, b, e, &ts, &te, &cs, &ce, err);
    if (rc)
        return rc;
    int nodes = 1;
    if (cs && (rc = parse_nodes(text, cs, ce, &nodes, err)))
        return rc;
    char type[PLAN_SUGGEST_NAME_MAX * 2];
    snprintf(type, sizeof type, "%.*s", (int)(te - ts), ts);
    const plan_instance *in = plan_catalog_find(cat, type);
    if (!in)
        return unknown_type(cat, text, type, err);
    return plan_cluster_make(cat, in, nodes, out, err);
}

/* ------------------------------------------------------------------------ */
/* Curves                                                                    */
/* ------------------------------------------------------------------------ */

double plan_curve_eval(const plan_curve *c, double bytes)
{
    if (!c || c->n <= 0)
        return 1.0;
    const double *x = c->log2_bytes, *y = c->eff;
    int n = c->n;
    if (!(bytes > 0))
        return y[0];
    double lx = log2(bytes);
    if (lx <= x[0])
        return y[0];
    if (lx >= x[n - 1])
        return y[n - 1];
    int lo = 0, hi = n - 1; /* x[lo] < lx < x[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (x[mid] <= lx)
            lo = mid;
        else
            hi = mid;
    }
    double t = (lx - x[lo]) / (x[hi] - x[lo]);
    return y[lo] + t * (y[hi] - y[lo]);
}

/* ------------------------------------------------------------------------ */
/* Board variants                                                            */
/* ------------------------------------------------------------------------ */

static const char *const board_variants[] = {"PCIe", "NVL", NULL};

/* The word, not inside a longer one; "NVL" with a count after it is no
 * board but NVIDIA's rack-scale NVLink system (GB200 NVL72, NVL36). */
static int names_variant(const char *text, const char *word)
{
    size_t n = strlen(word);
    int nvl = strcmp(word, "NVL") == 0;
    for (const char *p = text; p && *p; p++)
        if (strncasecmp(p, word, n) == 0 && (p == text || !isalpha((unsigned char)p[-1])) &&
            !isalpha((unsigned char)p[n]) && !(nvl && isdigit((unsigned char)p[n])))
            return 1;
    return 0;
}

int plan__board_differs(const char *text, const char *gpu_name)
{
    for (int i = 0; board_variants[i]; i++)
        if (names_variant(text, board_variants[i]) != names_variant(gpu_name, board_variants[i]))
            return 1;
    return 0;
}

const char *plan__board_variant(const char *text)
{
    for (int i = 0; board_variants[i]; i++)
        if (names_variant(text, board_variants[i]))
            return board_variants[i];
    return NULL;
}
