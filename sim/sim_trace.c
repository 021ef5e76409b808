/*
 * sim_trace.c: a simulated step as Chrome trace-event JSON.
 *
 * The format is the Trace Event Format's "complete" events (ph "X", ts and
 * dur in microseconds) with "M" metadata naming processes and threads; it
 * opens in Perfetto (ui.perfetto.dev) and chrome://tracing. One process per
 * pipeline rank (one GPU of the simulated replica), one thread per stream:
 * compute, sends over NVLink, sends over the network, gradient sync.
 * Records are written in the order they were kept, so one seed gives one
 * file, byte for byte. Every value is written by cJSON (never by hand), so
 * caller text such as the title cannot break the JSON.
 */
#include "sim/sim.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

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

/* Print one value (unformatted) into buf and write it; 0 on failure. */
static int put_json(FILE *f, const char *sep, cJSON *v, char *buf, int n)
{
    if (!cJSON_PrintPreallocated(v, buf, n, 0))
        return 0;
    return fputs(sep, f) >= 0 && fputs(buf, f) >= 0;
}

int sim_trace_write(FILE *f, const sim_result *r, const char *title, st_err *err)
{
    if (!r->trace)
        return ST_RAISE(err, ST_EINVAL, "trace: the simulation kept no trace (keep_trace off)");
    /* Every value goes through cJSON, so a title with quotes, backslashes or
     * control characters stays one JSON string. Events are printed one at a
     * time into a fixed buffer: a trace of a million ops is never a tree. */
    char buf[1024];
    int ok = 1;
    errno = 0;
    cJSON *other = cJSON_CreateObject();
    if (!other ||
        !cJSON_AddStringToObject(other, "title", title ? title : "smdplan simulate") ||
        !cJSON_AddNumberToObject(other, "step_s", r->step_s) ||
        !cJSON_AddNumberToObject(other, "planner_step_s", r->planner_step_s)) {
        cJSON_Delete(other);
        return ST_RAISE(err, ST_ENOMEM, "trace: out of memory");
    }
    char *head = cJSON_PrintUnformatted(other);
    cJSON_Delete(other);
    if (!head)
        return ST_RAISE(err, ST_ENOMEM, "trace: out of memory");
    ok &= fprintf(f, "{\"displayTimeUnit\": \"ms\", \"otherData\": %s,\n\"traceEvents\": [\n",
                  head) > 0;
    cJSON_free(head);

    const char *sep = "";
    for (int s = 0; ok && s < r->pp; s++) {
        char name[32];
        snprintf(name, sizeof name, "stage %d", s);
        cJSON *m = cJSON_CreateObject(), *args = cJSON_CreateObject();
        ok = m && args && cJSON_AddStringToObject(m, "ph", "M") &&
             cJSON_AddStringToObject(m, "name", "process_name") &&
             cJSON_AddNumberToObject(m, "pid", s) && cJSON_AddStringToObject(args, "name", name);
        if (ok)
            cJSON_AddItemToObject(m, "args", args), args = NULL;
        ok = ok && put_json(f, sep, m, buf, sizeof buf);
        cJSON_Delete(m);
        cJSON_Delete(args);
        sep = ",\n";
        for (int k = 0; ok && k < 4; k++) {
            cJSON *t = cJSON_CreateObject(), *a = cJSON_CreateObject();
            ok = t && a && cJSON_AddStringToObject(t, "ph", "M") &&
                 cJSON_AddStringToObject(t, "name", "thread_name") &&
                 cJSON_AddNumberToObject(t, "pid", s) && cJSON_AddNumberToObject(t, "tid", k) &&
                 cJSON_AddStringToObject(a, "name", stream_names[k]);
            if (ok)
                cJSON_AddItemToObject(t, "args", a), a = NULL;
            ok = ok && put_json(f, sep, t, buf, sizeof buf);
            cJSON_Delete(t);
            cJSON_Delete(a);
        }
    }
    /* one event object, its values replaced for each op */
    cJSON *ev = cJSON_CreateObject();
    cJSON *name = NULL, *pid = NULL, *tid = NULL, *ts = NULL, *dur = NULL;
    ok = ok && ev && cJSON_AddStringToObject(ev, "ph", "X") &&
         (name = cJSON_AddStringToObject(ev, "name", "")) &&
         (pid = cJSON_AddNumberToObject(ev, "pid", 0)) &&
         (tid = cJSON_AddNumberToObject(ev, "tid", 0)) &&
         (ts = cJSON_AddNumberToObject(ev, "ts", 0)) && (dur = cJSON_AddNumberToObject(ev, "dur", 0));
    for (int i = 0; ok && i < r->ntrace; i++) {
        const sim_trace_rec *t = &r->trace[i];
        char text[64];
        event_name(t, text, sizeof text);
        ok = cJSON_SetValuestring(name, text) != NULL;
        (void)cJSON_SetNumberValue(pid, (int)t->stage);
        (void)cJSON_SetNumberValue(tid, (int)t->stream);
        (void)cJSON_SetNumberValue(ts, (double)t->start_ns / 1e3);
        (void)cJSON_SetNumberValue(dur, (double)(t->end_ns - t->start_ns) / 1e3);
        ok = ok && put_json(f, sep, ev, buf, sizeof buf);
    }
    cJSON_Delete(ev);
    ok = ok && fprintf(f, "\n]}\n") > 0;
    if (!ok || ferror(f))
        return ST_RAISE(err, ST_EIO, "trace: write failed: %s", errno ? strerror(errno) : "I/O error");
    return ST_OK;
}
