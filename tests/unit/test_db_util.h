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
#include "test_util.h"

/* A fresh directory under $TMPDIR (or /tmp); removed by tdir_remove. */
static inline void tdir_make(char *dir, size_t n)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, n, "%s/smd-db-XXXXXX", t && *t ? t : "/tmp");
    assert_non_null(mkdtemp(dir));
}

static inline void tdir_remove(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[1200];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p)
            continue;
        struct stat sb;
        if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            chmod(p, 0700);
            tdir_remove(p);
        } else {
            unlink(p);
        }
    }
    closedir(d);
    rmdir(dir);
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

/* A small calibration of one GPU: a record of three short rows. */
static inline void small_calibration(plan_calibration *c, int i)
{
    memset(c, 0, sizeof *c);
    snprintf(c->gpu, sizeof c->gpu, "GPU-%d", i % 7);
    c->rows = 13 + i;
    c->asked = PLAN_CAL_DEFAULT;
    c->fitted = 1u << PLAN_CAL_GEMM_EFF_MAX;
    for (int k = 0; k < PLAN_CAL__COUNT; k++) {
        c->before[k] = 0.5 + 0.01 * k;
        c->after[k] = 0.5 + 0.01 * k + 1e-3 * i;
    }
    c->mean_abs_err_before_pct = 7.25;
    c->mean_abs_err_after_pct = 3.125;
    c->max_abs_err_after_pct = 9.5;
    c->iterations = 17;
    c->converged = 1;
}

static inline db_provenance test_provenance(void)
{
    char *argv[] = {(char *)"smdplan", (char *)"calibrate", (char *)"runs file.csv"};
    db_provenance p;
    db_provenance_fill(&p, 3, argv);
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
    tdir_remove(f->dir);
    free(f);
    return 0;
}

#endif
