/*
 * text.h: text made safe for the place it is written: a word of a POSIX
 * shell command, or a line of a script's comment or of a one-line message.
 * A name read from a file (a model's, an instance type's) goes through one
 * of these before it reaches a script, so it never runs and never ends the
 * line it is on.
 */
#ifndef SMD_TEXT_H
#define SMD_TEXT_H

#include <stddef.h>

/* s quoted for a POSIX shell (single quotes, a quote as '\'') unless it
 * needs none, into buf (n >= 1): at most 4 bytes a byte of s and 3 more. */
void text_shell_quote(const char *s, char *buf, size_t n);

/* s for a comment line of a script or a one-line message, into buf (n >= 1):
 * printable ASCII kept, backslash doubled, anything else (newlines, control
 * characters, bytes past ASCII) as \n or \xNN, so the text cannot end the
 * line it is written on. Cut short (at a whole escape) to fit n; returns buf. */
const char *text_comment(const char *s, char *buf, size_t n);

/* buf (n >= 1) = the formatted text, cut short when it does not fit: for
 * notes and sources whose length a caller bounds by its buffer, where a
 * cut is the intended outcome (snprintf's result unused). */
void text_setf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Levenshtein distance (Levenshtein 1966) of a and b, case-insensitive,
 * over at most their first 63 characters each: enough to rank the names a
 * "did you mean" line suggests. */
int text_edit_distance(const char *a, const char *b);

#endif
