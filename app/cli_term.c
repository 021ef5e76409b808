/*
 * cli_term.c: what smdplan prints cannot drive the terminal.
 *
 * Names and sources come from files a user may not have written (a catalog,
 * a Hugging Face config, a runs table, a records database) and reach stdout
 * and stderr through many printf calls. Rather than escape at every one of
 * them, stdout and stderr are replaced once, in main, by streams that pass
 * everything through except control characters: C0 controls other than tab
 * and newline (escape, carriage return, backspace, bell, ...), DEL, and the
 * C1 controls in their UTF-8 form (U+0080..U+009F, whose 0x9B is a CSI) are
 * written as \u00XX. That is a valid escape inside a JSON string too, so
 * --json output stays JSON (cJSON already escapes C0 controls itself and
 * leaves C1 raw). glibc lets a program assign stdout and stderr (the GNU C
 * Library manual, "Standard Streams").
 *
 * Tab and newline pass because the program's own text is made of lines.
 * A name printed as one line (a record's summary in smdplan history, a
 * field of smdplan show) goes through rpt_term_escape_line (reports/
 * rpt_table.h) first, which writes them as \u0009 and \u000a too: a
 * newline in a model's name would otherwise start a line that reads as a
 * record of its own.
 */
#define _GNU_SOURCE /* fopencookie */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/cli_int.h"

typedef struct term {
    int fd;
    int pending_c2;              /* the last byte written was 0xC2 (a C1 may follow) */
} term;

static int put_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Escape buf into out (6 bytes per byte at most); its length. */
size_t cli_term_escape(const char *buf, size_t n, int *pending_c2, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (*pending_c2) {
            *pending_c2 = 0;
            if (c >= 0x80 && c <= 0x9f) { /* U+0080..U+009F: the held 0xC2 is dropped */
                o += (size_t)sprintf(out + o, "\\u%04x", c);
                continue;
            }
            out[o++] = (char)0xc2;
        }
        if (c == 0xc2) {
            *pending_c2 = 1;
            continue;
        }
        if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
            o += (size_t)sprintf(out + o, "\\u%04x", c);
        else
            out[o++] = (char)c;
    }
    return o;
}

static ssize_t term_write(void *cookie, const char *buf, size_t n)
{
    term *t = cookie;
    char out[4096 * 6 + 8];
    size_t done = 0;
    while (done < n) {
        size_t chunk = n - done < 4096 ? n - done : 4096;
        size_t o = cli_term_escape(buf + done, chunk, &t->pending_c2, out);
        if (put_all(t->fd, out, o) != 0)
            return done > 0 ? (ssize_t)done : -1;
        done += chunk;
    }
    return (ssize_t)n;
}

static int term_close(void *cookie)
{
    term *t = cookie;
    if (t->pending_c2) { /* a 0xC2 that ended the output */
        t->pending_c2 = 0;
        char c = (char)0xc2;
        return put_all(t->fd, &c, 1);
    }
    return 0;
}

void cli_term_install(void)
{
    static term out = {STDOUT_FILENO, 0}, err = {STDERR_FILENO, 0};
    static int done;
    if (done)
        return;
    done = 1;
    cookie_io_functions_t io = {NULL, term_write, NULL, term_close};
    fflush(stdout);
    fflush(stderr);
    FILE *o = fopencookie(&out, "w", io), *e = fopencookie(&err, "w", io);
    if (!o || !e) { /* keep the plain streams rather than lose the output */
        if (o)
            fclose(o);
        if (e)
            fclose(e);
        return;
    }
    /* the buffering the plain streams had: a terminal sees each line at
     * once, a file or pipe gets blocks; stderr is never held back */
    setvbuf(o, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, 0);
    setvbuf(e, NULL, _IONBF, 0);
    stdout = o;
    stderr = e;
}
