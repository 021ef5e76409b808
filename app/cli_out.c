/*
 * cli_out.c: the plan command's output. What the options add to the
 * planner's values (the price list, the error band, --tokens, the simulated
 * steps, a preset's reference, --explain's terms) is handed to reports/
 * (rpt_plan.h: the text) or data/ (data_plan_json.h: --json); the launch of
 * plan #1 for --emit; and the option tables of every command's --help.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "app/cli_int.h"
#include "data/data_band_plan.h"
#include "data/data_plan_json.h"
#include "launch/launch.h"
#include "reports/rpt_plan.h"
#include "sim/sim_plans.h"

void cli_launch_plan_of(const cli_plan_opts *o, const plan_model *m, const plan_cluster *c,
                        const plan_result *r, const sim_top_steps *sim, launch_plan *p,
                        char *basis, size_t n)
{
    *p = (launch_plan){.m = m, .c = c, .r = r, .command_line = o->command_line,
                       .tokens = o->tokens, .catalog_files = o->catalog_files,
                       .ncatalogs = o->ncatalogs, .band_basis = basis};
    p->sim_step_s = sim && sim->n > 0 ? sim->step_s[0] : 0;
    basis[0] = '\0';
    if (r->ntop > 0)
        p->band_pct = data_band_of_plan(c, r->top[0].layout.framework, basis, n);
}

/* --json: the document of the search, o->json_extra's objects last. */
static int print_json(const cli_plan_opts *o, const cli_plan_ctx *x, const plan_result *r,
                      int min_nodes, const sim_top_steps *sim, double band, const char *basis)
{
    data_plan_doc d = {
        .command_line = o->command_line, .m = &x->model, .c = &x->cluster, .r = r,
        .min_nodes = min_nodes, .sim = sim, .objective = o->cfg.objective,
        .batch_source = o->batch_source, .price_list = cli_price_list(), .band_pct = band,
        .band_basis = basis, .train_tokens = o->tokens_given ? o->tokens : 0,
        .extra = o->json_extra,
    };
    cJSON *root = data_json_plan_doc(&d);
    char *s = root ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!s) {
        fprintf(stderr, "smdplan: out of memory writing JSON\n");
        return 1;
    }
    printf("%s\n", s);
    free(s);
    return 0;
}

int cli_plan_show(const cli_plan_opts *o, const cli_plan_ctx *x, const plan_result *r,
                  int min_nodes, const sim_top_steps *sim, const plan_preset_cmp *cmp,
                  const plan_terms *terms)
{
    /* the error band of plan #1's step and what supports it
     * (data/error_bands.json) */
    char basis[400] = "";
    double band = 0;
    if (r->ntop > 0)
        band = data_band_of_plan(&x->cluster, r->top[0].layout.framework, basis, sizeof basis);
    if (o->json)
        return print_json(o, x, r, min_nodes, sim, band, basis);
    rpt_plan_opts ro = {
        .objective = o->cfg.objective, .batch_source = o->batch_source,
        .price_list = cli_price_list(), .band_pct = band, .band_basis = basis,
        .train_tokens = o->tokens_given ? o->tokens : 0, .sim = sim,
    };
    if (r->ntop == 0)
        rpt_plan_infeasible(stdout, &x->model, &x->cluster, r, min_nodes, &ro);
    else if (!o->emit) {
        rpt_plan_result(stdout, &x->model, &x->cluster, r, &ro);
        rpt_plan_preset(stdout, cmp, &r->top[0]);
    }
    if (terms) {
        rpt_plan_terms(stdout, terms);
        rpt_plan_uncertainty(stdout, r->top[0].est.time.step_s, band, basis);
    }
    return 0;
}

void cli_print_opt_table(FILE *f, const cli_opt *t, int n)
{
    for (int i = 0; i < n; i++) {
        const cli_opt *o = &t[i];
        if (!o->name) {
            fprintf(f, "\n%s:\n", o->help);
            continue;
        }
        char lhs[48];
        snprintf(lhs, sizeof lhs, "--%s%s%s", o->name, o->has_arg ? " " : "",
                 o->has_arg ? o->arg : "");
        fprintf(f, "  %-26s %s\n", lhs, o->help);
    }
}
