/*
 * cli_progress.c: a progress line for work that can take more than a
 * second (the comparison of instance types, validate --sim, Monte Carlo
 * steps, rendering a report's plots).
 *
 * Nothing is shown for work that ends within CLI_PROGRESS_AFTER_S, nor when
 * stderr is not a terminal (logs and the tests' one-line error checks see
 * nothing). On a terminal the line is rewritten in place at most every
 * CLI_PROGRESS_EVERY_S and erased at the end, so the output that follows is
 * what it would have been. It is written to the descriptor directly: the
 * carriage return that rewrites it is exactly what the escaping stream of
 * cli_term.c would (rightly) print as text.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app/cli_int.h"

#define CLI_PROGRESS_AFTER_S 1.0
#define CLI_PROGRESS_EVERY_S 0.2

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void cli_progress_start(cli_progress *p, const char *what)
{
    memset(p, 0, sizeof *p);
    p->what = what;
    p->tty = isatty(STDERR_FILENO);
    p->t0 = now_s();
}

static void put(const char *s, size_t n)
{
    while (n > 0) {
        ssize_t k = write(STDERR_FILENO, s, n);
        if (k <= 0)
            return;
        s += k;
        n -= (size_t)k;
    }
}

void cli_progress_step(cli_progress *p, long done, long total)
{
    if (!p->tty)
        return;
    double t = now_s();
    if (t - p->t0 < CLI_PROGRESS_AFTER_S || t - p->last < CLI_PROGRESS_EVERY_S)
        return;
    p->last = t;
    char line[160];
    int n = total > 0
                ? snprintf(line, sizeof line, "\rsmdplan: %s: %ld of %ld (%.0f%%), %.0f s", p->what,
                           done, total, 100.0 * (double)done / (double)total, t - p->t0)
                : snprintf(line, sizeof line, "\rsmdplan: %s: %ld, %.0f s", p->what, done,
                           t - p->t0);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line)
        n = (int)sizeof line - 1;
    fflush(stderr);
    put(line, (size_t)n);
    if ((size_t)n > p->width)
        p->width = (size_t)n;
}

void cli_progress_end(cli_progress *p)
{
    if (!p->tty || !p->width)
        return;
    char blank[200];
    size_t n = p->width < sizeof blank - 2 ? p->width : sizeof blank - 2;
    blank[0] = '\r';
    memset(blank + 1, ' ', n);
    blank[n + 1] = '\r';
    put(blank, n + 2);
    p->width = 0;
}

void cli_progress_sim(void *ctx, int done, int total)
{
    cli_progress_step(ctx, done, total);
}
