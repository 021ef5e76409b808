/*
 * launch_mpirun.c: the mpirun command of smdplan exec, the rank program on
 * every rank of one run, and that command as one shell line (what --dry-run
 * prints and the run's record keeps).
 *
 * Open MPI binds each rank to a core by default for two ranks or fewer; a
 * rank of several threads (its BLAS and loop threads), or ranks that share
 * cores, run unbound (--bind-to none). Ranks x threads past the online
 * cores oversubscribe, unless a hostfile places them. An argument longer
 * than LAUNCH_ARG_BYTES is marked (cut), never passed cut short.
 */
#include "launch/launch.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/text.h"

static void catf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void catf(char *buf, size_t n, const char *fmt, ...)
{
    size_t u = strlen(buf);
    if (u + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + u, n - u, fmt, ap);
    va_end(ap);
}

static void add_arg(launch_cmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_arg(launch_cmd *c, const char *fmt, ...)
{
    if (c->argc >= LAUNCH_ARGS_MAX - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (vsnprintf(c->store[c->argc], sizeof c->store[0], fmt, ap) >= (int)sizeof c->store[0])
        c->cut = 1;
    va_end(ap);
    c->argv[c->argc] = c->store[c->argc];
    c->argv[++c->argc] = NULL;
}

static void add_env(launch_cmd *c, int *ne, const char *text)
{
    snprintf(c->env_store[*ne], sizeof c->env_store[0], "%s", text);
    c->env[*ne] = c->env_store[*ne];
    (*ne)++;
}

void launch_mpirun_cmd(const launch_mpirun *m, launch_cmd *c)
{
    memset(c, 0, sizeof *c);
    int threads = m->threads > 0 ? m->threads : 1;
    add_arg(c, "mpirun");
    add_arg(c, "-n");
    add_arg(c, "%d", m->ranks);
    c->oversubscribed = !m->hostfile && (long)m->ranks * threads > m->cores;
    if (c->oversubscribed)
        add_arg(c, "--oversubscribe");
    if (m->hostfile) {
        add_arg(c, "--hostfile");
        add_arg(c, "%s", m->hostfile);
    }
    /* a rank of several threads, or ranks sharing cores: no binding to one
     * core (Open MPI binds to a core by default for two ranks or fewer) */
    if (threads > 1 || c->oversubscribed) {
        add_arg(c, "--bind-to");
        add_arg(c, "none");
    }
    add_arg(c, "-x");
    add_arg(c, "OPENBLAS_NUM_THREADS=%d", threads);
    add_arg(c, "-x");
    add_arg(c, "OMP_NUM_THREADS=%d", threads);
    add_arg(c, "%s", m->rank_program);
    add_arg(c, "--config");
    add_arg(c, "%s/CONFIG.json", m->run_dir);
    add_arg(c, "--result");
    add_arg(c, "%s/RESULT.json", m->run_dir);
    int ne = 0;
    if (m->allow_root)
        add_env(c, &ne, "OMPI_ALLOW_RUN_AS_ROOT=1");
    if (m->allow_root_confirm)
        add_env(c, &ne, "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1");
    c->env[ne] = NULL;
}

void launch_cmd_line(const launch_cmd *c, char *buf, size_t n)
{
    buf[0] = '\0';
    char q[4 * LAUNCH_ARG_BYTES]; /* text_shell_quote: 4 bytes a byte and 3 more */
    for (int i = 0; c->env[i]; i++)
        catf(buf, n, "%s ", c->env[i]);
    for (int i = 0; i < c->argc; i++) {
        text_shell_quote(c->argv[i], q, sizeof q);
        catf(buf, n, "%s%s", i ? " " : "", q);
    }
}
