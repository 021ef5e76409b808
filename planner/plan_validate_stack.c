/*
 * plan_validate_stack.c: the stack a published run ran, at a release
 * (plan__row_framework): by the name its framework column gives at the
 * row's date, else by its source's title, else by what the row does; then
 * the release its degrees need (a stack built on the named one that runs
 * them, the first release with context parallelism or DeepSpeed-Ulysses).
 */
#include "planner/plan_validate_int.h"

#include <string.h>

#define contains plan__contains
#define nz plan__nz
#define parse_num plan__parse_num
#define note plan__note
#define blank plan__blank

/* DeepSpeed-Ulysses where a column of the row names it: its degree, 0
 * without one, -1 not named. */
int plan__ulysses_named(const plan_validate_row *r)
{
    const char *const cols[] = {r->sequence_parallel, r->cp, r->framework, r->other_metrics,
                                r->notes};
    int best = -1;
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        int v = plan__ulysses_degree(cols[i]);
        if (v > best)
            best = v;
    }
    return best;
}

/* Does a stack's text name a model-parallel scheme by Megatron-LM's names
 * for it: tensor (or intra-layer "model") parallelism (Shoeybi et al.
 * 2019), pipeline parallelism (Narayanan et al. 2021), sequence
 * parallelism (Korthikanti et al. 2022)? */
static int names_model_parallel(const char *s)
{
    static const char *const names[] = {"tensor parallel", "tensor-parallel", "model parallel",
                                        "model-parallel", "sequence parallel",
                                        "sequence-parallel", "pipeline parallel",
                                        "pipeline-parallel", "3D parallel", "4D parallel"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (contains(s, names[i]))
            return 1;
    return 0;
}

static int has_cp(const plan_framework *f)
{
    return f->context_parallel;
}

static int has_ulysses(const plan_framework *f)
{
    return f->cp_all_to_all;
}

/* The first release of release fwi's stack, from fwi's on, that has what
 * has() asks; -1 if none (or fwi < 0). */
static int first_release_with(int fwi, int (*has)(const plan_framework *))
{
    if (fwi < 0)
        return -1;
    const plan_framework *f0 = plan_framework_get(fwi);
    int k = -1;
    for (int i = 0; i < plan_nframeworks; i++) {
        const plan_framework *f = plan_framework_get(i);
        if (strcmp(f->stack, f0->stack) != 0 || !has(f) || f->released_ym < f0->released_ym)
            continue;
        if (k < 0 || f->released_ym < plan_framework_get(k)->released_ym)
            k = i;
    }
    return k;
}

/* The degrees a row states that release f cannot run: tensor, pipeline or
 * context parallelism above 1 on a stack without it; 0 when none. */
static int lacks_degrees(const plan_validate_row *row, const plan_framework *f)
{
    double v;
    return (parse_num(row->tp, &v) == 1 && v > 1 && !f->shardings_with_tp) ||
           (parse_num(row->pp, &v) == 1 && v > 1 && !f->shardings_with_pp) ||
           (parse_num(row->cp, &v) == 1 && v > 1 && !f->context_parallel);
}

/* A run whose named stack cannot run the degrees it states ran a stack
 * built on that one that can (PyTorch FSDP with a pipeline and context
 * parallelism is torchtitan's composition of them; FSDP with Megatron
 * tensor parallelism metaseq's): the release of such a stack in force at
 * ym, else its first with them; -1 when none can. */
static int builder_with_degrees(const plan_validate_row *row, int fwi, int ym)
{
    const char *st = plan_framework_get(fwi)->stack;
    int best = -1;
    for (int i = 0; i < plan_nframeworks; i++) {
        const plan_framework *f = plan_framework_get(i);
        if (!plan_framework_builds_on(i, st) || lacks_degrees(row, f))
            continue;
        int at = plan_framework_release_at(f->stack, ym);
        int k = at >= 0 && !lacks_degrees(row, plan_framework_get(at)) ? at : i;
        if (best < 0 || plan_framework_get(k)->released_ym < plan_framework_get(best)->released_ym)
            best = k;
    }
    return best;
}

/* The stack a row ran, at a release: by its name at the row's date, else
 * the one its source's title names, else read from what the row does (its
 * degrees, its sharding's or Ulysses' names); said in the notes. */
int plan__row_framework(const plan_validate_row *row, plan_validate_result *out)
{
    int ym = plan__source_ym(row);
    int fwi = plan_framework_match(row->framework, ym);
    int named = fwi >= 0;
    if (fwi < 0 && blank(row->framework)) {
        /* no framework column: a stack its source's title names by a
         * documented name ("NVIDIA NeMo performance summary", "MosaicML
         * llm-foundry benchmarks") */
        fwi = plan_framework_match(row->source_title, ym);
        if (fwi >= 0)
            note(out, "framework not stated: %s, which the source's title names",
                 plan_framework_get(fwi)->label);
        named = fwi >= 0;
    }
    if (fwi < 0) {
        /* A stack not known by name: one that publishes tensor, pipeline
         * or context parallelism runs the Megatron-LM scheme its degrees
         * name (Shoeybi et al. 2019, Narayanan et al. 2021, Korthikanti et
         * al. 2022), so it reads as Megatron-Core; a data-parallel one as
         * PyTorch's own. */
        double v;
        int mp = (parse_num(row->tp, &v) == 1 && v > 1) || (parse_num(row->pp, &v) == 1 && v > 1) ||
                 (parse_num(row->cp, &v) == 1 && v > 1) ||
                 (parse_num(row->model_parallel_size, &v) == 1 && v > 1) ||
                 names_model_parallel(row->framework) ||
                 plan__parse_flag(row->sequence_parallel) == 1;
        /* a data-parallel one whose sharding is named by a sharding
         * stack's own names runs that stack: ZeRO's stages are DeepSpeed's
         * (Rajbhandari et al. 2020; its zero_optimization config), FSDP's
         * strategies PyTorch FSDP's (FULL_SHARD, SHARD_GRAD_OP: its
         * ShardingStrategy); PyTorch's DDP shards nothing */
        const char *sharder = NULL;
        int shf = -1;
        if (!mp) {
            if (plan__names_zero(row->optimizer_sharding) || plan__names_zero(row->framework))
                shf = plan_framework_release_at(sharder = "deepspeed", ym);
            else if ((shf = plan_framework_match(row->optimizer_sharding, ym)) >= 0 ||
                     plan__names_fsdp_strategy(row->optimizer_sharding) ||
                     plan__names_fsdp_strategy(row->framework))
                sharder = "fsdp";
            if (sharder && shf < 0)
                shf = plan_framework_release_at(sharder, ym);
        }
        fwi = shf >= 0 ? shf : plan_framework_release_at(mp ? "megatron" : "pytorch", ym);
        if (fwi < 0)
            fwi = PLAN_FW_DEFAULT;
        note(out, "framework '%s' not known: read as %s%s", nz(row->framework),
             plan_framework_get(fwi)->label,
             mp ? ", whose model-parallel scheme the row names"
                : shf >= 0 ? ", whose sharding the row names by that stack's names" : "");
    }
    if (named && lacks_degrees(row, plan_framework_get(fwi))) {
        int k = builder_with_degrees(row, fwi, ym);
        if (k >= 0) {
            note(out, "%s runs no parallelism of the degrees the row gives: read as %s, a stack "
                      "built on it that does",
                 plan_framework_get(fwi)->label, plan_framework_get(k)->label);
            fwi = k;
        }
    }
    /* a run that publishes context parallelism ran a release with it,
     * whatever its date says: its stack's first release that has it (NeMo's
     * came with Megatron-Core 0.4, DeepSpeed's with Ulysses); one that names
     * DeepSpeed-Ulysses, the first with Ulysses: its stack's, or, not known
     * by name, DeepSpeed's (Megatron-DeepSpeed's with tensor or pipeline
     * parallelism) */
    int uly = plan__ulysses_named(row);
    double v;
    int cp_said = parse_num(row->cp, &v) == 1 && v > 1;
    if (uly < 0 && cp_said && !plan_framework_get(fwi)->context_parallel) {
        int k = first_release_with(fwi, has_cp);
        if (k >= 0) {
            fwi = k;
            note(out, "context parallel %.0f: read as %s, the first release of its stack with it",
                 v, plan_framework_get(k)->label);
        }
    }
    if ((uly > 1 || (uly == 0 && cp_said)) && !plan_framework_get(fwi)->cp_all_to_all) {
        int k = first_release_with(fwi, has_ulysses);
        if (k < 0 && !named) {
            int mp = (parse_num(row->tp, &v) == 1 && v > 1) || (parse_num(row->pp, &v) == 1 && v > 1);
            k = first_release_with(
                plan_framework_release_at(mp ? "megatron-deepspeed" : "deepspeed", ym), has_ulysses);
        }
        if (k >= 0) {
            fwi = k;
            note(out, "DeepSpeed-Ulysses named: read as %s", plan_framework_get(k)->label);
        }
    }
    return fwi;
}
