/*
 * plan_validate_rules.c: how smdplan validate reads a published run's
 * hardware and FLOP-convention text, and the words of its recompute,
 * sharding and yes/no fields. The framework a run names is read by
 * plan_framework_match (plan_framework.c); the cluster by its GPU, memory
 * and network text here; nothing keys on a source.
 */
#include "planner/plan_validate_int.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The first place needle occurs in hay, case-insensitive; NULL if none. */
static const char *plan__find(const char *hay, const char *needle)
{
    if (!hay || !needle)
        return NULL;
    size_t n = strlen(needle);
    for (const char *p = hay; *p; p++)
        if (strncasecmp(p, needle, n) == 0)
            return p;
    return n == 0 ? hay : NULL;
}

int plan__contains(const char *hay, const char *needle)
{
    return plan__find(hay, needle) != NULL;
}

/* The first whole token of text equal to word, case-sensitive or (ci) in
 * any case (a token is a run of letters, digits and '_', as a log line's
 * field names are); NULL if none. */
static const char *find_token(const char *text, const char *word, int ci)
{
    size_t n = strlen(word);
    for (const char *p = text; p && *p; p++) {
        if ((ci ? strncasecmp(p, word, n) : strncmp(p, word, n)) != 0)
            continue;
        int before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
        int after = isalnum((unsigned char)p[n]) || p[n] == '_';
        if (!before && !after)
            return p;
    }
    return NULL;
}

static const char *token_at(const char *text, const char *word)
{
    return find_token(text, word, 0);
}

/* ------------------------------------------------------------------------ */
/* Model traits: installed from data (data/model_families.json)              */
/* ------------------------------------------------------------------------ */

static plan_model_trait traits[PLAN_TRAITS_MAX];
static int ntraits;

int plan_model_traits_set(const plan_model_trait *v, int n, st_err *err)
{
    if (n < 0 || n > PLAN_TRAITS_MAX || (n > 0 && !v))
        return ST_RAISE(err, ST_EINVAL, "model traits: %d of them; allowed: 0 to %d", n,
                        PLAN_TRAITS_MAX);
    for (int i = 0; i < n; i++) {
        const plan_model_trait *t = &v[i];
        if (t->nwords < 1 || t->nwords > PLAN_TRAIT_WORDS)
            return ST_RAISE(err, ST_EINVAL, "model trait %d: %d words; allowed: 1 to %d", i + 1,
                            t->nwords, PLAN_TRAIT_WORDS);
        for (int w = 0; w < t->nwords; w++)
            if (!t->words[w][0] || !memchr(t->words[w], 0, PLAN_TRAIT_WORD_MAX))
                return ST_RAISE(err, ST_EINVAL, "model trait %d: an empty or unterminated word",
                                i + 1);
        if (t->arch < -1 || t->arch > PLAN_ARCH_LLAMA || t->mlp < -1 || t->mlp > PLAN_MLP_GATED ||
            t->dropout < -1 || t->dropout > PLAN_DROPOUT_OFF || t->tied < -1 || t->tied > 1 ||
            t->vocab < 0 || t->vocab > PLAN_MAX_VOCAB || t->kv_heads < 0 ||
            t->kv_heads > PLAN_MAX_HEADS || t->structure < -1 ||
            t->structure >= PLAN_STRUCT__COUNT)
            return ST_RAISE(err, ST_EINVAL, "model trait %d ('%s'): a property out of range",
                            i + 1, t->words[0]);
        if (t->arch < 0 && t->mlp < 0 && t->dropout < 0 && t->tied < 0 && !t->vocab &&
            !t->kv_heads && t->structure < 0)
            return ST_RAISE(err, ST_EINVAL, "model trait %d ('%s') says nothing of the model",
                            i + 1, t->words[0]);
    }
    if (n > 0)
        memcpy(traits, v, (size_t)n * sizeof *v);
    ntraits = n;
    return ST_OK;
}

const plan_model_trait *plan_model_traits(int *n)
{
    *n = ntraits;
    return ntraits ? traits : NULL;
}

/* Gb/s to bytes/s. */
#define GBPS(x) ((x) * 1e9 / 8.0)

/* Intel Omni-Path 100 series: 100 Gb/s per port (Intel OPA product brief). */
#define OMNIPATH_PORT_GBPS 100.0

/* The first number at or after p, with its end; 0 if none (its end then
 * the end of the text). */
static double number_at(const char *p, const char **end)
{
    while (*p && !isdigit((unsigned char)*p))
        p++;
    *end = p;
    if (!*p)
        return 0;
    char *e;
    double v = strtod(p, &e);
    *end = e;
    return v;
}

/* The unit of a rate at q, as Gb/s per unit: bits ("Gb/s", "Gbps",
 * "Gbit", a port speed "400G"), bytes ("GB/s", "GBps", "GByte": 8 bits),
 * Tb/s and TB/s; 0 when q names no rate. "GB" with a capital B is bytes,
 * as the SI and IEC prefixes write them; "gb" in lower case is read as
 * bits, the networks' own unit. */
static double rate_unit(const char *q)
{
    double scale = 0;
    if (q[0] == 'G' || q[0] == 'g')
        scale = 1.0;
    else if (q[0] == 'T' || q[0] == 't')
        scale = 1000.0;
    if (!scale)
        return 0;
    if (q[1] == 'B' && (q[2] == '/' || q[2] == 'p' || q[2] == 'y'))
        return 8.0 * scale; /* GB/s, GBps, GByte/s */
    if (q[1] == 'b' || q[1] == 'B')
        return q[1] == 'B' && q[0] == 'G' ? 0 : scale; /* "GB" alone: a size, not a rate */
    /* "400G", "8x400G NDR": an Ethernet or InfiniBand port's speed */
    if (q[0] == 'G' && !isalnum((unsigned char)q[1]))
        return scale;
    return 0;
}

/* InfiniBand's link speeds by generation name, 4x ports (InfiniBand Trade
 * Association roadmap: FDR 56, EDR 100, HDR 200, NDR 400, XDR 800 Gb/s);
 * "HDR100" and the like name a split port's own speed. 0: no name at q. */
static double ib_generation_gbps(const char *q, const char **end)
{
    static const struct {
        const char *name;
        double gbps;
    } gen[] = {{"FDR", 56}, {"EDR", 100}, {"HDR", 200}, {"NDR", 400}, {"XDR", 800}};
    for (size_t i = 0; i < sizeof gen / sizeof gen[0]; i++) {
        if (strncmp(q, gen[i].name, 3) != 0 || isalpha((unsigned char)q[3]))
            continue;
        const char *e = q + 3;
        double v = gen[i].gbps;
        if (isdigit((unsigned char)*e)) { /* "NDR400", "HDR100": the port's speed */
            char *x;
            v = strtod(e, &x);
            e = x;
        }
        *end = e;
        return v;
    }
    return 0;
}

/* NVIDIA's ConnectX adapters by generation, one port's top speed
 * (ConnectX-6 product brief: 200 Gb/s HDR; ConnectX-7: 400 Gb/s NDR;
 * ConnectX-8 SuperNIC: 800 Gb/s XDR), written "ConnectX-7", "CX-7" or
 * "CX7"; 0 when q names none. */
static double nic_gbps(const char *q, const char **end)
{
    static const struct {
        const char *name;
        double gbps;
    } nic[] = {{"ConnectX-6", 200}, {"ConnectX-7", 400}, {"ConnectX-8", 800},
               {"CX-6", 200},       {"CX-7", 400},       {"CX-8", 800},
               {"CX6", 200},        {"CX7", 400},        {"CX8", 800}};
    for (size_t i = 0; i < sizeof nic / sizeof nic[0]; i++) {
        size_t n = strlen(nic[i].name);
        if (strncasecmp(q, nic[i].name, n) == 0 && !isalnum((unsigned char)q[n])) {
            *end = q + n;
            return nic[i].gbps;
        }
    }
    return 0;
}

/* A port's speed by its InfiniBand generation or its adapter at q; 0 when
 * q names neither. */
static double port_gbps(const char *q, const char **end)
{
    double g = ib_generation_gbps(q, end);
    return g > 0 ? g : nic_gbps(q, end);
}

/* A count after a rate or a port name: "400Gb/s x 8", "NDR400 x8",
 * "400 Gb/s (8 per node)", "400 Gb/s, 8 NICs" (the rate's unit skipped).
 * 0 when none. */
static double trailing_count(const char *e)
{
    while (*e && !isspace((unsigned char)*e) && *e != 'x' && *e != 'X' && *e != ',' &&
           *e != '(')
        e++; /* the rest of the unit: "b/s", "bps", "B/s" */
    while (*e == ' ')
        e++;
    if ((*e == 'x' || *e == 'X') && !isalpha((unsigned char)e[1])) {
        e++;
        while (*e == ' ')
            e++;
        if (isdigit((unsigned char)*e)) {
            double n = strtod(e, NULL);
            return n >= 1 && n <= 64 ? n : 0;
        }
        return 0;
    }
    /* "(8 per node)", ", 8 NICs": a count of the node's links */
    while (*e == '(' || *e == ',' || *e == ' ')
        e++;
    if (isdigit((unsigned char)*e)) {
        char *x;
        double n = strtod(e, &x);
        while (*x == ' ')
            x++;
        static const char *const per[] = {"per node", "NIC", "port", "HCA", "link", "rail",
                                          "adapter", "card"};
        for (size_t i = 0; i < sizeof per / sizeof per[0]; i++)
            if (strncasecmp(x, per[i], strlen(per[i])) == 0)
                return n >= 1 && n <= 64 && n == floor(n) ? n : 0;
    }
    return 0;
}

/* "<n> x <rate> Gb", "<n> x NDR", "<rate> Gb x <n>" or "<rate> Gbps": the
 * per-node rate in Gb/s, 0 if the text gives none; *ports 1 when it counts
 * links, else 0. */
static double node_gbps(const char *s, int *ports)
{
    *ports = 0;
    for (const char *p = s; *p; p++) {
        /* a port by its generation or adapter, counted after it: "NDR400
         * x8", "HDR200 x 4", "ConnectX-7 (8 per node)" */
        if (isalpha((unsigned char)*p) && (p == s || !isalnum((unsigned char)p[-1]))) {
            const char *e;
            double g = port_gbps(p, &e);
            double n = g > 0 ? trailing_count(e) : 0;
            if (n > 0) {
                *ports = 1;
                return n * g;
            }
            continue;
        }
        if (!isdigit((unsigned char)*p) || (p > s && (isdigit((unsigned char)p[-1]) || p[-1] == '.')))
            continue;
        /* a number inside a word ("NDR400", "ConnectX-7") is no count */
        if (p > s && isalpha((unsigned char)p[-1]))
            continue;
        const char *e;
        double a = number_at(p, &e);
        const char *q = e;
        while (*q == ' ')
            q++;
        if ((*q == 'x' || *q == 'X') && !isalpha((unsigned char)q[1])) {
            const char *r = q + 1;
            while (*r == ' ')
                r++;
            const char *e2;
            double g = ib_generation_gbps(r, &e2);
            if (g > 0) {
                *ports = 1;
                return a * g;
            }
            /* "8x CX7 400G": the adapter's rate unless the text states one */
            double nic = nic_gbps(r, &e2);
            if (nic > 0) {
                r = e2;
                while (*r == ' ')
                    r++;
                if (!isdigit((unsigned char)*r)) {
                    *ports = 1;
                    return a * nic;
                }
            }
            if (!isdigit((unsigned char)*r))
                continue;
            double b = number_at(r, &e2);
            while (*e2 == ' ')
                e2++;
            double u2 = rate_unit(e2);
            if (u2 > 0) {
                *ports = 1;
                return a * b * u2;
            }
            if (plan__contains(e2, "Omni-Path") && e2 - q < 4) {
                *ports = 1;
                return a * OMNIPATH_PORT_GBPS;
            }
            continue;
        }
        /* a count without "x" before a rate or a port name: "8 400 Gb/s
         * NICs" ("eight ..." in words), "8 NDR" */
        if (a >= 1 && a <= 64 && a == floor(a) && q > e) {
            const char *e2;
            double g = port_gbps(q, &e2);
            if (g > 0) {
                *ports = 1;
                return a * g;
            }
            if (isdigit((unsigned char)*q)) {
                double b = number_at(q, &e2);
                const char *q2 = e2;
                while (*q2 == ' ')
                    q2++;
                double u2 = rate_unit(q2);
                if (u2 > 0 && b > a) {
                    *ports = 1;
                    return a * b * u2;
                }
            }
        }
        double u = rate_unit(q);
        if (u > 0) {
            double n = trailing_count(q);
            if (n > 0)
                *ports = 1;
            return a * u * (n > 0 ? n : 1);
        }
        if (strncasecmp(q, "Omni-Path", 9) == 0 || strncasecmp(q, "x Omni-Path", 11) == 0) {
            *ports = 1;
            return a * OMNIPATH_PORT_GBPS;
        }
        p = e - 1;
    }
    return 0;
}

/* A count written as a word at p (a word of its own, before end): its
 * digits appended to out at *u, *k moved to the word's last character; 0
 * when p starts no such word. */
static int count_word(const char *p, const char *end, size_t *u, char *out, size_t n, size_t *k)
{
    static const struct {
        const char *word, *digits;
    } w[] = {{"two", "2"}, {"four", "4"}, {"eight", "8"}, {"sixteen", "16"}, {"dual", "2"},
             {"quad", "4"}};
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        size_t m = strlen(w[i].word), d = strlen(w[i].digits);
        if (p + m > end || strncasecmp(p, w[i].word, m) != 0 || isalnum((unsigned char)p[m]))
            continue;
        if (*u > 0 && isalnum((unsigned char)out[*u - 1]))
            continue;
        if (*u + d + 1 >= n)
            return 0;
        memcpy(out + *u, w[i].digits, d);
        *u += d;
        *k += m - 1;
        return 1;
    }
    return 0;
}

/* text without its clauses (between commas, semicolons, parentheses and
 * plus signs) about the links inside a node: "NVLink 900GB/s, InfiniBand
 * 400Gb/s per GPU" and "NVLink 4 + 8x CX7 400G" state the network in their
 * second clause only. '×' is read as 'x'. */
static void network_clauses(const char *text, char *out, size_t n)
{
    static const char *const intra[] = {"NVLink", "NVSwitch", "intra-node", "intra node",
                                        "PCIe", "xGMI", "Infinity Fabric"};
    size_t u = 0;
    const char *p = text;
    int skipped = 0; /* the clause before: a parenthesis says more of it */
    while (*p && u + 1 < n) {
        size_t len = strcspn(p, ",;()+");
        char clause[256];
        snprintf(clause, sizeof clause, "%.*s", (int)(len < sizeof clause ? len : sizeof clause - 1),
                 p);
        int skip = skipped && p > text && p[-1] == '(';
        for (size_t i = 0; i < sizeof intra / sizeof intra[0] && !skip; i++)
            skip = plan__contains(clause, intra[i]) && !plan__contains(clause, "inter-node") &&
                   !plan__contains(clause, "InfiniBand") && !plan__contains(clause, "EFA") &&
                   !plan__contains(clause, "RoCE");
        for (size_t k = 0; k < len && u + 1 < n; k++) {
            if (skip) {
                out[u++] = ' ';
            } else if ((unsigned char)p[k] == 0xC3 && (unsigned char)p[k + 1] == 0x97) {
                out[u++] = 'x'; /* U+00D7 MULTIPLICATION SIGN */
                k++;
            } else if (count_word(p + k, p + len, &u, out, n, &k)) {
                /* a count in words, as its digits */
            } else {
                out[u++] = p[k];
            }
        }
        p += len;
        skipped = skip;
        if (*p && u + 1 < n)
            out[u++] = *p++;
    }
    out[u] = '\0';
}

void plan__net_parse(const char *text, net_text *out)
{
    memset(out, 0, sizeof *out);
    if (!text)
        return;
    if (plan__contains(text, "EFA"))
        out->tech = NET_EFA;
    else if (plan__contains(text, "InfiniBand") || plan__contains(text, " IB") ||
             plan__contains(text, "HDR") || plan__contains(text, "NDR") ||
             plan__contains(text, "EDR") || plan__contains(text, "RoCE") ||
             plan__contains(text, "Omni-Path") || plan__contains(text, "Slingshot") ||
             strncasecmp(text, "IB", 2) == 0)
        out->tech = NET_RDMA; /* HPE Slingshot: RDMA over its Ethernet (Frontier, LUMI) */
    int ports = 0;
    char net[512];
    network_clauses(text, net, sizeof net);
    out->node_bps = GBPS(node_gbps(net, &ports));
    /* a single rate said to be per GPU is one GPU's NIC (rail-optimised
     * nodes: DGX H100 has one 400 Gb/s NIC per GPU); "8 x 400 Gb/s, one per
     * GPU" counts the node's links */
    static const char *const per_gpu[] = {"per GPU", "/GPU", "each GPU", "per accelerator",
                                          "GPU-to-GPU across nodes", "per-GPU"};
    for (size_t i = 0; out->node_bps > 0 && !ports && i < sizeof per_gpu / sizeof per_gpu[0]; i++)
        if (plan__contains(text, per_gpu[i])) {
            out->gpu_bps = out->node_bps;
            out->node_bps = 0;
            break;
        }
    /* one rate, no count and no node: the rate of the port the text names
     * ("InfiniBand HDR (200 Gbps)": HDR's 200 Gb/s a port, port_gbps) says
     * how fast a link is, not how many the node has: as the technology
     * named alone. With no port named, InfiniBand or RoCE at a
     * rail-optimised node's port rate (200 or 400 Gb/s) is one port too
     * (800 Gb/s alone is as often four 200 Gb/s ports as one XDR port: the
     * node's) */
    if (out->node_bps > 0 && !ports && !plan__contains(text, "node")) {
        double g = out->node_bps * 8.0 / 1e9, port = 0;
        for (const char *p = text; *p && port == 0; p++) {
            const char *e;
            if (p == text || !isalnum((unsigned char)p[-1]))
                port = port_gbps(p, &e);
        }
        if (port > 0 ? fabs(g - port) < 1e-6
                     : out->tech == NET_RDMA &&
                           (plan__contains(text, "InfiniBand") || plan__contains(text, "RoCE")) &&
                           (fabs(g - 200) < 1e-6 || fabs(g - 400) < 1e-6))
            out->node_bps = 0;
    }
    /* "4x Omni-Path" names ports without a rate */
    if (out->node_bps == 0 && plan__contains(text, "Omni-Path")) {
        const char *e;
        double n = number_at(text, &e);
        if (n >= 1 && n <= 64 && plan__contains(e, "Omni-Path"))
            out->node_bps = GBPS(n * OMNIPATH_PORT_GBPS);
    }
    out->nvswitch = plan__contains(text, "NVSwitch");
}

flop_conv plan__conv_parse(const char *c)
{
    /* Narayanan et al. 2021's equation by its number or its authors (its
     * own hardware count with full recompute) */
    if (plan__contains(c, "Eq.3") || plan__contains(c, "Eq. 3") || plan__contains(c, "Eq 3") ||
        plan__contains(c, "Narayanan"))
        return CONV_EQ3;
    /* 6N per token: with the attention's 12 l h s beside it llm-foundry's
     * count (its callbacks' flops_per_batch), alone the weights' FLOPs
     * (C = 6ND: Kaplan et al. 2020; Hoffmann et al. 2022) */
    int six_n = plan__contains(c, "6N") || plan__contains(c, "6 * N") ||
                plan__contains(c, "6*N") || plan__contains(c, "6 N ") ||
                plan__contains(c, "C=6") || plan__contains(c, "C = 6");
    int attn_term = plan__contains(c, "12*l*h*s") || plan__contains(c, "12 l h s") ||
                    plan__contains(c, "12lhs") || plan__contains(c, "12 * l * h * s") ||
                    plan__contains(c, "attention");
    if (plan__contains(c, "MosaicML") || (six_n && attn_term))
        return CONV_MOSAIC;
    if (six_n && !plan__contains(c, "recompute") && !plan__contains(c, "HFU"))
        return CONV_PARAMS6;
    /* hardware FLOPs: what the GPUs executed, the recomputed forward
     * included (Chowdhery et al. 2022, App. B: hardware FLOPs utilization,
     * HFU; Korthikanti et al. 2022, Sec. 6.3) */
    /* ("recomput": recompute, recomputed, recomputation) */
    static const char *const hw[] = {"hardware FLOP", "hardware TFLOP", "hardware PFLOP",
                                     "HFU", "hardware utili",
                                     "includes recomput", "including recomput",
                                     "with recomput", "incl. recomput",
                                     "with activation recomput",
                                     "including activation recomput"};
    for (size_t i = 0; i < sizeof hw / sizeof hw[0]; i++)
        if (plan__contains(c, hw[i]))
            return CONV_HARDWARE;
    /* the recomputed forward said to be left out: model FLOPs */
    static const char *const model[] = {"excluding recomput", "excl. recomput",
                                        "without recomput", "no recomput",
                                        "excluding activation recomput",
                                        "without activation recomput"};
    for (size_t i = 0; i < sizeof model / sizeof model[0]; i++)
        if (plan__contains(c, model[i]))
            return CONV_MEGATRON;
    /* "model FLOPs" (Chowdhery et al. 2022, App. B: the model's FLOPs
     * without recompute), as Megatron counts them (num_floating_point_-
     * operations; NeMo's "Model TFLOP/sec"; for a GPT the dgxc-benchmarking
     * README's s (72 l h^2 + 12 l h s + 6 V h) per sample, the same) */
    if (plan__contains(c, "model FLOPs") || plan__contains(c, "Model TFLOP") ||
        /* the stacks' own keys for it (Megatron-LM's and NeMo's logged
         * throughput, tflops_model) */
        plan__contains(c, "tflops_model") || plan__contains(c, "model_tflops") ||
        plan__contains(c, "model_flops"))
        return CONV_MEGATRON;
    if (plan__contains(c, "size*8") || plan__contains(c, "8*N") || plan__contains(c, "8N"))
        return CONV_PARAMS8;
    /* model FLOPs by the utilisation defined on them (MFU, Chowdhery et
     * al. 2022, PaLM, App. B) */
    if (plan__contains(c, "model FLOP") || plan__contains(c, "MFU") ||
        plan__contains(c, "Chowdhery") || plan__contains(c, "PaLM"))
        return CONV_MEGATRON;
    return CONV_UNKNOWN;
}

/* ---- words: yes, no, not stated, and the knobs they qualify ---- */

#define contains plan__contains
#define blank plan__blank

int plan__blank(const char *s)
{
    if (!s)
        return 1;
    while (isspace((unsigned char)*s))
        s++;
    return *s == '\0';
}

/* Is the text's first word one of words? */
static int first_word_in(const char *s, const char *const *words, int n)
{
    char w[16];
    int k = 0;
    while (s && isspace((unsigned char)*s))
        s++;
    while (s && isalnum((unsigned char)s[k]) && k < (int)sizeof w - 1) {
        w[k] = (char)tolower((unsigned char)s[k]);
        k++;
    }
    w[k] = '\0';
    for (int i = 0; i < n; i++)
        if (strcmp(w, words[i]) == 0)
            return 1;
    return 0;
}

/* Does s (leading space skipped) start with one of the phrases, as whole
 * words (case-insensitive)? */
static int starts_with_phrase(const char *s, const char *const *phrases, int n)
{
    while (s && isspace((unsigned char)*s))
        s++;
    for (int i = 0; s && i < n; i++) {
        size_t k = strlen(phrases[i]);
        if (strncasecmp(s, phrases[i], k) == 0 &&
            !(isalnum((unsigned char)phrases[i][k - 1]) && isalnum((unsigned char)s[k])))
            return 1;
    }
    return 0;
}

#define NWORDS(a) ((int)(sizeof(a) / sizeof(a)[0]))
static const char *const no_words[] = {"0", "false", "no", "off", "disabled", "none", "unused"};
static const char *const no_phrases[] = {"not used", "not enabled"};
static const char *const yes_words[] = {"1", "true", "yes", "on", "enabled", "used"};
/* Not given, in words: the framework's default. */
static const char *const na_phrases[] = {"n/a", "n.a.", "na", "not applicable",
                                         "not given", "not published", "not reported"};

/* "no", "off", "not used" ...: the row says it was not used. */
static int says_no(const char *s)
{
    return first_word_in(s, no_words, NWORDS(no_words)) ||
           starts_with_phrase(s, no_phrases, NWORDS(no_phrases));
}

/* A mark with no letter or digit ("-", "?") is the whole text, never the
 * start of one ("--recompute-activations" is a flag, not "-"). */
static int is_mark_alone(const char *s)
{
    static const char *const marks[] = {"-", "?", "--"};
    while (s && isspace((unsigned char)*s))
        s++;
    size_t n = s ? strlen(s) : 0;
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    for (int i = 0; i < NWORDS(marks); i++)
        if (n == strlen(marks[i]) && strncmp(s, marks[i], n) == 0)
            return 1;
    return 0;
}

/* A value the row names but does not state: the framework's default. */
static int unstated(const char *s)
{
    return blank(s) || contains(s, "not stated") || contains(s, "implied") ||
           contains(s, "unknown") || contains(s, "default") || is_mark_alone(s) ||
           starts_with_phrase(s, na_phrases, NWORDS(na_phrases));
}

int plan__key_says_no(const char *s, const char *key)
{
    static const char *const without[] = {"without"};
    const char *p = s ? plan__find(s, key) : NULL;
    if (!p)
        return 0;
    if (first_word_in(s, without, NWORDS(without)))
        return 1;
    /* the rest of the key's word ("ing", "_activations", "e-method"), then
     * the separators before its value */
    const char *q = p + strlen(key);
    while (isalnum((unsigned char)*q) || *q == '_' || *q == '-' || *q == '.')
        q++;
    while (*q == ' ' || *q == '=' || *q == ':' || *q == '"' || *q == '\'')
        q++;
    return first_word_in(q, no_words, NWORDS(no_words));
}

int plan__virtual_unstated(const char *s)
{
    if (blank(s))
        return 1;
    for (const char *p = s; *p; p++)
        if (isdigit((unsigned char)*p))
            return 0;
    return contains(s, "interleav") || contains(s, "virtual");
}

/* A recompute key given a no (plan__key_says_no): no recompute. */
static int key_says_no(const char *s)
{
    static const char *const keys[] = {"checkpoint", "recomput", "remat"};
    for (int i = 0; i < NWORDS(keys); i++)
        if (plan__key_says_no(s, keys[i]))
            return 1;
    return 0;
}

/* Recompute text: -1 not understood, -2 the framework's default. */
int plan__parse_recompute(const char *s)
{
    if (says_no(s) || key_says_no(s))
        return PLAN_RECOMP_NONE;
    if (unstated(s))
        return -2;
    /* whole layers, every Nth of them (torchtitan's layer-wise selective
     * activation checkpointing): full recompute of those layers */
    if (plan__parse_recompute_every(s) > 0)
        return PLAN_RECOMP_FULL;
    /* JAX's named checkpoint policies (jax.checkpoint_policies, JAX docs
     * "Gradient checkpointing with jax.checkpoint"): everything_saveable
     * keeps every residual (no recompute), nothing_saveable keeps none (the
     * whole layer again), dots_saveable (alias checkpoint_dots) and
     * dots_with_no_batch_dims_saveable keep the matmuls' outputs and
     * recompute the elementwise work, as MaxText's 'minimal' below */
    if (contains(s, "everything_saveable"))
        return PLAN_RECOMP_NONE;
    if (contains(s, "nothing_saveable"))
        return PLAN_RECOMP_FULL;
    if (contains(s, "dots_saveable") || contains(s, "checkpoint_dots") ||
        contains(s, "dots_with_no_batch_dims"))
        return PLAN_RECOMP_SELECTIVE;
    /* Megatron-LM's --recompute-activations is the selective kind
     * (arguments.py: it sets recompute_granularity 'selective'); MaxText's
     * remat_policy 'minimal' saves every matmul's output and recomputes
     * only the cheap elementwise work (base.yml's remat_policy options,
     * fastest first; jax.checkpoint_policies.checkpoint_dots); recomputing
     * the attention (core) alone is what selective recomputation is
     * (Korthikanti et al. 2022, Sec. 4.2) */
    if (contains(s, "selective") || contains(s, "recompute-activations") ||
        contains(s, "attention") ||
        contains(s, "recompute_activations") || contains(s, "minimal") ||
        /* torchtitan's name for selective activation checkpointing
         * (docs: "SAC", activation_checkpoint.mode "selective") */
        token_at(s, "SAC"))
        return PLAN_RECOMP_SELECTIVE;
    /* MaxText's remat policies that save some matmuls' outputs and
     * recompute the others: full recompute of what they do not keep
     * (plan__parse_remat_saved); kept on the host (qkv_proj_offloaded,
     * minimal_offloaded, custom with offload), a kind the model does not
     * have */
    int saved = plan__parse_remat_saved(s);
    if (saved == -3)
        return -3;
    if (saved >= 0)
        return PLAN_RECOMP_FULL;
    /* Megatron's --recompute-method (NeMo activations_checkpoint_method)
     * "uniform" and "block" recompute whole layers: full recomputation (of
     * the layers plan__parse_recompute_layers counts, where a key gives
     * them);
     * checkpointing "on" without more is the per-layer kind; JAX's
     * jax.checkpoint ("aka jax.remat", JAX docs) with its default policy
     * saves nothing inside the layer; torchtitan's "AC" is activation
     * checkpointing, per layer unless selective */
    if (contains(s, "full") || contains(s, "recomput") || contains(s, "checkpoint") ||
        contains(s, "uniform") || contains(s, "block") || contains(s, "remat") ||
        token_at(s, "AC") || contains(s, "per-layer") || contains(s, "per layer") ||
        contains(s, "every layer") || contains(s, "each layer") || contains(s, "layer-wise") ||
        contains(s, "layerwise") || first_word_in(s, yes_words, NWORDS(yes_words)))
        return PLAN_RECOMP_FULL;
    return -1;
}

/* q past the separators between a key and its value (spaces, '=', ':',
 * quotes). */
static const char *past_separators(const char *q)
{
    while (*q == ' ' || *q == '=' || *q == ':' || *q == '"' || *q == '\'')
        q++;
    return q;
}

/* Is the name found at p (len characters) in s negated: "without ",
 * "no ", "not " before it, or "false", "off", "0", "disabled", "not used"
 * after it ("tp_comm_overlap: False", "FP8 off")? */
static int negated(const char *s, const char *p, size_t len)
{
    static const char *const before[] = {"without ", "no ", "not "};
    static const char *const after[] = {"false", "off", "0", "disabled", "not used", "unused"};
    for (size_t b = 0; b < sizeof before / sizeof before[0]; b++) {
        size_t n = strlen(before[b]);
        if ((size_t)(p - s) >= n && strncasecmp(p - n, before[b], n) == 0)
            return 1;
    }
    const char *q = past_separators(p + len);
    while (*q == '(' || *q == ' ') /* "FP8 (not used)" */
        q++;
    for (size_t a = 0; a < sizeof after / sizeof after[0]; a++) {
        size_t n = strlen(after[a]);
        if (strncasecmp(q, after[a], n) == 0 && !isalnum((unsigned char)q[n]))
            return 1;
    }
    return 0;
}

/* MaxText's remat policies by name (layers/decoders.py, get_remat_policy:
 * jax.checkpoint_policies.save_only_these_names of each) and its custom
 * policy's per-tensor settings ("query_proj=device", RematLocation remat,
 * device or offload). */
int plan__parse_remat_saved(const char *s)
{
    if (!s)
        return -1;
    if (contains(s, "_offloaded"))
        return -3;
    if (contains(s, "remat") && contains(s, "custom")) {
        static const struct {
            const char *key;
            int bit;
        } tensors[] = {
            {"query_proj", PLAN_SAVE_QKV}, {"key_proj", PLAN_SAVE_QKV},
            {"value_proj", PLAN_SAVE_QKV}, {"qkv_proj", PLAN_SAVE_QKV},
            {"out_proj", PLAN_SAVE_OUT},   {"mlpwi", PLAN_SAVE_MLPWI},
            {"mlpwo", PLAN_SAVE_MLPWO},    {"context", PLAN_SAVE_CONTEXT},
        };
        int saved = 0, any = 0;
        for (size_t i = 0; i < sizeof tensors / sizeof tensors[0]; i++) {
            for (const char *p = plan__find(s, tensors[i].key); p;
                 p = plan__find(p + 1, tensors[i].key)) {
                const char *q = p + strlen(tensors[i].key);
                while (*q == '_' || isdigit((unsigned char)*q)) /* mlpwi_0, mlpwi_1 */
                    q++;
                q = past_separators(q);
                if (strncasecmp(q, "offload", 7) == 0)
                    return -3;
                if (strncasecmp(q, "device", 6) == 0) {
                    saved |= tensors[i].bit;
                    any = 1;
                } else if (strncasecmp(q, "remat", 5) == 0) {
                    any = 1;
                }
            }
        }
        return any ? saved : -3; /* custom without its settings: not known */
    }
    /* the named ones that keep something ("full" keeps nothing and is a
     * word of the full kind: plan__parse_recompute's) */
    int saved;
    const char *name;
    for (int i = 0; (name = plan_remat_policy_at(i, &saved)) != NULL; i++)
        if (saved && contains(s, name))
            return saved;
    return -1;
}

int plan__parse_recompute_every(const char *s)
{
    /* torchtitan's activation_checkpoint.selective_ac_option as a number
     * (config_manager.py: "'int' (e.g., 2) for every nth layer"; its
     * default "2 = checkpoint every other layer") */
    const char *p = s ? plan__find(s, "selective_ac_option") : NULL;
    if (p) {
        const char *q = past_separators(p + strlen("selective_ac_option"));
        if (isdigit((unsigned char)*q)) {
            long n = strtol(q, NULL, 10);
            return n >= 1 && n <= (1L << 20) ? (int)n : -1;
        }
        return -1;
    }
    /* the same in words: every other (second, 2nd) layer, every Nth layer */
    static const struct {
        const char *words;
        int n;
    } named[] = {{"every other layer", 2}, {"every second layer", 2}, {"every third layer", 3},
                 {"every fourth layer", 4}, {"every other block", 2}, {"every second block", 2}};
    for (size_t i = 0; s && i < sizeof named / sizeof named[0]; i++)
        if (contains(s, named[i].words))
            return named[i].n;
    for (p = s ? plan__find(s, "every ") : NULL; p; p = plan__find(p + 1, "every ")) {
        const char *q = p + 6;
        if (!isdigit((unsigned char)*q))
            continue;
        char *e;
        long n = strtol(q, &e, 10);
        while (isalpha((unsigned char)*e)) /* 2nd, 3rd, 4th */
            e++;
        while (*e == ' ')
            e++;
        if (n >= 1 && n <= (1L << 20) &&
            (strncasecmp(e, "layer", 5) == 0 || strncasecmp(e, "block", 5) == 0))
            return (int)n;
    }
    return -1;
}

int plan__parse_recompute_layers(const char *s, int *block)
{
    static const char *const keys[] = {
        "recompute-num-layers", "recompute_num_layers", "activations_checkpoint_num_layers",
        "checkpoint-num-layers", "checkpoint_num_layers",
    };
    *block = 0;
    for (size_t i = 0; s && i < sizeof keys / sizeof keys[0]; i++) {
        const char *p = plan__find(s, keys[i]);
        if (!p)
            continue;
        const char *q = past_separators(p + strlen(keys[i]));
        if (!isdigit((unsigned char)*q))
            continue;
        long n = strtol(q, NULL, 10);
        if (n < 0 || n > (1L << 20))
            return -1;
        /* --recompute-method block (NeMo activations_checkpoint_method
         * block); uniform, the method of --checkpoint-num-layers, else */
        *block = contains(s, "block") && !contains(s, "uniform");
        return (int)n;
    }
    return -1;
}

/* Sharding text: ZeRO stages, FSDP modes, SMP and Megatron names; sets
 * *degree for a shard group smaller than the data-parallel group (FSDP
 * HYBRID_SHARD shards inside a node: -1 asks for the node's GPUs). -1 not
 * understood, -2 the framework's default. */
/* ---- optimizer sharding: the documented names of each stage ----
 * Every name below is a stack's own name for the thing (its config key,
 * enum or documented term), never a row's wording:
 *   ZeRO stages: "ZeRO-1/2/3", "ZeRO stage N" (Rajbhandari et al. 2020;
 *     DeepSpeed zero_optimization.stage), ZeRO++ and MiCS (ZeRO-3 variants,
 *     DeepSpeed docs); Megatron's "distributed optimizer"
 *     (--use-distributed-optimizer), Megatron-DeepSpeed's BF16_Optimizer
 *     (DeepSpeed's bf16 optimizer shards the optimizer state);
 *   PyTorch FSDP: ShardingStrategy FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD,
 *     _HYBRID_SHARD_ZERO2, NO_SHARD (torch.distributed.fsdp docs); FSDP2's
 *     fully_shard, with reshard_after_forward=False ZeRO-2-like; HSDP
 *     (PyTorch's name for hybrid sharded data parallelism);
 *   SageMaker model parallel: shard_optimizer_state, "sharded data
 *     parallel(ism)", sharded_data_parallel_degree (v1), hybrid_shard_degree
 *     and "hybrid sharded data parallelism" (v2); Colossal-AI's Gemini
 *     (GeminiPlugin: parameters, gradients and optimizer states sharded in
 *     chunks, ZeRO-3's partition; its LowLevelZeroPlugin takes a stage);
 *     the planner's own names (none, optimizer, gradients, params).
 * The shard group's size is the number after a documented key of it
 * (sharded_data_parallel_degree, hybrid_shard_degree, torchtitan's
 * data_parallel_shard_degree and dp_shard, DeepSpeed MiCS's mics_shard_size,
 * MaxText's ici_/dcn_fsdp_parallelism, their product when both are given),
 * or after the plain-English names of the quantity: a shard or sharding
 * group, degree or size, "N-way" before shard/FSDP, or a count of ranks
 * after a preposition ("ZeRO-3 over 128 GPUs", BloombergGPT's wording of
 * SMP's sharded data parallelism). */

/* The number after key (and spaces, '=', ':', '(' or "of"), else 0. */
static double number_after(const char *s, const char *key)
{
    for (const char *p = s; (p = plan__find(p, key)) != NULL; p++) {
        const char *q = p + strlen(key);
        for (;;) {
            while (*q == ' ' || *q == '=' || *q == ':' || *q == '(' || *q == '"' || *q == '_' ||
                   *q == '-')
                q++;
            if (strncasecmp(q, "of ", 3) == 0)
                q += 3;
            else
                break;
        }
        if (isdigit((unsigned char)*q)) {
            char *e;
            double v = strtod(q, &e);
            if (v >= 1 && v <= (double)(1 << 24))
                return v;
        }
    }
    return 0;
}

/* "N-way" right before word (within a few characters), else 0. */
static double n_way_before(const char *s, const char *word)
{
    for (const char *p = s; (p = plan__find(p, "-way")) != NULL; p++) {
        const char *d = p;
        while (d > s && isdigit((unsigned char)d[-1]))
            d--;
        const char *after = p + 4;
        while (*after == ' ' || *after == '-')
            after++;
        if (d < p && strncasecmp(after, word, strlen(word)) == 0)
            return strtod(d, NULL);
    }
    return 0;
}

int plan__ulysses_degree(const char *s)
{
    /* DeepSpeed-Ulysses by its names: the technique's, Megatron-DeepSpeed's
     * --ds-sequence-parallel-size */
    if (!s || !(contains(s, "Ulysses") || contains(s, "ds-sequence-parallel") ||
                contains(s, "ds_sequence_parallel")))
        return -1;
    static const char *const keys[] = {"Ulysses", "parallel-size", "parallel_size",
                                       "parallel size", "degree", "SP"};
    double v = n_way_before(s, "Ulysses");
    for (size_t i = 0; !(v > 0) && i < sizeof keys / sizeof keys[0]; i++)
        v = number_after(s, keys[i]);
    return v >= 1 && v <= (double)(1 << 20) ? (int)v : 0;
}

/* The group as plain English counts it: "over 128 GPUs", "across 64
 * ranks", "within 16 devices", "in groups of 32 GPUs": a whole number
 * right after the preposition and before a name of a rank; else 0. */
static double ranks_after_preposition(const char *s)
{
    static const char *const preps[] = {"over ", "across ", "among ", "within ", "groups of "};
    static const char *const ranks[] = {"GPU", "rank", "device", "accelerator", "worker"};
    for (size_t i = 0; i < sizeof preps / sizeof preps[0]; i++)
        for (const char *p = s; (p = plan__find(p, preps[i])) != NULL; p++) {
            const char *q = p + strlen(preps[i]);
            while (*q == ' ')
                q++;
            if (!isdigit((unsigned char)*q))
                continue;
            char *e;
            double v = strtod(q, &e);
            while (*e == ' ')
                e++;
            for (size_t k = 0; k < sizeof ranks / sizeof ranks[0]; k++)
                if (strncasecmp(e, ranks[k], strlen(ranks[k])) == 0 && v >= 1 &&
                    v <= (double)(1 << 24) && v == floor(v))
                    return v;
        }
    return 0;
}

static int shard_degree_of(const char *s)
{
    static const char *const keys[] = {
        "sharded_data_parallel_degree", "hybrid_shard_degree", "data_parallel_shard_degree",
        "dp_shard", "mics_shard_size", "shard group", "sharding group", "shard degree",
        "sharding degree", "shard size", "sharding size",
        "degree", /* the column's own degree: "hybrid sharding, degree 32" */
    };
    double ici = number_after(s, "ici_fsdp_parallelism"), dcn = number_after(s, "dcn_fsdp_parallelism");
    if (ici > 0 || dcn > 0)
        return (int)((ici > 0 ? ici : 1) * (dcn > 0 ? dcn : 1));
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        double v = number_after(s, keys[i]);
        if (v > 0)
            return (int)v;
    }
    double v = n_way_before(s, "shard");
    if (!(v > 0))
        v = n_way_before(s, "FSDP");
    if (!(v > 0))
        v = ranks_after_preposition(s);
    return v > 0 ? (int)v : 0;
}

/* Activation offloading by its stacks' names: SMP v1's offload_activations,
 * SMP v2's sm_activation_offloading (SageMaker Developer Guide, Activation
 * offloading), and the words for it. */
static const char *const act_offload_names[] = {
    "sm_activation_offloading", "offload_activations", "activation offloading",
    "activations offloading", "activation offload", "offload activations",
    "offloaded activations", "activations offloaded", "activation CPU offload",
};

/* The first activation-offload name in s, its length in *len; NULL: none. */
static const char *act_offload_at(const char *s, size_t *len)
{
    const char *best = NULL;
    for (size_t i = 0; s && i < sizeof act_offload_names / sizeof act_offload_names[0]; i++) {
        const char *p = plan__find(s, act_offload_names[i]);
        if (p && (!best || p < best)) {
            best = p;
            *len = strlen(act_offload_names[i]);
        }
    }
    return best;
}

int plan__says_fused_kernels(const char *s)
{
    /* the pointwise ops by their names, after "fused" (TinyLlama, Zhang et
     * al. 2024, Sec. 2.3: fused layernorm, fused SwiGLU from xFormers,
     * fused rotary embedding and cross entropy from FlashAttention), and
     * LinkedIn's Liger kernels (RMSNorm, SwiGLU, RoPE, fused cross
     * entropy for Hugging Face models) */
    static const char *const ops[] = {"rmsnorm", "rms norm", "layernorm", "layer norm",
                                      "swiglu", "rotary", "rope", "kernels"};
    if (!s)
        return 0;
    if (plan__find(s, "Liger"))
        return 1;
    for (const char *p = plan__find(s, "fused"); p; p = plan__find(p + 1, "fused")) {
        if (negated(s, p, 5))
            continue;
        const char *q = p + 5;
        while (*q == ' ' || *q == '-' || *q == '_')
            q++;
        for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
            if (strncasecmp(q, ops[i], strlen(ops[i])) == 0)
                return 1;
    }
    return 0;
}

int plan__says_act_offload(const char *s)
{
    size_t len = 0;
    const char *p = act_offload_at(s, &len);
    return p ? !negated(s, p, len) : -1;
}

/* Is every "offload" in s part of a name of activation offloading (which
 * moves no state)? */
static int only_act_offload(const char *s)
{
    for (const char *p = plan__find(s, "offload"); p; p = plan__find(p + 1, "offload")) {
        int inside = 0;
        for (size_t i = 0; i < sizeof act_offload_names / sizeof act_offload_names[0]; i++)
            for (const char *q = plan__find(s, act_offload_names[i]); q && !inside;
                 q = plan__find(q + 1, act_offload_names[i]))
                inside = p >= q && p < q + strlen(act_offload_names[i]);
        if (!inside)
            return 0;
    }
    return 1;
}

/* Does the text say a state lives off the GPU (optimizer or parameter
 * offload to CPU or NVMe), and not that it does not? Activation
 * offloading moves no state. */
static int offloaded(const char *s)
{
    static const char *const off[] = {"no offload",    "without offload", "offload: none",
                                      "offload none",  "offload=false",   "offload: false",
                                      "offload=none",  "offload: no",     "no cpu offload"};
    if (!contains(s, "offload") && !contains(s, "nvme") && !contains(s, "ZeRO-Infinity"))
        return 0;
    if (!contains(s, "nvme") && !contains(s, "ZeRO-Infinity") && only_act_offload(s))
        return 0;
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
        if (contains(s, off[i]))
            return 0;
    return 1;
}

static int has_word(const char *s, const char *w, int ci);

int plan__names_zero(const char *s)
{
    /* DeepSpeed's names: ZeRO and its stages ("ZeRO-3", "ZeRO stage 2",
     * "ZeRO++"), its config key, the paper's P_os / P_os+g / P_os+g+p */
    if (!s)
        return 0;
    /* spelt as DeepSpeed spells it: "zero" in any case is also "zero
     * bubble" (Qi et al. 2023) */
    return has_word(s, "ZeRO", 0) || has_word(s, "ZERO", 0) || strstr(s, "ZeRO-") ||
           contains(s, "zero_optimization") || has_word(s, "zero1", 1) ||
           has_word(s, "zero2", 1) || has_word(s, "zero3", 1) || contains(s, "os+g") ||
           token_at(s, "P_os") != NULL;
}

int plan__names_fsdp_strategy(const char *s)
{
    /* torch.distributed.fsdp.ShardingStrategy's names and FSDP2's call */
    return contains(s, "FULL_SHARD") || contains(s, "SHARD_GRAD_OP") ||
           contains(s, "HYBRID_SHARD") || contains(s, "fully_shard");
}

int plan__parse_sharding(const char *s, int *degree)
{
    *degree = 0;
    if (says_no(s) || contains(s, "NO_SHARD") || contains(s, "not shard") ||
        contains(s, "unshard") || contains(s, "no shard"))
        return PLAN_SHARD_NONE;
    if (blank(s) || (unstated(s) && !contains(s, "distributed optimizer")))
        return -2;
    /* DeepSpeed's config key: "zero_optimization": {"stage": N} (DeepSpeed
     * configuration JSON docs: stage 0 disabled, 1 optimizer states, 2 and
     * gradients, 3 and parameters) */
    double stage = number_after(s, "stage");
    if (stage == 0 && (contains(s, "stage 0") || contains(s, "stage=0") ||
                       contains(s, "stage\": 0") || contains(s, "stage: 0")))
        return PLAN_SHARD_NONE;
    if (stage == 1 || stage == 2 || stage == 3) {
        *degree = shard_degree_of(s);
        return stage == 1 ? PLAN_SHARD_OPTIMIZER : stage == 2 ? PLAN_SHARD_GRADIENTS
                                                             : PLAN_SHARD_PARAMS;
    }
    /* ZeRO-Offload keeps the optimizer on the CPU (Ren et al. 2021), ZeRO-
     * Infinity the parameters too, on CPU or NVMe (Rajbhandari et al.
     * 2021); FSDP's CPUOffload likewise: host memory and the CPU's Adam,
     * which the model does not have */
    if (offloaded(s))
        return -3;
    *degree = shard_degree_of(s);
    int hybrid = contains(s, "HYBRID_SHARD") || contains(s, "HSDP") || contains(s, "hybrid shard");
    /* The ZeRO paper's names of its stages (Rajbhandari et al. 2020, Sec.
     * 5: P_os, P_os+g, P_os+g+p), written with or without the P */
    if (contains(s, "os+g+p"))
        return PLAN_SHARD_PARAMS;
    if (contains(s, "os+g"))
        return PLAN_SHARD_GRADIENTS;
    if (token_at(s, "P_os") || token_at(s, "Pos"))
        return PLAN_SHARD_OPTIMIZER;
    if (hybrid && *degree == 0)
        *degree = -1; /* FSDP's hybrid sharding shards within a node */
    /* fairscale's names (fairscale docs, "Optimizer, Gradient and Model
     * Sharding"): OSS shards the optimizer state (ZeRO-1), ShardedDDP
     * (ShardedDataParallel) the gradients too (ZeRO-2), FSDP the
     * parameters as well (below) */
    if (contains(s, "SHARD_GRAD_OP") || contains(s, "_HYBRID_SHARD_ZERO2") ||
        contains(s, "reshard_after_forward=False") || contains(s, "zero-2") ||
        contains(s, "zero2") || contains(s, "zero stage 2") || strcasecmp(s, "gradients") == 0 ||
        contains(s, "ShardedDDP") || contains(s, "ShardedDataParallel"))
        return PLAN_SHARD_GRADIENTS;
    if (contains(s, "zero-3") || contains(s, "zero3") || contains(s, "zero stage 3") ||
        contains(s, "ZeRO++") || contains(s, "MiCS") || contains(s, "FULL_SHARD") || hybrid ||
        token_at(s, "Gemini") ||
        contains(s, "fully_shard") || contains(s, "FSDP") || contains(s, "fsdp_parallelism") ||
        contains(s, "sharded data parallel") || contains(s, "sharded_data_parallel") ||
        contains(s, "fully sharded") || contains(s, "fully_sharded") ||
        contains(s, "full shard") || contains(s, "params") || *degree > 0)
        return PLAN_SHARD_PARAMS;
    /* what is sharded, in words ("parameters, gradients and optimizer
     * states", "gradients and optimizer state partitioned") */
    int states = contains(s, "optimizer") || contains(s, "shard") || contains(s, "partition");
    if (states && (contains(s, "parameter") || contains(s, "weights")))
        return PLAN_SHARD_PARAMS;
    if (states && contains(s, "gradient"))
        return PLAN_SHARD_GRADIENTS;
    if (contains(s, "zero-1") || contains(s, "zero1") || contains(s, "zero stage 1") ||
        contains(s, "optimizer state sharding") || contains(s, "distributed optimizer") ||
        contains(s, "distributed-optimizer") || contains(s, "distributed_optimizer") ||
        /* its abbreviations in NVIDIA's tables ("Dist. Opt.", "DistOpt") */
        contains(s, "dist. opt") || contains(s, "distopt") || contains(s, "dist opt") ||
        contains(s, "shard_optimizer_state") || contains(s, "BF16_Optimizer") ||
        token_at(s, "OSS") ||
        (contains(s, "optimizer") && contains(s, "shard")) ||
        contains(s, "optimizer state") ||
        /* the column names optimizer sharding: "yes" is its first stage */
        first_word_in(s, yes_words, NWORDS(yes_words)))
        return PLAN_SHARD_OPTIMIZER;
    /* data parallelism that replicates every state: PyTorch's
     * DistributedDataParallel */
    if (token_at(s, "DDP") || contains(s, "DistributedDataParallel") || contains(s, "replicated"))
        return PLAN_SHARD_NONE;
    return -1;
}

/* Yes/no text: -1 not understood, -2 the framework's default. */
int plan__parse_flag(const char *s)
{
    if (first_word_in(s, yes_words, NWORDS(yes_words)))
        return 1;
    if (says_no(s))
        return 0;
    if (unstated(s))
        return -2;
    return -1;
}

/* ---- the date of a row's source ---- */

static const char *const month_names[12] = {"jan", "feb", "mar", "apr", "may", "jun",
                                            "jul", "aug", "sep", "oct", "nov", "dec"};

/* Month name (three letters or more) starting at p: 1-12, else 0. */
static int month_at(const char *p)
{
    for (int m = 0; m < 12; m++)
        if (strncasecmp(p, month_names[m], 3) == 0)
            return m + 1;
    return 0;
}

/* The earliest date a text names, year * 12 + month - 1 (a year alone is
 * read as its middle, June: the text says no more), 0 when none. Dates: a year
 * of its own (1990-2099, not inside a longer number or word, not a version
 * "2.2021"), with a month name before it ("Sep 2020") or a month number
 * after it ("2022-05", "2022/05"); an arXiv number YYMM.NNNNN after the word
 * arXiv (arXiv identifier scheme, 2007 on: year and month of submission). */
static int earliest_ym(const char *t)
{
    int best = 0;
    if (!t)
        return 0;
    for (const char *p = t; *p; p++) {
        if (strncasecmp(p, "arxiv", 5) == 0) {
            const char *q = p + 5;
            while (*q == ' ' || *q == ':')
                q++;
            if (isdigit((unsigned char)q[0]) && isdigit((unsigned char)q[3]) && q[4] == '.' &&
                isdigit((unsigned char)q[5])) {
                int yy = (q[0] - '0') * 10 + (q[1] - '0'), mm = (q[2] - '0') * 10 + (q[3] - '0');
                if (mm >= 1 && mm <= 12 && yy >= 7) {
                    int ym = (2000 + yy) * 12 + mm - 1;
                    if (!best || ym < best)
                        best = ym;
                }
            }
        }
        if (!isdigit((unsigned char)*p) || (p > t && (isalnum((unsigned char)p[-1]) || p[-1] == '.')))
            continue;
        int n = 0;
        while (isdigit((unsigned char)p[n]))
            n++;
        int y = n == 4 ? atoi(p) : 0;
        if (y < 1990 || y > 2099 || isalpha((unsigned char)p[n]) ||
            (p[n] == '.' && isdigit((unsigned char)p[n + 1]))) {
            p += n - 1;
            continue;
        }
        int m = 0;
        if ((p[n] == '-' || p[n] == '/') && isdigit((unsigned char)p[n + 1])) {
            int v = atoi(p + n + 1);
            if (v >= 1 && v <= 12)
                m = v;
        }
        /* "Sep 2020", "September 2020" */
        const char *b = p - 1;
        while (b > t && *b == ' ')
            b--;
        const char *w = b;
        while (w > t && isalpha((unsigned char)w[-1]))
            w--;
        if (!m && b >= t && isalpha((unsigned char)*b) && b - w >= 2)
            m = month_at(w);
        int ym = y * 12 + (m ? m - 1 : 5);
        if (!best || ym < best)
            best = ym;
        p += n - 1;
    }
    return best;
}

int plan__source_ym(const plan_validate_row *r)
{
    int ym = earliest_ym(r->source_date);
    if (ym)
        return ym;
    const char *texts[] = {r->source_title, r->source_locator, r->source_ref, r->source_key};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        int t = earliest_ym(texts[i]);
        if (t && (!ym || t < ym))
            ym = t;
    }
    return ym;
}

/* ---- number formats and attention kernels ---- */

int plan__parse_precision(const char *s)
{
    /* a text that says the format is not stated says nothing, whatever it
     * guesses after that ("not stated (the TFLOP/s suggest bf16)") */
    if (blank(s) || contains(s, "not stated") || contains(s, "not reported") ||
        contains(s, "not given") || contains(s, "not published") || contains(s, "unknown") ||
        is_mark_alone(s) || starts_with_phrase(s, na_phrases, NWORDS(na_phrases)))
        return -2;
    /* 8-bit floating point: NVIDIA's and OCP's names for the format
     * (Micikevicius et al. 2022, "FP8 Formats for Deep Learning": E4M3 and
     * E5M2) and PyTorch's (torch.float8_e4m3fn, torchao "float8") */
    /* 4-bit floating point (OCP's MXFP4, NVIDIA's NVFP4, both E2M1
     * elements: OCP Microscaling Formats (MX) v1.0; NVIDIA Blackwell
     * architecture brief): a format the planner has no rate or bytes for */
    static const char *const fp4[] = {"fp4", "float4", "e2m1", "4-bit float"};
    for (size_t i = 0; i < sizeof fp4 / sizeof fp4[0]; i++) {
        const char *p = plan__find(s, fp4[i]);
        if (p && !negated(s, p, strlen(fp4[i])))
            return PLAN__PREC_FP4;
    }
    static const char *const fp8[] = {"fp8", "float8", "float 8", "e4m3", "e5m2", "8-bit float"};
    for (size_t i = 0; i < sizeof fp8 / sizeof fp8[0]; i++) {
        const char *p = plan__find(s, fp8[i]);
        if (p && !negated(s, p, strlen(fp8[i])))
            return PLAN_PREC_FP8;
    }
    int bf = contains(s, "bf16") || contains(s, "bfloat16") || contains(s, "bfloat");
    /* NVIDIA Apex's amp opt levels O1 and O2 cast to fp16 (Apex docs,
     * apex.amp: "O1: Mixed Precision (recommended for typical use)", both
     * float16); Lightning's "16-mixed" is fp16 too */
    int apex = (contains(s, "amp") || contains(s, "apex")) &&
               (token_at(s, "O1") || token_at(s, "O2"));
    int fp16 = contains(s, "fp16") || contains(s, "half") || apex || contains(s, "16-mixed") ||
               (contains(s, "float16") && !contains(s, "bfloat16"));
    int half = bf || fp16 || contains(s, "mixed") || contains(s, "amp");
    if (!half && (contains(s, "fp32") || contains(s, "float32") || contains(s, "tf32")))
        return PLAN_PREC_FP32;
    /* 16-bit mixed precision whose format the text does not name ("mixed
     * precision", "AMP"): the release's default, as for one not stated */
    if (half && !bf && !fp16)
        return -2;
    /* IEEE half precision when named and bfloat16 not: the same tensor-core
     * rate and bytes (plan_layout.c), what the run used */
    return fp16 && !bf ? PLAN_PREC_FP16 : PLAN_PREC_BF16;
}

plan_attn plan__parse_flash_generation(const char *s)
{
    if (!s)
        return PLAN_ATTN_UNFUSED;
    /* Dao 2023 names its successor FlashAttention-2, Shah et al. 2024
     * FlashAttention-3; the flash-attn package's versions 2.x and 3.x are
     * them; Transformer Engine's cuDNN backend is "cuDNN" fused attention */
    static const char *const fa3[] = {"flashattention-3", "flashattention 3", "flash attention 3",
                                      "flash-attention 3", "flash-attn 3", "flash_attn 3",
                                      "flash-attn3", "fa3"};
    static const char *const fa2[] = {"flashattention-2", "flashattention 2", "flash attention 2",
                                      "flash-attention 2", "flash-attn 2", "flash_attn 2",
                                      "flash-attn2", "flash-attn-v2", "flash_attn_v2", "fa2"};
    for (size_t i = 0; i < sizeof fa3 / sizeof fa3[0]; i++)
        if (contains(s, fa3[i]))
            return PLAN_ATTN_FLASH3;
    for (size_t i = 0; i < sizeof fa2 / sizeof fa2[0]; i++)
        if (contains(s, fa2[i]))
            return PLAN_ATTN_FLASH2;
    if (contains(s, "cudnn"))
        return PLAN_ATTN_CUDNN;
    if (contains(s, "flashattention-1") || contains(s, "flash-attn 1") || contains(s, "fa1"))
        return PLAN_ATTN_FLASH1;
    return PLAN_ATTN_UNFUSED;
}

/* w as a word of its own in s, case-sensitive or (ci) in any case. */
static int has_word(const char *s, const char *w, int ci)
{
    size_t n = strlen(w);
    for (const char *p = !s ? NULL : ci ? plan__find(s, w) : strstr(s, w); p;
         p = ci ? plan__find(p + 1, w) : strstr(p + 1, w))
        if ((p == s || !isalnum((unsigned char)p[-1])) && !isalnum((unsigned char)p[n]))
            return 1;
    return 0;
}

/* The column name col as a token of derived_fields (case aside; a token
 * is a run of letters, digits and '_'): the row says it derived that
 * value rather than read it printed for this run. */
int plan__row_derives(const plan_validate_row *r, const char *col)
{
    return find_token(r->derived_fields, col, 1) != NULL;
}

int plan__fsdp_mp_mode(const char *s)
{
    if (has_word(s, "DEFAULT", 0))
        return 1;
    if (has_word(s, "PURE", 0))
        return 2;
    if (has_word(s, "FULL", 0))
        return 3;
    return 0;
}

/* Does the text say the model ran under torch.compile (PyTorch 2's name
 * for it, torchtitan's training.compile), and not that it did not? */
int plan__says_compiled(const char *s)
{
    static const char *const not_[] = {"without torch.compile", "no torch.compile",
                                       "not compiled", "compile = false", "compile=false",
                                       "compile: false", "eager mode", "uncompiled"};
    if (!s || !(contains(s, "torch.compile") || has_word(s, "compile", 1) ||
                has_word(s, "compiled", 1)))
        return 0;
    for (size_t i = 0; i < sizeof not_ / sizeof not_[0]; i++)
        if (contains(s, not_[i]))
            return 0;
    return 1;
}

/* Tensor-parallel communication overlap by the stacks' documented names:
 * torchtitan's async TP (experimental.enable_async_tensor_parallel, later
 * parallelism. and compile.enable_async_tensor_parallel; PyTorch's
 * "Async TP" / "AsyncTP") and Megatron-Core's and NeMo's Transformer Engine
 * overlap (--tp-comm-overlap, tp_comm_overlap). 1 on, 0 said off (the name
 * after "without", "no" or "not", or followed by false, off or 0), -1 not
 * named. */
int plan__says_tp_overlap(const char *s)
{
    static const char *const names[] = {
        "async TP", "async-TP", "AsyncTP", "async tensor parallel", "async_tensor_parallel",
        "tp-comm-overlap", "tp_comm_overlap", "TP comm overlap", "TP communication overlap",
    };
    if (!s)
        return -1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *p = plan__find(s, names[i]);
        if (p)
            return !negated(s, p, strlen(names[i]));
    }
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Memory figures: what the tool measured                                    */
/* ------------------------------------------------------------------------ */

plan_mem_metric plan__mem_metric(const char *text, double *unit_bytes)
{
    /* Each tool's documented names for what it counts, earliest in the text
     * first. PyTorch (torch.cuda memory management API):
     * memory_allocated / max_memory_allocated count the tensors; the
     * memory_stats' "active" bytes are the tensors' blocks too;
     * memory_reserved / max_memory_reserved what the caching allocator
     * holds (named memory_cached / max_memory_cached before PyTorch 1.4).
     * DeepSpeed's see_memory_usage (deepspeed/runtime/utils.py) prints MA,
     * Max_MA (memory_allocated), CA, Max_CA (memory_reserved) in "GB" of
     * 1024^3 bytes. Anything else (nvidia-smi, NVML, DCGM) is the device's
     * whole footprint. */
    static const struct {
        const char *name;
        int token;             /* a DeepSpeed field name: a whole, case-sensitive token */
        plan_mem_metric metric;
    } names[] = {
        {"allocated", 0, PLAN_MEM_ALLOCATED}, {"active", 0, PLAN_MEM_ALLOCATED},
        {"reserved", 0, PLAN_MEM_RESERVED},   {"memory_cached", 0, PLAN_MEM_RESERVED},
        {"MA", 1, PLAN_MEM_ALLOCATED},        {"Max_MA", 1, PLAN_MEM_ALLOCATED},
        {"CA", 1, PLAN_MEM_RESERVED},         {"Max_CA", 1, PLAN_MEM_RESERVED},
    };
    plan_mem_metric metric = PLAN_MEM_DEVICE;
    const char *first = NULL;
    int deepspeed = 0;
    for (size_t i = 0; text && i < sizeof names / sizeof names[0]; i++) {
        const char *p = names[i].token ? token_at(text, names[i].name)
                                       : plan__find(text, names[i].name);
        if (!p)
            continue;
        deepspeed |= names[i].token;
        if (!first || p < first) {
            first = p;
            metric = names[i].metric;
        }
    }
    *unit_bytes = deepspeed || plan__contains(text, "GiB") ? 1073741824.0 : 1e9;
    return metric;
}
