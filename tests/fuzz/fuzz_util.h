/*
 * fuzz_util.h: what the libFuzzer targets share: a CHECK that reports the
 * target, file, line and condition before it aborts, the entry point's copy
 * of an input (of exactly its size, so ASan sees a read past the length, or
 * NUL-terminated for readers of C strings), the contract every reader's
 * failure keeps (st.h: its code in the context and a message that fits),
 * and a written text that reads back to itself.
 *
 * A target defines FUZZ_NAME (its name, a string) before including it.
 */
#ifndef SMD_FUZZ_UTIL_H
#define SMD_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/st.h"

#ifndef FUZZ_NAME
#error "define FUZZ_NAME before including fuzz_util.h"
#endif

/* Reports a failed check (with the input that failed it, when given) and
 * aborts, so libFuzzer keeps the input as a crash. */
static inline _Noreturn void fuzz_check_failed(const char *file, int line, const char *cond,
                                               const char *input)
{
    fprintf(stderr, "%s: %s:%d: check failed: %s", FUZZ_NAME, file, line, cond);
    if (input)
        fprintf(stderr, " (input \"%s\")", input);
    fputc('\n', stderr);
    abort();
}

#define CHECK(cond)                                             \
    do {                                                        \
        if (!(cond))                                            \
            fuzz_check_failed(__FILE__, __LINE__, #cond, NULL); \
    } while (0)

/* CHECK naming the input (a C string) in its report. */
#define CHECK_INPUT(cond, text)                                   \
    do {                                                          \
        if (!(cond))                                              \
            fuzz_check_failed(__FILE__, __LINE__, #cond, (text)); \
    } while (0)

/* libFuzzer's entry point, which each target defines with fuzz_run: it
 * hands the target's check (one) a copy of the input, which the check may
 * change, and frees it after; out of memory, the input is passed over.
 * FUZZ_EXACT: a copy of exactly size bytes (one for an empty input), not
 * NUL-terminated, so ASan sees any read past the length; FUZZ_CSTR: the
 * input as a NUL-terminated C string. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef void (*fuzz_one_fn)(char *text, size_t size);

enum { FUZZ_EXACT, FUZZ_CSTR };

static inline int fuzz_run(const uint8_t *data, size_t size, int how, fuzz_one_fn one)
{
    size_t n = how == FUZZ_CSTR ? size + 1 : size ? size : 1;
    char *text = malloc(n);
    if (!text)
        return 0;
    if (size)
        memcpy(text, data, size);
    if (how == FUZZ_CSTR)
        text[size] = '\0';
    one(text, size);
    free(text);
    return 0;
}

/* A failure's context: the code returned (rc) in it, and a non-empty
 * message shorter than ST_MSG_MAX, on one line when one_line is set. */
static inline void fuzz_check_err_msg(int rc, const st_err *err, int one_line)
{
    CHECK(err->code == rc);
    size_t n = strnlen(err->msg, ST_MSG_MAX);
    CHECK(n > 0 && n < ST_MSG_MAX);
    if (one_line)
        CHECK(strchr(err->msg, '\n') == NULL);
}

/* A text written (a) reads back (rc, err: the reader's status) and, written
 * again (b; NULL when that ran out of memory), is the same text. Frees a
 * and b. */
static inline void fuzz_check_round_trip(const char *what, char *a, int rc, const st_err *err,
                                         char *b)
{
    if (rc != ST_OK) {
        fprintf(stderr, "%s: the %s written does not read back: %s\n%s\n", FUZZ_NAME, what,
                err->msg, a);
        abort();
    }
    if (b && strcmp(a, b) != 0) {
        fprintf(stderr, "%s: written twice, two texts:\n%s\n%s\n", FUZZ_NAME, a, b);
        abort();
    }
    free(a);
    free(b);
}

#endif
