/*
 * exec_dev.h: the device table, the one interface through which the model
 * computes.
 *
 * A device (CPU: fp32, and fp64 for the gradient checks; CUDA: bf16
 * compute with fp32 master weights, exec_dev_cuda.c) is a table of
 * operations in its own file. The model (exec_model.c) calls them on opaque buffers and never
 * dereferences one, so it runs unchanged on a device whose buffers live in
 * GPU memory and whose operations are queued on a stream. llm.c's shape: one
 * operation per layer op, forward and backward side by side.
 *
 * Element types. dtype is the type of parameters, activations and
 * gradients (f32 on "cpu", f64 on "cpu64", bf16 on CUDA); state_dtype the
 * type of the optimizer's m and v and of master weights (f32, or f64 on
 * "cpu64"). has_master says whether the optimizer keeps master weights of
 * state_dtype beside the parameters (a bf16 device does; a device computing
 * in state_dtype updates its parameters directly). Token ids and targets are
 * int32 device buffers. Reductions that come back to the host (a loss, a
 * sum of squares) are double.
 *
 * Activation layout: sequence-first, Megatron's (T, B, C): row t * B + b
 * holds token t of sequence b, so a sequence-parallel shard (a range of t)
 * is one contiguous block of rows and the collectives move it whole.
 * Linear weights are (out, in) row-major, llm.c's convention: y = x W^T + b.
 *
 * Accumulation: every "_bwd_weight" op and embedding backward ADDS into its
 * gradient buffers (microbatches accumulate); input-gradient ops ADD into
 * dinp when accumulate is 1, else they overwrite it.
 *
 * Errors: operations return nothing; a device whose work can fail
 * asynchronously (CUDA) records the first failure and reports it through
 * sync(), which the runner calls after every op of the schedule. Allocation
 * failure is reported at once (exec_dev_alloc returns NULL and raises).
 *
 * Optional operations (NULL when a device has none): the fused attention
 * (flash_fwd / flash_bwd; a layout asking for it is refused on a device
 * without it), widen (only a device with has_master needs it),
 * adamw_multi (adamw range by range otherwise) and init_fill (the host draws
 * the initial weights otherwise).
 */
#ifndef SMD_EXEC_DEV_H
#define SMD_EXEC_DEV_H

#include <stddef.h>
#include <stdint.h>

#include "common/st.h"
#include "exec/exec.h"
#include "exec/exec_comm.h"
#include "exec/exec_init.h"

typedef struct exec_dev exec_dev;
typedef struct exec_dev_ops exec_dev_ops;

/* The running sums a device keeps for a step (acc_add, acc_take): the
 * loss, and the gradients' sum of squares for the global norm. */
typedef enum exec_acc { EXEC_ACC_LOSS = 0, EXEC_ACC_SUMSQ, EXEC_ACC__COUNT } exec_acc;

/* Arguments of AdamW for one contiguous range (Loshchilov & Hutter 2019,
 * Algorithm 2: decoupled weight decay). */
typedef struct exec_adamw {
    double lr, beta1, beta2, eps;
    double weight_decay;         /* 0 for biases and norms */
    double grad_scale;           /* multiplies every gradient (clipping) */
    int64_t step;                /* 1-based, for the bias corrections */
} exec_adamw;

/* One range of AdamW's multi-tensor form (adamw_multi): the operands of
 * one adamw call and its own weight decay. */
typedef struct exec_adamw_range {
    void *param, *master, *m, *v;
    const void *grad;
    int64_t n;
    double weight_decay;
} exec_adamw_range;

struct exec_dev_ops {
    const char *name;            /* "cpu", "cpu64", "cuda" */
    exec_dtype dtype;            /* parameters, activations, gradients */
    exec_dtype state_dtype;      /* Adam m, v (and master weights) */
    exec_dtype stat_dtype;       /* per-row statistics (see above) */
    int has_master;              /* 1: master weights of state_dtype beside the params */
    int host_memory;             /* 1: buffers are host memory (a host transport takes them) */

    int (*open)(exec_dev *d, int threads, st_err *err);
    void (*close)(exec_dev *d);
    /* Memory: bytes of buffer class c; alloc returns NULL when out of memory. */
    void *(*alloc)(exec_dev *d, size_t bytes, exec_mem_class c);
    void (*free)(exec_dev *d, void *p);
    void (*upload)(exec_dev *d, void *dst, const void *host_src, size_t bytes);
    void (*download)(exec_dev *d, void *host_dst, const void *src, size_t bytes);
    void (*copy)(exec_dev *d, void *dst, const void *src, size_t bytes);
    void (*zero)(exec_dev *d, void *p, size_t bytes);
    /* Wait for queued work; the first asynchronous failure, if any. */
    int (*sync)(exec_dev *d, st_err *err);
    /* The stream a device transport orders on (NULL on the CPU). */
    void *(*stream)(exec_dev *d);
    /* What the device is, in words (the GPU's model, capability, memory);
     * owned by the device. Optional (NULL: the table's name). */
    const char *(*describe)(exec_dev *d);

    /* ---- embedding (vocab-parallel: this rank holds rows [v0, v0 + vn)) ---- */
    /* out[n, C] = wte[tok - v0] for tokens in range, else 0 (Megatron
     * VocabParallelEmbedding: the TP all-reduce sums the ranks' parts). */
    void (*embed_fwd)(exec_dev *d, void *out, const int32_t *tok, const void *wte, int64_t n,
                      int64_t C, int64_t v0, int64_t vn);
    void (*embed_bwd)(exec_dev *d, void *dwte, const void *dout, const int32_t *tok, int64_t n,
                      int64_t C, int64_t v0, int64_t vn);
    /* Learned positions on sequence-first rows: x[t * B + b] += wpe[t0 + t]
     * for t in 0..T-1. */
    void (*pos_fwd)(exec_dev *d, void *x, const void *wpe, int64_t T, int64_t B, int64_t C,
                    int64_t t0);
    void (*pos_bwd)(exec_dev *d, void *dwpe, const void *dout, int64_t T, int64_t B, int64_t C,
                    int64_t t0);

    /* ---- LayerNorm (Ba et al. 2016) and RMSNorm (Zhang & Sennrich 2019) ----
     * rms = 1: RMSNorm, mean and b are NULL. mean and rstd [n] (stat_dtype)
     * are saved for the backward. */
    void (*norm_fwd)(exec_dev *d, void *out, void *mean, void *rstd, const void *inp,
                     const void *w, const void *b, int64_t n, int64_t C, int rms);
    void (*norm_bwd_input)(exec_dev *d, void *dinp, const void *dout, const void *inp,
                           const void *w, const void *mean, const void *rstd, int64_t n,
                           int64_t C, int rms, int accumulate);
    void (*norm_bwd_weight)(exec_dev *d, void *dw, void *db, const void *dout, const void *inp,
                            const void *mean, const void *rstd, int64_t n, int64_t C, int rms);

    /* ---- linear: out[n, OC] = inp[n, C] W[OC, C]^T + bias (+ res) ---- */
    /* res (NULL: none) is a residual [n, OC] added before out is stored,
     * once rounded (a GPU adds it in the product's epilogue: cuBLASLt's
     * beta C); never out itself */
    void (*matmul_fwd)(exec_dev *d, void *out, const void *inp, const void *w, const void *bias,
                       const void *res, int64_t n, int64_t C, int64_t OC);
    /* dinp[n, C] (+)= dout[n, OC] W */
    void (*matmul_bwd_input)(exec_dev *d, void *dinp, const void *dout, const void *w,
                             int64_t n, int64_t C, int64_t OC, int accumulate);
    /* dw[OC, C] += dout^T inp; dbias[OC] += column sums of dout (dbias may be NULL) */
    void (*matmul_bwd_weight)(exec_dev *d, void *dw, void *dbias, const void *dout,
                              const void *inp, int64_t n, int64_t C, int64_t OC);
    /* The MLP's product and its GELU together: pre[n, OC] = inp W^T + bias
     * and act = gelu(pre) (pre kept for the backward); and dpre[n, C] =
     * gelu'(pre) * (dout W). Each rounds its output once, the GELU taken
     * from the product's unrounded sum (a GPU applies it in the product's
     * epilogue: cuBLASLt GELU_AUX_BIAS, DGELU); the CPU devices the same way,
     * so that "cpu-bf16" rounds as the GPU does. */
    void (*matmul_gelu_fwd)(exec_dev *d, void *act, void *pre, const void *inp, const void *w,
                            const void *bias, int64_t n, int64_t C, int64_t OC);
    void (*matmul_bwd_input_gelu)(exec_dev *d, void *dpre, const void *dout, const void *w,
                                  const void *pre, int64_t n, int64_t C, int64_t OC);

    /* ---- activations ---- */
    /* GELU, tanh approximation (Hendrycks & Gimpel 2016, as GPT-2). */
    void (*gelu_fwd)(exec_dev *d, void *out, const void *inp, int64_t n);
    void (*gelu_bwd)(exec_dev *d, void *dinp, const void *inp, const void *dout, int64_t n);
    /* SwiGLU (Shazeer 2020): inp[n, 2F] = (gate | up), out[n, F] =
     * silu(gate) * up. */
    void (*swiglu_fwd)(exec_dev *d, void *out, const void *inp, int64_t n, int64_t F);
    void (*swiglu_bwd)(exec_dev *d, void *dinp, const void *inp, const void *dout, int64_t n,
                       int64_t F);

    /* ---- attention ----
     * RoPE (Su et al. 2021, rotate-half form as Llama): H heads of size hd
     * starting at x, rows of stride ld elements, sequence-first rows
     * (position t of row t * B + b). bwd rotates back (in place). */
    void (*rope_fwd)(exec_dev *d, void *x, int64_t T, int64_t B, int64_t H, int64_t hd,
                     int64_t ld, double theta);
    void (*rope_bwd)(exec_dev *d, void *dx, int64_t T, int64_t B, int64_t H, int64_t hd,
                     int64_t ld, double theta);
    /* Causal attention with grouped-query heads. qkv rows [T * B, (Hq + 2
     * Hkv) hd]: queries, keys, values; query head h uses kv head h / (Hq /
     * Hkv). probs [B, Hq, T, T] keeps the softmax; out [T * B, Hq hd] may be
     * NULL (probs only, for selective recompute). */
    void (*attention_fwd)(exec_dev *d, void *out, void *probs, const void *qkv, int64_t T,
                          int64_t B, int64_t Hq, int64_t Hkv, int64_t hd);
    /* dqkv = gradient through attention (overwritten); dprobs is scratch of
     * probs' size [B, Hq, T, T]. */
    void (*attention_bwd)(exec_dev *d, void *dqkv, void *dprobs, const void *dout,
                          const void *qkv, const void *probs, int64_t T, int64_t B, int64_t Hq,
                          int64_t Hkv, int64_t hd);
    /* The same attention fused (FlashAttention, Dao et al. 2022; Dao 2023,
     * Algorithms 1 and 2): no T x T matrix is kept; lse [B, Hq, T]
     * (stat_dtype) saves each query row's log-sum-exp of its scaled scores
     * for the backward, which recomputes the probabilities from it, qkv and
     * the output out. Optional (NULL). */
    void (*flash_fwd)(exec_dev *d, void *out, void *lse, const void *qkv, int64_t T, int64_t B,
                      int64_t Hq, int64_t Hkv, int64_t hd);
    void (*flash_bwd)(exec_dev *d, void *dqkv, const void *dout, const void *qkv,
                      const void *out, const void *lse, int64_t T, int64_t B, int64_t Hq,
                      int64_t Hkv, int64_t hd);

    /* ---- vocab-parallel softmax cross-entropy (Megatron cross_entropy.py)
     * over logits [n, vn] holding vocab columns [v0, v0 + vn). Between the
     * steps the caller all-reduces over the TP group: rowmax with MAX, the
     * [2n] (sum of exp, target logit) with SUM. rowmax, stats and losses are
     * stat_dtype. ---- */
    void (*ce_rowmax)(exec_dev *d, void *rowmax, const void *logits, int64_t n, int64_t vn);
    /* stats[0..n) = sum of exp(logit - max), stats[n..2n) = the target's
     * logit (0 off this rank); the logits may become exp(logit - max) (the
     * device's choice: ce_loss_bwd takes them as ce_stats left them). A
     * device may keep what ce_rowmax learnt of the same rows for it (the
     * CUDA device keeps each row's sum under its local maximum and rescales
     * it to the global one: no second pass over the logits), so ce_stats
     * follows the ce_rowmax of the same logits. */
    void (*ce_stats)(exec_dev *d, void *stats, void *logits, const void *rowmax,
                     const int32_t *targets, int64_t n, int64_t vn, int64_t v0);
    /* losses[n] = log(sum) + max - target; the exponentials become dlogits =
     * (softmax - onehot) * scale, in place. */
    void (*ce_loss_bwd)(exec_dev *d, void *losses, void *logits, const void *rowmax,
                        const void *stats, const int32_t *targets, int64_t n, int64_t vn,
                        int64_t v0, double scale);

    /* ---- elementwise and reductions ---- */
    void (*add)(exec_dev *d, void *y, const void *x, int64_t n);          /* y += x */
    void (*add3)(exec_dev *d, void *out, const void *a, const void *b, int64_t n); /* a + b */
    void (*scale)(exec_dev *d, void *x, double s, int64_t n);
    /* Synchronous, to the host: sum of n stat_dtype elements (the losses),
     * sum of squares of n dtype elements (the gradients' norm). */
    double (*sum)(exec_dev *d, const void *x, int64_t n);
    double (*sumsq)(exec_dev *d, const void *x, int64_t n);
    /* The same sums kept on the device and read once per step, so a device
     * with a queue does not wait for each: acc_add adds k times the sum of
     * n stat_dtype elements (EXEC_ACC_LOSS) or the sum of squares of n
     * dtype elements (EXEC_ACC_SUMSQ; k unused) to that running sum,
     * without waiting; acc_take waits for the queued work and returns the
     * running sum, which starts again from 0. The order of the additions is
     * fixed (the same sums for the same calls). */
    void (*acc_add)(exec_dev *d, exec_acc which, const void *x, int64_t n, double k);
    double (*acc_take)(exec_dev *d, exec_acc which);

    /* ---- optimizer ---- */
    /* AdamW on n elements: param (dtype), grad (dtype), m and v
     * (state_dtype), master (state_dtype, or NULL without has_master). */
    void (*adamw)(exec_dev *d, void *param, void *master, const void *grad, void *m, void *v,
                  int64_t n, const exec_adamw *a);
    /* AdamW on nr ranges at once, each with its own weight decay (a's is
     * not read): a GPU applies them all in one launch, as apex's and
     * PyTorch's multi-tensor AdamW do. The same results as adamw on each
     * range. Optional (NULL: adamw range by range). */
    void (*adamw_multi)(exec_dev *d, const exec_adamw_range *r, int nr, const exec_adamw *a);
    /* dst[n] (state_dtype) = src[n] (dtype): master weights made from the
     * parameters (Megatron's Float16OptimizerWithFloat16Params clones its
     * fp32 main parameters from the bf16 model's). Optional (NULL). */
    void (*widen)(exec_dev *d, void *dst, const void *src, int64_t n);
    /* Initial weights drawn on the device (exec_init.h): dst[0 .. n) of
     * dtype = elements k0 .. k0 + n of the piece f describes, the same
     * numbers exec_init_draw gives on the host, rounded to dtype. Optional
     * (NULL: the host draws them and uploads). */
    void (*init_fill)(exec_dev *d, void *dst, const exec_init_fill *f, int64_t k0, int64_t n);
    /* Fill a buffer of dtype from host doubles (initialisation, loading). */
    void (*upload_f64)(exec_dev *d, void *dst, const double *src, int64_t n);
    void (*download_f64)(exec_dev *d, double *dst, const void *src, int64_t n);
};

/* Bytes the executor holds on a device, by class: now and at the peak. */
typedef struct exec_mem {
    double cur_bytes[EXEC_MEM__COUNT];
    double peak_class_bytes[EXEC_MEM__COUNT];
    double cur_total_bytes;
    double peak_total_bytes;
} exec_mem;

struct exec_dev {
    const exec_dev_ops *ops;
    size_t elem_bytes;           /* exec_dtype_bytes(ops->dtype) */
    size_t state_bytes;          /* exec_dtype_bytes(ops->state_dtype) */
    size_t stat_bytes;           /* exec_dtype_bytes(ops->stat_dtype) */
    int threads;
    exec_mem mem;
    double flops;                /* FLOPs of the matrix products run (hardware FLOPs) */
    /* Most bytes in use on the accelerator at once, from its own memory API
     * (cudaMemGetInfo: total - free, which counts the context, the
     * libraries' buffers and any other process on the GPU), sampled at every
     * sync; 0 on a device without one. */
    double device_peak_bytes;
    /* The accelerator's memory (its total, as its API reports it); 0 on a
     * host device. */
    double mem_total_bytes;
    /* acc_add's running sums on a host device (the CPU devices) */
    double host_acc[EXEC_ACC__COUNT];
    void *impl;
};

/* Whether this build has a device of that name ("cpu", "cpu64",
 * "cpu-bf16", "cuda" when built); nothing is opened. */
int exec_dev_built(const char *name);
/* The device named name. The cuda device is a module, opened here the first
 * time (exec_module.h). ST_EUNSUPPORTED naming the devices built when this
 * build has none of that name; ST_ENOENT with one line when its module is
 * missing or cannot be loaded. */
int exec_dev_lookup(const char *name, const exec_dev_ops **out, st_err *err);
/* Whether the device can be looked up here, its module found without
 * being loaded (so a launcher asks nothing of cuBLASLt): ST_OK, or
 * exec_dev_lookup's ST_EUNSUPPORTED or ST_ENOENT line for a module that is
 * missing. A module found but not loadable is reported by exec_dev_lookup
 * only. */
int exec_dev_present(const char *name, st_err *err);
/* The same without the reason: NULL when the device cannot be had. */
const exec_dev_ops *exec_dev_find(const char *name);
/* "cpu cpu64 ..." style list of the devices built, for messages. */
const char *exec_dev_names(void);
/* Whether the device named name has the fused attention (flash_fwd),
 * known without opening its module; 0 for a name not built. */
int exec_dev_flash(const char *name);

/* Open a device with threads BLAS threads. ST_EUNSUPPORTED names the built
 * devices when name is unknown; ST_ENOENT when its module cannot be had. */
int exec_dev_open(const char *name, int threads, exec_dev **out, st_err *err);
void exec_dev_close(exec_dev *d);

/* Allocate bytes counted under class c, zeroed; NULL (and ST_ENOMEM raised,
 * naming the class and size) when out of memory. */
void *exec_dev_alloc(exec_dev *d, size_t bytes, exec_mem_class c, st_err *err);
/* Free what exec_dev_alloc returned (NULL is fine); bytes and c as given. */
void exec_dev_free(exec_dev *d, void *p, size_t bytes, exec_mem_class c);

/* p advanced by n elements of the device's dtype. */
static inline void *exec_dev_at(const exec_dev *d, const void *p, int64_t n)
{
    return (char *)p + (size_t)n * d->elem_bytes;
}

#endif
