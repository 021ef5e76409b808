#!/usr/bin/env bash
# test.sh: the whole test suite, exactly as CI runs it (.ci/run calls this).
#
#   1. scripts/setup.sh           Debian packages (idempotent; seconds when done)
#   2. build/      -DSMD_WERROR=ON, every ctest (unit, integration, mpi, gpu
#                  tests skip without a device), and the benchmarks compile
#   3. build-asan/ -DSMD_SANITIZE=ON (ASan + UBSan): the unit tests (ctest -L unit)
#   4. build-asan/ each libFuzzer target for FUZZ_SECONDS over its seed corpus
#                  (ctest -L fuzz); needs clang, which setup.sh installs
#
# Steps 3 and 4 share one clang build: SMD_FUZZ instruments the libraries for
# the fuzzer on top of the sanitizers, which the unit tests do not mind, and it
# saves a third full build. Any failure stops the script with a non-zero exit.
#
# Environment: JOBS (build parallelism, default 2), FUZZ_SECONDS (default 20),
# BUILD_DIR (default build), ASAN_BUILD_DIR (default build-asan).
set -euo pipefail

cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
BUILD_DIR=${BUILD_DIR:-build}
ASAN_BUILD_DIR=${ASAN_BUILD_DIR:-build-asan}
START=$SECONDS

step() { printf '\n== [%4ds] %s\n' "$((SECONDS - START))" "$*"; }

step "setup"
scripts/setup.sh

step "configure and build $BUILD_DIR/ (warnings are errors)"
cmake -S . -B "$BUILD_DIR" -DSMD_WERROR=ON
cmake --build "$BUILD_DIR" -j"$JOBS"
cmake --build "$BUILD_DIR" -j"$JOBS" --target bench

step "ctest in $BUILD_DIR/"
(cd "$BUILD_DIR" && ctest --output-on-failure)

fuzz=OFF
asan_cc=${CC:-cc}
if command -v clang >/dev/null 2>&1; then
  fuzz=ON
  asan_cc=clang
elif [ "${CI:-}" = "true" ]; then
  echo "test.sh: clang not found after setup; CI needs it for the fuzz targets" >&2
  exit 1
else
  echo "test.sh: clang not found; the sanitizer build uses $asan_cc and no fuzz target runs"
fi

# CUDA stays out of the sanitizer build (its runtime and ASan do not mix).
step "configure and build $ASAN_BUILD_DIR/ (ASan + UBSan, fuzz=$fuzz)"
CC=$asan_cc cmake -S . -B "$ASAN_BUILD_DIR" -DSMD_SANITIZE=ON -DSMD_FUZZ="$fuzz" \
  -DSMD_FUZZ_SECONDS="$FUZZ_SECONDS" -DWITH_CUDA=OFF -DWITH_NCCL=OFF -DSMD_BENCH=OFF
cmake --build "$ASAN_BUILD_DIR" -j"$JOBS"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

step "unit tests under ASan + UBSan"
(cd "$ASAN_BUILD_DIR" && ctest --output-on-failure -L unit)

if [ "$fuzz" = ON ]; then
  step "fuzz targets, ${FUZZ_SECONDS}s each"
  (cd "$ASAN_BUILD_DIR" && ctest --output-on-failure -L fuzz)
fi

step "all tests passed"
