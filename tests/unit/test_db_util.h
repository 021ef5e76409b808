/*
 * test_db_util.h: what the database tests share: a scratch directory, whole
 * files as bytes (to prove a refused file was not changed), and small
 * records that are cheap to write many times.
 */
#ifndef SMD_TEST_DB_UTIL_H
#define SMD_TEST_DB_UTIL_H

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/db.h"
#include "data/db_int.h"
#include "exec/exec.h"
#include "test_dir.h"
#include "test_util.h"

/* A fresh directory under $TMPDIR (or /tmp); removed by test_dir_remove. */
static inline void tdir_make(char *dir, size_t n)
{
    assert_int_equal(test_dir_make(dir, n, "smd-db-"), 0);
}

/* The first column of the first row of a query on d's own connection. */
static inline int64_t raw_int(db *d, const char *sql)
{
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(d->h, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* The whole file (malloc'd; *len its size); NULL if it cannot be read. */
static inline unsigned char *file_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    *len = 0;
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *b = malloc(cap);
    size_t r;
    while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            unsigned char *bigger = realloc(b, cap *= 2);
            if (!bigger) {
                free(b);
                b = NULL;
            }
            b = bigger;
        }
    }
    fclose(f);
    *len = n;
    return b;
}

static inline void write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* The file at path has exactly the bytes b[0..n). */
static inline void assert_file_is(const char *path, const unsigned char *b, size_t n)
{
    size_t m;
    unsigned char *now = file_bytes(path, &m);
    assert_non_null(now);
    assert_int_equal(m, n);
    assert_memory_equal(now, b, n);
    free(now);
}

/* A small calibration: one fit (GA100's pool) of 13 + i rows from one
 * source, cheap to record many times; rows tell records apart. */
static inline void small_calibration(plan_cal_report *r, int i)
{
    memset(r, 0, sizeof *r);
    r->ngroups = 1;
    plan_cal_group *g = &r->group[0];
    snprintf(g->silicon, sizeof g->silicon, "GA100");
    g->rows = 13 + i;
    g->sources = 1;
    g->asked = PLAN_CAL_ALL;
    g->fitted = 1u << PLAN_EFF_GEMM;
    for (int k = 0; k < PLAN_EFF__COUNT; k++) {
        *plan_eff_ref(&g->before, (plan_eff_param)k) = 0.5 + 0.01 * k;
        *plan_eff_ref(&g->after, (plan_eff_param)k) = 0.5 + 0.01 * k + 1e-3 * i;
    }
    g->std_err[PLAN_EFF_GEMM] = 0.0125;
    g->mean_abs_err_before_pct = 7.25;
    g->mean_abs_err_after_pct = 3.125;
    g->max_abs_err_after_pct = 9.5;
    g->iterations = 17;
    g->converged = 1;
    r->nsources = 1;
    plan_cal_source *s = &r->source[0];
    snprintf(s->source_key, sizeof s->source_key, "source_%d", i % 5);
    snprintf(s->framework, sizeof s->framework, "megatron");
    snprintf(s->silicon, sizeof s->silicon, "GA100");
    s->rows = g->rows;
    s->mean_abs_err_pct = 3.125;
    s->loso_mean_abs_err_pct = NAN;
    r->rows_used = g->rows;
    r->mean_source_err_pct = r->max_source_err_pct = 3.125;
    r->loso_mean_source_err_pct = NAN;
}

/* A calibration as plan_calibrate reports one: the pools of two chips, two
 * framework fits on one of them (the second rejected), four sources (three
 * held out, one not); values that use every bit of a double. */
static inline void sample_calibration(plan_cal_report *r)
{
    static const struct {
        const char *fw, *silicon;
        int rows, sources, converged, rejected;
        unsigned fitted;
    } gs[] = {
        {"", "GA100", 72, 3, 1, 0, (1u << PLAN_EFF_GEMM) | (1u << PLAN_EFF_HBM)},
        {"", "GH100", 16, 1, 0, 0, (1u << PLAN_EFF_GEMM) | (1u << PLAN_EFF_FLASH)},
        {"megatron", "GA100", 18, 2, 1, 0, (1u << PLAN_EFF_GEMM) | (1u << PLAN_EFF_HBM)},
        {"deepspeed", "GA100", 54, 2, 1, 1, 1u << PLAN_EFF_GEMM},
    };
    static const struct {
        const char *key, *fw, *silicon, *basis;
        int rows;
        int held_out;
    } ss[] = {
        {"narayanan2021_t1", "megatron", "GA100", "megatron on GA100 from the other sources", 10, 1},
        {"megatron_readme_2020", "megatron", "GA100", "megatron on GA100 from the other sources", 8, 1},
        {"bloom_tr11_prequel", "deepspeed", "GA100", "GA100 pool (no other deepspeed source)", 54, 1},
        {"dgxc_bench_v24.11.1", "megatron", "GH100", "", 16, 0},
    };
    memset(r, 0, sizeof *r);
    r->ngroups = (int)(sizeof gs / sizeof gs[0]);
    for (int i = 0; i < r->ngroups; i++) {
        plan_cal_group *g = &r->group[i];
        snprintf(g->framework, sizeof g->framework, "%s", gs[i].fw);
        snprintf(g->silicon, sizeof g->silicon, "%s", gs[i].silicon);
        g->rows = gs[i].rows;
        g->sources = gs[i].sources;
        g->asked = PLAN_CAL_ALL;
        g->fitted = gs[i].fitted;
        for (int k = 0; k < PLAN_EFF__COUNT; k++) {
            double b = 0.55 + 0.1 * k + 1.0 / (7 + i);
            *plan_eff_ref(&g->before, (plan_eff_param)k) = b;
            *plan_eff_ref(&g->after, (plan_eff_param)k) =
                g->fitted & (1u << k) ? b * (1 + exp(-3.0 - i - k) / 3) : b;
            g->std_err[k] = g->fitted & (1u << k) ? 0.01 / (3 + i + k) : 0;
        }
        g->mean_abs_err_before_pct = 9.0 + sqrt(2.0 + i);
        g->mean_abs_err_after_pct = 3.0 + sqrt(3.0 + i) / 7;
        g->max_abs_err_after_pct = 17.0 + log(5.0 + i);
        g->iterations = 11 + 13 * i;
        g->converged = gs[i].converged;
        g->rejected = gs[i].rejected;
        if (g->rejected)
            snprintf(g->why, sizeof g->why, "held out, bloom_tr11_prequel is predicted 13.2%% off "
                     "by this fit, 9.1%% by the GA100 pool");
    }
    r->nsources = (int)(sizeof ss / sizeof ss[0]);
    double sum = 0, lsum = 0;
    int nl = 0;
    for (int i = 0; i < r->nsources; i++) {
        plan_cal_source *s = &r->source[i];
        snprintf(s->source_key, sizeof s->source_key, "%s", ss[i].key);
        snprintf(s->framework, sizeof s->framework, "%s", ss[i].fw);
        snprintf(s->silicon, sizeof s->silicon, "%s", ss[i].silicon);
        snprintf(s->loso_basis, sizeof s->loso_basis, "%s", ss[i].basis);
        s->rows = ss[i].rows;
        s->mean_abs_err_pct = 2.0 + exp(0.3 * i) / 3;
        s->loso_mean_abs_err_pct = ss[i].held_out ? 7.0 + sqrt(11.0 * i + 1) : NAN;
        r->rows_used += s->rows;
        sum += s->mean_abs_err_pct;
        if (s->mean_abs_err_pct > r->max_source_err_pct)
            r->max_source_err_pct = s->mean_abs_err_pct;
        if (ss[i].held_out) {
            lsum += s->loso_mean_abs_err_pct;
            nl++;
            if (s->loso_mean_abs_err_pct > r->loso_max_source_err_pct)
                r->loso_max_source_err_pct = s->loso_mean_abs_err_pct;
        }
    }
    r->mean_source_err_pct = sum / r->nsources;
    r->loso_mean_source_err_pct = lsum / nl;
}

static inline db_provenance test_provenance(void)
{
    char *argv[] = {(char *)"smdplan", (char *)"calibrate", (char *)"runs file.csv"};
    db_provenance p;
    db_provenance_fill(&p, 3, argv, exec_features_str());
    return p;
}

/* A scratch directory and a database path in it, for tests whose fixture
 * needs nothing else. */
typedef struct tdb_fixture {
    char dir[512];
    char path[600];
} tdb_fixture;

static inline int tdb_setup(void **state)
{
    tdb_fixture *f = calloc(1, sizeof *f);
    tdir_make(f->dir, sizeof f->dir);
    snprintf(f->path, sizeof f->path, "%s/records.db", f->dir);
    *state = f;
    return 0;
}

static inline int tdb_teardown(void **state)
{
    tdb_fixture *f = *state;
    test_dir_remove(f->dir);
    free(f);
    return 0;
}

#endif
