/*
 * cli_calibrate.c: `smdplan calibrate FILE.csv`: fit each GPU type's
 * efficiency parameters to the measured runs of a calibration CSV (the
 * format of data/reference/calibration_runs.csv) and print them with the
 * error before and after; --write FILE saves them as a catalog override that
 * --catalog FILE (or an edit of data/catalog.json) applies.
 */
#include "app/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "app/cli_int.h"
#include "data/data.h"
#include "data/data_csv.h"
#include "planner/plan_calibrate.h"

enum { O_HELP = 'h', O_CATALOG = 256, O_GPU, O_FIT, O_WRITE, O_NO_RECORD, O_DB };

static const struct option long_opts[] = {
    {"catalog", 1, NULL, O_CATALOG}, {"gpu", 1, NULL, O_GPU},     {"fit", 1, NULL, O_FIT},
    {"write", 1, NULL, O_WRITE},     {"no-record", 0, NULL, O_NO_RECORD},
    {"db", 1, NULL, O_DB},           {"help", 0, NULL, O_HELP},
    {NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: smdplan calibrate FILE.csv [--gpu NAME] [--fit P1,P2] [--write OUT.json]\n\n"
            "Fits the planner's efficiency parameters of each GPU type to the measured runs in\n"
            "FILE.csv (nonlinear least squares on log(predicted/measured) step time) and prints\n"
            "them with the mean error before and after.\n\n"
            "  --gpu NAME        fit only this catalog GPU (default: every GPU with rows)\n"
            "  --fit LIST        parameters to fit: gemm_eff_max, gemm_dim_half, misaligned_factor,\n"
            "                    hbm_eff, flash_eff, align_partial_factor (default all but\n"
            "                    gemm_dim_half); GPUs of one chip (catalog 'silicon') are fitted\n"
            "                    together and share the values\n"
            "  --catalog FILE    start from a catalog with these overrides\n"
            "  --write OUT.json  save the fitted values as a catalog override file\n"
            "  --no-record       do not record this run\n"
            "  --db FILE         record into this database (default $SMDPLAN_DB, else smdplan.db)\n\n"
            "Example:\n  smdplan calibrate data/reference/calibration_runs.csv --write fitted.json\n"
            "  smdplan validate data/reference/calibration_runs.csv --catalog fitted.json\n");
}

static int write_override(const char *path, const plan_catalog *cat, const plan_calibration *cal,
                          int ncal, const char *csv_path, st_err *err)
{
    cJSON *root = cJSON_CreateObject(), *gpus = cJSON_CreateArray();
    cJSON_AddItemToObject(root, "gpus", gpus);
    for (int i = 0; i < ncal; i++) {
        if (!cal[i].fitted)
            continue;
        /* one entry per GPU of the fitted chip: they share the values */
        for (int j = 0; j < cat->ngpus; j++) {
            if (strcmp(cat->gpus[j].silicon, cal[i].silicon) != 0 &&
                strcmp(cat->gpus[j].name, cal[i].gpu) != 0)
                continue;
            cJSON *g = cJSON_CreateObject();
            cJSON_AddStringToObject(g, "name", cat->gpus[j].name);
            for (int p = 0; p < PLAN_CAL__COUNT; p++)
                cJSON_AddNumberToObject(g, plan_cal_param_name((plan_cal_param)p), cal[i].after[p]);
            char src[PLAN_SOURCE_MAX];
            snprintf(src, sizeof src,
                     "fitted by smdplan calibrate to %d runs of %s on %s GPUs: mean |error| %.1f%%",
                     cal[i].rows, csv_path, cal[i].silicon, cal[i].mean_abs_err_after_pct);
            cJSON_AddStringToObject(g, "source", src);
            cJSON_AddItemToArray(gpus, g);
        }
    }
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (!s)
        return ST_RAISE(err, ST_ENOMEM, "out of memory writing %s", path);
    FILE *f = fopen(path, "w");
    int rc = ST_OK;
    if (!f || fprintf(f, "%s\n", s) < 0 || fclose(f) != 0)
        rc = ST_RAISE(err, ST_EIO, "%s: cannot write", path);
    free(s);
    return rc;
}

typedef struct calibrate_record {
    const char *file;
    const plan_calibration *cal;
    int n;
} calibrate_record;

static int record_calibration(db *d, const db_provenance *p, void *ctx, st_err *err)
{
    const calibrate_record *c = ctx;
    return db_record_calibration(d, p, c->file, c->cal, c->n, NULL, err);
}

int cli_calibrate_cmd(int argc, char **argv)
{
    const char *catalog = NULL, *gpu = NULL, *write = NULL, *db_path = NULL;
    int no_record = 0;
    unsigned mask = PLAN_CAL_DEFAULT;
    st_err err = {0};
    optind = 1;
    opterr = 0;
    int id;
    while ((id = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
        switch (id) {
        case O_HELP: usage(stdout); return 0;
        case O_CATALOG: catalog = optarg; break;
        case O_GPU: gpu = optarg; break;
        case O_WRITE: write = optarg; break;
        case O_NO_RECORD: no_record = 1; break;
        case O_DB: db_path = optarg; break;
        case O_FIT:
            if (plan_cal_params_parse(optarg, &mask, &err))
                return cli_fail(&err);
            break;
        default:
            fprintf(stderr, "smdplan: calibrate: unknown option or missing value: '%s' (see smdplan "
                            "calibrate --help)\n", argv[optind - 1]);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "smdplan: calibrate: give exactly one FILE.csv (see smdplan calibrate --help)\n");
        return 2;
    }
    const char *path = argv[optind];

    plan_catalog cat = {0};
    data_csv csv = {0};
    plan_validate_row *rows = NULL;
    plan_calibration *cal = NULL;
    int ex = 0, ncal = 0;
    int rc = data_catalog_load(NULL, &cat, &err);
    if (rc == ST_OK && catalog)
        rc = data_catalog_merge(&cat, catalog, &err);
    if (rc == ST_OK)
        rc = data_csv_load(path, &csv, &err);
    if (rc == ST_OK) {
        rows = calloc(csv.nrows ? (size_t)csv.nrows : 1, sizeof *rows);
        cal = calloc((size_t)cat.ngpus, sizeof *cal);
        if (!rows || !cal)
            rc = ST_RAISE(&err, ST_ENOMEM, "out of memory");
    }
    if (rc == ST_OK)
        rc = data_csv_validate_rows(&csv, path, rows, &err);
    int gi = -1;
    if (rc == ST_OK && gpu) {
        for (int i = 0; i < cat.ngpus; i++)
            if (!strcasecmp(cat.gpus[i].name, gpu))
                gi = i;
        if (gi < 0)
            rc = ST_RAISE(&err, ST_ENOENT, "--gpu '%s': not a GPU of the catalog (see smdplan catalog)", gpu);
    }
    for (int i = 0; rc == ST_OK && i < cat.ngpus; i++) {
        if (gi >= 0 && i != gi)
            continue;
        int done_chip = 0; /* an earlier GPU of the same chip was fitted */
        for (int j = 0; j < i && gi < 0; j++)
            done_chip |= strcmp(cat.gpus[j].silicon, cat.gpus[i].silicon) == 0;
        if (done_chip)
            continue;
        rc = plan_calibrate_gpu(&cat, i, rows, csv.nrows, mask, &cal[ncal], &err);
        if (rc == ST_OK && cal[ncal].rows > 0)
            ncal++;
    }
    if (rc == ST_OK && write)
        rc = write_override(write, &cat, cal, ncal, path, &err);
    if (rc != ST_OK) {
        ex = cli_fail(&err);
        goto done;
    }
    printf("calibrate: %s, %d rows\n\n", path, csv.nrows);
    printf("%-12s %5s  %-20s %10s %10s   %s\n", "GPU (chip)", "rows", "parameter", "before",
           "after", "");
    for (int i = 0; i < ncal; i++) {
        for (int p = 0; p < PLAN_CAL__COUNT; p++) {
            const char *state = (cal[i].fitted & (1u << p)) ? "fitted"
                                : (cal[i].asked & (1u << p)) ? "kept: the rows do not constrain it"
                                                             : "kept";
            char who[48] = "";
            if (p == 0)
                snprintf(who, sizeof who, "%s", cal[i].gpu);
            else if (p == 1)
                snprintf(who, sizeof who, "(%s)", cal[i].silicon);
            char nrows[16] = "";
            if (p == 0)
                snprintf(nrows, sizeof nrows, "%d", cal[i].rows);
            printf("%-12s %5s  %-20s %10.4g %10.4g   %s\n", who, nrows,
                   plan_cal_param_name((plan_cal_param)p), cal[i].before[p], cal[i].after[p], state);
        }
        printf("%-12s        mean |error| %.1f%% -> %.1f%% (max %.1f%%), %d iterations%s\n\n", "",
               cal[i].mean_abs_err_before_pct, cal[i].mean_abs_err_after_pct,
               cal[i].max_abs_err_after_pct, cal[i].iterations,
               cal[i].converged ? "" : " (stopped before the tolerance)");
    }
    if (write)
        printf("wrote %s (apply with --catalog %s)\n", write, write);
    calibrate_record rec = {path, cal, ncal};
    cli_record(db_path, no_record, record_calibration, &rec);
done:
    free(cal);
    free(rows);
    data_csv_free(&csv);
    plan_catalog_free(&cat);
    return ex;
}
