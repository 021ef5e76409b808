/*
 * exec_bench_main.c: smdplan-bench-rank, the rank program of `smdplan bench
 * comm`: measures the transport between the ranks of its job
 * (exec_bench_comm_run) and rank 0 writes the measurements as JSON.
 *
 *   mpirun -n R smdplan-bench-rank --out FILE [--transport mpi|nccl] [--min-bytes B]
 *          [--max-bytes B] [--ops allreduce,sendrecv,...] [--warmup N] [--iters N]
 *          [--timeout S] [--threads N] [--device NAME]
 *
 * A transport that takes device buffers (nccl) measures buffers in the
 * memory of a device, --device (default cuda), one GPU per rank. --threads
 * is recorded as the ranks' threads (the catalog entry's per-rank figures);
 * no BLAS runs here, so OpenBLAS is never loaded and no pool of its
 * threads spins beside the transfers.
 *
 * Exit codes: 0 measured and written, 2 bad arguments (every rank checks
 * them before the transport opens), 1 a failure, which ends every rank
 * through the transport's abort with one line on stderr:
 * "smdplan-bench-rank: rank N: <message>".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec_bench.h"
#include "exec/exec_comm.h"
#include "exec/exec_dev.h"

#define PROG "smdplan-bench-rank"

static int bad(const char *opt, const char *val, const char *allowed)
{
    fprintf(stderr, "%s: %s '%s': %s\n", PROG, opt, val ? val : "", allowed);
    return 2;
}

static int num_arg(const char *opt, const char *val, double lo, double hi, double *out)
{
    char *end;
    double v = val ? strtod(val, &end) : NAN;
    if (!val || !*val || *end || !(v >= lo && v <= hi))
        return bad(opt, val, "out of range or not a number");
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    exec_bench_comm_config cfg;
    exec_bench_comm_config_default(&cfg);
    const char *out = NULL, *transport = "mpi", *device = "cuda";
    double timeout_s = 60, threads = 1, v;
    for (int i = 1; i < argc; i += 2) { /* every option takes a value */
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        int ex = 0;
        if (!strcmp(a, "--out"))
            out = val;
        else if (!strcmp(a, "--transport"))
            transport = val;
        else if (!strcmp(a, "--device"))
            device = val;
        else if (!strcmp(a, "--min-bytes"))
            ex = num_arg(a, val, 4, 1e13, &cfg.min_bytes);
        else if (!strcmp(a, "--max-bytes"))
            ex = num_arg(a, val, 4, 1e13, &cfg.max_bytes);
        else if (!strcmp(a, "--warmup") && !(ex = num_arg(a, val, 0, 1e6, &v)))
            cfg.warmup = (int)v;
        else if (!strcmp(a, "--iters") && !(ex = num_arg(a, val, 1, 1e6, &v)))
            cfg.iters = (int)v;
        else if (!strcmp(a, "--timeout"))
            ex = num_arg(a, val, 1, 1e6, &timeout_s);
        else if (!strcmp(a, "--threads"))
            ex = num_arg(a, val, 1, 256, &threads);
        else if (!strcmp(a, "--ops")) {
            cfg.ops = 0;
            char buf[128];
            snprintf(buf, sizeof buf, "%s", val ? val : "");
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                exec_bench_op op;
                st_err err = {0};
                if (exec_bench_op_parse(t, &op, &err) != ST_OK)
                    return bad(a, t, "allowed are allreduce, reducescatter, allgather, sendrecv");
                cfg.ops |= 1u << op;
            }
            if (!cfg.ops)
                return bad(a, val, "give at least one operation");
        } else
            return bad("argument", a, "see the file comment of exec/exec_bench_main.c");
        if (ex)
            return ex;
        if (!val)
            return bad(a, NULL, "needs a value");
    }
    if (!out)
        return bad("--out", "", "the file rank 0 writes the measurements to is required");
    if (!exec_comm_built(transport)) {
        char allowed[128];
        snprintf(allowed, sizeof allowed, "not in this build (built: %s)", exec_comm_names());
        return bad("--transport", transport, allowed);
    }
    if (cfg.max_bytes < cfg.min_bytes)
        return bad("--max-bytes", "", "must be at least --min-bytes");

    st_err err = {0};
    exec_comm *world = NULL;
    if (exec_comm_open(transport, timeout_s, &world, &err) != ST_OK) {
        fprintf(stderr, "%s: %s\n", PROG, err.msg);
        return 1;
    }
    exec_dev *dev = NULL;
    int rc = ST_OK;
    if (world->ops->device_buffers && (rc = exec_dev_open(device, 1, &dev, &err)) == ST_OK &&
        dev->ops->host_memory)
        rc = ST_RAISE(&err, ST_EINVAL, "--device %s keeps its buffers in host memory; the %s "
                      "transport takes device buffers (use cuda)", device, transport);
    cfg.dev = dev;
    exec_bench_comm *b = calloc(1, sizeof *b);
    if (rc == ST_OK)
        rc = b ? exec_bench_comm_run(world, &cfg, b, &err)
               : ST_RAISE(&err, ST_ENOMEM, "out of memory");
    if (rc == ST_OK) {
        b->threads_per_rank = (int)threads;
        if (world->rank == 0)
            rc = exec_bench_comm_write(out, b, &err);
    }
    if (rc != ST_OK) {
        fprintf(stderr, "%s: rank %d: %s\n", PROG, world->rank, err.msg);
        fflush(stderr);
        exec_comm_abort(world, 1);
    }
    free(b);
    exec_dev_close(dev);
    exec_comm_free(world);
    return 0;
}
