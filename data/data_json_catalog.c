/*
 * data_json_catalog.c: a catalog as the JSON of its own file schema
 * (data_json_catalog.h), for `smdplan catalog --json`. Each field is
 * written under the key the catalog reader (data_catalog.c) takes it from;
 * optional fields only where the entry has them, so that read back they
 * leave the reader's defaults as they were.
 */
#include "data/data_json_catalog.h"

#include <stdio.h>

#include <cjson/cJSON.h>

#include "data/data_json.h"

/* A GPU's figures as the %.17g that reads back to the same double
 * (data_json_exact): cJSON's 15 digits lose the last bits of a value
 * computed rather than read, such as a measured file's. */
static cJSON *gpu_json(const plan_gpu *g)
{
    const data_json_member m[] = {
        DATA_JSON_STR("name", g->name), DATA_JSON_STR("silicon", g->silicon),
        DATA_JSON_EXACT("mem_bytes", g->mem_bytes), DATA_JSON_EXACT("peak_flops", g->peak_flops),
        DATA_JSON_EXACT("hbm_bps", g->hbm_bps), DATA_JSON_EXACT("gemm_eff_max", g->gemm_eff_max),
        DATA_JSON_EXACT("gemm_dim_half", g->gemm_dim_half),
        DATA_JSON_EXACT("misaligned_factor", g->misaligned_factor),
        DATA_JSON_EXACT("hbm_eff", g->hbm_eff), DATA_JSON_EXACT("flash_eff", g->flash_eff),
        DATA_JSON_EXACT("flash1_eff", g->flash1_eff), DATA_JSON_EXACT("flash3_eff", g->flash3_eff),
        DATA_JSON_EXACT("cudnn_attn_eff", g->cudnn_attn_eff),
        /* per direction: a measured file's, or a catalog entry's own */
        DATA_JSON_EXACT("flash2_fwd_eff", g->flash2_fwd_eff),
        DATA_JSON_EXACT("flash2_bwd_eff", g->flash2_bwd_eff),
        DATA_JSON_EXACT("cudnn_fwd_eff", g->cudnn_fwd_eff),
        DATA_JSON_EXACT("cudnn_bwd_eff", g->cudnn_bwd_eff),
        DATA_JSON_EXACT("gemm_align_bytes", g->gemm_align_bytes),
        DATA_JSON_EXACT("align_partial_factor", g->align_partial_factor),
        DATA_JSON_EXACT("fp8_peak_flops", g->fp8_peak_flops),
        DATA_JSON_EXACT("fp8_gemm_eff", g->fp8_gemm_eff),
        DATA_JSON_EXACT("gemm_ceiling", g->gemm_ceiling),
        DATA_JSON_EXACT("alloc_frac", g->alloc_frac),
        DATA_JSON_EXACT("mem_err_pct", g->mem_err_pct),
    };
    /* the file, and what it made of the entry (read back, the file is
     * applied again and these fields over it: the same values) */
    const data_json_member measured[] = {
        DATA_JSON_STR("measured", g->measured), DATA_JSON_BOOL("gemm_measured", g->gemm_measured),
        DATA_JSON_EXACT("gemm_measured_rms", g->gemm_measured_rms),
        DATA_JSON_EXACT("gemm_measured_shapes", g->gemm_measured_shapes),
        DATA_JSON_EXACT("exec_attn_fwd_eff", g->exec_attn_fwd_eff),
        DATA_JSON_EXACT("exec_attn_bwd_eff", g->exec_attn_bwd_eff),
        DATA_JSON_EXACT("exec_attn_row_fwd_s", g->exec_attn_row_fwd_s),
        DATA_JSON_EXACT("exec_attn_row_bwd_s", g->exec_attn_row_bwd_s),
        DATA_JSON_EXACT("exec_attn_elem_fwd_s", g->exec_attn_elem_fwd_s),
        DATA_JSON_EXACT("exec_attn_elem_bwd_s", g->exec_attn_elem_bwd_s),
        DATA_JSON_EXACT("copy_bps", g->copy_bps), DATA_JSON_EXACT("copy_hbm_bps", g->copy_hbm_bps),
    };
    const data_json_member ref_node[] = {
        DATA_JSON_EXACT("ref_node_gpus", g->ref_node_gpus),
        DATA_JSON_EXACT("ref_node_net_bps", g->ref_node_net_bps),
        DATA_JSON_STR("ref_node_source", g->ref_node_source),
    };
    cJSON *o = cJSON_CreateObject();
    data_json_add(o, m, sizeof m / sizeof m[0]);
    if (g->sms > 0)
        cJSON_AddItemToObject(o, "sms", data_json_exact(g->sms));
    if (g->measured[0])
        data_json_add(o, measured, sizeof measured / sizeof measured[0]);
    cJSON_AddBoolToObject(o, "fp16_only", g->fp16_only);
    cJSON_AddBoolToObject(o, "flash3", g->flash3);
    if (g->package_devices > 1)
        cJSON_AddItemToObject(o, "package_devices", data_json_exact(g->package_devices));
    if (g->ref_node_gpus > 0)
        data_json_add(o, ref_node, sizeof ref_node / sizeof ref_node[0]);
    cJSON_AddStringToObject(o, "source", g->source);
    return o;
}

static cJSON *instance_json(const plan_instance *in)
{
    const data_json_member m[] = {
        DATA_JSON_STR("gpu", in->gpu), DATA_JSON_NUM("gpus_per_node", in->gpus_per_node),
        DATA_JSON_NUM("nvlink_bps", in->nvlink_bps), DATA_JSON_BOOL("nvswitch", in->nvswitch),
        DATA_JSON_NUM("intra_busbw_bps", in->intra_busbw_bps),
        DATA_JSON_NUM("intra_latency_s", in->intra_latency_s),
        DATA_JSON_NUM("net_gpu_bps", in->net_gpu_bps), DATA_JSON_NUM("net_bps", in->net_bps),
        DATA_JSON_NUM("net_latency_s", in->net_latency_s),
        DATA_JSON_NUM("net_latency_nodes", in->net_latency_nodes),
        DATA_JSON_NUM("net_ring_eff", in->net_ring_eff),
        DATA_JSON_NUM("net_tree_eff", in->net_tree_eff),
        DATA_JSON_NUM("price_per_hour", in->price_per_hour),
        DATA_JSON_NUM("host_mem_bytes", in->host_mem_bytes), DATA_JSON_BOOL("efa", in->efa),
        DATA_JSON_NUM("nics", in->nics),
    };
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", in->name);
    cJSON *al = cJSON_AddArrayToObject(o, "aliases");
    for (int a = 0; a < in->naliases; a++)
        cJSON_AddItemToArray(al, cJSON_CreateString(in->aliases[a]));
    data_json_add(o, m, sizeof m / sizeof m[0]);
    if (in->gpu_link[0])
        cJSON_AddStringToObject(o, "gpu_link", in->gpu_link);
    if (in->nics_source[0]) /* optional: given only where known */
        cJSON_AddStringToObject(o, "nics_source", in->nics_source);
    if (in->price_source[0])
        cJSON_AddStringToObject(o, "price_source", in->price_source);
    if (in->nccl_channels > 0)
        cJSON_AddNumberToObject(o, "nccl_channels", in->nccl_channels);
    cJSON_AddStringToObject(o, "intra_curve", in->intra_curve);
    cJSON_AddStringToObject(o, "net_curve", in->net_curve);
    cJSON_AddStringToObject(o, "source", in->source);
    return o;
}

static cJSON *curve_json(const plan_curve *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", c->name);
    cJSON_AddItemToObject(o, "log2_bytes", cJSON_CreateDoubleArray(c->log2_bytes, c->n));
    cJSON_AddItemToObject(o, "eff", cJSON_CreateDoubleArray(c->eff, c->n));
    cJSON_AddStringToObject(o, "source", c->source);
    return o;
}

static cJSON *eff_json(const plan_fw_eff *e)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", e->name);
    cJSON_AddStringToObject(o, "framework", e->framework);
    cJSON_AddStringToObject(o, "silicon", e->silicon);
    for (int p = 0; p < PLAN_EFF__COUNT; p++) {
        if (!(e->fitted & (1u << p)))
            continue;
        char key[48];
        const char *name = plan_eff_param_name((plan_eff_param)p);
        cJSON_AddNumberToObject(o, name, *plan_eff_ref((plan_eff *)&e->eff, (plan_eff_param)p));
        snprintf(key, sizeof key, "%s_stderr", name);
        cJSON_AddNumberToObject(o, key, e->std_err[p]);
    }
    const data_json_member fit[] = {
        DATA_JSON_NUM("rows", e->rows), DATA_JSON_NUM("sources", e->sources),
        DATA_JSON_NUM("mean_abs_err_pct", e->mean_abs_err_pct), DATA_JSON_STR("source", e->source),
    };
    data_json_add(o, fit, sizeof fit / sizeof fit[0]);
    return o;
}

cJSON *data_json_catalog(const plan_catalog *cat)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *gpus = cJSON_AddArrayToObject(root, "gpus");
    cJSON *insts = cJSON_AddArrayToObject(root, "instances");
    cJSON *curves = cJSON_AddArrayToObject(root, "curves");
    for (int i = 0; i < cat->ngpus; i++)
        cJSON_AddItemToArray(gpus, gpu_json(&cat->gpus[i]));
    for (int i = 0; i < cat->ninstances; i++)
        cJSON_AddItemToArray(insts, instance_json(&cat->instances[i]));
    for (int i = 0; i < cat->ncurves; i++)
        cJSON_AddItemToArray(curves, curve_json(&cat->curves[i]));
    cJSON *effs = cJSON_AddArrayToObject(root, "efficiencies");
    for (int i = 0; i < cat->neffs; i++)
        cJSON_AddItemToArray(effs, eff_json(&cat->effs[i]));
    return root;
}
