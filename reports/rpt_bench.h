/*
 * rpt_bench.h: what smdplan bench measured and made, as the text it prints
 * (rpt_bench_text.c): the device's measurements with the GEMM model each
 * thread count's fit gives, the transport's table, and one line per
 * catalog entry. From the planner's plain structs (planner/plan_bench.h,
 * plan_hwfit.h), borrowed for the call; each line ends with '\n'.
 */
#ifndef SMD_RPT_BENCH_H
#define SMD_RPT_BENCH_H

#include <stdio.h>

#include "planner/plan_bench.h"
#include "planner/plan_hwfit.h"

/* The host (cores, memory, CPU model, BLAS), then per thread count its
 * GEMMs (time, rate, the fitted model's rate), elementwise kernels and fit
 * summary, and how steady the measurements were (plan_bench_steadiness).
 * A GPU bench prints the same way (its device as the host's). */
void rpt_bench_cpu_text(FILE *f, const plan_bench_cpu *b);

/* When b was measured on a busy host (plan_bench_busy): one line,
 * "smdplan: warning: ...", that says how busy (plan_bench_steadiness) and
 * what an entry written under load costs; nothing otherwise. */
void rpt_bench_busy_warning(FILE *f, const plan_bench_cpu *b);

/* The transport between ranks: one row per op and size, time in us, algbw
 * and busbw in GB/s (nccl-tests' PERFORMANCE.md). */
void rpt_bench_comm_text(FILE *f, const plan_bench_comm *c);

/* A CPU host's entry h: its device's peak, gemm_dim_half and triad per
 * rank, and with its links (with_links) its instance type's name and the
 * all-reduce and send/recv figures; "(no transport yet)" for the name
 * without. */
void rpt_bench_cpu_entry(FILE *f, const plan_host_entry *h, int with_links);

/* A GPU host's entry h: the GEMM asymptote against the device's peak,
 * gemm_dim_half, the copy bandwidth and the fused attention's efficiency. */
void rpt_bench_gpu_entry(FILE *f, const plan_host_entry *h);

#endif
