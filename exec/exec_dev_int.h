/*
 * exec_dev_int.h: the device tables libexec holds (listed in
 * exec_features.c) and constants every device shares.
 */
#ifndef SMD_EXEC_DEV_INT_H
#define SMD_EXEC_DEV_INT_H

#include "exec/exec_dev.h"

extern const exec_dev_ops exec_dev_cpu_ops;
extern const exec_dev_ops exec_dev_cpu64_ops;
extern const exec_dev_ops exec_dev_cpu_bf16_ops;
/* (the cuda device's table is in the module smdplan-cuda.so: exec_module.h) */

/* Epsilon of LayerNorm and RMSNorm: GPT-2's layer_norm_epsilon and Llama 2's
 * rms_norm_eps are both 1e-5 (their Hugging Face configs). */
#define EXEC_NORM_EPS 1e-5

/* RoPE base: 10000 (Su et al. 2021; Llama 1 and 2). */
#define EXEC_ROPE_THETA 10000.0

#endif
