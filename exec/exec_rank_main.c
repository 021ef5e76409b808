/*
 * exec_rank_main.c: smdplan-rank, the executor's rank program, one process
 * per rank under mpirun (or alone with "transport": "self"):
 *
 *   smdplan-rank --config CONFIG.json --result RESULT.json
 *
 * Reads the config (the same file on every rank), runs it (exec_run) and,
 * on rank 0, writes RESULT.json atomically. Exit 0 on success, 2 for bad
 * arguments or a config that does not fit the job (found on every rank
 * before any work), 1 for a run that failed: the failing rank writes the
 * failed RESULT.json (status, error, failed_rank) and ends the whole job
 * through exec_comm_abort (MPI_Abort), so no rank is left waiting. Errors
 * are one line on stderr: "smdplan-rank: rank N: <message>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "exec/exec_run.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: smdplan-rank --config CONFIG.json --result RESULT.json\n"
               "  The executor's rank program, launched by `smdplan exec` through mpirun.\n");
}

/* The rank before the transport is open: the launcher's environment. */
static int env_rank(void)
{
    const char *names[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", NULL};
    for (int i = 0; names[i]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v)
            return atoi(v);
    }
    return 0;
}

static void write_failure(const char *path, const exec_config *cfg, int ranks, int rank,
                          const char *msg)
{
    exec_result r;
    exec_result_init(&r);
    snprintf(r.status, sizeof r.status, "failed");
    snprintf(r.error, sizeof r.error, "rank %d: %s", rank, msg);
    r.failed_rank = rank;
    r.ranks = ranks;
    if (cfg) {
        snprintf(r.device, sizeof r.device, "%s", cfg->device);
        snprintf(r.transport, sizeof r.transport, "%s", cfg->transport);
        r.threads_per_rank = cfg->threads_per_rank;
    }
    st_err err = {0};
    if (exec_result_write(path, &r, &err) != ST_OK)
        fprintf(stderr, "smdplan-rank: rank %d: %s\n", rank, err.msg);
}

int main(int argc, char **argv)
{
    const char *config = NULL, *result = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
            config = argv[++i];
        } else if (strcmp(argv[i], "--result") == 0 && i + 1 < argc) {
            result = argv[++i];
        } else {
            fprintf(stderr, "smdplan-rank: rank %d: unknown argument \"%s\" (allowed: --config "
                    "FILE, --result FILE)\n", env_rank(), argv[i]);
            return 2;
        }
    }
    if (!config || !result) {
        fprintf(stderr, "smdplan-rank: rank %d: --config and --result are required\n",
                env_rank());
        usage(stderr);
        return 2;
    }
    static exec_config cfg;
    st_err err = {0};
    if (exec_config_read(config, &cfg, &err) != ST_OK ||
        exec_config_check_files(&cfg, &err) != ST_OK) {
        int rank = env_rank();
        fprintf(stderr, "smdplan-rank: rank %d: %s\n", rank, err.msg);
        if (rank == 0)
            write_failure(result, NULL, 0, rank, err.msg);
        return 2;
    }
    exec_comm *world = NULL;
    if (exec_comm_open(cfg.transport, cfg.timeout_s, &world, &err) != ST_OK) {
        int rank = env_rank();
        fprintf(stderr, "smdplan-rank: rank %d: %s\n", rank, err.msg);
        if (rank == 0)
            write_failure(result, &cfg, 0, rank, err.msg);
        return 2;
    }
    int rank = world->rank, ranks = world->size;
    if (exec_config_check(&cfg, ranks, &err) != ST_OK) {
        fprintf(stderr, "smdplan-rank: rank %d: %s\n", rank, err.msg);
        if (rank == 0)
            write_failure(result, &cfg, ranks, rank, err.msg);
        exec_comm_free(world);
        return 2;
    }
    exec_result res;
    int rc = exec_run(&cfg, world, &res, &err);
    if (rc != ST_OK) {
        /* the others may be waiting on this rank: record, then end them all */
        fprintf(stderr, "smdplan-rank: rank %d: %s\n", rank, err.msg);
        write_failure(result, &cfg, ranks, rank, err.msg);
        exec_result_free(&res);
        exec_comm_abort(world, 1);
    }
    if (rank == 0 && exec_result_write(result, &res, &err) != ST_OK) {
        fprintf(stderr, "smdplan-rank: rank %d: %s\n", rank, err.msg);
        exec_result_free(&res);
        exec_comm_abort(world, 1);
    }
    exec_result_free(&res);
    exec_comm_free(world);
    return 0;
}
