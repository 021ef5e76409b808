/*
 * bench_startup.c: what one smdplan command costs from exec to exit, the
 * figure a user waits for (not a test).
 *
 *   bench_startup [SMDPLAN [REPEATS]]
 *
 * Runs the program (by default this build's smdplan; give another to
 * compare, e.g. one built before a change) REPEATS times (default 21) per
 * case and reports the median wall time from fork to exit and the median
 * of the peak resident set (getrusage's ru_maxrss of the child, KiB), with
 * the spread (min, max). The cases:
 *   version   smdplan --version (start-up alone, and the GPU count of a
 *             build with CUDA);
 *   plan      smdplan --params 30B --instances 16xp4d --no-record (the
 *             planner issue's case: start-up, search, top plans simulated);
 *   recorded  the same as a user types it, recorded (into a database of
 *             the benchmark's own, made by the first run).
 * Each case runs once first and its answer is checked (exit 0 and a line
 * it must print) before any run is timed. Output goes to /dev/null while
 * timed. Machine-readable "bench," rows follow the table.
 */
/* wait4 (BSD, not POSIX): the resources of one child, where getrusage's
 * RUSAGE_CHILDREN keeps the largest of all of them. */
#define _DEFAULT_SOURCE
#include "bench_util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFAULT_REPEATS 21
#define MAX_REPEATS 1001

typedef struct bench_case {
    const char *name;
    const char *args[8];
    const char *expect;          /* a text its output holds */
} bench_case;

static const bench_case cases[] = {
    {"version", {"--version"}, "smdplan "},
    {"plan", {"--params", "30B", "--instances", "16xp4d", "--no-record"}, "search:"},
    {"recorded", {"--params", "30B", "--instances", "16xp4d"}, "search:"},
};

/* Run prog with args once, output to the file out (or /dev/null); its wall
 * time and peak RSS. Returns the exit status, -1 if it did not exit. */
static int run_once(const char *prog, const char *const *args, const char *out, double *wall_s,
                    long *rss_kib)
{
    char *argv[10];
    int n = 0;
    argv[n++] = (char *)prog;
    for (int i = 0; args[i] && n < 9; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    double t0 = bench_now_s();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
            close(fd);
        }
        execv(prog, argv);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid)
        return -1;
    *wall_s = bench_now_s() - t0;
    *rss_kib = ru.ru_maxrss;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int holds(const char *path, const char *text)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, text) != NULL;
    fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    const char *prog = argc > 1 ? argv[1] : SMD_PROGRAM;
    int repeats = argc > 2 ? atoi(argv[2]) : DEFAULT_REPEATS;
    if (repeats < 1 || repeats > MAX_REPEATS) {
        fprintf(stderr, "bench_startup: repeats %s: allowed 1 to %d\n", argv[2], MAX_REPEATS);
        return 2;
    }
    char dir[] = "/tmp/smd-bench-startup-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("bench_startup: mkdtemp");
        return 1;
    }
    char db[sizeof dir + 16], out[sizeof dir + 16];
    snprintf(db, sizeof db, "%s/b.db", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    setenv("SMDPLAN_DB", db, 1);
    unsetenv("SMDPLAN_NO_RECORD");
    double *t = malloc((size_t)repeats * sizeof *t), *m = malloc((size_t)repeats * sizeof *m);
    int rc = t && m ? 0 : 1;
    printf("%s, %d runs per case\n", prog, repeats);
    printf("%-9s %10s %10s %10s %12s\n", "case", "median ms", "min ms", "max ms", "max RSS KiB");
    char rows[sizeof cases / sizeof cases[0]][160];
    size_t ncases = sizeof cases / sizeof cases[0];
    for (size_t c = 0; rc == 0 && c < ncases; c++) {
        double w;
        long k;
        int st = run_once(prog, cases[c].args, out, &w, &k);
        if (st != 0 || !holds(out, cases[c].expect)) {
            fprintf(stderr, "bench_startup: %s %s: exit %d%s (output in %s)\n", prog,
                    cases[c].args[0], st, st == 0 ? ", without the expected answer" : "", out);
            rc = 1;
            break;
        }
        for (int i = 0; rc == 0 && i < repeats; i++) {
            if (run_once(prog, cases[c].args, NULL, &t[i], &k) != 0) {
                fprintf(stderr, "bench_startup: %s %s: failed when timed\n", prog,
                        cases[c].args[0]);
                rc = 1;
            }
            m[i] = (double)k;
        }
        if (rc)
            break;
        double med = bench_median(t, repeats), rss = bench_median(m, repeats);
        printf("%-9s %10.1f %10.1f %10.1f %12.0f\n", cases[c].name, med * 1e3, t[0] * 1e3,
               t[repeats - 1] * 1e3, rss);
        snprintf(rows[c], sizeof rows[c], "bench,startup,%s,%.6f,%.6f,%.6f,%.0f,%.0f,%.0f",
                 cases[c].name, med, t[0], t[repeats - 1], rss, m[0], m[repeats - 1]);
    }
    for (size_t c = 0; rc == 0 && c < ncases; c++)
        printf("%s\n", rows[c]);
    free(t);
    free(m);
    const char *leftovers[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof leftovers / sizeof leftovers[0]; i++) {
        char p[sizeof db + 16];
        snprintf(p, sizeof p, "%s%s", db, leftovers[i]);
        unlink(p);
    }
    unlink(out);
    rmdir(dir);
    return rc;
}
