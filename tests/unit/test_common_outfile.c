/*
 * test_common_outfile.c: output files written whole or not at all
 * (common/outfile.h).
 *
 * A commit replaces the destination with the complete text and keeps its
 * permissions; an abort, or a failure, leaves the destination byte for byte
 * and no temporary behind; a symbolic link keeps pointing where it did; a
 * directory is refused as bad input; long paths keep the system's reason.
 */
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/outfile.h"

static void scratch(char *dir, size_t n)
{
    snprintf(dir, n, "/tmp/smd_outfile_XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static char *slurp(const char *path)
{
    static char buf[4096];
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Files in dir besides the given names (temporaries left behind). */
static int others(const char *dir, const char *a, const char *b)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && (!a || strcmp(e->d_name, a)) &&
            (!b || strcmp(e->d_name, b)))
            n++;
    closedir(d);
    return n;
}

static void clean(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void commit_replaces_abort_keeps(void **state)
{
    char dir[64], path[128];
    scratch(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/out.txt", dir);
    put(path, "old text");
    assert_int_equal(chmod(path, 0640), 0);
    st_err err = {0};

    outfile o;
    assert_int_equal(outfile_open(&o, path, "test", &err), ST_OK);
    fputs("half of the new", o.f);
    assert_string_equal(slurp(path), "old text"); /* not before the commit */
    outfile_abort(&o);
    assert_string_equal(slurp(path), "old text");
    assert_int_equal(others(dir, "out.txt", NULL), 0);

    assert_int_equal(outfile_write(path, "test", "new text", 8, &err), ST_OK);
    assert_string_equal(slurp(path), "new text");
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_int_equal(others(dir, "out.txt", NULL), 0);

    /* a link: its target is replaced, the link stays a link */
    char link[128];
    snprintf(link, sizeof link, "%s/link.txt", dir);
    assert_int_equal(symlink("out.txt", link), 0);
    assert_int_equal(outfile_write(link, "test", "via link", 8, &err), ST_OK);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_string_equal(slurp(path), "via link");
    assert_true(outfile_same_file(link, path));
    assert_false(outfile_same_file(link, dir));
    assert_int_equal(others(dir, "out.txt", "link.txt"), 0);
    clean(dir);
}

static void bad_paths_are_bad_input(void **state)
{
    char dir[64], path[128];
    scratch(dir, sizeof dir);
    st_err err = {0};
    outfile o;
    assert_int_equal(outfile_open(&o, dir, "--out", &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "Is a directory"));
    assert_null(o.f);
    st_err_clear(&err);
    snprintf(path, sizeof path, "%s/no/such/file", dir);
    assert_int_equal(outfile_open(&o, path, "--out", &err), ST_ENOENT);
    assert_non_null(strstr(err.msg, "No such file or directory"));
    st_err_clear(&err);
    assert_int_equal(outfile_open(&o, "", "--out", &err), ST_EINVAL);

    /* a path longer than a message: the reason is still there, the path
     * is shown by its head and tail */
    char longp[3000];
    int n = snprintf(longp, sizeof longp, "%s/", dir);
    while (n < 2900)
        n += snprintf(longp + n, sizeof longp - (size_t)n, "abcdefghij/");
    snprintf(longp + n, sizeof longp - (size_t)n, "end.json");
    st_err_clear(&err);
    assert_int_not_equal(outfile_open(&o, longp, "--trace", &err), ST_OK);
    assert_true(strlen(err.msg) < ST_MSG_MAX - 1);
    assert_non_null(strstr(err.msg, "end.json"));
    assert_non_null(strstr(err.msg, "..."));
    assert_true(strstr(err.msg, "No such file or directory") ||
                strstr(err.msg, "File name too long"));
    assert_int_equal(others(dir, NULL, NULL), 0);
    clean(dir);
}

static void path_fit(void **state)
{
    char buf[20];
    assert_string_equal(st_path_fit("short", buf, sizeof buf), "short");
    st_path_fit("/a/very/long/path/to/some/file.json", buf, sizeof buf);
    assert_int_equal(strlen(buf), sizeof buf - 1);
    assert_non_null(strstr(buf, "..."));
    assert_int_equal(strncmp(buf, "/a/v", 4), 0);
    assert_string_equal(buf + strlen(buf) - 4, "json");
    assert_int_equal(st_errno_status(EACCES), ST_EINVAL);
    assert_int_equal(st_errno_status(ENOENT), ST_ENOENT);
    assert_int_equal(st_errno_status(ENOSPC), ST_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(commit_replaces_abort_keeps),
        cmocka_unit_test(bad_paths_are_bad_input),
        cmocka_unit_test(path_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
