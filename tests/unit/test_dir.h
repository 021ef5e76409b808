/*
 * test_dir.h: scratch directories for the tests that write files: a fresh
 * one under $TMPDIR (or /tmp), and its removal with everything below it.
 */
#ifndef SMD_TEST_DIR_H
#define SMD_TEST_DIR_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A fresh directory $TMPDIR/<prefix>XXXXXX (/tmp when TMPDIR is unset or
 * empty) into out; returns 0, or -1 with out empty when it cannot be made. */
static inline int test_dir_make(char *out, size_t n, const char *prefix)
{
    const char *t = getenv("TMPDIR");
    snprintf(out, n, "%s/%sXXXXXX", t && *t ? t : "/tmp", prefix);
    if (mkdtemp(out))
        return 0;
    out[0] = '\0';
    return -1;
}

/* dir and everything below it removed (subdirectories made writable and
 * emptied first); what cannot be removed is left. */
static inline void test_dir_remove(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[4096];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p)
            continue;
        struct stat sb;
        if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            chmod(p, 0700);
            test_dir_remove(p);
        } else {
            unlink(p);
        }
    }
    closedir(d);
    rmdir(dir);
}

/* A cmocka setup and teardown for a test that writes files: *state is a
 * test_scratch, a fresh directory of the test's own, removed with all in
 * it after the test. */
typedef struct test_scratch {
    char dir[512];
} test_scratch;

static inline int test_scratch_setup(void **state)
{
    test_scratch *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    *state = s;
    return test_dir_make(s->dir, sizeof s->dir, "smd-test-");
}

static inline int test_scratch_teardown(void **state)
{
    test_scratch *s = *state;
    if (s->dir[0])
        test_dir_remove(s->dir);
    free(s);
    return 0;
}

#endif
