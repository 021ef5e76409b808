/*
 * exec_data.c: seeded synthetic tokens, a text file as bytes, or a file of
 * uint16 token ids, cut into sequences and split over data-parallel ranks
 * (see exec_data.h for the numbering that makes every layout see the same
 * global batch).
 */
#include <stdlib.h>
#include <string.h>

#include "exec/exec_data.h"
#include "exec/exec_int.h"

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int exec_data_open(exec_data *d, const exec_config *cfg, st_err *err)
{
    memset(d, 0, sizeof *d);
    d->kind = cfg->data_kind;
    d->seed = cfg->train.seed;
    d->vocab = cfg->model.vocab;
    d->seq = cfg->model.seq;
    if (d->kind == EXEC_DATA_SYNTHETIC)
        return ST_OK;
    if (d->kind == EXEC_DATA_TEXT && d->vocab < 256)
        return ST_RAISE(err, ST_EINVAL, "data.kind text: bytes need vocab >= 256, the model has %lld",
                        (long long)d->vocab);
    char *buf = NULL;
    size_t len = 0;
    int rc = exec__read_file(cfg->data_path, &buf, &len, err);
    if (rc != ST_OK)
        return rc;
    int64_t n = d->kind == EXEC_DATA_TEXT ? (int64_t)len : (int64_t)(len / 2);
    if (d->kind == EXEC_DATA_TOKENS && len % 2 != 0) {
        free(buf);
        return ST_RAISE(err, ST_EINVAL, "%s: %zu bytes, not a whole number of uint16 tokens",
                        cfg->data_path, len);
    }
    if (n < d->seq + 1) {
        free(buf);
        return ST_RAISE(err, ST_EINVAL, "%s: %lld tokens, fewer than seq + 1 = %lld",
                        cfg->data_path, (long long)n, (long long)d->seq + 1);
    }
    d->tok = malloc((size_t)n * sizeof *d->tok);
    if (!d->tok) {
        free(buf);
        return ST_RAISE(err, ST_ENOMEM, "%s: out of memory", cfg->data_path);
    }
    const unsigned char *b = (const unsigned char *)buf;
    for (int64_t i = 0; i < n; i++) {
        int32_t t = d->kind == EXEC_DATA_TEXT ? b[i] : (int32_t)(b[2 * i] | (b[2 * i + 1] << 8));
        if (t >= d->vocab) {
            free(buf);
            free(d->tok);
            d->tok = NULL;
            return ST_RAISE(err, ST_EINVAL, "%s: token %d at %lld is not below vocab %lld",
                            cfg->data_path, t, (long long)i, (long long)d->vocab);
        }
        d->tok[i] = t;
    }
    free(buf);
    d->ntok = n;
    return ST_OK;
}

void exec_data_close(exec_data *d)
{
    free(d->tok);
    d->tok = NULL;
}

void exec_data_sequence(const exec_data *d, int64_t k, int32_t *in, int32_t *tgt)
{
    int64_t T = d->seq;
    if (d->kind == EXEC_DATA_SYNTHETIC) {
        uint64_t base = mix(d->seed ^ mix((uint64_t)k));
        int32_t prev = (int32_t)(mix(base) % (uint64_t)d->vocab);
        for (int64_t t = 0; t < T; t++) {
            int32_t next = (int32_t)(mix(base + (uint64_t)t + 1) % (uint64_t)d->vocab);
            in[t] = prev;
            tgt[t] = next;
            prev = next;
        }
        return;
    }
    int64_t off = (int64_t)(((uint64_t)k * (uint64_t)T) % (uint64_t)(d->ntok - T));
    for (int64_t t = 0; t < T; t++) {
        in[t] = d->tok[off + t];
        tgt[t] = d->tok[off + t + 1];
    }
}

void exec_data_microbatch(const exec_data *d, const plan_layout *l, int64_t step, int dp_rank,
                          int mb, int32_t *in, int32_t *tgt, int32_t *scratch)
{
    int64_t G = (int64_t)l->dp * l->micro_batch * l->microbatches, T = d->seq, B = l->micro_batch;
    int64_t first = step * G + (int64_t)dp_rank * (G / l->dp) + (int64_t)mb * B;
    for (int64_t b = 0; b < B; b++) {
        exec_data_sequence(d, first + b, scratch, scratch + T);
        for (int64_t t = 0; t < T; t++) {
            in[t * B + b] = scratch[t];
            tgt[t * B + b] = scratch[T + t];
        }
    }
}
