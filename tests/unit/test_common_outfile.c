/*
 * test_common_outfile.c: output files written whole or not at all, under
 * the one rule of what an output may replace (common/outfile.h).
 *
 * A commit with force replaces the destination with the complete text and
 * keeps its permissions (and, as root, its owner); without force an
 * existing file is refused and left byte for byte, and so is one that
 * appears while the output is written; a symbolic link is refused with or
 * without force and neither it nor its target changes; a file with other
 * hard links is refused even with force; an abort, or a failure, leaves no
 * temporary behind; a character device is written in place; a directory is
 * refused as bad input; long paths keep the system's reason.
 */
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/outfile.h"
#include "test_dir.h"

/* A test run in a scratch directory of its own (test_dir.h). */
#define SCRATCH_TEST(test)                                                                       \
    cmocka_unit_test_setup_teardown(test, test_scratch_setup, test_scratch_teardown)

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

static void commit_replaces_abort_keeps(void **state)
{
    const char *dir = ((const test_scratch *)*state)->dir;
    char path[600];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    put(path, "old text");
    assert_int_equal(chmod(path, 0640), 0);
    st_err err = {0};

    outfile o;
    assert_int_equal(outfile_open(&o, path, "test", 1, &err), ST_OK);
    fputs("half of the new", o.f);
    assert_string_equal(slurp(path), "old text"); /* not before the commit */
    outfile_abort(&o);
    assert_string_equal(slurp(path), "old text");
    assert_int_equal(others(dir, "out.txt", NULL), 0);

    assert_int_equal(outfile_write(path, "test", "new text", 8, 1, &err), ST_OK);
    assert_string_equal(slurp(path), "new text");
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_int_equal(others(dir, "out.txt", NULL), 0);
}

/* Without force an existing file is never replaced: refused at the open
 * (and by outfile_check) with a message that names it and --force. */
static void existing_needs_force(void **state)
{
    const char *dir = ((const test_scratch *)*state)->dir;
    char path[600];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    put(path, "mine");
    st_err err = {0};
    assert_int_equal(outfile_check(path, "--out", 0, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "--out"));
    assert_non_null(strstr(err.msg, "out.txt: exists; not replaced (pass --force"));
    st_err_clear(&err);
    assert_int_equal(outfile_write(path, "--out", "theirs", 6, 0, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "not replaced"));
    assert_string_equal(slurp(path), "mine");
    assert_int_equal(others(dir, "out.txt", NULL), 0);
    st_err_clear(&err);
    assert_int_equal(outfile_check(path, "--out", 1, &err), ST_OK);

    /* a new file is created without force */
    char fresh[600];
    snprintf(fresh, sizeof fresh, "%s/new.txt", dir);
    assert_int_equal(outfile_write(fresh, "--out", "made", 4, 0, &err), ST_OK);
    assert_string_equal(slurp(fresh), "made");

    /* a file that appears while the output is written is not replaced */
    char late[600];
    snprintf(late, sizeof late, "%s/late.txt", dir);
    outfile o;
    assert_int_equal(outfile_open(&o, late, "--out", 0, &err), ST_OK);
    fputs("ours", o.f);
    put(late, "someone else's");
    assert_int_equal(outfile_commit(&o, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "appeared while it was being written"));
    assert_string_equal(slurp(late), "someone else's");
    assert_int_equal(others(dir, "out.txt", "new.txt"), 1); /* late.txt, no temporary */
}

/* A symbolic link is never written through, with or without force: the
 * link and its target stay as they were. */
static void links_are_refused(void **state)
{
    const char *dir = ((const test_scratch *)*state)->dir;
    char path[600];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    char link[600], dangling[600];
    snprintf(link, sizeof link, "%s/link.txt", dir);
    snprintf(dangling, sizeof dangling, "%s/dangling.txt", dir);
    put(path, "target");
    assert_int_equal(symlink("out.txt", link), 0);
    assert_int_equal(symlink("nowhere.txt", dangling), 0);
    st_err err = {0};
    for (int force = 0; force <= 1; force++) {
        st_err_clear(&err);
        assert_int_equal(outfile_write(link, "--trace", "via link", 8, force, &err), ST_EINVAL);
        assert_non_null(strstr(err.msg, "a symbolic link; not written through"));
        st_err_clear(&err);
        assert_int_equal(outfile_write(dangling, "--trace", "via link", 8, force, &err),
                         ST_EINVAL);
        st_err_clear(&err);
        assert_int_equal(outfile_check(link, "--trace", force, &err), ST_EINVAL);
    }
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_string_equal(slurp(path), "target");
    assert_int_equal(lstat(dangling, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(access(dir, F_OK), 0);
    char nowhere[600];
    snprintf(nowhere, sizeof nowhere, "%s/nowhere.txt", dir);
    assert_int_not_equal(access(nowhere, F_OK), 0); /* nothing made through the link */
    assert_true(outfile_same_file(link, path));
    assert_false(outfile_same_file(link, dir));
}

/* A file with other hard links is refused even with force (replacing it
 * would detach them); as root, a replaced file keeps its owner. */
static void links_and_owner_kept(void **state)
{
    const char *dir = ((const test_scratch *)*state)->dir;
    char path[600];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    char hard[600];
    snprintf(hard, sizeof hard, "%s/hard.txt", dir);
    put(path, "shared");
    assert_int_equal(link(path, hard), 0);
    st_err err = {0};
    assert_int_equal(outfile_write(path, "--write", "new", 3, 1, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "2 hard links"));
    assert_string_equal(slurp(hard), "shared");
    assert_int_equal(unlink(hard), 0);
    if (geteuid() == 0) {
        assert_int_equal(chown(path, 4321, 4322), 0);
        st_err_clear(&err);
        assert_int_equal(outfile_write(path, "--write", "new", 3, 1, &err), ST_OK);
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_uid, 4321);
        assert_int_equal(st.st_gid, 4322);
        assert_string_equal(slurp(path), "new");
    }
    assert_int_equal(others(dir, "out.txt", NULL), 0);
}

/* outfile_move: an image another program made, moved in under the rule. */
static void move_follows_the_rule(void **state)
{
    const char *dir = ((const test_scratch *)*state)->dir;
    char img[600], tmp[600];
    snprintf(img, sizeof img, "%s/plot.png", dir);
    snprintf(tmp, sizeof tmp, "%s/.plot.render", dir);
    st_err err = {0};
    put(tmp, "first");
    assert_int_equal(outfile_move(tmp, img, "report", 0, &err), ST_OK);
    assert_string_equal(slurp(img), "first");
    put(tmp, "second");
    assert_int_equal(outfile_move(tmp, img, "report", 0, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "exists; not replaced"));
    assert_string_equal(slurp(img), "first");
    st_err_clear(&err);
    assert_int_equal(outfile_move(tmp, img, "report", 1, &err), ST_OK);
    assert_string_equal(slurp(img), "second");
    assert_int_equal(others(dir, "plot.png", NULL), 0);
}

/* A character device is written in place, without force: nothing is
 * replaced. */
static void devices_in_place(void **state)
{
    st_err err = {0};
    assert_int_equal(outfile_write("/dev/null", "--trace", "x", 1, 0, &err), ST_OK);
    assert_int_equal(outfile_check("/dev/null", "--trace", 0, &err), ST_OK);
}

static void bad_paths_are_bad_input(void **state)
{
    const char *dir = ((const test_scratch *)*state)->dir;
    char path[600];
    st_err err = {0};
    outfile o;
    assert_int_equal(outfile_open(&o, dir, "--out", 1, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "Is a directory"));
    assert_null(o.f);
    st_err_clear(&err);
    snprintf(path, sizeof path, "%s/no/such/file", dir);
    assert_int_equal(outfile_open(&o, path, "--out", 0, &err), ST_ENOENT);
    assert_non_null(strstr(err.msg, "No such file or directory"));
    st_err_clear(&err);
    assert_int_equal(outfile_open(&o, "", "--out", 0, &err), ST_EINVAL);

    /* a path longer than a message: the reason is still there, the path
     * is shown by its head and tail */
    char longp[3000];
    int n = snprintf(longp, sizeof longp, "%s/", dir);
    while (n < 2900)
        n += snprintf(longp + n, sizeof longp - (size_t)n, "abcdefghij/");
    snprintf(longp + n, sizeof longp - (size_t)n, "end.json");
    st_err_clear(&err);
    assert_int_not_equal(outfile_open(&o, longp, "--trace", 0, &err), ST_OK);
    assert_true(strlen(err.msg) < ST_MSG_MAX - 1);
    assert_non_null(strstr(err.msg, "end.json"));
    assert_non_null(strstr(err.msg, "..."));
    assert_true(strstr(err.msg, "No such file or directory") ||
                strstr(err.msg, "File name too long"));
    assert_int_equal(others(dir, NULL, NULL), 0);
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
        SCRATCH_TEST(commit_replaces_abort_keeps),
        SCRATCH_TEST(existing_needs_force),
        SCRATCH_TEST(links_are_refused),
        SCRATCH_TEST(links_and_owner_kept),
        SCRATCH_TEST(move_follows_the_rule),
        cmocka_unit_test(devices_in_place),
        SCRATCH_TEST(bad_paths_are_bad_input),
        cmocka_unit_test(path_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
