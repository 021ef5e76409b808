/*
 * plan_validate_int.h: the tables that read a published run's configuration
 * (plan_validate_rules.c), shared with plan_validate.c. Inside planner/ only.
 */
#ifndef SMD_PLAN_VALIDATE_INT_H
#define SMD_PLAN_VALIDATE_INT_H

#include "planner/plan_validate.h"

/* One gradient all-reduce over the whole flat buffer (Megatron-LM's local
 * DDP all-reduces its contiguous gradient buffer at once). */
#define WHOLE_BUFFER 1e30

/* What a run used when its row does not say. These read each framework's
 * documented defaults and example scripts; they are not corrections. A rule
 * applies when its text occurs (case-insensitive) in the row's framework or
 * source_key; the first match wins. */
typedef struct framework_rule {
    const char *framework;       /* substring of the framework column */
    const char *source;          /* or of source_key (NULL: none) */
    const char *label;           /* short name for notes */
    plan_recompute recompute;    /* when the recompute column is empty */
    plan_sharding sharding;      /* when optimizer_sharding is empty */
    int sp_with_tp;              /* sequence parallelism when tp > 1 and the row is silent */
    int flash_attention;         /* fused attention kernel (no s x s scores stored) */
    int dp_overlap;              /* gradient sync overlapped with backward */
    int tp_overlap;              /* TP collectives overlapped with GEMMs */
    int pp_overlap;              /* p2p sends overlapped with compute */
    unsigned schedules;          /* schedules searched when the row gives no virtual
                                  * stages and no micro-batch (0: 1F1B only) */
    double dp_bucket_bytes;      /* gradient all-reduce message (WHOLE_BUFFER: one) */
    int local_batch;             /* no gradient accumulation: micro-batch = global / dp */
    int launch_blocking;         /* the runs set CUDA_LAUNCH_BLOCKING=1 */
    const char *placement;       /* rank order, outermost first */
    const char *doc;             /* where the above comes from */
} framework_rule;

extern const framework_rule plan__framework_rules[];
extern const int plan__nframework_rules;
/* A framework no rule knows: the planner's own defaults, said in the notes. */
extern const framework_rule plan__default_rule;

/* GPU and network text -> catalog instance type. Every `need` string must
 * occur in the row's gpu_type, instance_type or interconnect text
 * (case-insensitive); the first rule that matches wins. An instance_type the
 * catalog knows is used before any rule. */
typedef struct cluster_rule {
    const char *need[2];
    const char *instance;
    const char *doc;
} cluster_rule;

extern const cluster_rule plan__cluster_rules[];
extern const int plan__ncluster_rules;

#endif
