/*
 * test_exec_ckpt.c: a checkpoint's rank file is checked whole before any of
 * it is used (exec_ckpt.h).
 *
 *  - A file written as exec_ckpt_save writes it (exec_ckpt_layout, then
 *    exec_ckpt_seal) parses, with each payload where the layout puts it.
 *  - Every header field out of its range is refused by name, with the
 *    header's sum made to match (a crafted file): the layout degrees 2^62
 *    that once divided by zero or overflowed the stack, negative sizes,
 *    ranks outside the layout.
 *  - Every single flipped bit of the file, header or payload, and every
 *    truncation is refused: the sums are FNV-1a over 8-byte words, whose
 *    steps are bijections, so a change in one word cannot cancel.
 *  - The old format without sums is refused with a message saying so.
 */
#include "test_util.h"

#include <stdlib.h>

#include "exec/exec_ckpt.h"
#include "planner/plan.h"

/* The header of rank 3 of a TP2 x PP2 x DP2 run of a small GPT with ZeRO-1
 * (it holds a quarter of its stage's elements), fp32 with master weights. */
static exec_ckpt_head sample_head(void)
{
    exec_ckpt_head h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, EXEC_CKPT_MAGIC, 8);
    h.version = EXEC_CKPT_VERSION;
    h.world = 8;
    h.rank = 3;
    h.tp = 2, h.pp = 2, h.dp = 2, h.virt = 1;
    h.sharding = PLAN_SHARD_OPTIMIZER;
    h.layers = 13, h.hidden = 96, h.heads = 6, h.kv_heads = 6, h.ffn = 384, h.seq = 32;
    h.vocab = 130, h.arch = PLAN_ARCH_GPT, h.tied = 1, h.gated = 0;
    h.elem_bytes = 4, h.state_bytes = 4;
    h.param_numel = 37, h.held_numel = 19; /* odd sizes: a tail word in every sum */
    h.seed = 1234, h.step = 7;
    h.tp_rank = 1, h.pp_rank = 1, h.dp_rank = 0;
    h.dp_bucket_bytes = 25e6;
    h.has_master = 1;
    return h;
}

/* A sealed file of header h with payload bytes 0, 1, 2, ...; *len its size. */
static char *make_file(const exec_ckpt_head *h, size_t *len)
{
    size_t off[EXEC_CKPT__PARTS], bytes[EXEC_CKPT__PARTS];
    *len = exec_ckpt_layout(h, off, bytes);
    char *f = calloc(1, *len);
    assert_non_null(f);
    for (size_t i = sizeof *h; i < *len; i++)
        f[i] = (char)(i * 7);
    exec_ckpt_seal(f, h);
    return f;
}

static void expect_refused(const char *f, size_t len, const char *needle)
{
    exec_ckpt_view v;
    st_err err = {0};
    int rc = exec_ckpt_parse(f, len, "rank-00003.bin", &v, &err);
    if (rc != ST_EPARSE || err.code != ST_EPARSE || !strstr(err.msg, needle) ||
        !strstr(err.msg, "rank-00003.bin")) {
        print_error("-> %d \"%s\", wanted ST_EPARSE with \"%s\"\n", rc, err.msg, needle);
        fail();
    }
}

static void test_written_parses(void **state)
{
    exec_ckpt_head h = sample_head();
    size_t len;
    char *f = make_file(&h, &len);
    /* header, then 37 x 4 bytes of parameters and 19 x 4 of master, m and
     * v, each followed by its 8-byte sum */
    assert_int_equal(len, sizeof h + 37 * 4 + 3 * 19 * 4 + 4 * EXEC_CKPT_SUM_BYTES);
    exec_ckpt_view v;
    st_err err = {0};
    assert_int_equal(exec_ckpt_parse(f, len, "x", &v, &err), ST_OK);
    assert_int_equal(v.h.tp, 2);
    assert_int_equal(v.h.step, 7);
    assert_ptr_equal(v.part[EXEC_CKPT_PARAMS], f + sizeof h);
    assert_int_equal(v.part_bytes[EXEC_CKPT_PARAMS], 37 * 4);
    assert_ptr_equal(v.part[EXEC_CKPT_MASTER], f + sizeof h + 37 * 4 + 8);
    assert_int_equal(v.part_bytes[EXEC_CKPT_V], 19 * 4);
    assert_ptr_equal(v.part[EXEC_CKPT_V] + 19 * 4 + 8, f + len);
    free(f);

    /* without master weights the master payload is empty, its sum kept */
    h.has_master = 0;
    f = make_file(&h, &len);
    assert_int_equal(exec_ckpt_parse(f, len, "x", &v, &err), ST_OK);
    assert_int_equal(v.part_bytes[EXEC_CKPT_MASTER], 0);
    assert_int_equal(len, sizeof h + 37 * 4 + 2 * 19 * 4 + 4 * EXEC_CKPT_SUM_BYTES);
    free(f);
}

static void test_fields_refused(void **state)
{
    static const struct {
        const char *field;
        size_t off;
        int64_t value;
        const char *needle;
    } cases[] = {
#define C(f, v, needle) {#f, offsetof(exec_ckpt_head, f), (v), (needle)}
        C(tp, (int64_t)1 << 62, "header field tp 4611686018427387904: must be in 1..4096"),
        C(pp, (int64_t)1 << 62, "header field pp 4611686018427387904: must be in 1..256"),
        C(dp, (int64_t)1 << 62, "header field dp 4611686018427387904: must be in 1..1048576"),
        C(virt, (int64_t)1 << 62, "header field virt 4611686018427387904: must be in 1..256"),
        C(tp, 0, "header field tp 0"),
        C(world, -8, "header field world -8"),
        C(rank, 8, "rank 8 (tp 1, pp 1, dp 0) is outside its layout"),
        C(tp_rank, 2, "rank 3 (tp 2, pp 1, dp 0) is outside its layout"),
        C(world, 16, "tp 2 x pp 2 x dp 2 is not its world of 16 ranks"),
        C(sharding, PLAN_SHARD__COUNT, "header field sharding"),
        C(layers, 0, "header field layers 0"),
        C(heads, (int64_t)1 << 40, "header field heads"),
        C(kv_heads, 7, "7 kv heads of 6 heads"),
        C(arch, 2, "header field arch 2"),
        C(elem_bytes, 3, "header field elem_bytes 3: must be 2, 4 or 8"),
        C(state_bytes, 2, "header field state_bytes 2"),
        C(param_numel, -1, "header field param_numel -1"),
        C(held_numel, (int64_t)1 << 60, "header field held_numel"),
        C(held_numel, 38, "38 elements held of 37"),
        C(param_numel, 36, "its header makes it"),
        C(step, -1, "header field step -1"),
        C(has_master, 2, "header field has_master 2"),
#undef C
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        exec_ckpt_head h = sample_head();
        size_t len;
        char *f = make_file(&h, &len);
        /* the field changed and the header's sum made to match */
        memcpy((char *)&h + cases[i].off, &cases[i].value, sizeof cases[i].value);
        h.head_sum = exec_ckpt_sum(&h, offsetof(exec_ckpt_head, head_sum));
        memcpy(f, &h, sizeof h);
        expect_refused(f, len, cases[i].needle);
        free(f);
    }
    exec_ckpt_head h = sample_head();
    size_t len;
    char *f = make_file(&h, &len);
    h.dp_bucket_bytes = -1;
    h.head_sum = exec_ckpt_sum(&h, offsetof(exec_ckpt_head, head_sum));
    memcpy(f, &h, sizeof h);
    expect_refused(f, len, "header field dp_bucket_bytes -1");
    free(f);
}

static void test_damage_found(void **state)
{
    exec_ckpt_head h = sample_head();
    size_t len;
    char *f = make_file(&h, &len);
    exec_ckpt_view v;
    st_err err = {0};
    /* every single bit of the file */
    for (size_t i = 0; i < len; i++)
        for (int bit = 0; bit < 8; bit++) {
            f[i] ^= (char)(1 << bit);
            st_err_clear(&err);
            if (exec_ckpt_parse(f, len, "x", &v, &err) != ST_EPARSE) {
                print_error("byte %zu bit %d flipped: not refused\n", i, bit);
                fail();
            }
            f[i] ^= (char)(1 << bit);
        }
    /* a flip in the header, a payload and a sum: each named */
    f[offsetof(exec_ckpt_head, tp)] ^= 1;
    expect_refused(f, len, "the checkpoint's header is damaged");
    f[offsetof(exec_ckpt_head, tp)] ^= 1;
    f[sizeof h + 5] ^= 4;
    expect_refused(f, len, "its parameters are damaged");
    f[sizeof h + 5] ^= 4;
    f[len - 9] ^= 0x80; /* the last byte of the second moments */
    expect_refused(f, len, "its second moments are damaged");
    f[len - 9] ^= 0x80;
    f[len - 1] ^= 0x80; /* their sum */
    expect_refused(f, len, "its second moments are damaged");
    f[len - 1] ^= 0x80;
    /* every truncation, and one byte too many */
    for (size_t n = 0; n < len; n++) {
        st_err_clear(&err);
        assert_int_equal(exec_ckpt_parse(f, n, "x", &v, &err), ST_EPARSE);
    }
    expect_refused(f, 10, "not a checkpoint");
    expect_refused(f, sizeof h - 1, "truncated checkpoint");
    expect_refused(f, len - 1, "bytes, its header makes it");
    char *more = calloc(1, len + 1);
    assert_non_null(more);
    memcpy(more, f, len);
    expect_refused(more, len + 1, "bytes, its header makes it");
    free(more);
    st_err_clear(&err);
    assert_int_equal(exec_ckpt_parse(f, len, "x", &v, &err), ST_OK);
    free(f);
}

static void test_versions(void **state)
{
    exec_ckpt_head h = sample_head();
    size_t len;
    char *f = make_file(&h, &len);
    int64_t version = 1;
    memcpy(f + 8, &version, 8);
    expect_refused(f, len, "checkpoint format version 1, without checksums: this build reads "
                           "version 2");
    version = 3;
    memcpy(f + 8, &version, 8);
    expect_refused(f, len, "checkpoint format version 3: this build reads version 2");
    memcpy(f, "SMDCKPT0", 8);
    expect_refused(f, len, "not a checkpoint");
    free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_written_parses),
        cmocka_unit_test(test_fields_refused),
        cmocka_unit_test(test_damage_found),
        cmocka_unit_test(test_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
