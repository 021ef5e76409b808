/*
 * exec_model.h: the model as one rank holds it (internal to exec/).
 *
 * Parameters. The whole model is a list of global tensors (exec_gtensor,
 * the same on every layout: wte, wpe, per layer ln1, q, k, v, o, ln2, fc or
 * gate/up, proj, final norm, head). A rank holds local tensors
 * (exec_tensor), each made of pieces of global tensors: Megatron's split
 * (Shoeybi et al. 2019, Sec. 3): column-parallel layers (q, k, v; fc, gate,
 * up; the vocab-parallel embedding and head) hold a range of rows of their
 * global weight, row-parallel layers (o, proj) a range of columns; norms,
 * positions and row-parallel biases are whole on every TP rank. A fused
 * local tensor (q | k | v, gate | up) lists several pieces. Every element's
 * initial value is a function of (seed, global tensor, global index)
 * alone, so every layout starts from the same model.
 *
 * Units. Local tensors are grouped in units: the embedding, the positions,
 * one unit per transformer layer, the final norm, the head. A unit's tensors
 * are contiguous in the rank's flat parameter and gradient buffers; the
 * data-parallel code reduces gradients in buckets of whole units and ZeRO-3
 * gathers one unit at a time.
 *
 * Chunks. A pipeline rank runs v chunks (virtual stages); chunk c is global
 * virtual stage g = c * pp + s and holds a contiguous range of layers (the
 * planner's split, plan_stage_layers, divided evenly over the rank's
 * chunks). Stage 0 also holds the embedding, the last global stage the final
 * norm, the head and the loss.
 *
 * Activations are sequence-first (T, B, C), see exec_dev.h. With sequence
 * parallelism the residual stream holds T / tp positions per rank ("Nr"
 * rows), the inputs of the column-parallel layers all T ("N" rows).
 */
#ifndef SMD_EXEC_MODEL_H
#define SMD_EXEC_MODEL_H

#include <stdint.h>

#include "exec/exec.h"
#include "exec/exec_comm.h"
#include "exec/exec_dev.h"
#include "exec/exec_init.h"

/* Roles of the local tensors of a unit. */
typedef enum exec_role {
    R_WTE = 0,                   /* token embedding [V/tp, C] (also a tied head's copy) */
    R_WPE,                       /* learned positions [seq, C] */
    R_LN1W, R_LN1B,
    R_QKVW, R_QKVB,              /* [(Hq + 2 Hkv) hd / tp, C] */
    R_OW, R_OB,                  /* [C, Hq hd / tp], bias [C] */
    R_LN2W, R_LN2B,
    R_FCW, R_FCB,                /* [F / tp, C] or gated [2 F / tp, C] (gate | up) */
    R_PROJW, R_PROJB,            /* [C, F / tp], bias [C] */
    R_LNFW, R_LNFB,
    R_HEAD,                      /* untied LM head [V/tp, C] */
    R__COUNT
} exec_role;

typedef enum exec_unit_kind {
    U_EMBED = 0,                 /* R_WTE on global stage 0 */
    U_POS,                       /* R_WPE (GPT) */
    U_LAYER,
    U_FINAL_NORM,
    U_HEAD,                      /* R_HEAD, or R_WTE: the tied copy on the last stage */
} exec_unit_kind;

/* Initialisation of a global tensor. */

/* Flags of a local tensor. */
enum {
    EXEC_T_DECAY = 1,            /* AdamW weight decay (matrices and embeddings) */
    EXEC_T_TP_REPL = 2,          /* the same on every TP rank */
    EXEC_T_SP_PARTIAL = 4,       /* with sequence parallelism each TP rank has part of its
                                  * gradient (norms, positions): summed over TP */
    EXEC_T_TIED_COPY = 8,        /* the last stage's copy of the tied embedding */
};

#define EXEC_TNAME_MAX 48
#define EXEC_PIECES_MAX 3

typedef struct exec_gtensor {
    char name[EXEC_TNAME_MAX];
    int64_t rows, cols;
    int init;
    double std;
    int64_t offset;              /* in the global flat order (dumps) */
} exec_gtensor;

typedef struct exec_piece {
    int gid;                     /* global tensor */
    int64_t row0, nrows, col0, ncols;
} exec_piece;

typedef struct exec_tensor {
    exec_role role;
    int unit;
    int64_t numel;
    int64_t off;                 /* element offset within its unit */
    unsigned flags;
    int npieces;
    exec_piece piece[EXEC_PIECES_MAX];
} exec_tensor;

typedef struct exec_unit {
    exec_unit_kind kind;
    int layer;                   /* global layer (U_LAYER) */
    int chunk;                   /* local chunk */
    int tensor[R__COUNT];        /* local tensor index per role, -1 if absent */
    int64_t numel;
    int64_t off;                 /* element offset in the flat buffers */
    int bucket;
    int contrib;                 /* weight-gradient passes per microbatch (2: a tied
                                  * embedding that is also this rank's head) */
    int wdone;                   /* passes done this step */
    /* ZeRO-3: the gathered parameters while in use */
    void *gathered;
    int refs;
} exec_unit;

typedef struct exec_bucket {
    int unit0, nunits;           /* consecutive units */
    int64_t off, len;            /* flat range; len a multiple of dp */
    int64_t shard_off;           /* offset of this rank's shard in the state buffers */
    int64_t held_off, held_len;  /* what this rank updates: flat offset and length */
    int ready;                   /* units whose gradients are final this step */
    int started;                 /* reduction started this step */
    exec_req *req;
} exec_bucket;

typedef struct exec_chunk {
    int g;                       /* global virtual stage */
    int layer0, nlayers;
    int first, last;             /* holds the embedding / the head */
    int unit_embed, unit_pos, unit_layer0, unit_final, unit_head; /* -1 if absent */
} exec_chunk;

/* Local sizes of one microbatch on this rank. */
typedef struct exec_dims {
    int64_t C, hd, Hl, Hkvl, Wqkv, Fl, Ffc; /* Ffc: fc width (Fl or 2 Fl) */
    int64_t Vl, v0;              /* vocab rows held and the first */
    int64_t T, Tl, B, N, Nr;     /* N = T B rows, Nr = Tl B residual rows */
    int64_t t0;                  /* first position of this rank's residual rows */
    int gpt, gated;              /* GPT: LayerNorm, biases, learned positions */
} exec_dims;

/* One layer's stored activations (pointers into a slot or the workspace). */
typedef struct exec_acts {
    void *x_in;                  /* [Nr, C] residual input */
    void *ln1, *ln1_mean, *ln1_rstd; /* [N, C] (gathered with SP), [Nr], [Nr] */
    void *qkv;                   /* [N, Wqkv], rotary applied */
    void *probs;                 /* [B, Hl, T, T]; NULL with selective recompute or flash */
    void *lse;                   /* [B, Hl, T] stat_dtype, fused attention only */
    void *atty;                  /* [N, Hl hd] */
    void *x_mid;                 /* [Nr, C] */
    void *ln2, *ln2_mean, *ln2_rstd;
    void *fc;                    /* [N, Ffc] */
    void *act;                   /* [N, Fl] */
} exec_acts;

/* One layer's output gradients kept from its input-gradient pass for its
 * weight-gradient pass (zero bubble's W; Qi et al. 2023). */
typedef struct exec_douts {
    void *dln1, *dln2;           /* [Nr, C] at the norms' outputs (local rows) */
    void *dqkv;                  /* [N, Wqkv] */
    void *dproj;                 /* [N, C] at the attention projection's output */
    void *dfc;                   /* [N, Ffc] */
    void *dmlp;                  /* [N, C] at the MLP projection's output */
} exec_douts;

/* The head's stored activations. */
typedef struct exec_head_acts {
    void *x;                     /* [Nr, C] the last layer's output */
    void *lnf, *lnf_mean, *lnf_rstd;
    void *dlogits;               /* [N, Vl]: logits turned into their gradient at F */
    void *dlnf;                  /* [Nr, C] kept for W */
} exec_head_acts;

/* Per-rank timers, seconds, accumulated over a step. */
typedef struct exec_timers {
    double tp_s;                 /* TP collectives (and the SP-partial gradients' sum) */
    double dp_s;                 /* DP collectives and ZeRO-3 gathers */
    double emb_s;                /* the tied embedding's sum over its group (optimizer) */
} exec_timers;

/* Everything the layers need. */
typedef struct exec_model {
    const plan_model *m;
    const plan_layout *l;
    exec_dev *dev;
    exec_comm *tp;               /* tensor-parallel group */
    exec_comm *dp;               /* data-parallel group */
    exec_comm *emb;              /* first and last pipeline stage (tied embedding), or NULL */
    int tp_rank, dp_rank;
    exec_dims d;
    size_t elem_bytes;           /* bytes of a parameter (the device's dtype) */
    int sp;                      /* sequence parallel */
    int zero3;
    int flash;                   /* fused attention (layout.flash_attention) */
    exec_timers *timers;

    /* parameters */
    int ngt;
    exec_gtensor *gt;
    int nt;
    exec_tensor *t;
    int nu;
    exec_unit *u;
    int nb;
    exec_bucket *b;
    int nchunks;
    exec_chunk *chunk;
    int64_t flat_numel;          /* flat buffers (params, grads), padded buckets */
    int64_t held_numel;          /* optimizer state elements (whole or shards) */
    void *params;                /* flat [flat_numel]; NULL with ZeRO-3 */
    void *pshard;                /* ZeRO-3: this rank's parameter shards [held_numel] */
    void *grads;                 /* flat [flat_numel] */
    void *gshard;                /* ZeRO-2/3: reduced gradient shards [held_numel] */
    void *sp_pack;               /* SP-partial gradients packed for one TP all-reduce */
    int64_t sp_pack_numel;

    /* workspace (one layer's scratch, shared by every op) */
    struct {
        exec_acts a;             /* intermediates when not stored */
        exec_douts g;            /* output gradients in a full backward */
        void *res[2];            /* [Nr, C] residual ping-pong (full recompute forward) */
        void *lnl;               /* [Nr, C] a norm's local output before the gather */
        void *big;               /* [N, max(C, Ffc, Wqkv)] gathered / partial products */
        void *probs;             /* [B, Hl, T, T] selective recompute (not with flash) */
        void *dprobs;            /* [B, Hl, T, T] (not with flash) */
        void *dres;              /* [Nr, C] residual gradient */
        void *dx;                /* [N, max(C, Ffc, Wqkv)] */
        void *rowmax, *stats, *losses; /* [N], [2N], [N] of stat_dtype */
    } ws;
    /* views of a slot and a W store, one chunk's layers (one op at a time) */
    struct {
        exec_acts *acts, *wacts;
        exec_douts *douts;
        void **ckpt;
    } view;
    exec_acts *ws_rec;           /* full recompute: one group's activations, recomputed */
    void *ws_block, *rec_block;  /* the allocations behind ws and ws_rec */
    size_t ws_bytes, rec_bytes;
} exec_model;

/* ---- exec_params.c ---- */

/* Build the global tensor list, this rank's tensors, units, buckets and
 * chunks for its (tp_rank, pp_rank), allocate the flat buffers and fill the
 * parameters from the seed. */
int exec_model_build(exec_model *x, int pp_rank, uint64_t seed, st_err *err);
/* Only the tables (no device, nothing allocated on one): how a rank of any
 * layout holds the model, e.g. the layout that wrote a checkpoint. m, l,
 * tp_rank and dp_rank must be set; elem_bytes sizes the buckets. */
int exec_model_tables(exec_model *x, int pp_rank, size_t elem_bytes, st_err *err);

/* Global flat index (exec_gtensor.offset order) of element k of tensor t. */
int64_t exec_tensor_global(const exec_model *x, const exec_tensor *t, int64_t k);
void exec_model_free(exec_model *x);

/* Parameter / gradient pointer of role r in unit u, NULL if absent. With
 * ZeRO-3 the unit must be gathered (exec_z3_acquire). */
void *exec_param(const exec_model *x, int u, exec_role r);
void *exec_grad(const exec_model *x, int u, exec_role r);

/* Value of element i of global tensor g at initialisation. */
double exec_init_value(const exec_gtensor *g, int gid, int64_t i, uint64_t seed);

/* ---- exec_model.c: forward and backward ---- */

/* Bytes of one (microbatch, chunk) slot of stored activations. */
size_t exec_slot_bytes(const exec_model *x, const exec_chunk *c);
/* Where a chunk's received input activation goes in its slot. */
void *exec_slot_input(const exec_model *x, int chunk, void *slot);

/* Carve the workspace (and the recompute block) from their allocations;
 * with NULL blocks only the sizes are set (exec_params.c allocates). */
void exec_ws_layout(exec_model *x, void *ws_block, void *rec_block);

/* One chunk's forward for a microbatch.
 *   tokens/targets: int32 device buffers [N] (stage 0 / last stage only)
 *   input: [Nr, C] the received activation (not stage 0)
 *   output: [Nr, C] for the next stage (not the last stage)
 *   slot: block of exec_slot_bytes for stored activations
 *   loss_scale: 1 / (tokens of the global batch)
 * The last chunk adds loss_scale times its losses' sum to the device's
 * EXEC_ACC_LOSS running sum (read once per step with acc_take). */
int exec_chunk_fwd(exec_model *x, int chunk, void *slot, const int32_t *tokens,
                   const int32_t *targets, const void *input, void *output, double loss_scale,
                   st_err *err);

/* One chunk's backward. dout [Nr, C] is the output's gradient (not the last
 * stage); dinput [Nr, C] receives the input's gradient (not stage 0). With
 * split, only input gradients are computed and what the weight pass needs
 * is kept in wstore (a block of exec_wstore_bytes), else the weight
 * gradients are accumulated at once. */
int exec_chunk_bwd(exec_model *x, int chunk, void *slot, const int32_t *tokens,
                   const void *dout, void *dinput, int split, void *wstore, st_err *err);
/* Zero bubble's W: the weight gradients from a wstore filled by a split
 * exec_chunk_bwd. */
int exec_chunk_wgrad(exec_model *x, int chunk, void *slot, const int32_t *tokens, void *wstore,
                     st_err *err);
size_t exec_wstore_bytes(const exec_model *x, const exec_chunk *c);

/* Called when unit u's weight gradients for one microbatch are final
 * (exec_dp.c starts the bucket's reduction when the last arrives). */
int exec_unit_wgrad_done(exec_model *x, int u, st_err *err);

/* ---- exec_dp.c ---- */

/* ZeRO-3: gather unit u's parameters from the DP shards (refcounted). */
int exec_z3_acquire(exec_model *x, int u, st_err *err);
void exec_z3_release(exec_model *x, int u);

/* Zero every gradient and bucket state at the start of a step. */
void exec_dp_step_begin(exec_model *x);
/* Drive the reductions in flight (between pipeline ops). */
int exec_dp_progress(exec_model *x, st_err *err);
/* Finish the step's gradient sync: every bucket reduced (started now if
 * not yet), SP-partial gradients summed over TP, the tied embedding's
 * summed over its group. Afterwards the gradients this rank updates are
 * final (exec_held_grad). */
int exec_dp_finish(exec_model *x, st_err *err);
/* After the optimizer: the updated shards gathered back (ZeRO-1/2). */
int exec_dp_gather_params(exec_model *x, st_err *err);

/* Parameter and gradient of flat element e of bucket b's held range, and
 * the offset of e in the optimizer's state buffers. */
void *exec_held_param(const exec_model *x, const exec_bucket *b, int64_t e);
void *exec_held_grad(const exec_model *x, const exec_bucket *b, int64_t e);
int64_t exec_held_state(const exec_bucket *b, int64_t e);

/* f on every piece of a tensor this rank holds: bucket b, the tensor's role
 * r and its element range [lo, hi) in the flat buffer, in bucket and unit
 * order. */
typedef void (*exec_held_fn)(const exec_bucket *b, int r, const exec_tensor *t, int64_t lo,
                             int64_t hi, void *ctx);
void exec_each_held(const exec_model *x, exec_held_fn f, void *ctx);

/* TP collectives, timed. exec_tp_allreduce takes the element type (the
 * device's dtype for activations, its stat_dtype for the cross-entropy's
 * statistics); the others move activations (dtype). */
int exec_tp_allreduce(exec_model *x, void *buf, int64_t n, exec_dtype t, exec_redop op,
                      st_err *err);
int exec_tp_reduce_scatter(exec_model *x, const void *send, void *recv, int64_t recv_n,
                           st_err *err);
int exec_tp_allgather(exec_model *x, const void *send, void *recv, int64_t send_n, st_err *err);

#endif
