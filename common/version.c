/*
 * version.c: the commit of the build (common/version.h). The only file that
 * includes the generated smd_git.h, so a new commit recompiles it alone.
 */
#include "common/version.h"

#include "smd_git.h"

const char *smd_git_rev(void)
{
    return SMD_GIT_REV;
}
