/*
 * plan_validate_cluster.c: the cluster a published run ran on, as smdplan
 * validate reads it (plan_validate.c reads the model and the layout): the
 * instance type its text names, however it counts them; else the catalog
 * node of its chip and board closest to the memory and network it states,
 * made over with that network where no node has it; the GPU with the
 * memory it states; and the GPUs of a row that does not count them.
 */
#include "planner/plan_framework.h"
#include "planner/plan_int.h"
#include "planner/plan_validate_int.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The most GPUs one chassis joins with NVLink (DGX-2 / HGX-2: 16); a node
 * with more is a rack-scale NVLink domain (GB200 NVL72) of many chassis. */
#define PLAN_VAL_BOARD_NODE_GPUS 16

#define contains plan__contains
#define blank plan__blank
#define nz plan__nz
#define parse_num plan__parse_num
#define skip plan__skip
#define note plan__note

/* The chip a catalog GPU name starts with: "A100-80GB" -> "A100". */
static size_t chip_len(const char *name)
{
    size_t n = strcspn(name, "-");
    return n;
}

/* Does the chip's name start at p: at the text's start, after a character
 * that is not a letter or digit, or after a count written onto it ("8xA100",
 * "4×V100": the multiplication sign is UTF-8 C3 97)? */
static int chip_starts(const char *text, const char *p)
{
    if (p == text || !isalnum((unsigned char)p[-1]))
        return 1;
    if (p - text >= 2 && (p[-1] == 'x' || p[-1] == 'X') && isdigit((unsigned char)p[-2]))
        return 1;
    return p - text >= 3 && (unsigned char)p[-1] == 0x97 && (unsigned char)p[-2] == 0xC3 &&
           isdigit((unsigned char)p[-3]);
}

/* Does the row's GPU text name catalog GPU g's chip, as a word of its own
 * ("GH200" is Grace Hopper, not an H200; "MI250" is not an MI250X) and the
 * same board variant? A plural ("A100s") or a count after it ("A100x8")
 * names the chip. */
static int names_chip(const char *text, const plan_gpu *g)
{
    char chip[32];
    size_t n = chip_len(g->name);
    if (n == 0 || n >= sizeof chip || plan__board_differs(text, g->name))
        return 0;
    memcpy(chip, g->name, n);
    chip[n] = '\0';
    for (const char *p = text; *p; p++) {
        if (strncasecmp(p, chip, n) != 0 || !chip_starts(text, p))
            continue;
        const char *e = p + n;
        if (*e == 's' && !isalnum((unsigned char)e[1]))
            e++;
        if (!isalnum((unsigned char)*e) ||
            ((*e == 'x' || *e == 'X') && isdigit((unsigned char)e[1])))
            return 1;
        /* a board's form factor glued on ("H100SXM5", "A100PCIe") */
        if (strncasecmp(e, "SXM", 3) == 0 || strncasecmp(e, "PCIe", 4) == 0 ||
            strncasecmp(e, "NVL", 3) == 0)
            return 1;
    }
    return 0;
}

/* Memory the row states for its GPU, bytes (gpu_mem_gb, else "80GB" in the
 * GPU text); 0 if none. Nominal GB are GiB (the catalog's convention). */
static double stated_mem(const plan_validate_row *r)
{
    double gb;
    if (parse_num(r->gpu_mem_gb, &gb) == 1 && gb > 0)
        return gb * 1073741824.0;
    for (const char *p = nz(r->gpu_type); *p; p++) {
        if (!isdigit((unsigned char)*p) || (p > r->gpu_type && isdigit((unsigned char)p[-1])))
            continue;
        char *e;
        double v = strtod(p, &e);
        if (v >= 8 && v <= 1024 && (strncmp(e, "GB", 2) == 0 || strncmp(e, " GB", 3) == 0))
            return v * 1073741824.0;
    }
    return 0;
}

int plan__row_states_mem(const plan_validate_row *r)
{
    return stated_mem(r) > 0;
}

double plan__larger_variant_mem(const plan_catalog *cat, const plan_validate_row *r,
                                double bytes)
{
    double best = 0;
    for (int i = 0; i < cat->ngpus; i++) {
        const plan_gpu *g = &cat->gpus[i];
        if (names_chip(nz(r->gpu_type), g) && g->mem_bytes > bytes * 1.02 &&
            (!(best > 0) || g->mem_bytes < best))
            best = g->mem_bytes;
    }
    return best;
}

/* A stated memory per device of GPU g: a package of several devices (an
 * MI250X's two GCDs) is quoted with the package's memory ("MI250X 128GB"),
 * each device having its share. */
static double device_mem(double mem, const plan_gpu *g)
{
    int pd = g->package_devices;
    if (mem > 0 && pd > 1 && fabs(log(mem / (g->mem_bytes * pd))) <= 0.02)
        return mem / pd;
    return mem;
}

/* The chip's reference node (catalog ref_node_*), NULL where none. */
static const plan_gpu *reference_of(const plan_gpu *g)
{
    return g->ref_node_gpus > 0 ? g : NULL;
}

static net_tech tech_of(const plan_catalog *cat, const plan_instance *in)
{
    (void)cat;
    return in->efa ? NET_EFA : NET_RDMA;
}

/* The catalog instance closest to what the row states: the same chip (and
 * memory when stated) first, then the GPUs per node of its node (NVSwitch
 * nodes of that chip), then the network technology, then the bandwidth. */
static const plan_instance *closest_instance(const plan_catalog *cat, const plan_validate_row *r,
                                             const net_text *net, double mem, int *gpn_out,
                                             double *net_out)
{
    const plan_instance *best = NULL;
    double best_score = INFINITY;
    for (int i = 0; i < cat->ninstances; i++) {
        const plan_instance *in = &cat->instances[i];
        if (in->gpu_index < 0)
            continue;
        const plan_gpu *g = &cat->gpus[in->gpu_index];
        if (!names_chip(r->gpu_type, g))
            continue;
        const plan_gpu *ref = reference_of(g);
        int gpn = net->nvswitch && ref ? ref->ref_node_gpus : in->gpus_per_node;
        /* no rate stated: a node of the stated technology has its own
         * ("EFA" on an A100 is p4d's 400 Gb/s), else the chip's reference */
        int own_tech = net->tech != NET_UNSTATED && tech_of(cat, in) == net->tech;
        double want_net = net->node_bps > 0  ? net->node_bps
                          : net->gpu_bps > 0 ? net->gpu_bps * gpn
                          : own_tech         ? in->net_bps
                          : ref              ? ref->ref_node_net_bps
                                             : in->net_bps;
        double score = 0;
        if (mem > 0)
            score += 1e6 * fabs(log(g->mem_bytes / device_mem(mem, g)));
        else /* the catalog lists a chip's variants in release order: the first */
            score += 1e-6 * in->gpu_index;
        score += 1e4 * (in->gpus_per_node != gpn) + 1e4 * (net->nvswitch && !in->nvswitch);
        if (net->tech != NET_UNSTATED)
            score += 1e2 * (tech_of(cat, in) != net->tech);
        else
            score += 1e2 * (in->efa != 0); /* a reference node, not a cloud one */
        score += fabs(log(in->net_bps / want_net));
        if (score < best_score) {
            best = in;
            best_score = score;
            *gpn_out = gpn;
            *net_out = want_net;
        }
    }
    return best;
}

/* A catalog instance with the network technology asked for, to borrow its
 * latency and efficiency curve (same chip first). */
static const plan_instance *with_tech(const plan_catalog *cat, const plan_instance *base,
                                      net_tech tech)
{
    const plan_instance *any = NULL;
    for (int i = 0; i < cat->ninstances; i++) {
        const plan_instance *in = &cat->instances[i];
        if (tech_of(cat, in) != tech)
            continue;
        if (in->gpu_index == base->gpu_index)
            return in;
        if (!any)
            any = in;
    }
    return any;
}

/* A node used in part: its first n GPUs, with the NICs that serve them
 * where each GPU has its own (the node's network scaled to them). */
static void use_part(plan_instance *in, int n)
{
    if (in->nics == in->gpus_per_node && in->gpus_per_node > 0) {
        in->net_bps *= (double)n / (double)in->gpus_per_node;
        in->nics = n;
    }
    in->gpus_per_node = n;
}

/* The catalog instance type a row's instance text names, and the count of
 * them it states (0: none): a word of the text ("ml.p4d.24xlarge x 16",
 * "16 x p5.48xlarge", "BM.GPU.H100.8 x 4"), a word with its count glued on
 * ("16xBM.GPU.H100.8", "p4d:8"), or the text without its counts, for a
 * type named in words ("16 x ND A100 v4"). NULL when it names none. */

static const plan_instance *named_instance(const plan_catalog *cat, const char *text, int *count)
{
    int unused;
    if (!count)
        count = &unused;
    *count = 0;
    const char *t = nz(text);
    char rest[160] = ""; /* the text without its counts */
    const plan_instance *in = NULL;
    int pending = 0;     /* a count seen before the type */
    for (const char *s = t; *s;) {
        while (isspace((unsigned char)*s))
            s++;
        size_t n = strcspn(s, " \t");
        if (n == 0)
            break;
        char word[96];
        snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1), s);
        s += n;
        char *e;
        long k = strtol(word, &e, 10);
        if (e > word && !*e && k >= 1 && k <= 1 << 16) { /* a count of its own */
            if (in && !*count)
                *count = (int)k;
            else
                pending = (int)k;
            continue;
        }
        if (!strcmp(word, "x") || !strcmp(word, "X") || !strcmp(word, "\xc3\x97"))
            continue;
        if (!in) {
            const char *name = word;
            int glued = 0;
            /* "16xTYPE": a count glued before the type (no type's name
             * starts with a digit) */
            if (e > word && (*e == 'x' || *e == 'X') && e[1] && k >= 1 && k <= 1 << 16) {
                name = e + 1;
                glued = (int)k;
            }
            /* "TYPE:N": the --instances form */
            char *colon = strrchr(word, ':');
            long kc = colon ? strtol(colon + 1, &e, 10) : 0;
            if (colon && e > colon + 1 && !*e && kc >= 1 && kc <= 1 << 16) {
                *colon = '\0';
                glued = (int)kc;
            }
            if ((in = plan_catalog_find(cat, name)) != NULL) {
                *count = glued ? glued : pending;
                continue;
            }
        }
        size_t u = strlen(rest);
        snprintf(rest + u, sizeof rest - u, "%s%s", u ? " " : "", word);
    }
    if (!in && rest[0] && (in = plan_catalog_find(cat, rest)) != NULL)
        *count = pending;
    /* a cloud's or a vendor's name before a type of words ("Azure NDm A100
     * v4", "Google Cloud A3 Mega") */
    static const char *const owners[] = {"Microsoft Azure ", "Azure ", "AWS ", "Amazon EC2 ",
                                         "EC2 ", "Google Cloud ", "GCP ", "Oracle Cloud ",
                                         "OCI ", "NVIDIA "};
    for (size_t i = 0; !in && i < sizeof owners / sizeof owners[0]; i++) {
        size_t n = strlen(owners[i]);
        if (strncasecmp(rest, owners[i], n) == 0 && rest[n] &&
            (in = plan_catalog_find(cat, rest + n)) != NULL)
            *count = pending;
    }
    return in;
}

int plan__map_cluster(const plan_catalog *cat, const plan_validate_row *r, int64_t gpus,
                      plan_validate_result *out)
{
    plan_instance *inst = &out->inst;
    const plan_instance *in = named_instance(cat, r->instance_type, NULL);
    if (in)
        *inst = *in;
    if (!in) {
        net_text net;
        plan__net_parse(r->interconnect, &net);
        /* the row's own network fields, when it has them, over its text */
        double v;
        if (parse_num(r->net_gbps_per_node, &v) == 1 && v > 0 && v < 1e6) {
            net.node_bps = v * 1e9 / 8.0;
            net.gpu_bps = 0;
        } else if (parse_num(r->net_gbps_per_gpu, &v) == 1 && v > 0 && v < 1e6) {
            net.gpu_bps = v * 1e9 / 8.0;
            net.node_bps = 0;
        }
        int gpn = 0;
        double net_bps = 0;
        in = closest_instance(cat, r, &net, stated_mem(r), &gpn, &net_bps);
        if (!in) {
            const char *variant = plan__board_variant(r->gpu_type);
            for (int k = 0; k < cat->ngpus; k++)
                if (names_chip(r->gpu_type, &cat->gpus[k]))
                    return skip(out, "no catalog node has GPU '%s' (the catalog's %s): add one "
                                "with --catalog FILE", nz(r->gpu_type), cat->gpus[k].name);
            if (variant)
                return skip(out, "no catalog GPU for GPU '%s': its %s board runs at other "
                            "clocks and memory bandwidth than the catalog's modules of that "
                            "chip (add it with --catalog FILE)", nz(r->gpu_type), variant);
            char chips[160] = "";
            for (int k = 0; k < cat->ngpus; k++) {
                size_t u = strlen(chips), n = chip_len(cat->gpus[k].name);
                char chip[32];
                snprintf(chip, sizeof chip, "%.*s", (int)(n < sizeof chip ? n : sizeof chip - 1),
                         cat->gpus[k].name);
                if (!strstr(chips, chip) && u + n + 3 < sizeof chips)
                    snprintf(chips + u, sizeof chips - u, "%s%s", u ? ", " : "", chip);
            }
            return skip(out, "no catalog GPU for GPU '%s' (the catalog has %s; add one with "
                        "--catalog FILE)", nz(r->gpu_type), chips);
        }
        *inst = *in;
        net_tech tech = net.tech != NET_UNSTATED ? net.tech : NET_RDMA;
        int same = in->gpus_per_node == gpn && tech_of(cat, in) == tech &&
                   fabs(in->net_bps - net_bps) <= 1e-6 * net_bps &&
                   (net.gpu_bps == 0 || fabs(in->net_gpu_bps - net.gpu_bps) <= 1e-6 * net.gpu_bps);
        if (!same) {
            /* the node the row describes: this catalog node's GPU and links,
             * the stated network (and its technology's latency and curve) */
            inst->gpus_per_node = gpn;
            inst->net_bps = net_bps;
            /* a rate stated per GPU is each GPU's own NIC */
            inst->net_gpu_bps = net.gpu_bps > 0 ? net.gpu_bps : 0;
            const plan_instance *t = tech_of(cat, in) == tech ? in : with_tech(cat, in, tech);
            if (t) {
                inst->net_latency_s = t->net_latency_s;
                inst->net_curve_index = t->net_curve_index;
                snprintf(inst->net_curve, sizeof inst->net_curve, "%s", t->net_curve);
                inst->efa = t->efa;
            }
            inst->price_per_hour = 0;
            inst->naliases = 0;
            char name[128];
            snprintf(name, sizeof name, "%dx%s %.0fGbps %s", gpn, cat->gpus[in->gpu_index].name,
                     net_bps * 8e-9, tech == NET_EFA ? "EFA" : "RDMA");
            size_t nl = strnlen(name, sizeof inst->name - 1);
            memcpy(inst->name, name, nl);
            inst->name[nl] = '\0';
            snprintf(inst->source, sizeof inst->source,
                     "made for the row: catalog node %s with the row's network", in->name);
        }
        if (net.gpu_bps > 0)
            note(out, "network %.0f Gbps per GPU: %.0f Gbps per node of %d GPUs",
                 net.gpu_bps * 8e-9, net_bps * 8e-9, gpn);
        else if ((blank(r->interconnect) || net.node_bps == 0) &&
                 reference_of(&cat->gpus[in->gpu_index]))
            note(out, "network: %s's reference node (%.0f Gbps)", cat->gpus[in->gpu_index].name,
                 net_bps * 8e-9);
        else if (blank(r->interconnect) || net.node_bps == 0)
            note(out, "network: catalog node %s (%.0f Gbps; %s has no reference node)", in->name,
                 net_bps * 8e-9, cat->gpus[in->gpu_index].name);
    }
    /* The GPU's stated memory is the run's, whatever the catalog's part of
     * that chip has (a 96 GB H100 is not the 80 GB one): the same chip, its
     * memory as stated (more than 2 % off the catalog's). */
    const plan_gpu *cg = &cat->gpus[inst->gpu_index];
    double mem = device_mem(stated_mem(r), cg);
    out->own_gpu = 0;
    if (mem > 0 && fabs(log(mem / cg->mem_bytes)) > 0.02) {
        out->gpu = *cg;
        out->gpu.mem_bytes = mem;
        int cl = (int)chip_len(cg->name);
        snprintf(out->gpu.name, sizeof out->gpu.name, "%.*s-%.0fGB", cl > 20 ? 20 : cl, cg->name,
                 mem / 1073741824.0);
        snprintf(out->gpu.source, sizeof out->gpu.source,
                 "the catalog's %s with the row's stated memory", cg->name);
        out->own_gpu = 1;
        note(out, "GPU memory %.0f GiB as stated (the catalog's %s has %.0f)",
             mem / 1073741824.0, cg->name, cg->mem_bytes / 1073741824.0);
    }
    int g = inst->gpus_per_node;
    int nodes;
    if (gpus < g) {
        nodes = 1;
        note(out, "%lld of the %d GPUs of one %s", (long long)gpus, g, inst->name);
        /* GPUs that do not divide the node (64 of a 72-GPU NVLink rack):
         * the node as the run used it, its GPUs on the node's links */
        if (g % gpus != 0)
            use_part(inst, (int)gpus);
    } else if (gpus % g != 0 && g > PLAN_VAL_BOARD_NODE_GPUS) {
        /* a rack-scale NVLink node the GPUs do not fill whole: the run
         * spreads them evenly, as many on each as divides them (128 GPUs
         * on two 72-GPU racks: 64 each) */
        int part = g;
        while (part > 1 && gpus % part != 0)
            part--;
        nodes = (int)(gpus / part);
        note(out, "%lld GPUs on %d %s nodes, %d of the %d GPUs of each", (long long)gpus, nodes,
             inst->name, part, g);
        use_part(inst, part);
        g = part;
    } else if (gpus % g != 0) {
        return skip(out, "%lld GPUs is not a whole number of %s nodes (%d GPUs each)",
                    (long long)gpus, inst->name, g);
    } else {
        nodes = (int)(gpus / g);
    }
    snprintf(out->instance, sizeof out->instance, "%s", inst->name);
    out->nodes = nodes;
    out->gpus = (int)gpus;
    return 0;
}

int plan_validate_cluster(const plan_catalog *cat, const plan_validate_result *r,
                          plan_cluster *c, st_err *err)
{
    const plan_instance *in = &r->inst;
    if (!r->have_layout && !r->have_model)
        return ST_RAISE(err, ST_EINVAL, "row %s: no cluster", r->row_id);
    int rc = plan_cluster_make(cat, in, r->nodes, c, err);
    if (rc)
        return rc;
    if (r->own_gpu)
        c->gpu = &r->gpu; /* the row's part: its stated memory */
    c->gpus = r->gpus;
    plan_cluster_use_framework(cat, r->framework, c);
    return ST_OK;
}

/* The GPUs of a row that does not count them, from what it does state:
 * its tensor, pipeline, data (and context) degrees, all given, multiply
 * to them; else an instance type with a node count ("p4d.24xlarge x 16",
 * "16 x p5.48xlarge") has that many nodes of its GPUs. 0 when neither. */
int64_t plan__gpus_of_nodes(const plan_catalog *cat, const plan_validate_row *r,
                            const char *text, const char **how)
{
    const char *t = nz(text);
    char *e;
    long n = strtol(t, &e, 10);
    if (e == t || n < 1 || n > 1 << 16 || !isspace((unsigned char)*e))
        return 0;
    /* the number counts the nodes: "node" follows it, with no GPUs and no
     * remark between ("64 (8 nodes)" counts GPUs; "8x8 nodes" says
     * nothing clear) */
    const char *nd = e;
    while (*nd && strncasecmp(nd, "node", 4) != 0)
        nd++;
    if (!*nd)
        return 0;
    for (const char *q = e; q < nd; q++)
        if (*q == '(' || *q == ',' || strncasecmp(q, "GPU", 3) == 0)
            return 0;
    int k = 0;
    const plan_instance *in = named_instance(cat, e, &k);
    if (!in)
        in = named_instance(cat, r->instance_type, &k);
    if (in && in->gpus_per_node > 0) {
        *how = "the nodes counted, of the instance type named";
        return (int64_t)n * in->gpus_per_node;
    }
    for (int i = 0; i < cat->ngpus; i++)
        if (cat->gpus[i].ref_node_gpus > 0 && names_chip(nz(r->gpu_type), &cat->gpus[i])) {
            *how = "the nodes counted, of the chip's reference node";
            return (int64_t)n * cat->gpus[i].ref_node_gpus;
        }
    return 0;
}

int64_t plan__gpus_of_layout(const plan_catalog *cat, const plan_validate_row *r,
                             const char **how)
{
    *how = "the product of the published degrees";
    double tp, pp, dp, cp = 1;
    if (parse_num(r->tp, &tp) == 1 && parse_num(r->pp, &pp) == 1 &&
        parse_num(r->dp, &dp) == 1 && (blank(r->cp) || parse_num(r->cp, &cp) == 1) &&
        tp >= 1 && pp >= 1 && dp >= 1 && cp >= 1 && tp * pp * dp * cp <= (double)(1 << 24) &&
        tp == floor(tp) && pp == floor(pp) && dp == floor(dp) && cp == floor(cp))
        return (int64_t)(tp * pp * dp * cp);
    *how = "the published instance count";
    int k = 0;
    const plan_instance *in = named_instance(cat, r->instance_type, &k);
    if (in && k > 0 && in->gpus_per_node > 0)
        return (int64_t)k * in->gpus_per_node;
    return 0;
}
