/*
 * test_exec_model.c: the whole model on one rank.
 *
 *  - Gradient check: GPT and Llama (grouped-query heads, untied head) in
 *    double precision (the cpu64 device): the gradient of the step's loss
 *    with respect to every parameter, from the executor's backward through
 *    the pipeline runner, matches central finite differences of the loss.
 *  - Selective and full recompute (groups of 2 and 1), zero bubble's split
 *    backward and virtual stages on one rank (chunks handing activations
 *    to each other in memory) give the same gradients as the plain
 *    backward.
 *  - The parameter count is the planner's (plan_model_finish).
 *  - Training: the loss falls over 50 steps on a small text, for both
 *    architectures, in fp32.
 */
#include "test_util.h"

#include <stdlib.h>

#include "exec/exec_rt.h"
#include "exec/exec_run.h"

#define TEXT SMD_TEST_FIXTURES "/exec_tiny_text.txt"

static void tiny(exec_config *c, int llama, const char *device, const char *extra_layout)
{
    char json[2048];
    snprintf(json, sizeof json,
             "{\"version\": 1, \"model\": {\"arch\": \"%s\", \"layers\": 3, \"hidden\": 8, "
             "\"heads\": 4, \"kv_heads\": %d, \"ffn\": 12, \"seq\": 5, \"vocab\": 11}, "
             "\"layout\": {\"micro_batch\": 2, \"microbatches\": 2%s}, "
             "\"train\": {\"steps\": 1}, \"device\": \"%s\", \"transport\": \"self\", "
             "\"progress\": false}",
             llama ? "llama" : "gpt", llama ? 2 : 4, extra_layout, device);
    st_err err = {0};
    if (exec_config_parse(json, c, &err) != ST_OK) {
        print_error("%s\n", err.msg);
        fail();
    }
}

/* The loss and gradients of one step; grads (flat_numel doubles) malloc'd. */
static double loss_and_grads(exec_rt *rt, double **grads)
{
    st_err err = {0};
    exec_phases ph = {0};
    if (exec_pipe_grads(rt, &ph, &err) != ST_OK) {
        print_error("%s\n", err.msg);
        fail();
    }
    if (grads) {
        exec_model *x = &rt->x;
        *grads = malloc((size_t)x->flat_numel * sizeof **grads);
        x->dev->ops->download_f64(x->dev, *grads, x->grads, x->flat_numel);
    }
    return rt->loss_sum;
}

static void open_rt(exec_rt *rt, exec_comm **world, const exec_config *c)
{
    st_err err = {0};
    assert_int_equal(exec_comm_open("self", 10, world, &err), ST_OK);
    assert_int_equal(exec_config_check(c, 1, &err), ST_OK);
    if (exec_rt_init(rt, c, *world, &err) != ST_OK) {
        print_error("%s\n", err.msg);
        fail();
    }
}

static void gradcheck(int llama)
{
    exec_config c;
    tiny(&c, llama, "cpu64", "");
    exec_rt rt;
    exec_comm *world;
    open_rt(&rt, &world, &c);
    exec_model *x = &rt.x;
    /* every parameter, each once: the rank holds the whole model */
    int64_t n = 0;
    for (int g = 0; g < x->ngt; g++)
        n += x->gt[g].rows * x->gt[g].cols;
    assert_int_equal(n, c.model.params);
    assert_int_equal(x->flat_numel, n);
    double *g = NULL;
    double loss = loss_and_grads(&rt, &g);
    assert_true(loss > 1.5 && loss < 4); /* near log(11) = 2.4 at the start */
    double *p = x->params, h = 1e-5, worst = 0;
    for (int64_t i = 0; i < x->flat_numel; i++) {
        double keep = p[i];
        p[i] = keep + h;
        double lp = loss_and_grads(&rt, NULL);
        p[i] = keep - h;
        double lm = loss_and_grads(&rt, NULL);
        p[i] = keep;
        double num = (lp - lm) / (2 * h), den = fmax(fmax(fabs(num), fabs(g[i])), 1e-4);
        double rel = fabs(num - g[i]) / den;
        worst = fmax(worst, rel);
        if (rel > 1e-5) {
            print_error("%s parameter %ld: backward %.10g, finite difference %.10g\n",
                        llama ? "llama" : "gpt", (long)i, g[i], num);
            fail();
        }
    }
    print_message("%s: %ld parameters, loss %.6f, worst relative difference %.2e\n",
                  llama ? "llama" : "gpt", (long)n, loss, worst);
    free(g);
    exec_rt_free(&rt);
    exec_comm_free(world);
}

static void test_gradcheck_gpt(void **state)
{
    gradcheck(0);
}

static void test_gradcheck_llama(void **state)
{
    gradcheck(1);
}

/* The same gradients, bit for bit, with recomputation and a split backward:
 * each variant runs the same products and sums on the same values in the
 * same order (recompute replays the forward; the split backward, the
 * schedules and virtual stages move whole operations, never the terms of a
 * sum), so there is no rounding between them to allow for. */
static void test_variants(void **state)
{
    for (int llama = 0; llama < 2; llama++) {
        exec_config c;
        tiny(&c, llama, "cpu64", "");
        exec_rt rt;
        exec_comm *world;
        open_rt(&rt, &world, &c);
        double *ref = NULL;
        double lref = loss_and_grads(&rt, &ref);
        int64_t n = rt.x.flat_numel;
        exec_rt_free(&rt);
        exec_comm_free(world);
        const char *variants[] = {
            ", \"recompute\": \"selective\"",
            ", \"recompute\": \"full\", \"recompute_group\": 2",
            ", \"recompute\": \"full\", \"recompute_group\": 1",
            ", \"schedule\": \"zb-h1\"",
            ", \"schedule\": \"zb-h1\", \"recompute\": \"full\", \"recompute_group\": 2",
            ", \"schedule\": \"simple\", \"active_microbatches\": 1",
            ", \"schedule\": \"virtual\", \"virtual_stages\": 3",
            ", \"schedule\": \"virtual\", \"virtual_stages\": 2, \"recompute\": \"full\"",
        };
        for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
            tiny(&c, llama, "cpu64", variants[v]);
            open_rt(&rt, &world, &c);
            double *g = NULL;
            double l = loss_and_grads(&rt, &g);
            assert_true(l == lref);
            double worst = 0;
            for (int64_t i = 0; i < n; i++)
                worst = fmax(worst, fabs(g[i] - ref[i]));
            if (worst > 0) {
                print_error("%s%s: gradients differ by %.3g\n", llama ? "llama" : "gpt",
                            variants[v], worst);
                fail();
            }
            free(g);
            exec_rt_free(&rt);
            exec_comm_free(world);
        }
        free(ref);
    }
}

/* fp32 training on a small text: the loss falls. */
static void train_text(int llama)
{
    char json[2048];
    snprintf(json, sizeof json,
             "{\"version\": 1, \"model\": {\"arch\": \"%s\", \"layers\": 2, \"hidden\": 32, "
             "\"heads\": 4, \"kv_heads\": 2, \"ffn\": 64, \"seq\": 32, \"vocab\": 256}, "
             "\"layout\": {\"micro_batch\": 4, \"microbatches\": 1}, "
             "\"train\": {\"steps\": 50, \"lr\": 0.003, \"min_lr\": 0.0003, \"warmup_steps\": 5},"
             " \"data\": {\"kind\": \"text\", \"path\": \"%s\"}, \"transport\": \"self\", "
             "\"progress\": false}",
             llama ? "llama" : "gpt", TEXT);
    exec_config c;
    st_err err = {0};
    assert_int_equal(exec_config_parse(json, &c, &err), ST_OK);
    exec_comm *world;
    assert_int_equal(exec_comm_open("self", 10, &world, &err), ST_OK);
    exec_result r;
    if (exec_run(&c, world, &r, &err) != ST_OK) {
        print_error("%s\n", err.msg);
        fail();
    }
    assert_int_equal(r.nsteps, 50);
    double first = r.steps[0].loss, last = 0;
    for (int i = 45; i < 50; i++)
        last += r.steps[i].loss / 5;
    print_message("%s: loss %.3f at step 1, %.3f over steps 46-50\n", llama ? "llama" : "gpt",
                  first, last);
    assert_true(first > 5.0);     /* log(256) = 5.55 before training */
    assert_true(last < 3.2);      /* letters and spaces learned */
    assert_true(r.steps[0].measured == 0 && r.steps[1].measured == 1);
    assert_true(r.steps[49].lr < r.steps[10].lr); /* cosine decay */
    assert_rel(r.steps[4].lr, 0.003, 1e-12);        /* end of warm-up */
    assert_rel(r.model_flops_per_step,
               plan_model_train_flops_per_token(&c.model) * 4 * 32, 1e-12);
    assert_true(r.rank_stats[0].peak_memory_bytes > 0);
    exec_result_free(&r);
    exec_comm_free(world);
}

static void test_train_gpt(void **state)
{
    train_text(0);
}

static void test_train_llama(void **state)
{
    train_text(1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gradcheck_gpt),
        cmocka_unit_test(test_gradcheck_llama),
        cmocka_unit_test(test_variants),
        cmocka_unit_test(test_train_gpt),
        cmocka_unit_test(test_train_llama),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
