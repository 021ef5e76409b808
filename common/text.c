/*
 * text.c: shell words and comment text (text.h).
 */
#include "common/text.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void text_shell_quote(const char *s, char *buf, size_t n)
{
    size_t u = 0;
    int plain = *s != '\0';
    for (const char *c = s; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              strchr("-_./=:,+@%", *c)))
            plain = 0;
    if (plain) {
        snprintf(buf, n, "%s", s);
        return;
    }
    if (u + 1 < n)
        buf[u++] = '\'';
    for (const char *c = s; *c && u + 5 < n; c++) {
        if (*c == '\'') {
            memcpy(buf + u, "'\\''", 4);
            u += 4;
        } else {
            buf[u++] = *c;
        }
    }
    if (u + 1 < n)
        buf[u++] = '\'';
    buf[u < n ? u : n - 1] = '\0';
}

const char *text_comment(const char *s, char *buf, size_t n)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && o + 5 < n; p++) {
        if (*p == '\\')
            o += (size_t)snprintf(buf + o, n - o, "\\\\");
        else if (*p == '\n')
            o += (size_t)snprintf(buf + o, n - o, "\\n");
        else if (*p >= 0x20 && *p < 0x7F)
            buf[o++] = (char)*p;
        else
            o += (size_t)snprintf(buf + o, n - o, "\\x%02x", *p);
    }
    if (n > 0)
        buf[o] = '\0';
    return buf;
}

void text_setf(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
}

int text_edit_distance(const char *a, const char *b)
{
    int la = (int)strnlen(a, 63), lb = (int)strnlen(b, 63);
    int prev[64], cur[64];
    for (int j = 0; j <= lb; j++)
        prev[j] = j;
    for (int i = 1; i <= la; i++) {
        cur[0] = i;
        int ac = tolower((unsigned char)a[i - 1]);
        for (int j = 1; j <= lb; j++) {
            int sub = prev[j - 1] + (ac != tolower((unsigned char)b[j - 1]));
            int del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, (size_t)(lb + 1) * sizeof prev[0]);
    }
    return prev[lb];
}
