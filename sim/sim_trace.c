/*
 * sim_trace.c: a simulated step as Chrome trace-event JSON.
 *
 * The format is the Trace Event Format's "complete" events (ph "X", ts and
 * dur in microseconds) with "M" metadata naming processes and threads; it
 * opens in Perfetto (ui.perfetto.dev) and chrome://tracing. One process per
 * pipeline rank (one GPU of the simulated replica), one thread per stream:
 * compute, sends over NVLink, sends over the network, gradient sync.
 * Records are written in the order they were kept, so one seed gives one
 * file, byte for byte.
 */
#include "sim/sim.h"

#include <inttypes.h>

static const char *const stream_names[] = {"compute", "send (NVLink)", "send (network)",
                                           "gradient sync"};

static void event_name(const sim_trace_rec *t, char *buf, size_t n)
{
    if (t->kind >= SIM_OP__COUNT)
        snprintf(buf, n, "allreduce bucket %" PRId32, t->microbatch);
    else
        snprintf(buf, n, "%s mb%" PRId32 " c%d", sim_op_name((sim_op_kind)t->kind), t->microbatch,
                 (int)t->chunk);
}

int sim_trace_write(FILE *f, const sim_result *r, const char *title, st_err *err)
{
    if (!r->trace)
        return ST_RAISE(err, ST_EINVAL, "trace: the simulation kept no trace (keep_trace off)");
    int ok = fprintf(f, "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"title\": \"%s\", "
                        "\"step_s\": %.9f, \"planner_step_s\": %.9f},\n\"traceEvents\": [\n",
                     title ? title : "smdplan simulate", r->step_s, r->planner_step_s) > 0;
    const char *sep = "";
    for (int s = 0; ok && s < r->pp; s++) {
        ok &= fprintf(f, "%s{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"args\": "
                         "{\"name\": \"stage %d\"}}", sep, s, s) > 0;
        sep = ",\n";
        for (int k = 0; ok && k < 4; k++)
            ok &= fprintf(f, "%s{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %d, "
                             "\"args\": {\"name\": \"%s\"}}", sep, s, k, stream_names[k]) > 0;
    }
    for (int i = 0; ok && i < r->ntrace; i++) {
        const sim_trace_rec *t = &r->trace[i];
        char name[64];
        event_name(t, name, sizeof name);
        ok &= fprintf(f, "%s{\"ph\": \"X\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d, "
                         "\"ts\": %.3f, \"dur\": %.3f}",
                      sep, name, (int)t->stage, (int)t->stream, (double)t->start_ns / 1e3,
                      (double)(t->end_ns - t->start_ns) / 1e3) > 0;
    }
    ok &= fprintf(f, "\n]}\n") > 0;
    if (!ok || ferror(f))
        return ST_RAISE(err, ST_EIO, "trace: write failed");
    return ST_OK;
}
