/*
 * plan_framework.c: the installed stack profiles (plan_framework.h): the
 * registry data/ fills from data/frameworks.json, finding a profile by key,
 * reading which stack and release a run's framework text names, and what a
 * profile allows and sets on a layout.
 *
 * Nothing here names a published source of measurements or a stack: the
 * profiles and the documented names they answer to are data; a profile is
 * selected by the framework text a run gives (with its source's date), or
 * by --framework.
 */
#include "planner/plan_framework.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "planner/plan_hwfit.h"
#include "planner/plan_int.h"

static const char *const family_keys[PLAN_FW__COUNT] = {
    [PLAN_FW_SMP] = "smp",         [PLAN_FW_MEGATRON] = "megatron", [PLAN_FW_DEEPSPEED] = "deepspeed",
    [PLAN_FW_FSDP] = "fsdp",       [PLAN_FW_JAX] = "jax",           [PLAN_FW_SMDPLAN] = "smdplan",
    [PLAN_FW_PYTORCH] = "pytorch",
};

const char *plan_fw_family_key(plan_fw_family f)
{
    return (unsigned)f < PLAN_FW__COUNT ? family_keys[f] : "?";
}

int plan_fw_family_parse(const char *key)
{
    for (int f = 0; key && f < PLAN_FW__COUNT; f++)
        if (strcasecmp(family_keys[f], key) == 0)
            return f;
    return -1;
}

/* ---- the registry ---- */

static plan_framework registry[PLAN_FW_MAX];
const plan_framework *plan_frameworks = registry;
int plan_nframeworks = 0;
/* What plan_framework_get gives before any profile is installed: no knobs,
 * so every layout is refused with this label named. */
const plan_framework plan__framework_none = {
    .key = "?", .stack = "?", .label = "no stack profiles installed (data/frameworks.json not read)",
    .placement = "DPT", .placement_search = 1,
};
static char user_keys[512];

/* The stacks, each once, in order. */
static void build_user_keys(void)
{
    user_keys[0] = '\0';
    for (int i = 0; i < plan_nframeworks; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = strcasecmp(registry[j].stack, registry[i].stack) == 0;
        if (seen)
            continue;
        size_t n = strlen(user_keys);
        snprintf(user_keys + n, sizeof user_keys - n, "%s%s", n ? ", " : "", registry[i].stack);
    }
}

int plan_frameworks_set(const plan_framework *v, int n, int def, st_err *err)
{
    if (!v || n < 1 || n > PLAN_FW_MAX)
        return ST_RAISE(err, ST_EINVAL, "stack profiles: %d given; allowed: 1 to %d", n,
                        PLAN_FW_MAX);
    if (def < 0 || def >= n)
        return ST_RAISE(err, ST_EINVAL, "stack profiles: default %d out of range", def);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i != j && strcasecmp(v[i].key, v[j].key) == 0)
                return ST_RAISE(err, ST_EINVAL, "stack profiles: '%s' given twice", v[i].key);
            for (int k = 0; k < PLAN_FW_RELNAMES_MAX && v[j].aliases[k][0]; k++)
                if (strcasecmp(v[i].key, v[j].aliases[k]) == 0)
                    return ST_RAISE(err, ST_EINVAL,
                                    "stack profiles: '%s' is a key and an alias of '%s'",
                                    v[i].key, v[j].key);
        }
    int k = 0;
    registry[k++] = v[def];
    for (int i = 0; i < n; i++)
        if (i != def)
            registry[k++] = v[i];
    plan_nframeworks = n;
    build_user_keys();
    return ST_OK;
}

const char *plan_framework_user_keys(void)
{
    return user_keys;
}

const char *plan_fw_ym_text(int ym, char *buf, size_t n)
{
    if (ym <= 0)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%04d-%02d", ym / 12, ym % 12 + 1);
    return buf;
}

/* The latest release of a stack in force at ym (every release when ym is
 * 0), else its earliest: the index, or -1 when no profile is of it. */
static int release_at(const char *stack, int ym)
{
    int best = -1, first = -1;
    for (int i = 0; i < plan_nframeworks; i++) {
        const plan_framework *f = &registry[i];
        if (strcasecmp(f->stack, stack) != 0)
            continue;
        if (first < 0 || f->released_ym < registry[first].released_ym)
            first = i;
        if (ym > 0 && f->released_ym > ym)
            continue;
        if (best < 0 || f->released_ym > registry[best].released_ym)
            best = i;
    }
    return best >= 0 ? best : first;
}

int plan_framework_release_at(const char *stack, int ym)
{
    return stack ? release_at(stack, ym) : -1;
}

int plan_framework_find(const char *key, int *index, st_err *err)
{
    if (key && *key) {
        for (int i = 0; i < plan_nframeworks; i++)
            if (strcasecmp(registry[i].key, key) == 0) {
                *index = i;
                return ST_OK;
            }
        for (int i = 0; i < plan_nframeworks; i++)
            for (int k = 0; k < PLAN_FW_RELNAMES_MAX && registry[i].aliases[k][0]; k++)
                if (strcasecmp(registry[i].aliases[k], key) == 0) {
                    *index = i;
                    return ST_OK;
                }
        int i = strchr(key, '@') ? -1 : release_at(key, 0);
        if (i >= 0) {
            *index = i;
            return ST_OK;
        }
    }
    if (plan_nframeworks == 0)
        return ST_RAISE(err, ST_EINVAL, "--framework '%s': no stack profiles installed",
                        key ? key : "");
    return ST_RAISE(err, ST_EINVAL,
                    "--framework '%s': allowed are %s, each also as STACK@RELEASE for one "
                    "release (smdplan frameworks lists them)",
                    key ? key : "", user_keys);
}

/* Offset of needle in hay as a word of its own (case-insensitive; a name
 * is not matched inside a longer word: "Pax" is not in "Paxml"); -1 when
 * absent. */
static long find_word(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (n == 0)
        return -1;
    for (const char *p = hay; *p; p++) {
        if (strncasecmp(p, needle, n) != 0)
            continue;
        int before = p > hay && isalnum((unsigned char)p[-1]) && isalnum((unsigned char)needle[0]);
        int after = isalnum((unsigned char)p[n]) && isalnum((unsigned char)needle[n - 1]);
        if (!before && !after)
            return (long)(p - hay);
    }
    return -1;
}

/* A version number at s, after spaces, "(", "v", "r", "core_r", "version"
 * (and a product's noun before them: "SageMaker model parallel library
 * v2"): up to three parts into v; the characters read, 0 when none. A
 * number without such a prefix is a version only with a dot ("24.07",
 * "0.8.0"): "Megatron-LM (2020)" names a year, not version 2020. */
static int read_version(const char *s, int v[3])
{
    const char *p = s;
    while (*p == ' ' || *p == '(' || *p == '-' || *p == '_')
        p++;
    static const char *const nouns[] = {"library ", "framework ", "toolkit "};
    for (size_t i = 0; i < sizeof nouns / sizeof nouns[0]; i++)
        if (strncasecmp(p, nouns[i], strlen(nouns[i])) == 0) {
            p += strlen(nouns[i]);
            break;
        }
    static const char *const prefixes[] = {"version ", "core_r", "core_v", "r", "v"};
    int prefixed = 0;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t n = strlen(prefixes[i]);
        if (strncasecmp(p, prefixes[i], n) == 0 && isdigit((unsigned char)p[n])) {
            p += n;
            prefixed = 1;
            break;
        }
    }
    if (!isdigit((unsigned char)*p))
        return 0;
    if (!prefixed) {
        const char *q = p;
        while (isdigit((unsigned char)*q))
            q++;
        if (*q != '.' || !isdigit((unsigned char)q[1]))
            return 0;
    }
    v[0] = v[1] = v[2] = 0;
    for (int k = 0; k < 3; k++) {
        char *e;
        long x = strtol(p, &e, 10);
        if (e == p || x < 0 || x > 100000)
            return k ? (int)(p - s) : 0;
        v[k] = (int)x;
        p = e;
        if (k < 2 && *p == '.' && isdigit((unsigned char)p[1]))
            p++;
        else
            break;
    }
    return (int)(p - s);
}

static int version_cmp(const int a[3], const int b[3])
{
    for (int k = 0; k < 3; k++)
        if (a[k] != b[k])
            return a[k] < b[k] ? -1 : 1;
    return 0;
}

/* A year of its own in the text (1990-2099, not part of a longer number or
 * word): year * 12 + 11 (its end: the release in force that year), or 0. */
static int year_in(const char *text)
{
    for (const char *p = text; *p; p++) {
        if (!isdigit((unsigned char)*p) || (p > text && isalnum((unsigned char)p[-1])))
            continue;
        int n = 0;
        while (isdigit((unsigned char)p[n]))
            n++;
        if (n == 4 && !isalpha((unsigned char)p[n]) && !(p[n] == '.' && isdigit((unsigned char)p[n + 1]))) {
            int y = atoi(p);
            if (y >= 1990 && y <= 2099)
                return y * 12 + 11;
        }
        p += n - 1;
    }
    return 0;
}

/* The release of a stack that a version
 * read after the stack name `name` picks: a calendar version (YY.MM) is a
 * date; a release's own version numbers pick the last release at or below,
 * of whichever stack lists that name with a version (SMP v1 and v2 are two
 * stacks of one product: "SMP 2.4" is v2's). -1 when the version says
 * nothing. */
static int release_by_version(const char *stack, const char *name, const int v[3])
{
    for (int i = 0; i < plan_nframeworks; i++) {
        const plan_framework *f = &registry[i];
        if (strcasecmp(f->stack, stack) != 0)
            continue;
        for (int k = 0; k < PLAN_FW_RELNAMES_MAX && f->calendar_names[k][0]; k++)
            if (strcasecmp(f->calendar_names[k], name) == 0 && v[0] >= 10 && v[0] <= 99 &&
                v[1] >= 1 && v[1] <= 12)
                return release_at(stack, (2000 + v[0]) * 12 + v[1] - 1);
    }
    int best = -1;
    const int *best_v = NULL;
    for (int i = 0; i < plan_nframeworks; i++) {
        const plan_framework *f = &registry[i];
        for (int k = 0; k < f->nversions; k++)
            if (strcasecmp(f->versions[k].name, name) == 0 &&
                version_cmp(f->versions[k].v, v) <= 0 &&
                (!best_v || version_cmp(f->versions[k].v, best_v) > 0)) {
                best = i;
                best_v = f->versions[k].v;
            }
    }
    return best;
}

int plan_framework_builds_on(int i, const char *st)
{
    if (i < 0 || i >= plan_nframeworks || !st)
        return 0;
    if (strcasecmp(registry[i].stack, st) == 0)
        return 0;
    for (int hops = 0; hops < plan_nframeworks && registry[i].inherits[0]; hops++) {
        int parent;
        st_err e = {0};
        if (plan_framework_find(registry[i].inherits, &parent, &e) != ST_OK)
            return 0;
        if (strcasecmp(registry[parent].stack, st) == 0)
            return 1;
        i = parent;
    }
    return 0;
}

/* Does text name stack st (a name of any of its releases)? */
static int names_stack(const char *text, const char *st)
{
    for (int i = 0; i < plan_nframeworks; i++) {
        if (strcasecmp(registry[i].stack, st) != 0)
            continue;
        for (int k = 0; k < PLAN_FW_NAMES_MAX + PLAN_FW_RELNAMES_MAX; k++) {
            const char *nm = k < PLAN_FW_NAMES_MAX ? registry[i].names[k]
                                                   : registry[i].release_names[k - PLAN_FW_NAMES_MAX];
            if (nm[0] && find_word(text, nm) >= 0)
                return 1;
        }
    }
    return 0;
}

int plan_framework_match(const char *text, int source_ym)
{
    if (!text || !*text || plan_nframeworks == 0)
        return -1;
    /* The stack a text names first is the one it ran ("NeMo 24.07
     * (Megatron-Core)" is NeMo's, whose engine is Megatron-Core; "Composer +
     * PyTorch FSDP" is Composer's); among names found at the same place the
     * longest wins ("Megatron-DeepSpeed" is not Megatron-LM). */
    int stack = -1;
    long at = -1;
    size_t len = 0;
    /* (a name only one release has names its stack too: "FSDP2") */
    for (int i = 0; i < plan_nframeworks; i++)
        for (int k = 0; k < PLAN_FW_NAMES_MAX + PLAN_FW_RELNAMES_MAX; k++) {
            const char *nm = k < PLAN_FW_NAMES_MAX ? registry[i].names[k]
                                                   : registry[i].release_names[k - PLAN_FW_NAMES_MAX];
            if (!nm[0])
                continue;
            size_t n = strlen(nm);
            long a = find_word(text, nm);
            if (a < 0)
                continue;
            if (stack < 0 || a < at || (a == at && n > len)) {
                stack = i;
                at = a;
                len = n;
            }
        }
    if (stack < 0)
        return -1;
    /* ... unless the text names, anywhere, a stack built on that one: the
     * more specific names what ran ("Fully Sharded Data Parallel with
     * Megatron-LM tensor parallelism (metaseq)" is metaseq's, whose FSDP is
     * fairscale's) */
    for (int i = 0; i < plan_nframeworks; i++) {
        if (!plan_framework_builds_on(i, registry[stack].stack))
            continue;
        for (int k = 0; k < PLAN_FW_NAMES_MAX && registry[i].names[k][0]; k++)
            if (find_word(text, registry[i].names[k]) >= 0) {
                stack = i;
                break;
            }
    }
    /* ... or names both stacks that one joins: "DeepSpeed + Megatron-LM"
     * ran Megatron-LM's layers on DeepSpeed's engine, which is what
     * Megatron-DeepSpeed is (its "joins") */
    for (int i = 0; i < plan_nframeworks; i++) {
        int parent;
        st_err e = {0};
        if (!registry[i].joins[0] || !registry[i].inherits[0] ||
            plan_framework_find(registry[i].inherits, &parent, &e) != ST_OK)
            continue;
        if (names_stack(text, registry[i].joins) && names_stack(text, registry[parent].stack)) {
            stack = i;
            break;
        }
    }
    const char *st = registry[stack].stack;
    /* a name only one release has */
    for (int i = 0; i < plan_nframeworks; i++) {
        if (strcasecmp(registry[i].stack, st) != 0)
            continue;
        for (int k = 0; k < PLAN_FW_RELNAMES_MAX && registry[i].release_names[k][0]; k++)
            if (find_word(text, registry[i].release_names[k]) >= 0)
                return i;
    }
    /* a version after the stack's name, wherever the text gives one */
    for (int i = 0; i < plan_nframeworks; i++) {
        if (strcasecmp(registry[i].stack, st) != 0)
            continue;
        for (int k = 0; k < PLAN_FW_NAMES_MAX && registry[i].names[k][0]; k++) {
            long a = find_word(text, registry[i].names[k]);
            int v[3];
            if (a >= 0 && read_version(text + a + strlen(registry[i].names[k]), v)) {
                int r = release_by_version(st, registry[i].names[k], v);
                if (r >= 0)
                    return r;
            }
        }
    }
    /* a year in the text, else the source's date, else the latest */
    int ym = year_in(text);
    return release_at(st, ym ? ym : source_ym);
}

/* "simple or interleaved" for a mask of names. */
static void list_mask(unsigned mask, const char *(*name)(int), int n, char *out, size_t cap)
{
    int total = 0, k = 0;
    for (int i = 0; i < n; i++)
        total += (mask >> i) & 1;
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (!((mask >> i) & 1))
            continue;
        size_t used = strlen(out);
        snprintf(out + used, cap - used, "%s%s", k == 0 ? "" : k == total - 1 ? " or " : ", ",
                 name(i));
        k++;
    }
    if (!total)
        snprintf(out, cap, "none");
}

static const char *sched_name(int i) { return plan_schedule_name((plan_schedule)i); }
static const char *shard_name(int i) { return plan_sharding_name((plan_sharding)i); }
static const char *recomp_name(int i) { return plan_recompute_name((plan_recompute)i); }
static const char *tp_overlap_name(int i)
{
    static const char *const names[] = {"none", "backward", "pipelined"};
    return i >= 0 && i < 3 ? names[i] : "?";
}

unsigned plan_framework_tp_overlaps(const plan_framework *fw)
{
    if (fw->tp_overlaps)
        return fw->tp_overlaps;
    int own = fw->tp_overlap >= 0 && fw->tp_overlap < 3 ? fw->tp_overlap : 0;
    return (1u << (own + 1)) - 1u;
}

int plan_framework_check(const plan_framework *fw, const plan_layout *l, char *why, size_t n)
{
    char list[96];
    if (!((fw->schedules >> l->schedule) & 1) && l->pp > 1) {
        list_mask(fw->schedules, sched_name, PLAN_SCHED__COUNT, list, sizeof list);
        snprintf(why, n, "schedule %s: %s runs %s", plan_schedule_name(l->schedule), fw->label, list);
        return 1;
    }
    if (!((fw->shardings >> l->sharding) & 1) && (l->sharding != PLAN_SHARD_NONE || l->dp > 1)) {
        list_mask(fw->shardings, shard_name, PLAN_SHARD__COUNT, list, sizeof list);
        snprintf(why, n, "sharding %s: %s shards %s", plan_sharding_name(l->sharding), fw->label,
                 list);
        return 1;
    }
    if (l->pp > 1 && !((fw->shardings_with_pp >> l->sharding) & 1)) {
        list_mask(fw->shardings_with_pp, shard_name, PLAN_SHARD__COUNT, list, sizeof list);
        snprintf(why, n, "sharding %s with pp %d: %s combines a pipeline only with sharding %s",
                 plan_sharding_name(l->sharding), l->pp, fw->label, list);
        return 1;
    }
    if (l->tp > 1 && !((fw->shardings_with_tp >> l->sharding) & 1)) {
        list_mask(fw->shardings_with_tp, shard_name, PLAN_SHARD__COUNT, list, sizeof list);
        snprintf(why, n, "sharding %s with tp %d: %s combines tensor parallelism only with "
                 "sharding %s", plan_sharding_name(l->sharding), l->tp, fw->label, list);
        return 1;
    }
    if (!((fw->recomputes >> l->recompute) & 1)) {
        list_mask(fw->recomputes, recomp_name, PLAN_RECOMP__COUNT, list, sizeof list);
        snprintf(why, n, "recompute %s: %s recomputes %s", plan_recompute_name(l->recompute),
                 fw->label, list);
        return 1;
    }
    if (l->recompute == PLAN_RECOMP_FULL && l->recompute_layers > 0 && !fw->recompute_block &&
        !fw->recompute_every) {
        snprintf(why, n, "recompute_layers %d (Megatron's block method): %s recomputes every "
                 "layer it checkpoints", l->recompute_layers, fw->label);
        return 1;
    }
    if (l->recompute == PLAN_RECOMP_FULL && l->recompute_saved && !fw->remat_policies) {
        snprintf(why, n, "recompute_saved %d (a remat policy keeping products' outputs): %s "
                 "has none", l->recompute_saved, fw->label);
        return 1;
    }
    if (l->compiled && !fw->compile) {
        snprintf(why, n, "compiled (torch.compile): %s has no such knob", fw->label);
        return 1;
    }
    if (l->recompute == PLAN_RECOMP_FULL && l->recompute_group > 1 && !fw->recompute_groups) {
        snprintf(why, n, "recompute group %d: %s checkpoints every layer", l->recompute_group,
                 fw->label);
        return 1;
    }
    if (l->sequence_parallel && !fw->sequence_parallel && l->tp > 1) {
        snprintf(why, n, "sequence parallelism: %s has none", fw->label);
        return 1;
    }
    if (l->cp > 1 && !fw->context_parallel) {
        snprintf(why, n, "context parallel %d: %s has no context parallelism", l->cp, fw->label);
        return 1;
    }
    if (l->offload_activations && !fw->offload) {
        snprintf(why, n, "activation offload: %s has none", fw->label);
        return 1;
    }
    if (l->prescaled_batch && !fw->prescaled) {
        snprintf(why, n, "prescaled batch: an SMP knob %s does not have", fw->label);
        return 1;
    }
    if (l->precision == PLAN_PREC_FP8 && !fw->fp8) {
        snprintf(why, n, "fp8: %s has no FP8 linears", fw->label);
        return 1;
    }
    if (!fw->placement_search && strcmp(l->placement, fw->placement) != 0) {
        snprintf(why, n, "placement %s: %s places ranks in the order %s", l->placement,
                 fw->label, fw->placement);
        return 1;
    }
    unsigned tpo = plan_framework_tp_overlaps(fw);
    if (l->tp > 1 && l->tp_overlap >= 0 && l->tp_overlap < 3 && !((tpo >> l->tp_overlap) & 1)) {
        list_mask(tpo, tp_overlap_name, 3, list, sizeof list);
        snprintf(why, n, "tp overlap %s: %s takes tp overlap %s",
                 tp_overlap_name(l->tp_overlap), fw->label, list);
        return 1;
    }
    /* torchtitan (parallelize_llama.py, 2024): "Async TP requires
     * --training.compile"; it pipelines the sequence-parallel collectives */
    if (fw->async_tp && l->tp > 1 && l->tp_overlap >= 2 && !l->compiled) {
        snprintf(why, n, "tp overlap pipelined (async TP): %s needs torch.compile for it",
                 fw->label);
        return 1;
    }
    if (fw->async_tp && l->tp > 1 && l->tp_overlap >= 2 && !l->sequence_parallel) {
        snprintf(why, n, "tp overlap pipelined (async TP): %s pipelines the sequence-parallel "
                 "collectives", fw->label);
        return 1;
    }
    return 0;
}

/* A framework running the executor's own kernels on a chip whose rates
 * were measured: the efficiencies its fit (if any) leaves are the
 * measurements: the GEMM model's measured ceiling (cuBLASLt, as the
 * executor calls it), the copy's share of HBM (its elementwise kernels
 * stream at the copy's rate: smdplan bench gpu measures their hbm_eff at
 * 1), and its fused attention at a share of 1 of its own kernels' measured
 * rates (else FlashAttention-2's: the executor's sm80 kernels are that
 * algorithm). */
static void use_measured(const plan_fw_eff *fit, plan_cluster *c)
{
    const plan_gpu *g = c->gpu;
    unsigned fitted = fit ? fit->fitted : 0;
    c->exec_kernels = 1;
    if (!(fitted & (1u << PLAN_EFF_GEMM)) && g->gemm_measured && g->gemm_ceiling > 0)
        c->eff.gemm_eff_max = g->gemm_ceiling;
    double copy = plan_gpu_copy_eff(g);
    if (!(fitted & (1u << PLAN_EFF_HBM)) && copy > 0)
        c->eff.hbm_eff = copy;
    double fe = g->exec_attn_fwd_eff > 0 ? g->exec_attn_fwd_eff : g->flash2_fwd_eff;
    double be = g->exec_attn_fwd_eff > 0 ? g->exec_attn_bwd_eff : g->flash2_bwd_eff;
    if (!(fitted & (1u << PLAN_EFF_FLASH)) && fe > 0 && be > 0)
        c->eff.flash_eff = plan__attn_fwd_bwd_eff(fe, be);
}

const plan_fw_eff *plan_cluster_use_framework(const plan_catalog *cat, int i, plan_cluster *c)
{
    const plan_framework *fw = plan_framework_get(i);
    const plan_fw_eff *fit = plan_cluster_use(cat, plan_fw_family_key(fw->family), c);
    c->exec_kernels = 0;
    if (fw->measured_kernels)
        use_measured(fit, c);
    return fit;
}

void plan_framework_apply(const plan_framework *fw, int index, plan_layout *l)
{
    l->framework = index;
    l->attention = fw->attention;
    l->flash_attention = fw->attention != PLAN_ATTN_UNFUSED;
    l->dp_overlap = fw->dp_overlap;
    l->dp_bucket_bytes = fw->dp_bucket_bytes;
    l->tp_overlap = fw->tp_overlap;
    l->pp_overlap = fw->pp_overlap;
    l->fp32_grads = fw->fp32_grads;
    l->launch_blocking = fw->launch_blocking;
    if (!fw->placement_search)
        memcpy(l->placement, fw->placement, 4);
}

int plan_framework_runs_on(const plan_framework *fw, const plan_instance *in)
{
    if (!fw->instance_types[0][0])
        return 1;
    /* by the type's own name only: the names a stack documents are the
     * ones its launchers are given (an alias is the user's shorthand) */
    const char *name = strncasecmp(in->name, "ml.", 3) == 0 ? in->name + 3 : in->name;
    for (int i = 0; i < PLAN_FW_TYPES_MAX && fw->instance_types[i][0]; i++)
        if (strcasecmp(name, fw->instance_types[i]) == 0)
            return 1;
    return 0;
}

const char *plan_framework_instance_list(const plan_framework *fw, char *buf, size_t n)
{
    if (n == 0)
        return buf;
    buf[0] = '\0';
    for (int i = 0; i < PLAN_FW_TYPES_MAX && fw->instance_types[i][0]; i++) {
        size_t u = strlen(buf);
        snprintf(buf + u, n - u, "%s%s%s", i ? ", " : "",
                 fw->family == PLAN_FW_SMP || !strcmp(fw->stack, "smp2") ? "ml." : "",
                 fw->instance_types[i]);
    }
    return buf;
}

/* The schedule's name as the layout's stack says it: SMP v1's "simple" and
 * "interleaved" (its pipeline parameter: smd_model_parallel_general.rst),
 * everyone else's GPipe, 1F1B and interleaved (virtual stages: Megatron-LM's
 * --num-layers-per-virtual-pipeline-stage, Narayanan et al. 2021). */
const char *plan_framework_schedule_name(const plan_layout *l)
{
    int smp = plan_framework_get(l->framework)->family == PLAN_FW_SMP;
    switch (l->schedule) {
    case PLAN_SCHED_SIMPLE: return smp ? "simple" : "gpipe";
    case PLAN_SCHED_INTERLEAVED: return smp ? "interleaved" : "1f1b";
    case PLAN_SCHED_VIRTUAL: return smp ? "virtual" : "interleaved";
    case PLAN_SCHED_ZB_H1: return "zb-h1";
    default: return "?";
    }
}

const char *plan_framework_sched_label(const plan_layout *l, char *buf, size_t n)
{
    if (l->pp == 1)
        snprintf(buf, n, "-"); /* no pipeline, no schedule */
    else if (l->schedule == PLAN_SCHED_VIRTUAL)
        snprintf(buf, n, "%s/%d", plan_framework_schedule_name(l), l->virtual_stages);
    else
        snprintf(buf, n, "%s", plan_framework_schedule_name(l));
    return buf;
}

const char *plan_framework_act_label(const plan_layout *l, char *buf, size_t n)
{
    if (plan_framework_get(l->framework)->active_cap && l->pp > 1)
        snprintf(buf, n, "%d", l->active_microbatches);
    else
        snprintf(buf, n, "-"); /* the stack has no such knob */
    return buf;
}
