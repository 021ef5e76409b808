/*
 * exec_program.h: where the programs smdplan starts are found
 * (exec_program.c): the rank programs of a run or a bench sit beside the
 * smdplan that starts them in a build or an install, so they are looked
 * for in this executable's own directory first, then (when asked) on PATH.
 */
#ifndef SMD_EXEC_PROGRAM_H
#define SMD_EXEC_PROGRAM_H

#include <stddef.h>

/* Longest path of a program found here, with its NUL. */
#define EXEC_PROGRAM_PATH_MAX 4096

/* This executable's path (/proc/self/exe) into buf (n bytes); "" when /proc
 * does not say. */
void exec_program_self(char *buf, size_t n);

/* The program name next to this executable, else (search_path non-zero)
 * the first executable of that name in a directory of $PATH, into buf (n
 * bytes); "" when neither has it or the path does not fit. */
void exec_program_find(const char *name, int search_path, char *buf, size_t n);

#endif
