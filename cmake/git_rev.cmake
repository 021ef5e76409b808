# git_rev.cmake: writes OUT (a header defining SMD_GIT_REV) with the source
# tree's commit, "-dirty" after it when tracked files differ from it; run at
# every build (CMakeLists.txt: the smd_git_rev target), the file is
# rewritten only when the text changes, so an unchanged tree rebuilds
# nothing and a new commit recompiles only common/version.c.
#   cmake -DSRC=DIR -DOUT=FILE -P git_rev.cmake
execute_process(COMMAND git rev-parse --short HEAD
                WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0 OR NOT rev)
  set(rev "unknown")
else()
  execute_process(COMMAND git diff --quiet HEAD --
                  WORKING_DIRECTORY ${SRC}
                  RESULT_VARIABLE dirty ERROR_QUIET)
  if(NOT dirty EQUAL 0)
    string(APPEND rev "-dirty")
  endif()
endif()
set(text "/* Generated at build time by cmake/git_rev.cmake. */\n#define SMD_GIT_REV \"${rev}\"\n")
set(old "")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
