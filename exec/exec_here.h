/*
 * exec_here.h: what smdplan exec decides about the host it runs on from
 * values the caller finds (this host's name, its bench entry's name, the
 * program's own path): the catalog entry a cuda run is predicted on, and
 * the sbatch script of a job (through launch/launch_slurm.c). exec_here.c.
 */
#ifndef SMD_EXEC_HERE_H
#define SMD_EXEC_HERE_H

#include "common/st.h"
#include "exec/exec_host.h"
#include "launch/launch.h"
#include "planner/plan.h"

/* Where a cuda run is predicted. Borrowed for the call. */
typedef struct exec_here_gpu {
    const char *host_type;        /* --host TYPE; NULL: not given */
    const plan_instance *plan_inst; /* the cluster --instances names; NULL: none */
    const char *own_name;         /* this host's own entry, host-NAME-cuda */
    const char *device_desc;      /* RESULT.json's device_name; NULL before the run */
    int device_gpu;               /* the catalog GPU of device_desc; < 0: none */
    int gpus_used;                /* the GPUs the ranks run on (fewer than the ranks when
                                   * they share) */
} exec_here_gpu;

/* The prediction of a cuda run of j into h (zeroed first): on the catalog's
 * instance type w->host_type, else w->plan_inst; else this host's entry
 * that smdplan bench gpu wrote (w->own_name, in a --catalog file); else
 * this host as what it is (exec_pred_own_gpu), of the catalog GPU the
 * device names. h->note says why there is none (no device named yet, no
 * catalog GPU of it). */
void exec_here_predict_gpu(const plan_catalog *cat, const exec_here_gpu *w, const exec_job *j,
                           exec_pred *h);

/* The job as the emitted script runs it. Borrowed for the call. */
typedef struct exec_here_slurm {
    const exec_job *j;
    const launch_cmd *cmd;        /* its mpirun command (exec_job_command) */
    const char *config_text;      /* its CONFIG.json */
    const exec_gpu_hosts *gpus;   /* a cuda job's GPUs; NULL on the CPU */
    int threads;                  /* per rank, 0: 1 */
    double timeout_s;             /* the run's limit, 0: none */
    const char *smdplan, *cwd;    /* this program and the working directory */
    const char *const *run_args;  /* the options that describe the run, for --import */
    int nrun_args;
} exec_here_slurm;

/* The sbatch script of job s->j (launch_slurm_script: malloc'd, caller
 * frees; NULL and err when out of memory), with the rank program the
 * command runs. */
char *exec_here_slurm_script(const exec_here_slurm *s, st_err *err);

#endif
