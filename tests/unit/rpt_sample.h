/*
 * rpt_sample.h: the inputs of the report tests: one of each plot, with
 * hand-written figures shaped like a 175B model on 16 A100-40GB nodes, so
 * the golden files under tests/fixtures/reports/ do not move when the
 * planner or the simulator is refitted.
 *
 * The sample exercises every branch a reader of the golden files should
 * see: an over-capacity stage, a plan given only its worst stage of eight, a
 * plan of 24 stages drawn by its first, worst and last stages, infeasible
 * and not-evaluated grid cells, a cluster size that does not fit and one
 * without a price, a pipeline with sends on both link kinds and gradient
 * buckets, several sources, and caller text that needs quoting in every
 * output language.
 *
 * Also the few file helpers the report tests share (a scratch directory,
 * reading a file whole).
 */
#ifndef SMD_RPT_SAMPLE_H
#define SMD_RPT_SAMPLE_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reports/rpt.h"
#include "test_dir.h"

#define SAMPLE_GIB 1073741824.0

static inline plan_mem sample_mem(double weights, double acts, double logits)
{
    plan_mem m = {0};
    m.weights_bytes = weights * SAMPLE_GIB;
    m.grads_bytes = weights * SAMPLE_GIB;
    m.optimizer_bytes = 1.5 * weights * SAMPLE_GIB; /* 12 B/param sharded over 8 */
    m.activations_bytes = acts * SAMPLE_GIB;
    m.recompute_bytes = 0.75 * SAMPLE_GIB;
    m.logits_bytes = logits * SAMPLE_GIB;
    m.comm_buffers_bytes = 0.5 * SAMPLE_GIB;
    m.context_bytes = 0.8 * SAMPLE_GIB;
    m.allocator_bytes = 0.05 * (acts + 0.75 + logits) * SAMPLE_GIB;
    m.total_bytes = 0; /* not read: the plot sums the terms */
    return m;
}

#define SAMPLE_DEEP_PP 24
static inline rpt_memory sample_memory(void)
{
    static plan_mem p1[4], p2[2], p3[1], p4[SAMPLE_DEEP_PP];
    static int p3_stage[1] = {7};
    static rpt_mem_plan plans[4];
    for (int s = 0; s < 4; s++)
        p1[s] = sample_mem(5.125, 14.0 - 3.0 * s, s == 3 ? 3.0 : 0.0);
    p2[0] = sample_mem(10.25, 16.5, 0.0);
    p2[1] = sample_mem(10.25, 9.0, 6.0); /* both stages over 40 GiB */
    p3[0] = sample_mem(2.5625, 6.0, 1.5);
    /* 24 stages, the worst in the middle (stage 5 holds more layers) */
    for (int s = 0; s < SAMPLE_DEEP_PP; s++)
        p4[s] = sample_mem(1.25, 9.0 - 0.25 * s + (s == 5 ? 1.5 : 0.0),
                           s == SAMPLE_DEEP_PP - 1 ? 2.0 : 0.0);
    plans[0] = (rpt_mem_plan){"tp8 pp4 dp4 mb1 1F1B selective", 4, p1, NULL, 4};
    plans[1] = (rpt_mem_plan){"tp8 pp2 dp8 mb2 'simple' <none>", 2, p2, NULL, 0};
    /* only its worst stage is known by term (recorded before stages had terms) */
    plans[2] = (rpt_mem_plan){NULL, 1, p3, p3_stage, 8};
    /* drawn by its first, worst and last stages */
    plans[3] = (rpt_mem_plan){"tp2 pp24 dp4 mb1 1F1B full", SAMPLE_DEEP_PP, p4, NULL,
                              SAMPLE_DEEP_PP};
    return (rpt_memory){NULL, "GPT-3 175B on 16 x p4d.24xlarge", "A100-40GB", 40.0 * SAMPLE_GIB,
                        4, plans};
}

static inline rpt_grid sample_grid(void)
{
    static const rpt_grid_cell cells[] = {
        {1, 8, 0, 0, "OOM", NULL},
        {1, 16, 0, 0, "OOM", NULL},
        {2, 4, 0, 0, "OOM", NULL},
        {2, 8, 1, 31.75, NULL, "tp2 pp8 dp8 mb1 1F1B full"},
        {2, 16, 1, 33.5, NULL, "tp2 pp16 dp4 mb1 1F1B full"},
        {4, 4, 1, 27.125, NULL, "tp4 pp4 dp8 mb1 1F1B selective"},
        {4, 8, 1, 26.5, NULL, "tp4 pp8 dp4 mb2 virtual selective"},
        {4, 16, 1, 29.0, NULL, "tp4 pp16 dp2 mb2 1F1B none"},
        {8, 4, 1, 24.25, NULL, "tp8 pp4 dp4 mb1 1F1B selective"},
        {8, 8, 1, 25.0, NULL, "tp8 pp8 dp2 mb1 zb-h1 none"},
        {8, 16, 0, 0, "TP across nodes", NULL},
        {16, 8, 0, 0, "heads", NULL},
    }; /* (1, 4), (16, 4), (16, 16) not evaluated */
    return (rpt_grid){NULL, "GPT-3 175B on 16 x p4d.24xlarge: best step time",
                      (int)(sizeof cells / sizeof cells[0]), cells};
}

static inline rpt_scaling sample_scaling(void)
{
    static const rpt_scaling_point pts[] = {
        {"p4d.24xlarge", 8, 64, 0, 0, 0, NULL},
        {"p4d.24xlarge", 32, 256, 1, 71200, 8.125, "tp8 pp8 dp4"},
        {"p4d.24xlarge", 16, 128, 1, 36400, 7.875, "tp8 pp8 dp2"},
        {"p5.48xlarge", 4, 32, 1, 27900, 7.75, "tp8 pp4 dp1"},
        {"p5.48xlarge", 8, 64, 1, 55100, 7.875, "tp8 pp4 dp2"},
        {"p5.48xlarge", 16, 128, 1, 112000, 7.75, "tp8 pp4 dp4"},
        {"my \"own\" cluster", 16, 0, 1, 41000, 0, "price unknown"},
        {"my \"own\" cluster", 32, 0, 1, 80500, 0, NULL},
        {"p4d.24xlarge", 64, 512, 1, 139000, 8.25, "tp8 pp8 dp8"},
    };
    return (rpt_scaling){NULL, "GPT-3 175B: best layout per cluster size",
                         (int)(sizeof pts / sizeof pts[0]), pts};
}

/* A GPipe step of 3 stages and 4 microbatches with made-up integer times:
 * forward 10 ms, backward 20 ms, sends 0.5 ms (stage 1 -> 2 over the
 * network), two gradient buckets per stage after its last backward. */
#define SAMPLE_PP 3
#define SAMPLE_MB 4
#define SAMPLE_MS 1000000LL
static inline rpt_timeline sample_timeline(void)
{
    static sim_trace_rec t[128];
    int n = 0;
    const sim_time_ns F = 10 * SAMPLE_MS, B = 20 * SAMPLE_MS, S = SAMPLE_MS / 2;
    sim_time_ns fwd_end = (SAMPLE_MB + SAMPLE_PP - 1) * (F + S);
    for (int s = 0; s < SAMPLE_PP; s++) {
        int stream = s == 1 ? SIM_STREAM_SEND_NET : SIM_STREAM_SEND_INTRA;
        for (int m = 0; m < SAMPLE_MB; m++) {
            sim_time_ns a = (m + s) * (F + S);
            t[n++] = (sim_trace_rec){s, SIM_STREAM_COMPUTE, SIM_OP_FWD, 0, m, a, a + F};
            if (s + 1 < SAMPLE_PP)
                t[n++] = (sim_trace_rec){s, (uint8_t)stream, SIM_OP_SEND_FWD, 0, m, a + F,
                                         a + F + S};
        }
        for (int m = 0; m < SAMPLE_MB; m++) {
            sim_time_ns a = fwd_end + (m + SAMPLE_PP - 1 - s) * (B + S);
            t[n++] = (sim_trace_rec){s, SIM_STREAM_COMPUTE, SIM_OP_BWD, 0, m, a, a + B};
            if (s > 0)
                t[n++] = (sim_trace_rec){s, SIM_STREAM_SEND_INTRA, SIM_OP_SEND_BWD, 0, m, a + B,
                                         a + B + S};
        }
        sim_time_ns last = fwd_end + (SAMPLE_MB - 1 + SAMPLE_PP - 1 - s) * (B + S) + B;
        for (int b = 0; b < 2; b++)
            t[n++] = (sim_trace_rec){s, SIM_STREAM_DP, SIM_OP__COUNT, 0, b, last + b * 3 * SAMPLE_MS,
                                     last + (b + 1) * 3 * SAMPLE_MS};
    }
    return (rpt_timeline){NULL, "GPipe, 3 stages, 4 microbatches", SAMPLE_PP, n, t, 0.1955, NULL};
}

/* Stage figures of a 3-stage GPipe step: stage 0 and 2 wait longest. */
static inline rpt_stages sample_stages(void)
{
    static sim_stage_stats st[3];
    static const double busy[3] = {0.120, 0.131, 0.118}, exposed[3] = {0.004, 0.0, 0.009};
    for (int i = 0; i < 3; i++) {
        memset(&st[i], 0, sizeof st[i]);
        st[i].busy_s = busy[i];
        st[i].dp_exposed_s = exposed[i];
        st[i].send_busy_s = 0.002 * (i + 1);
    }
    return (rpt_stages){NULL, "GPipe, 3 stages, 4 microbatches", 3, st, 0.1805, 0.1955,
                        "A sample."};
}

static inline rpt_accuracy sample_accuracy(void)
{
    static const rpt_accuracy_point pts[] = {
        {"Megatron-LM 2021", "145B", 32.1, 30.5},
        {"Megatron-LM 2021", "530B", 49.0, 47.25},
        {"recorded", "run 7", 0.42, 0.40},
        {"Megatron-LM 2021", "1T", 60.1, 67.0},
        {"recorded", "run 9", 0.85, 0.91},
        {"BLOOM <paper> & 'co'", NULL, 105.0, 110.0},
    };
    return (rpt_accuracy){NULL, "Planner against measured step time", "planner", 0, 1,
                          (int)(sizeof pts / sizeof pts[0]), pts};
}

/* ------------------------------------------------------------------------ */
/* Files                                                                     */
/* One plot of the sample written: rc ST_OK (else err's message is printed)
 * and the render state *rr want. */
static inline void sample_written(int rc, const st_err *err, const rpt_render *rr,
                                  rpt_render want)
{
    if (rc != ST_OK)
        print_error("%s\n", err->msg);
    assert_int_equal(rc, ST_OK);
    assert_int_equal(*rr, want);
}

/* The sample's six plots (memory, grid, scaling, timeline, accuracy,
 * stages) written to r, each with the render state want. */
static inline void sample_write_plots(rpt_report *r, rpt_render want)
{
    rpt_memory mem = sample_memory();
    rpt_grid grid = sample_grid();
    rpt_scaling sc = sample_scaling();
    rpt_timeline tl = sample_timeline();
    rpt_accuracy acc = sample_accuracy();
    rpt_stages stg = sample_stages();
    /* a state other than want before each write: the writer sets it */
    const rpt_render other = want == RPT_RENDER_OK ? RPT_RENDER_FAILED : RPT_RENDER_OK;
    st_err err = {0};
    rpt_render rr = other;
    sample_written(rpt_memory_write(r, &mem, &rr, &err), &err, &rr, want);
    rr = other;
    sample_written(rpt_grid_write(r, &grid, &rr, &err), &err, &rr, want);
    rr = other;
    sample_written(rpt_scaling_write(r, &sc, &rr, &err), &err, &rr, want);
    rr = other;
    sample_written(rpt_timeline_write(r, &tl, &rr, &err), &err, &rr, want);
    rr = other;
    sample_written(rpt_accuracy_write(r, &acc, &rr, &err), &err, &rr, want);
    rr = other;
    sample_written(rpt_stages_write(r, &stg, &rr, &err), &err, &rr, want);
}

/* ------------------------------------------------------------------------ */

/* A fresh scratch directory (empty when it cannot be made); removed by
 * test_dir_remove. */
static inline void scratch_dir(char *out, size_t n)
{
    test_dir_make(out, n, "smd_rpt_");
}

/* The whole of dir/name as a NUL-terminated heap string (free()), NULL if
 * it cannot be read; *len its size when len is non-NULL. */
static inline char *file_slurp(const char *dir, const char *name, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (size_t k; buf && (k = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += k;
        if (n + 1 == cap) {
            char *b = realloc(buf, cap *= 2);
            if (!b)
                free(buf);
            buf = b;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

/* dir/name as assert_text checks it. */
static inline void assert_file_text(const char *dir, const char *name, const char *const *has,
                                    const char *const *lacks)
{
    char *text = file_slurp(dir, name, NULL);
    assert_text(text, has, lacks);
    free(text);
}

static inline int file_exists(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    return stat(path, &st) == 0;
}

#endif
