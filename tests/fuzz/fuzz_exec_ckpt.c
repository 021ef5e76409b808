/*
 * fuzz_exec_ckpt.c: libFuzzer target for the checkpoint rank file's checks
 * (exec_ckpt_parse, exec_ckpt.h), which `smdplan exec --resume` runs on
 * every rank file before any of it is used.
 *
 * Each input is parsed three ways: as it is; with the header's sum made to
 * match (as a crafted file would have it), so the fuzzer reaches the field
 * checks past the sum; and, when the header's sizes are in range and make
 * the input's length, with every payload's sum made to match too. Besides
 * what ASan and UBSan catch it checks the contract:
 *   - failure: ST_EPARSE, the same code in the context, a non-empty
 *     one-line message naming the file;
 *   - success: the degrees multiply to the world and the writer's place is
 *     inside its layout; the payloads lie inside the input, in order, with
 *     the sizes the header gives; sealing the parsed header over a copy
 *     (exec_ckpt_seal) gives the input back byte for byte.
 * tests/fuzz/corpus/fuzz_exec_ckpt/ holds small rank files as seeds: one a
 * CPU run wrote, others built to the format (master weights in bf16,
 * ZeRO-3 shards, the old version 1).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec_ckpt.h"

#define FUZZ_NAME "fuzz_exec_ckpt"
#include "fuzz_util.h"

/* The header's sizes are ones exec_ckpt_layout may be given. */
static int sizes_in_range(const exec_ckpt_head *h)
{
    const int64_t max = (int64_t)1 << 53;
    return (h->elem_bytes == 2 || h->elem_bytes == 4 || h->elem_bytes == 8) &&
           (h->state_bytes == 4 || h->state_bytes == 8) && h->param_numel >= 0 &&
           h->param_numel <= max && h->held_numel >= 0 && h->held_numel <= max &&
           (h->has_master == 0 || h->has_master == 1);
}

static void parse_one(const char *buf, size_t n)
{
    exec_ckpt_view v;
    st_err err = {0};
    int rc = exec_ckpt_parse(buf, n, "rank-00000.bin", &v, &err);
    if (rc != ST_OK) {
        CHECK(rc == ST_EPARSE);
        fuzz_check_err_msg(rc, &err, 1);
        CHECK(strstr(err.msg, "rank-00000.bin") != NULL);
        return;
    }
    const exec_ckpt_head *h = &v.h;
    CHECK(h->tp >= 1 && h->pp >= 1 && h->dp >= 1 && h->tp * h->pp * h->dp == h->world);
    CHECK(h->rank >= 0 && h->rank < h->world && h->tp_rank < h->tp && h->pp_rank < h->pp &&
          h->dp_rank < h->dp && h->held_numel <= h->param_numel);
    size_t off[EXEC_CKPT__PARTS], bytes[EXEC_CKPT__PARTS];
    CHECK(exec_ckpt_layout(h, off, bytes) == n);
    const char *at = buf + sizeof *h;
    unsigned touch = 0;
    for (int i = 0; i < EXEC_CKPT__PARTS; i++) {
        CHECK(v.part[i] == at && v.part_bytes[i] == bytes[i]);
        CHECK(v.part[i] + v.part_bytes[i] + EXEC_CKPT_SUM_BYTES <= buf + n);
        if (bytes[i]) /* inside the input: ASan would say otherwise */
            touch += (unsigned char)v.part[i][0] + (unsigned char)v.part[i][bytes[i] - 1];
        at += bytes[i] + EXEC_CKPT_SUM_BYTES;
    }
    (void)touch;
    char *again = malloc(n);
    if (!again)
        return;
    memcpy(again, buf, n);
    exec_ckpt_seal(again, h);
    CHECK(memcmp(again, buf, n) == 0);
    free(again);
}

static void check_text(char *f, size_t size)
{
    parse_one(f, size);
    if (size >= sizeof(exec_ckpt_head)) {
        exec_ckpt_head h;
        memcpy(&h, f, sizeof h);
        h.head_sum = exec_ckpt_sum(&h, offsetof(exec_ckpt_head, head_sum));
        memcpy(f, &h, sizeof h);
        parse_one(f, size);
        size_t off[EXEC_CKPT__PARTS], bytes[EXEC_CKPT__PARTS];
        if (sizes_in_range(&h) && exec_ckpt_layout(&h, off, bytes) == size) {
            exec_ckpt_seal(f, &h);
            parse_one(f, size);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_run(data, size, FUZZ_EXACT, check_text);
}
