/*
 * plan_host_names.h: the names a host's catalog entry goes by, and the
 * catalog GPU a device's description names (plan_host_names.c).
 *
 * smdplan bench writes one instance type per thread count per rank it
 * measured: "host-NAME" for one thread per rank (a "GPU" per core),
 * "host-NAME-tT" for T threads per rank, each with its device entry
 * "cpu-NAME" / "cpu-NAME-tT"; bench gpu writes "host-NAME-cuda" of device
 * "cuda-NAME". NAME is the host name up to its first dot, with anything but
 * letters, digits and '-' made '-', at most PLAN_HOST_SHORT_MAX - 1
 * characters, so that "cpu-NAME-tT" fits a catalog GPU name (31). smdplan
 * exec looks up the entry for the threads per rank it runs with.
 *
 * Everything here is computed from the strings passed in: the caller asks
 * the system for the host name.
 */
#ifndef SMD_PLAN_HOST_NAMES_H
#define SMD_PLAN_HOST_NAMES_H

#include <stddef.h>

#include "planner/plan.h"

/* Bytes of a short host name with its NUL. */
#define PLAN_HOST_SHORT_MAX 21

/* The short name NAME of a host named raw (as gethostname gives it; NULL
 * or "": "localhost") into buf (n bytes; cut short when it does not fit). */
void plan_host_short_name(const char *raw, char *buf, size_t n);

/* A CPU host's names at threads_per_rank T: instance type "host-NAME" (T
 * <= 1) or "host-NAME-tT" into inst (ni bytes), its device "cpu-NAME" or
 * "cpu-NAME-tT" into gpu (ng bytes); host is the short name. name, when
 * not NULL (smdplan bench --name), stands for "host-NAME" in the instance
 * type's name ("NAME", "NAME-tT"); the device keeps the host's. */
void plan_host_cpu_names(const char *host, const char *name, int threads_per_rank, char *inst,
                         size_t ni, char *gpu, size_t ng);

/* A GPU host's names: instance type "host-NAME-cuda" (name, when not NULL,
 * instead) into inst, its device "cuda-NAME" (cuda- and name's first 24
 * characters, when given) into gpu. */
void plan_host_gpu_names(const char *host, const char *name, char *inst, size_t ni, char *gpu,
                         size_t ng);

/* The name of a CPU host's all-reduce curve: "mpi-" and name (or host),
 * at most 31 characters (a catalog curve name), into buf. */
void plan_host_curve_name(const char *host, const char *name, char *buf, size_t n);

/* The catalog GPU a CUDA device's description names (exec's describe:
 * "NVIDIA H100 80GB HBM3, compute capability 9.0, 79.1 GiB, 132 SMs, GPU
 * 0"): the chip a catalog GPU's name starts with (the name before its '-':
 * "H100" of "H100-80GB") as a word of desc (case-insensitive), and among
 * that chip's GPUs the one whose memory is closest to what desc states
 * ("80GB", "79.1 GiB"; the first in catalog order when it states none),
 * of the same board (a PCIe or NVL board is not the SXM module).
 * Its index in cat->gpus, or -1 when no catalog GPU is named. */
int plan_host_catalog_gpu(const plan_catalog *cat, const char *desc);

#endif
