/*
 * version.h: the commit this build was made from.
 */
#ifndef SMD_VERSION_H
#define SMD_VERSION_H

/* The source tree's commit at build time, short, with "-dirty" when tracked
 * files differed from it; "unknown" outside a git checkout
 * (cmake/git_rev.cmake). Each program and backend module holds its own copy
 * (exec/exec_module.h compares them). */
const char *smd_git_rev(void);

#endif
