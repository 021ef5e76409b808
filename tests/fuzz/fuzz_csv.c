/*
 * fuzz_csv.c: libFuzzer target over the CSV reader (data_csv_parse) and the
 * row mapping of `smdplan validate` behind it.
 *
 * Each input is a CSV text (not NUL-terminated: the reader must respect the
 * length). Besides what ASan/UBSan catch, it checks the contract of
 * data_csv.h:
 *   - failure: EPARSE, ENOMEM or ERANGE in both the return and the context,
 *     a non-empty message naming the input, and a zeroed table;
 *   - success: at least one column, every cell a string inside the table's
 *     buffer, row lines increasing, every header name found by
 *     data_csv_col at its own index (names are unique).
 * When the header has the required columns of a runs table, every row is
 * also mapped and predicted with a small built-in catalog, which must give
 * ST_OK and either a comparison with finite numbers or a reason.
 * data_csv_free then releases everything (LeakSanitizer checks).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "data/data_known_models.h"
#include "data/data_csv.h"
#include "planner/plan.h"
#include "planner/plan_validate.h"

#define FUZZ_NAME "fuzz_csv"
#include "fuzz_util.h"

/* At most this many rows are predicted per input, to keep inputs fast. */
#define MAX_ROWS_PREDICTED 8

static plan_gpu gpu = {
    .name = "FUZZ-80GB", .mem_bytes = 80e9, .peak_flops = 300e12, .hbm_bps = 2e12,
    .gemm_eff_max = 0.8, .gemm_dim_half = 96, .misaligned_factor = 0.5, .hbm_eff = 0.8,
    .flash_eff = 0.5, .gemm_align_bytes = 128, .align_partial_factor = 0.75,
};
static plan_curve flat = {.name = "flat", .n = 1, .log2_bytes = {20}, .eff = {1.0}};
static plan_instance inst = {
    .name = "dgx-a100", .gpu = "FUZZ-80GB", .gpus_per_node = 8, .nvlink_bps = 300e9,
    .nvswitch = 1, .intra_busbw_bps = 230e9, .intra_latency_s = 10e-6, .net_bps = 200e9,
    .net_latency_s = 50e-6, .intra_curve = "flat", .net_curve = "flat",
    .net_ring_eff = 0.8, .net_tree_eff = 0.8, .net_latency_nodes = 2,
};
static plan_catalog cat = {.gpus = &gpu, .ngpus = 1, .instances = &inst, .ninstances = 1,
                           .curves = &flat, .ncurves = 1};

static void check_failure(int rc, const st_err *err, const data_csv *csv)
{
    CHECK(rc == ST_EPARSE || rc == ST_ENOMEM || rc == ST_ERANGE);
    fuzz_check_err_msg(rc, err, 0);
    CHECK(strncmp(err->msg, "fuzz.csv", 8) == 0);
    CHECK(csv->buf == NULL && csv->header == NULL && csv->cells == NULL && csv->row_line == NULL);
    CHECK(csv->ncols == 0 && csv->nrows == 0);
}

static void check_success(const data_csv *csv, size_t size)
{
    CHECK(csv->ncols >= 1 && csv->nrows >= 0);
    size_t cells = (size_t)csv->ncols * (size_t)(csv->nrows + 1);
    for (size_t i = 0; i < cells; i++) {
        const char *c = csv->header[i];
        CHECK(c >= csv->buf && c <= csv->buf + size);
        CHECK(strlen(c) <= size);
    }
    for (int i = 0; i < csv->ncols; i++)
        CHECK(data_csv_col(csv, csv->header[i]) == i);
    for (int r = 1; r < csv->nrows; r++)
        CHECK(csv->row_line[r] > csv->row_line[r - 1]);
}

static void predict(const data_csv *csv)
{
    int n = csv->nrows < MAX_ROWS_PREDICTED ? csv->nrows : MAX_ROWS_PREDICTED;
    plan_validate_row *rows = calloc((size_t)csv->nrows + 1, sizeof *rows);
    plan_validate_result *res = calloc((size_t)n + 1, sizeof *res);
    CHECK(rows && res);
    st_err err = {0};
    if (data_csv_validate_rows(csv, "fuzz.csv", rows, &err) == ST_OK) {
        st_err e = {0};
        /* the file as validate reads it: each row, then the recompute
         * a configuration's rows share */
        CHECK(plan_validate_rows(&cat, rows, n, res, &e) == ST_OK);
        for (int i = 0; i < n; i++) {
            if (res[i].compared)
                CHECK(isfinite(res[i].error_pct) && res[i].ref_time_s > 0 &&
                      res[i].pred_time_s > 0);
            else
                CHECK(res[i].reason[0] != '\0');
        }
        plan_validate_summary s;
        plan_validate_summarize(res, n, &s);
        CHECK(s.all.rows == n && s.all.compared <= n);
    } else {
        CHECK(err.code == ST_EPARSE);
    }
    free(res);
    free(rows);
}

static void check_text(char *text, size_t size)
{
    static int linked;
    if (!linked) {
        st_err err = {0};
        CHECK(plan_catalog_link(&cat, &err) == ST_OK);
        CHECK(data_frameworks_load(NULL, &err) == ST_OK && data_families_load(NULL, &err) == ST_OK);
        CHECK(data_known_models_load(&err) == ST_OK);
        linked = 1;
    }
    data_csv csv;
    st_err err = {0};
    int rc = data_csv_parse(text, size, "fuzz.csv", &csv, &err);
    if (rc == ST_OK) {
        check_success(&csv, size);
        predict(&csv);
    } else {
        check_failure(rc, &err, &csv);
    }
    data_csv_free(&csv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_run(data, size, FUZZ_EXACT, check_text);
}
