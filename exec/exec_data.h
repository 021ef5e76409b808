/*
 * exec_data.h: the training data (internal to exec/).
 *
 * Sequences are numbered globally: step s uses sequences s G .. s G + G - 1
 * (G = the global batch), so the data a step sees does not depend on how
 * the batch is split. Data-parallel rank d takes the contiguous block
 * d G / dp .. (d + 1) G / dp - 1 of them (no overlap, nothing left out),
 * microbatch i of that block the sequences i B .. i B + B - 1. Resuming at
 * step s continues at sequence s G: the data position is the step.
 *
 *   synthetic  token t of sequence k: a hash of (seed, k, t) mod vocab
 *   text       a file read as bytes (vocab >= 256)
 *   tokens     a file of little-endian uint16 token ids (each < vocab)
 * From a file, sequence k is the seq + 1 tokens at offset (k seq) mod
 * (n - seq): inputs the first seq, targets the last seq (next-token).
 */
#ifndef SMD_EXEC_DATA_H
#define SMD_EXEC_DATA_H

#include <stdint.h>

#include "exec/exec.h"

typedef struct exec_data {
    exec_data_kind kind;
    uint64_t seed;
    int64_t vocab, seq;
    int32_t *tok;                /* the file's tokens (not synthetic) */
    int64_t ntok;
} exec_data;

int exec_data_open(exec_data *d, const exec_config *cfg, st_err *err);
void exec_data_close(exec_data *d);

/* Inputs and targets [seq] of global sequence k. */
void exec_data_sequence(const exec_data *d, int64_t k, int32_t *in, int32_t *tgt);

/* Microbatch mb of DP rank dp_rank at 0-based step, sequence-first
 * (in[t * B + b]); scratch has room for 2 seq ints. */
void exec_data_microbatch(const exec_data *d, const plan_layout *l, int64_t step, int dp_rank,
                          int mb, int32_t *in, int32_t *tgt, int32_t *scratch);

#endif
