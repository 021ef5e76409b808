/*
 * data_calibration.c: smdplan calibrate's fit written as data files: the
 * catalog override (data/calibration.json's format: "gpus" with a fitted
 * chip pool's values on each GPU of the chip, "efficiencies" with each
 * fitted (framework, chip)), and the error bands of predicted steps
 * (data/error_bands.json's format, data_bands.c reads it). Each is written
 * to a temporary beside its path and renamed over it (common/outfile.h):
 * whole or not at all, an existing file only with force.
 */
#include "data/data_calibration.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/outfile.h"
#include "planner/plan_framework.h"

/* root (taken, freed; NULL: out of memory) printed into path, whole or not
 * at all: a temporary beside path renamed over it, a file already there
 * replaced only with force (common/outfile.h). */
static int write_json(const char *path, const char *what, int force, cJSON *root, st_err *err)
{
    char *s = root ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!s)
        return ST_RAISE(err, ST_ENOMEM, "out of memory writing %s", path);
    outfile out;
    int rc = outfile_open(&out, path, what, force, err);
    if (rc == ST_OK) {
        fprintf(out.f, "%s\n", s);
        rc = outfile_commit(&out, err);
    }
    free(s);
    return rc;
}

static void add_eff_values(cJSON *o, const plan_eff *e, unsigned fitted, const double *se)
{
    for (int p = 0; p < PLAN_EFF__COUNT; p++) {
        if (!(fitted & (1u << p)))
            continue;
        const char *name = plan_eff_param_name((plan_eff_param)p);
        cJSON_AddNumberToObject(o, name, *plan_eff_ref((plan_eff *)e, (plan_eff_param)p));
        if (se) {
            char key[48];
            snprintf(key, sizeof key, "%s_stderr", name);
            cJSON_AddNumberToObject(o, key, se[p]);
        }
    }
}

int data_calibration_write(const char *path, const char *what, int force,
                           const plan_catalog *cat, const plan_cal_report *rep,
                           const char *source, st_err *err)
{
    cJSON *root = cJSON_CreateObject(), *gpus = cJSON_CreateArray(), *effs = cJSON_CreateArray();
    cJSON_AddItemToObject(root, "gpus", gpus);
    cJSON_AddItemToObject(root, "efficiencies", effs);
    for (int i = 0; i < rep->ngroups; i++) {
        const plan_cal_group *g = &rep->group[i];
        if (!g->fitted)
            continue;
        if (g->framework[0]) {
            const plan_fw_eff *e = plan_catalog_eff(cat, g->framework, g->silicon);
            if (!e)
                continue; /* rejected */
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", e->name);
            cJSON_AddStringToObject(o, "framework", e->framework);
            cJSON_AddStringToObject(o, "silicon", e->silicon);
            add_eff_values(o, &e->eff, e->fitted, e->std_err);
            cJSON_AddNumberToObject(o, "rows", e->rows);
            cJSON_AddNumberToObject(o, "sources", e->sources);
            cJSON_AddNumberToObject(o, "mean_abs_err_pct", e->mean_abs_err_pct);
            cJSON_AddStringToObject(o, "source", e->source);
            cJSON_AddItemToArray(effs, o);
            continue;
        }
        /* a chip's pool: every GPU of the chip takes the values */
        for (int j = 0; j < cat->ngpus; j++) {
            if (strcmp(cat->gpus[j].silicon, g->silicon) != 0)
                continue;
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", cat->gpus[j].name);
            add_eff_values(o, &g->after, g->fitted, NULL);
            /* what the memory model misses on the chip's published memory
             * figures once the reserve is fitted to them: validate's band
             * for reading a run's unstated recompute */
            if ((g->fitted & PLAN_EFF_MEMORY_MASK) && g->mem_rows > 0 &&
                isfinite(g->mem_mean_abs_err_after_pct))
                cJSON_AddNumberToObject(o, "mem_err_pct",
                                        round(g->mem_mean_abs_err_after_pct * 100) / 100);
            char src[PLAN_SOURCE_MAX];
            snprintf(src, sizeof src,
                     "fitted by smdplan calibrate to %d runs (%d sources) of %s on %s GPUs: "
                     "mean |error| %.1f%%",
                     g->rows, g->sources, source, g->silicon, g->mean_abs_err_after_pct);
            cJSON_AddStringToObject(o, "source", src);
            cJSON_AddItemToArray(gpus, o);
        }
    }
    return write_json(path, what, force, root, err);
}

/* The error bands every predicted step carries (data/error_bands.json,
 * read by data_bands_load): for each (stack release, chip) the mean over
 * its published sources of their runs' mean |error| there, each source
 * predicted without it (leave-one-source-out; plan_cal_piece: a source's
 * runs by release and chip); for each chip the same over every stack's
 * sources on it (what a release without runs of its own there gets), each
 * source's runs on the chip together; and the worst source held out, for a
 * chip no run was fitted on. */
cJSON *data_bands_json(const plan_cal_report *rep, const char *source)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    char doc[700];
    snprintf(doc, sizeof doc,
             "Error bands of predicted step times, written by smdplan calibrate %s --write-bands: "
             "heldout_mean_abs_err_pct is, over the published sources with runs of a (stack "
             "release, chip) (bands; stack is the release, framework its family) or of a chip "
             "(pools, every stack's), the mean of each source's mean |time error| on those runs "
             "when that source was left out of the fit (leave-one-source-out); "
             "worst_heldout_source_pct is the worst such source, the band of a chip no run was "
             "fitted on.", source);
    cJSON_AddStringToObject(root, "_doc", doc);
    cJSON *bands = cJSON_AddArrayToObject(root, "bands");
    cJSON *pools = cJSON_AddArrayToObject(root, "pools");
    /* pass 0 a band per (release, chip), pass 1 a pool per chip; each
     * made at the first piece that names it, in the order of the sources */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < rep->nsources; i++)
            for (int p = 0; p < rep->source[i].npieces; p++) {
                const plan_cal_piece *x = &rep->source[i].piece[p];
                int first = !isnan(x->loso_mean_abs_err_pct);
                for (int k = 0; k <= i && first; k++)
                    for (int q = 0; q < (k < i ? rep->source[k].npieces : p) && first; q++) {
                        const plan_cal_piece *y = &rep->source[k].piece[q];
                        first = isnan(y->loso_mean_abs_err_pct) ||
                                strcmp(y->silicon, x->silicon) != 0 ||
                                (pass == 0 && strcmp(y->release, x->release) != 0);
                    }
                if (!first)
                    continue;
                double sum = 0;
                int n = 0, rows = 0;
                for (int k = i; k < rep->nsources; k++) {
                    double esum = 0;
                    int erows = 0;
                    for (int q = 0; q < rep->source[k].npieces; q++) {
                        const plan_cal_piece *y = &rep->source[k].piece[q];
                        if (isnan(y->loso_mean_abs_err_pct) || strcmp(y->silicon, x->silicon) ||
                            (pass == 0 && strcmp(y->release, x->release)))
                            continue;
                        esum += y->loso_mean_abs_err_pct * y->rows;
                        erows += y->rows;
                    }
                    if (erows == 0)
                        continue;
                    sum += esum / erows; /* the source's runs there, together */
                    rows += erows;
                    n++;
                }
                cJSON *o = cJSON_CreateObject();
                if (pass == 0) {
                    cJSON_AddStringToObject(o, "stack", x->release);
                    cJSON_AddStringToObject(o, "framework", x->framework);
                }
                cJSON_AddStringToObject(o, "silicon", x->silicon);
                cJSON_AddNumberToObject(o, "heldout_mean_abs_err_pct",
                                        round(sum / n * 100) / 100);
                cJSON_AddNumberToObject(o, "sources", n);
                cJSON_AddNumberToObject(o, "rows", rows);
                cJSON_AddItemToArray(pass == 0 ? bands : pools, o);
            }
    if (!isnan(rep->loso_max_source_err_pct))
        cJSON_AddNumberToObject(root, "worst_heldout_source_pct",
                                round(rep->loso_max_source_err_pct * 100) / 100);
    return root;
}

int data_bands_write(const char *path, const char *what, int force, const plan_cal_report *rep,
                     const char *source, st_err *err)
{
    return write_json(path, what, force, data_bands_json(rep, source), err);
}
