/*
 * plan_validate_read.c: the values of a published run's fields as sources
 * write them, for plan_validate.c: counts ("MBS=2", "512 sequences", "2K",
 * "8 nodes x 8 GPUs", "~4M tokens"), measured figures with their units
 * ("10 s/iter", "217.7K tokens/s", "9.6 PFLOP/s", "41 %", "62 GiB") and
 * the remarks in parentheses after them; and the row's notes and reason
 * (plan__note, plan__skip).
 */
#include "planner/plan_validate_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define contains plan__contains
#define nz plan__nz
#define skip plan__skip
#define note plan__note
#define blank plan__blank
#define parse_num plan__parse_num

/* A remark in parentheses after a value ("1024 (ramp-up from 32)", "62 GB
 * (max reserved)", "128 (512K tokens)") cut from s, with the spaces before
 * it: the value alone is left. */
void plan__cut_remark(char *s)
{
    char *e = strchr(s, '(');
    if (!e)
        return;
    *e = '\0';
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
}

/* A number as people write one: an approximation mark ("~10") and
 * thousands separators ("1,024": groups of three digits) are the number's.
 * Into buf (n bytes); 0 when the text is longer than buf. */
static int plain_number(const char *s, char *buf, size_t n)
{
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '~')
        s++;
    size_t k = 0;
    for (const char *p = s; *p; p++) {
        if (*p == ',' && p > s && isdigit((unsigned char)p[-1]) && isdigit((unsigned char)p[1]) &&
            isdigit((unsigned char)p[2]) && isdigit((unsigned char)p[3]) &&
            !isdigit((unsigned char)p[4]))
            continue;
        if (k + 1 >= n)
            return 0;
        buf[k++] = *p;
    }
    buf[k] = '\0';
    return 1;
}

int plan__parse_num(const char *text, double *out)
{
    if (blank(text))
        return 0;
    char s[64], *end;
    if (!plain_number(text, s, sizeof s))
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    while (isspace((unsigned char)*end))
        end++;
    if (end == s || *end || errno == ERANGE || !isfinite(v))
        return -1;
    *out = v;
    return 1;
}

int plan__skip(plan_validate_result *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->reason, sizeof out->reason, fmt, ap);
    va_end(ap);
    out->compared = 0;
    return 1;
}

void plan__note(plan_validate_result *out, const char *fmt, ...)
{
    size_t used = strlen(out->notes);
    if (used + 3 >= sizeof out->notes)
        return;
    if (used) {
        memcpy(out->notes + used, "; ", 3);
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->notes + used, sizeof out->notes - used, fmt, ap);
    va_end(ap);
}

/* A count as sources write it, when it is not a plain number: a label
 * before it ("MBS=2", "vp 2", "VPP: 4"), its unit after it ("512
 * sequences", "8 GPUs"), a binary K or M ("2K" tokens of context is 2048,
 * "4M tokens" 4 x 2^20: the counts of tokens and sequences are powers of
 * two in these texts), a remark in parentheses ("512 (ramp-up from 32)"),
 * an approximate value ("~4M tokens", "about 1536"), a degree's way ("8-way",
 * "8x") and a micro-batch's device ("1 per GPU"); "n/a", "none" and "-" say
 * nothing; "tokens" is a unit only of a column that counts them (tokens).
 * 0 absent, 1 read, -1 not a count. */
static int count_num(const char *text, int tokens, double *out)
{
    static const char *const units[] = {"sequences", "sequence", "seqs", "samples", "sample",
                                        "tokens", "token", "GPUs", "GPU", "GCDs", "GCD",
                                        "layers", "heads", "query heads", "attention heads",
                                        "virtual stages", "virtual pipeline stages",
                                        "model chunks",
                                        "chunks", "stages", "microbatches", "micro-batches",
                                        "-way", "way", "x", "\xc3\x97", "per GPU", "per device",
                                        "per replica", "per rank", "KV heads", "kv heads",
                                        "key-value heads", "query groups"};
    static const char *const approx[] = {"~", "\xe2\x89\x88", "about ", "approx. ",
                                         "approximately ", "roughly ", "ca. "};
    static const char *const nothing[] = {"n/a", "na", "none", "-", "?", "not stated",
                                          "not published", "not reported", "unknown"};
    char t[64];
    snprintf(t, sizeof t, "%s", nz(text));
    char *p = t, *e;
    while (isspace((unsigned char)*p))
        p++;
    e = p + strlen(p);
    while (e > p && isspace((unsigned char)e[-1]))
        *--e = '\0';
    for (size_t i = 0; i < sizeof nothing / sizeof nothing[0]; i++)
        if (strcasecmp(p, nothing[i]) == 0)
            return 0;
    for (size_t i = 0; i < sizeof approx / sizeof approx[0]; i++)
        if (strncasecmp(p, approx[i], strlen(approx[i])) == 0) {
            p += strlen(approx[i]);
            while (isspace((unsigned char)*p))
                p++;
            break;
        }
    /* a label of letters before the number: a short name ("TP=8"), the
     * stack's own knob ("tensor_parallel_degree 8", SMP v2;
     * "pipeline_model_parallel_size: 4", NeMo) or words ("gradient
     * accumulation 8") */
    char *q = p;
    while (isalpha((unsigned char)*q) || *q == '_' || *q == '-' ||
           (*q == ' ' && q > p && isalpha((unsigned char)q[1])))
        q++;
    if (q > p && q - p <= 40) {
        while (*q == ' ' || *q == '=' || *q == ':')
            q++;
        if (isdigit((unsigned char)*q))
            p = q;
    }
    plan__cut_remark(p);
    char num[64];
    if (!plain_number(p, num, sizeof num))
        return -1;
    errno = 0;
    char *end;
    double v = strtod(num, &end);
    if (end == num || errno == ERANGE || !isfinite(v))
        return -1;
    /* a count in K or M with decimals ("3.1M") is a rounded one: the
     * nearest whole count */
    if (*end == 'k' || *end == 'K')
        v = round(v * 1024.0), end++;
    else if (*end == 'M')
        v = round(v * 1048576.0), end++;
    while (isspace((unsigned char)*end))
        end++;
    if (*end) {
        int unit = 0;
        for (size_t i = 0; i < sizeof units / sizeof units[0] && !unit; i++)
            unit = strcasecmp(end, units[i]) == 0;
        /* tokens only where the column counts tokens */
        if (unit && !tokens && strncasecmp(end, "token", 5) == 0)
            unit = 0;
        if (!unit)
            return -1;
    }
    *out = v;
    return 1;
}

/* A count of GPUs as a run's text gives it: nodes times GPUs ("8 nodes x 8
 * GPUs", "16x8", "4 × 8"), or a number of the chip ("64 H100s", "512 A100
 * GPUs", "64 NVIDIA H100 GPUs": its words after the number end in the chip
 * or in GPU(s)). 1 read, -1 not such a count. */
static int gpu_count(const char *text, double *out)
{
    char t[96];
    snprintf(t, sizeof t, "%s", nz(text));
    char *p = t, *e;
    while (isspace((unsigned char)*p))
        p++;
    errno = 0;
    long a = strtol(p, &e, 10);
    if (e == p || a <= 0 || errno)
        return -1;
    p = e;
    while (isspace((unsigned char)*p))
        p++;
    if (strncasecmp(p, "nodes", 5) == 0)
        p += 5;
    else if (strncasecmp(p, "node", 4) == 0)
        p += 4;
    while (isspace((unsigned char)*p))
        p++;
    int times = *p == 'x' || *p == 'X' || *p == '*';
    if (times)
        p++;
    else if ((unsigned char)p[0] == 0xC3 && (unsigned char)p[1] == 0x97)
        p += 2, times = 1;
    if (times) {
        while (isspace((unsigned char)*p))
            p++;
        long b = strtol(p, &e, 10);
        if (e == p || b <= 0)
            return -1;
        while (isspace((unsigned char)*e))
            e++;
        if (*e && strncasecmp(e, "GPU", 3) != 0)
            return -1;
        *out = (double)a * (double)b;
        return 1;
    }
    /* a number of GPUs named by their chip: the last word is the chip's
     * (letters and digits, a digit among them) or GPU(s) */
    size_t n = strlen(p);
    while (n > 0 && isspace((unsigned char)p[n - 1]))
        p[--n] = '\0';
    if (n == 0 || n > 48)
        return -1;
    const char *last = strrchr(p, ' ');
    last = last ? last + 1 : p;
    int digit = 0, ok = 1;
    for (const char *q = last; *q; q++) {
        digit |= isdigit((unsigned char)*q) != 0;
        ok &= isalnum((unsigned char)*q) || *q == '-';
    }
    if (strcasecmp(last, "GPU") == 0 || strcasecmp(last, "GPUs") == 0 || (ok && digit)) {
        *out = (double)a;
        return 1;
    }
    return -1;
}

/* A count from column `what` in any form its column is written in: 0
 * absent, 1 read, -1 not a count. */
int plan__read_count(const char *what, const char *text, double *d)
{
    int r = parse_num(text, d);
    if (r < 0)
        r = count_num(text, strcmp(what, "seq_len") == 0 || strstr(what, "tokens") != NULL, d);
    if (r < 0 && strcmp(what, "num_gpus") == 0)
        r = gpu_count(text, d);
    return r;
}

/* A whole number in [min, max] from column `what`: 0 absent, 1 ok, -1 bad
 * (the row is skipped with a reason). */
int plan__get_int(plan_validate_result *out, const char *what, const char *text, int64_t min,
                  int64_t max, int64_t *v)
{
    double d;
    int r = plan__read_count(what, text, &d);
    if (r == 0)
        return 0;
    if (r < 0 || d != floor(d) || d < (double)min || d > (double)max) {
        skip(out, "%s '%s': expected a whole number in [%lld, %lld]", what, nz(text),
             (long long)min, (long long)max);
        return -1;
    }
    *v = (int64_t)d;
    return 1;
}

/* The units a measured column's value may carry, each with its factor to
 * the column's own unit (seconds, tokens per second, TFLOP/s, PFLOP/s or
 * percent); a measurement's K and M are decimal ("217.7K tokens/s"). */
typedef struct {
    const char *unit;
    double scale;
} unit_word;

static const unit_word time_units[] = {
    {"s", 1},          {"sec", 1},      {"secs", 1},     {"second", 1},   {"seconds", 1},
    {"s/step", 1},     {"s/it", 1},     {"s/iter", 1},   {"s/iteration", 1},
    {"sec/step", 1},   {"sec/it", 1},   {"sec/iter", 1}, {"s per step", 1},
    {"s per iteration", 1}, {"seconds per step", 1}, {"seconds per iteration", 1},
    {"ms", 1e-3},      {"ms/step", 1e-3}, {"ms/it", 1e-3}, {"ms/iter", 1e-3},
    {"min", 60},       {"minutes", 60}, {NULL, 0}};
static const unit_word rate_units[] = {
    {"tokens/s", 1}, {"tokens/sec", 1}, {"tok/s", 1}, {"tokens per second", 1}, {"tps", 1},
    {"tokens/s/GPU", 1}, {"tokens/sec/GPU", 1}, {"tok/s/GPU", 1}, {"tokens/s per GPU", 1},
    {"tok/s per GPU", 1}, {"tokens per second per GPU", 1}, {NULL, 0}};
static const unit_word sample_units[] = {
    {"samples/s", 1}, {"samples/sec", 1}, {"sequences/s", 1}, {"seq/s", 1},
    {"samples per second", 1}, {NULL, 0}};
/* (the prefixes spelt out too: "teraFLOPS", "petaFLOP/s") */
static const unit_word tflops_units[] = {
    {"TFLOP/s", 1}, {"TFLOPS", 1}, {"TFLOPs", 1}, {"TFLOP/s/GPU", 1}, {"TFLOPS/GPU", 1},
    {"TFLOP/s per GPU", 1}, {"TFLOPS per GPU", 1}, {"TFLOP/sec", 1}, {"TF/s", 1},
    {"teraFLOPS", 1}, {"teraFLOP/s", 1}, {"teraFLOPS per GPU", 1}, {"teraFLOP/s per GPU", 1},
    {NULL, 0}};
static const unit_word pflops_units[] = {
    {"PFLOP/s", 1},   {"PFLOPS", 1},   {"PFLOPs", 1},    {"PF/s", 1},        {"petaFLOPS", 1},
    {"petaFLOP/s", 1}, {"EFLOP/s", 1e3}, {"EFLOPS", 1e3}, {"exaFLOPS", 1e3}, {NULL, 0}};
/* a percentage, and the utilisation it is of named after it */
static const unit_word pct_units[] = {{"%", 1},       {"% MFU", 1},       {"% HFU", 1},
                                      {"% of peak", 1}, {"percent", 1}, {NULL, 0}};
/* the memory column's GB, or GiB where its value says so (the unit is then
 * GiB); MB and MiB (nvidia-smi's) in thousandths and 1024ths of them */
static const unit_word mem_units[] = {{"GB", 1},        {"GiB", 1},          {"G", 1},
                                      {"MB", 1e-3},     {"MiB", 1.0 / 1024}, {NULL, 0}};

/* A measured value with its unit, if any, from the column's table (NULL:
 * a plain number). 1 read, 0 absent, -1 not such a value. */
/* The table of a unit family. */
static const unit_word *units_of(plan_units u)
{
    switch (u) {
    case PLAN_UNITS_TIME: return time_units;
    case PLAN_UNITS_RATE: return rate_units;
    case PLAN_UNITS_SAMPLES: return sample_units;
    case PLAN_UNITS_TFLOPS: return tflops_units;
    case PLAN_UNITS_PFLOPS: return pflops_units;
    case PLAN_UNITS_PCT: return pct_units;
    case PLAN_UNITS_MEM:
    default: return mem_units;
    }
}

static int measure_num(const char *text, const unit_word *units, double *out)
{
    char s[64], *end;
    if (blank(text))
        return 0;
    if (!plain_number(text, s, sizeof s))
        return -1;
    plan__cut_remark(s); /* "62 GB (max reserved)": the remark is not the unit */
    char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    errno = 0;
    double v = strtod(p, &end);
    if (end == p || errno == ERANGE || !isfinite(v))
        return -1;
    if (units != pct_units && (*end == 'K' || *end == 'k') && !isalpha((unsigned char)end[1]))
        v *= 1e3, end++;
    else if (units != pct_units && *end == 'M' && !isalpha((unsigned char)end[1]))
        v *= 1e6, end++;
    while (isspace((unsigned char)*end))
        end++;
    char *e = end + strlen(end);
    while (e > end && isspace((unsigned char)e[-1]))
        *--e = '\0';
    if (!*end) {
        *out = v;
        return 1;
    }
    for (const unit_word *u = units; u && u->unit; u++)
        if (strcasecmp(end, u->unit) == 0) {
            *out = v * u->scale;
            return 1;
        }
    return -1;
}

int plan__measure_num(const char *text, plan_units u, double *out)
{
    return measure_num(text, units_of(u), out);
}

/* A positive measured value in column `what`, in the column's unit: 0
 * absent, 1 ok, -1 bad (the row is skipped with a reason). */
int plan__get_measure(plan_validate_result *out, const char *what, const char *text,
                      plan_units u, double *v)
{
    const unit_word *units = units_of(u);
    int r = measure_num(text, units, v);
    if (r == 0)
        return 0;
    if (r < 0 || *v <= 0) {
        skip(out, "%s '%s': expected a positive number%s", what, nz(text),
             units == time_units     ? " of seconds (or ms, min)"
             : units == rate_units   ? " of tokens/s"
             : units == sample_units ? " of samples/s"
             : units == pct_units    ? " (a percentage)"
             : units == tflops_units ? " of TFLOP/s"
                                     : "");
        return -1;
    }
    return 1;
}

/* A percentage of peak: "41", "41 %"; a value at most 1 with no percent
 * sign is a fraction ("0.41"): no training step runs at 1 % of peak. */
int plan__get_pct(plan_validate_result *out, const char *what, const char *text, double *v)
{
    int r = plan__get_measure(out, what, text, PLAN_UNITS_PCT, v);
    if (r > 0 && *v <= 1.0 && !strchr(text, '%')) {
        note(out, "%s %s read as a fraction: %.4g %%", what, nz(text), *v * 100);
        *v *= 100;
    }
    return r;
}

