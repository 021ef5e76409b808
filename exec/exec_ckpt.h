/*
 * exec_ckpt.h: the file format of a checkpoint's rank file (internal to
 * exec/; the unit tests and the fuzz target read it too): its header, the
 * checks a file's bytes pass before any field is used, and the sums that
 * find a damaged payload.
 *
 * Format version 2, in host byte order (a checkpoint is resumed on the kind
 * of machine that wrote it):
 *
 *   header  exec_ckpt_head: 8-byte fields; the last, head_sum, is the sum
 *           (exec_ckpt_sum) of the bytes before it
 *   params  param_numel elements of elem_bytes, then their 8-byte sum
 *   master  held_numel elements of state_bytes when has_master, else
 *           nothing; then their sum
 *   m, v    AdamW's moments, held_numel elements of state_bytes each,
 *           each followed by its sum
 *
 * Version 1 had no sums (and no has_master): it is refused with a message
 * saying so, since a damaged version 1 file would resume silently; resume
 * it with the build that wrote it, or start afresh.
 */
#ifndef SMD_EXEC_CKPT_H
#define SMD_EXEC_CKPT_H

#include <stddef.h>
#include <stdint.h>

#include "common/st.h"

#define EXEC_CKPT_MAGIC "SMDCKPT1"
#define EXEC_CKPT_VERSION 2
#define EXEC_CKPT_SUM_BYTES 8

/* The header: what a checkpoint must agree on with the run that loads it,
 * and the writer's place in its layout. */
typedef struct exec_ckpt_head {
    char magic[8];
    int64_t version, world, rank, tp, pp, dp, virt, sharding;
    int64_t layers, hidden, heads, kv_heads, ffn, seq, vocab, arch, tied, gated;
    int64_t elem_bytes, state_bytes, param_numel, held_numel;
    int64_t seed, step;
    int64_t tp_rank, pp_rank, dp_rank; /* the writer's place in its layout */
    double dp_bucket_bytes;            /* the writer's buckets (they set its shards) */
    int64_t has_master;                /* a master payload follows the parameters */
    uint64_t head_sum;                 /* exec_ckpt_sum of the bytes before it */
} exec_ckpt_head;

/* The payloads, in file order. */
typedef enum exec_ckpt_part {
    EXEC_CKPT_PARAMS = 0,
    EXEC_CKPT_MASTER,
    EXEC_CKPT_M,
    EXEC_CKPT_V,
    EXEC_CKPT__PARTS
} exec_ckpt_part;

/* A rank file checked by exec_ckpt_parse: its header and where each
 * payload lies in the caller's buffer (borrowed: valid while it is). */
typedef struct exec_ckpt_view {
    exec_ckpt_head h;
    const char *part[EXEC_CKPT__PARTS];
    size_t part_bytes[EXEC_CKPT__PARTS];
} exec_ckpt_view;

/* The 64-bit sum of n bytes: FNV-1a over 8-byte words (exec_ckpt.c says
 * why it finds every single flipped bit). */
uint64_t exec_ckpt_sum(const void *p, size_t n);

/* Offsets and sizes of the payloads after header h, whose sizes must be in
 * the ranges exec_ckpt_parse checks; returns the file's size in bytes. */
size_t exec_ckpt_layout(const exec_ckpt_head *h, size_t off[EXEC_CKPT__PARTS],
                        size_t bytes[EXEC_CKPT__PARTS]);

/* Write header h, with its sum, at the start of file (exec_ckpt_layout(h)
 * bytes, the payloads already in place) and each payload's sum after it. */
void exec_ckpt_seal(char *file, const exec_ckpt_head *h);

/* Check the len bytes of a rank file (path names it in messages) before
 * any of it is used: the magic, the format version, the header's sum, every
 * header field within its range (the degrees multiply to the world, the
 * writer's place within it, sizes a rank can hold), the length its header
 * implies, and each payload's sum. ST_EPARSE with one line naming the first
 * problem; on success *v holds the header and the payloads' places. */
int exec_ckpt_parse(const void *buf, size_t len, const char *path, exec_ckpt_view *v,
                    st_err *err);

#endif
