/*
 * plan_validate_rows.c: every row of a file read and compared
 * (plan_validate_run), then what rows say together: one configuration of
 * a source, one recompute (plan_validate.h, plan_validate_rows).
 */
#include "planner/plan_validate_int.h"

#include <stddef.h>
#include <string.h>

static const char *nz(const char *s)
{
    return s ? s : "";
}

/* The columns that give a run's configuration: its source, stack, model,
 * GPU and layout as published, and the recompute it leaves open. */
static const size_t config_cols[] = {
    offsetof(plan_validate_row, source_key),      offsetof(plan_validate_row, framework),
    offsetof(plan_validate_row, model_name),      offsetof(plan_validate_row, architecture),
    offsetof(plan_validate_row, num_layers),      offsetof(plan_validate_row, hidden_size),
    offsetof(plan_validate_row, num_heads),       offsetof(plan_validate_row, num_kv_heads),
    offsetof(plan_validate_row, ffn_hidden_size), offsetof(plan_validate_row, seq_len),
    offsetof(plan_validate_row, head_dim),        offsetof(plan_validate_row, vocab_size),
    offsetof(plan_validate_row, gpu_type),        offsetof(plan_validate_row, interconnect),
    offsetof(plan_validate_row, gpu_mem_gb),      offsetof(plan_validate_row, instance_type),
    offsetof(plan_validate_row, tp),              offsetof(plan_validate_row, pp),
    offsetof(plan_validate_row, cp),              offsetof(plan_validate_row, virtual_stages),
    offsetof(plan_validate_row, micro_batch_size), offsetof(plan_validate_row, global_batch_size),
    offsetof(plan_validate_row, global_batch_tokens), offsetof(plan_validate_row, recompute),
    offsetof(plan_validate_row, optimizer_sharding), offsetof(plan_validate_row, sequence_parallel),
    offsetof(plan_validate_row, precision),
};

static const char *col(const plan_validate_row *r, size_t off)
{
    return nz(*(const char *const *)((const char *)r + off));
}

/* Rows a and b give one configuration: the same columns above; they may
 * differ in the GPU count (and so the data-parallel degree) and in what
 * they measured. Their readings agree on the layout's other degrees, its
 * micro-batch and its chunks, and on the GPU's memory. */
static int one_config(const plan_validate_row *a, const plan_validate_result *ra,
                      const plan_validate_row *b, const plan_validate_result *rb)
{
    for (size_t i = 0; i < sizeof config_cols / sizeof config_cols[0]; i++)
        if (strcmp(col(a, config_cols[i]), col(b, config_cols[i])) != 0)
            return 0;
    const plan_layout *la = &ra->layout, *lb = &rb->layout;
    return ra->framework == rb->framework && la->tp == lb->tp && la->pp == lb->pp &&
           la->cp == lb->cp && la->micro_batch == lb->micro_batch &&
           la->virtual_stages == lb->virtual_stages && la->schedule == lb->schedule &&
           ra->model.layers == rb->model.layers &&
           ra->est.capacity_bytes == rb->est.capacity_bytes; /* read on one GPU size */
}

/* A row read with its own recompute open and a layout. */
static int open_row(const plan_validate_result *r)
{
    return r->have_layout && r->recompute_open && !r->ref_oom;
}

int plan_validate_rows(const plan_catalog *cat, const plan_validate_row *rows, int n,
                       plan_validate_result *res, st_err *err)
{
    for (int i = 0; i < n; i++) {
        int rc = plan_validate_run(cat, &rows[i], &res[i], NULL, err);
        if (rc != ST_OK)
            return rc;
    }
    return plan_validate_share_recompute(cat, rows, n, res, err);
}

static double rank_of(const plan_validate_result *r)
{
    return plan__recompute_rank(r->layout.recompute, r->layout.recompute_layers);
}

int plan_validate_share_recompute(const plan_catalog *cat, const plan_validate_row *rows, int n,
                                  plan_validate_result *res, st_err *err)
{
    /* for each row the memory made read a recompute: the most any such row
     * of its configuration read, and the configuration's rows with less
     * read again with it (a row read so is no longer inferred, and one at
     * the most is left as it is: each configuration is read once) */
    for (int i = 0; i < n; i++) {
        const plan_validate_result *ri = &res[i];
        if (!open_row(ri) || !ri->recompute_inferred)
            continue;
        const plan_validate_result *top = ri;
        for (int j = 0; j < n; j++)
            if (open_row(&res[j]) && res[j].recompute_inferred && rank_of(&res[j]) > rank_of(top) &&
                one_config(&rows[i], ri, &rows[j], &res[j]))
                top = &res[j];
        plan_recompute_floor most = {(int)top->layout.recompute, top->layout.recompute_layers, ""};
        memcpy(most.row_id, top->row_id, sizeof most.row_id);
        double most_rank = rank_of(top);
        for (int j = 0; j < n; j++) {
            if (!open_row(&res[j]) || rank_of(&res[j]) >= most_rank ||
                (j != i && !one_config(&rows[i], ri, &rows[j], &res[j])))
                continue;
            int rc = plan_validate_run_floor(cat, &rows[j], &most, &res[j], NULL, err);
            if (rc != ST_OK)
                return rc;
        }
    }
    return ST_OK;
}
