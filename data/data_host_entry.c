/*
 * data_host_entry.c: a host's catalog entry made from its bench
 * measurements (data_host_entry.h).
 *
 * A CPU host: for each thread count T per rank, an instance type
 * host-NAME[-tT] with cores / T "GPUs" per node, each a device entry
 * cpu-NAME[-tT]; a GPU host: host-NAME-cuda of device cuda-NAME. What
 * each figure is and where it comes from is said in
 * planner/plan_host_entry.c; this gathers them into the catalog entry file
 * and the bench record's figures, in the order smdplan bench has always
 * written them (a device, then its instance type and curves).
 */
#include "data/data_host_entry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/plan_host_names.h"

void data_host_entry_figures(const plan_host_entry *h, int threads_per_rank, db_bench_entry *e)
{
    const plan_dev_fit *d = &h->fit;
    *e = (db_bench_entry){.threads_per_rank = threads_per_rank, .peak_flops = h->gpu.peak_flops,
                          .gemm_dim_half = d->gemm.dim_half,
                          .gemm_rms_log_err = d->gemm.rms_log_err,
                          .misaligned_factor = h->gpu.misaligned_factor,
                          .hbm_bps = h->gpu.hbm_bps, .hbm_eff = h->gpu.hbm_eff,
                          .act_fwd_s = d->act_fwd_s, .act_bwd_s = d->act_bwd_s,
                          .glu_fwd_s = d->glu_fwd_s, .glu_bwd_s = d->glu_bwd_s,
                          .opt_param_s = d->opt_param_s, .attn_fwd_flops = d->attn_fwd_flops,
                          .attn_bwd_flops = d->attn_bwd_flops, .p2p_bps = h->p2p.bw_bps,
                          .p2p_latency_s = h->p2p.small_s,
                          .allreduce_busbw_bps = h->allreduce.bw_bps,
                          .allreduce_latency_s = h->allreduce.small_s};
}

void data_host_entry_add_instance(data_catalog_entry *cat, const plan_host_entry *h)
{
    data_catalog_entry_add_curve(cat, &h->intra_curve);
    data_catalog_entry_add_curve(cat, &h->net_curve);
    data_catalog_entry_add_instance(cat, h->instance_name, h->gpu_name, &h->instance,
                                    h->intra_curve.name, h->net_curve.name, h->instance_source,
                                    h->instance_note);
}

static int entries_new(data_host_entries **out, st_err *err)
{
    data_host_entries *es = calloc(1, sizeof *es);
    *out = NULL;
    if (!es)
        return ST_RAISE(err, ST_ENOMEM, "out of memory");
    int rc = data_catalog_entry_new(&es->cat, err);
    if (rc != ST_OK) {
        free(es);
        return rc;
    }
    *out = es;
    return ST_OK;
}

/* The entry at T threads per rank into m, its device (and instance type)
 * into cat. */
static int cpu_entry(const data_host_bench *b, int T, data_catalog_entry *cat,
                     data_host_made *m, st_err *err)
{
    const plan_bench_cpu *cpu = b->cpu;
    if (cpu->cores % T != 0 || T > cpu->cores)
        return ST_RAISE(err, ST_EINVAL, "--threads-per-rank %d: does not divide the %d cores", T,
                        cpu->cores);
    int measured = 0;
    for (int i = 0; i < cpu->nthreads; i++)
        measured |= cpu->threads[i] == T;
    if (!measured)
        return ST_RAISE(err, ST_EINVAL, "--threads-per-rank %d: the CPU bench measured %d to %d "
                        "threads only", T, cpu->threads[0], cpu->threads[cpu->nthreads - 1]);
    plan_host_cpu_names(b->host, b->name, T, m->instance_name, sizeof m->instance_name,
                        m->gpu_name, sizeof m->gpu_name);
    plan_host_entry *h = &m->h;
    int rc = plan_host_cpu_device(cpu, T, m->gpu_name, h, err);
    if (rc != ST_OK)
        return rc;
    data_catalog_entry_add_gpu(cat, h->gpu_name, &h->gpu, h->gpu_source, h->gpu_note);
    if (b->comm) {
        char curve[32];
        plan_host_curve_name(b->host, b->name, curve, sizeof curve);
        rc = plan_host_cpu_instance(cpu, b->comm, m->instance_name, curve, h, err);
        if (rc != ST_OK)
            return rc;
        data_host_entry_add_instance(cat, h);
    }
    data_host_entry_figures(h, T, &m->fig);
    m->fig.instance_name = b->comm ? m->instance_name : NULL;
    m->fig.gpu_name = m->gpu_name;
    return ST_OK;
}

int data_host_cpu_entries(const data_host_bench *b, const int *threads, int n,
                          data_host_entries **out, st_err *err)
{
    int rc = entries_new(out, err);
    if (rc == ST_OK && (!b->cpu || !b->comm)) {
        data_host_entries *es = *out;
        const char *host = b->cpu ? b->cpu->host : b->comm ? b->comm->host : "";
        snprintf(es->missing, sizeof es->missing, "%s", b->cpu ? "transport" : "CPU");
        snprintf(es->host, sizeof es->host, "%s", host);
    }
    for (int t = 0; b->cpu && rc == ST_OK && t < n && t < PLAN_BENCH_THREADS_MAX; t++) {
        data_host_entries *es = *out;
        rc = cpu_entry(b, threads[t], es->cat, &es->e[es->n], err);
        if (rc == ST_OK)
            es->n++;
    }
    return rc;
}

int data_host_gpu_entries(const data_host_bench *b, int ngpu, double host_mem_bytes,
                          data_host_entries **out, st_err *err)
{
    int rc = entries_new(out, err);
    if (rc != ST_OK)
        return rc;
    data_host_entries *es = *out;
    data_host_made *m = &es->e[0];
    plan_host_gpu_names(b->host, b->name, m->instance_name, sizeof m->instance_name, m->gpu_name,
                        sizeof m->gpu_name);
    m->fig.instance_name = m->instance_name;
    m->fig.gpu_name = m->gpu_name;
    plan_catalog cat;
    memset(&cat, 0, sizeof cat);
    st_err ignore = {0};
    int gi = -1;
    if (data_catalog_load(NULL, &cat, &ignore) == ST_OK)
        gi = plan_host_catalog_gpu(&cat, b->cpu->cpu_model);
    plan_host_entry *h = &m->h;
    rc = plan_host_gpu_device(b->cpu, &cat, gi, m->gpu_name, h, err);
    if (rc == ST_OK) {
        data_catalog_entry_add_gpu(es->cat, h->gpu_name, &h->gpu, h->gpu_source, h->gpu_note);
        rc = plan_host_gpu_instance(b->cpu, &cat, gi, ngpu, host_mem_bytes, m->instance_name, h,
                                    err);
    }
    if (rc == ST_OK) {
        data_host_entry_add_instance(es->cat, h);
        data_host_entry_figures(h, 1, &m->fig);
        m->fig.instance_name = m->instance_name;
        m->fig.gpu_name = m->gpu_name;
        es->n = 1;
    }
    plan_catalog_free(&cat);
    return rc;
}

int data_host_entries_write(data_host_entries *es, const char *path, int force, st_err *err)
{
    if (es->missing[0])
        return ST_RAISE(err, ST_ENOENT, "--write-catalog %s: no %s measurement of %s yet (run "
                        "smdplan bench %s first, or smdplan bench for both)", path, es->missing,
                        es->host, strcmp(es->missing, "CPU") ? "comm" : "cpu");
    int rc = data_catalog_entry_write(es->cat, path, force, err);
    if (rc != ST_OK)
        return rc;
    size_t len = 0;
    st_err ignore = {0}; /* the file is written: a read-back failure costs the record its copy */
    if (data_read_file(path, &es->catalog_text, &len, &ignore) != ST_OK)
        es->catalog_text = NULL;
    for (int t = 0; t < es->n; t++) {
        es->e[t].fig.catalog_file = path;
        es->e[t].fig.catalog_json = es->catalog_text;
    }
    return ST_OK;
}

void data_host_entries_free(data_host_entries *es)
{
    if (!es)
        return;
    data_catalog_entry_free(es->cat);
    free(es->catalog_text);
    free(es);
}
