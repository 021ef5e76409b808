/*
 * units.h: one parser for the sizes, counts and rates users type.
 *
 *   counts   "30B" = 30e9, "1.3B", "350M", "1T", "175e9", "12k"  (K/M/B/G/T, decimal)
 *   bytes    "80GB" = 80e9, "40GiB" = 40*2^30, "512MiB", "1.5TB", "4096"
 *   rates    "400Gbps" = 50e9 bytes/s, "25GB/s" = 25e9 bytes/s, "300GBps"
 *
 * Every parser rejects empty strings, trailing garbage, negative values,
 * NaN/inf and values that overflow, with a one-line message in err naming
 * the bad text and what is allowed.
 */
#ifndef SMD_UNITS_H
#define SMD_UNITS_H

#include <stdint.h>

#include "common/st.h"

/* Parse a count with an optional decimal suffix (K, M, B or G, T; case-
 * insensitive). what names the option in the error message. */
int units_parse_count(const char *text, const char *what, double *out, st_err *err);

/* Parse a positive integer in [min, max] (plain digits, or a count with suffix
 * that is a whole number). */
int units_parse_int(const char *text, const char *what, int64_t min, int64_t max,
                    int64_t *out, st_err *err);

/* Parse a byte size: decimal (KB, MB, GB, TB) or binary (KiB, MiB, GiB, TiB)
 * suffix, or none (bytes). */
int units_parse_bytes(const char *text, const char *what, double *out_bytes, st_err *err);

/* Parse a rate into bytes per second: bits ("Gbps", "Mbps", "Tbps") or bytes
 * ("GB/s", "GBps", "MB/s"). */
int units_parse_rate(const char *text, const char *what, double *out_bps, st_err *err);

/* Format a count as "30.0B", "350M", "1.01T" into buf. Returns buf. */
char *units_fmt_count(double n, char *buf, int len);

/* Format bytes as "38.2 GiB" into buf. Returns buf. */
char *units_fmt_bytes(double bytes, char *buf, int len);

/* Format seconds as "1.23 s", "45.6 ms", "2.1 h", "3.4 d" into buf. Returns buf. */
char *units_fmt_seconds(double s, char *buf, int len);

#endif
