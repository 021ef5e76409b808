/*
 * units.c: parsing and formatting of counts, bytes, rates and times (units.h).
 */
#include "common/units.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Largest value any parser accepts: well past any real cluster or model,
 * small enough that products of a few of them stay finite in double. */
#define UNITS_MAX_VALUE 1e30

/* How many units in the last place a suffixed integer ("8.2M" = 8.2 * 1e6)
 * may miss a whole number by and still be taken as one: the decimal and the
 * product are each rounded once, so the error is under two ulps. */
#define UNITS_INT_ULPS 4.0

/* Parse the leading number of text; *end points after it. Rejects signs,
 * hex, inf and nan (strtod would take them). */
static int leading_number(const char *text, const char *what, double *out, const char **end,
                          st_err *err)
{
    if (!text || !*text)
        return ST_RAISE(err, ST_EINVAL, "%s: empty value; expected a positive number", what);
    const char *p = text;
    if (!(isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))))
        return ST_RAISE(err, ST_EINVAL, "%s '%s': expected a positive number", what, text);
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        return ST_RAISE(err, ST_EINVAL, "%s '%s': expected a decimal number", what, text);
    errno = 0;
    char *e = NULL;
    double v = strtod(p, &e);
    if (e == p || errno == ERANGE || !isfinite(v) || v > UNITS_MAX_VALUE)
        return ST_RAISE(err, ST_ERANGE, "%s '%s': number out of range", what, text);
    *out = v;
    *end = e;
    return ST_OK;
}

static double count_suffix(const char *s, int *ok)
{
    *ok = 1;
    if (!*s)
        return 1.0;
    if (s[1] == '\0') {
        switch (toupper((unsigned char)s[0])) {
        case 'K': return 1e3;
        case 'M': return 1e6;
        case 'B':
        case 'G': return 1e9;
        case 'T': return 1e12;
        default: break;
        }
    }
    *ok = 0;
    return 0.0;
}

int units_parse_count(const char *text, const char *what, double *out, st_err *err)
{
    double v = 0.0;
    const char *end = "";
    int rc = leading_number(text, what, &v, &end, err);
    if (rc)
        return rc;
    int ok;
    double mul = count_suffix(end, &ok);
    if (!ok)
        return ST_RAISE(err, ST_EINVAL,
                        "%s '%s': unknown suffix '%s'; allowed: none, K, M, B (or G), T", what,
                        text, end);
    v *= mul;
    if (v > UNITS_MAX_VALUE)
        return ST_RAISE(err, ST_ERANGE, "%s '%s': number out of range", what, text);
    *out = v;
    return ST_OK;
}

int units_parse_int(const char *text, const char *what, int64_t min, int64_t max, int64_t *out,
                    st_err *err)
{
    double v = 0.0;
    int rc = units_parse_count(text, what, &v, err);
    if (rc)
        return rc;
    int64_t n;
    if (strspn(text, "0123456789") == strlen(text)) {
        /* Plain digits: exact, also past 2^53 where a double would round. */
        errno = 0;
        long long ll = strtoll(text, NULL, 10);
        if (errno == ERANGE)
            return ST_RAISE(err, ST_EINVAL, "%s '%s': allowed range is %lld to %lld", what, text,
                            (long long)min, (long long)max);
        n = (int64_t)ll;
    } else {
        /* A decimal times its suffix ("8.2M") lands an ulp or two off the
         * whole number in binary; anything further off is a fraction. */
        double r = nearbyint(v);
        if (fabs(v - r) > UNITS_INT_ULPS * DBL_EPSILON * r)
            return ST_RAISE(err, ST_EINVAL, "%s '%s': expected a whole number", what, text);
        /* 2^63 and above do not fit (and casting them would be undefined). */
        if (r >= 0x1p63)
            return ST_RAISE(err, ST_EINVAL, "%s '%s': allowed range is %lld to %lld", what, text,
                            (long long)min, (long long)max);
        n = (int64_t)r;
    }
    if (n < min || n > max)
        return ST_RAISE(err, ST_EINVAL, "%s '%s': allowed range is %lld to %lld", what, text,
                        (long long)min, (long long)max);
    *out = n;
    return ST_OK;
}

int units_parse_bytes(const char *text, const char *what, double *out_bytes, st_err *err)
{
    double v;
    const char *end;
    int rc = leading_number(text, what, &v, &end, err);
    if (rc)
        return rc;
    while (*end == ' ')
        end++;
    static const struct { const char *sfx; double mul; } tab[] = {
        {"", 1.0},          {"B", 1.0},
        {"KB", 1e3},        {"MB", 1e6},        {"GB", 1e9},        {"TB", 1e12},
        {"KiB", 1024.0},    {"MiB", 1048576.0}, {"GiB", 1073741824.0},
        {"TiB", 1099511627776.0},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        if (strcasecmp(end, tab[i].sfx) == 0) {
            /* check before storing: a failed parse leaves *out_bytes alone */
            if (v * tab[i].mul > UNITS_MAX_VALUE)
                return ST_RAISE(err, ST_ERANGE, "%s '%s': size out of range", what, text);
            *out_bytes = v * tab[i].mul;
            return ST_OK;
        }
    }
    return ST_RAISE(err, ST_EINVAL,
                    "%s '%s': unknown size unit '%s'; allowed: B, KB, MB, GB, TB, KiB, MiB, "
                    "GiB, TiB",
                    what, text, end);
}

int units_parse_rate(const char *text, const char *what, double *out_bps, st_err *err)
{
    double v;
    const char *end;
    int rc = leading_number(text, what, &v, &end, err);
    if (rc)
        return rc;
    while (*end == ' ')
        end++;
    /* bits per second (network marketing units) or bytes per second */
    static const struct { const char *sfx; double mul; } tab[] = {
        {"bps", 1.0 / 8},   {"Kbps", 1e3 / 8},  {"Mbps", 1e6 / 8},
        {"Gbps", 1e9 / 8},  {"Tbps", 1e12 / 8}, {"Gb/s", 1e9 / 8},
        {"B/s", 1.0},       {"KB/s", 1e3},      {"MB/s", 1e6},
        {"GB/s", 1e9},      {"TB/s", 1e12},     {"GBps", 1e9},
        {"MBps", 1e6},      {"TBps", 1e12},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        /* case matters here: Gbps (bits) and GBps (bytes) differ */
        if (strcmp(end, tab[i].sfx) == 0) {
            if (v * tab[i].mul > UNITS_MAX_VALUE)
                return ST_RAISE(err, ST_ERANGE, "%s '%s': rate out of range", what, text);
            *out_bps = v * tab[i].mul;
            return ST_OK;
        }
    }
    return ST_RAISE(err, ST_EINVAL,
                    "%s '%s': unknown rate unit '%s'; allowed: Mbps, Gbps, Tbps (bits/s) or "
                    "MB/s, GB/s, TB/s (bytes/s)",
                    what, text, end);
}

/* The formatters pick the unit after rounding, so a value just under a unit
 * boundary prints as "1.00T", never "1000B" (or "1024.0 MiB", "1000.0 ms").
 * UNITS_FMT_UP_p(d) is the smallest value that prints as d with p decimals. */
#define UNITS_FMT_UP_0(d) ((d) - 0.5)   /* printed with %.0f */
#define UNITS_FMT_UP_1(d) ((d) - 0.05)  /* printed with %.1f */
#define UNITS_FMT_UP_2(d) ((d) - 0.005) /* printed with %.2f */

char *units_fmt_count(double n, char *buf, int len)
{
    static const struct { double div; const char *sfx; } tab[] = {
        {1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        /* from 999.5 of the unit below, this unit prints "1.00" */
        if (n >= UNITS_FMT_UP_0(1000.0) * tab[i].div / 1000.0) {
            double v = n / tab[i].div;
            snprintf(buf, (size_t)len,
                     v >= UNITS_FMT_UP_1(100.0)  ? "%.0f%s"
                     : v >= UNITS_FMT_UP_2(10.0) ? "%.1f%s"
                                                 : "%.2f%s",
                     v, tab[i].sfx);
            return buf;
        }
    }
    snprintf(buf, (size_t)len, "%.0f", n);
    return buf;
}

char *units_fmt_bytes(double bytes, char *buf, int len)
{
    static const char *const sfx[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int i = 0;
    double v = bytes;
    while (fabs(v) >= (i == 0 ? UNITS_FMT_UP_0(1024.0) : UNITS_FMT_UP_1(1024.0)) && i < 5) {
        v /= 1024.0;
        i++;
    }
    snprintf(buf, (size_t)len, i == 0 ? "%.0f %s" : "%.1f %s", v, sfx[i]);
    return buf;
}

char *units_fmt_seconds(double s, char *buf, int len)
{
    if (s < UNITS_FMT_UP_1(1000.0) * 1e-6)
        snprintf(buf, (size_t)len, "%.1f us", s * 1e6);
    else if (s < UNITS_FMT_UP_1(1000.0) * 1e-3)
        snprintf(buf, (size_t)len, "%.1f ms", s * 1e3);
    else if (s < UNITS_FMT_UP_2(120.0))
        snprintf(buf, (size_t)len, "%.2f s", s);
    else if (s < UNITS_FMT_UP_1(120.0) * 60.0)
        snprintf(buf, (size_t)len, "%.1f min", s / 60.0);
    else if (s < UNITS_FMT_UP_1(72.0) * 3600.0)
        snprintf(buf, (size_t)len, "%.1f h", s / 3600.0);
    else
        snprintf(buf, (size_t)len, "%.1f d", s / 86400.0);
    return buf;
}
