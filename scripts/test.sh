#!/usr/bin/env bash
# test.sh: the whole test suite, exactly as CI runs it (.ci/run calls this).
#
#   1. scripts/setup.sh           Debian packages (idempotent; seconds when done)
#   2. build/      -DSMD_WERROR=ON, every ctest (unit, integration, mpi, gpu
#                  tests skip without a device), and the benchmarks compile
#   3. build/      the unit tests again under each OpenBLAS core type of
#                  CORETYPES (OPENBLAS_CORETYPE; step 2 ran them with the
#                  kernels OpenBLAS picks for this CPU): a test that passes
#                  with one BLAS kernel and fails with another is testing the
#                  kernel. A core type whose instructions this CPU lacks is
#                  skipped, saying so (OpenBLAS would die on them).
#   4. build-rel/  -DCMAKE_BUILD_TYPE=Release -DSMD_WERROR=ON (-O3 warns of
#                  what -O0 cannot see) and its unit tests
#   5. build-asan/ -DSMD_SANITIZE=ON (ASan + UBSan): the unit tests (ctest -L unit)
#   6. build-asan/ each libFuzzer target for FUZZ_SECONDS over its seed corpus
#                  (ctest -L fuzz); needs clang, which setup.sh installs
#
# Steps 5 and 6 share one clang build: SMD_FUZZ instruments the libraries for
# the fuzzer on top of the sanitizers, which the unit tests do not mind, and it
# saves another full build. The first failure stops the script with a non-zero
# exit and a last line naming the step that failed.
#
# Environment: JOBS (build parallelism, default 2), FUZZ_SECONDS (default 20),
# CORETYPES (default "Haswell SkylakeX"), BUILD_DIR (default build),
# RELEASE_BUILD_DIR (default build-rel), ASAN_BUILD_DIR (default build-asan).
set -euo pipefail

cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
BUILD_DIR=${BUILD_DIR:-build}
RELEASE_BUILD_DIR=${RELEASE_BUILD_DIR:-build-rel}
ASAN_BUILD_DIR=${ASAN_BUILD_DIR:-build-asan}
CORETYPES=${CORETYPES:-Haswell SkylakeX}
START=$SECONDS
STAGE="start"

step() {
  STAGE="$*"
  printf '\n== [%4ds] %s\n' "$((SECONDS - START))" "$*"
}

# set -e stops at the first failure; say where, last, so a CI log's tail shows it.
on_exit() {
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    printf '\n== [%4ds] FAILED (exit %d) in: %s\n' "$((SECONDS - START))" "$rc" "$STAGE" >&2
  fi
}
trap on_exit EXIT

# The CPU flags (as /proc/cpuinfo names them) an OpenBLAS core type's
# kernels are compiled for: AVX2 and FMA3 for Haswell and Zen, Skylake's
# AVX-512 subsets for SkylakeX, and BF16 on top for Cooperlake. Forced on a
# CPU without them, OpenBLAS dies of an illegal instruction.
coretype_flags() {
  case "$1" in
    Haswell | Zen) echo "avx2 fma" ;;
    SkylakeX) echo "avx512f avx512cd avx512bw avx512dq avx512vl" ;;
    Cooperlake) echo "avx512f avx512cd avx512bw avx512dq avx512vl avx512_bf16" ;;
    *) echo "" ;;
  esac
}
SKIPPED=""

cpu_has() {
  local flags
  flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
  for f in "$@"; do
    case " ${flags#*:} " in *" $f "*) ;; *) return 1 ;; esac
  done
}

step "setup"
scripts/setup.sh

step "configure and build $BUILD_DIR/ (warnings are errors)"
cmake -S . -B "$BUILD_DIR" -DSMD_WERROR=ON
cmake --build "$BUILD_DIR" -j"$JOBS"
cmake --build "$BUILD_DIR" -j"$JOBS" --target bench

step "ctest in $BUILD_DIR/"
(cd "$BUILD_DIR" && ctest --output-on-failure)

for ct in $CORETYPES; do
  # shellcheck disable=SC2046  # one flag a word
  if [ "$(uname -m)" != x86_64 ] || ! cpu_has $(coretype_flags "$ct"); then
    echo "test.sh: this CPU cannot run OpenBLAS's $ct kernels ($(uname -m): $(coretype_flags "$ct")); skipped"
    SKIPPED="$SKIPPED $ct kernels;"
    continue
  fi
  step "unit tests in $BUILD_DIR/ with OpenBLAS's $ct kernels"
  (cd "$BUILD_DIR" && OPENBLAS_CORETYPE=$ct ctest --output-on-failure -L unit)
done

step "configure and build $RELEASE_BUILD_DIR/ (Release, warnings are errors)"
cmake -S . -B "$RELEASE_BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DSMD_WERROR=ON
cmake --build "$RELEASE_BUILD_DIR" -j"$JOBS"

step "unit tests in $RELEASE_BUILD_DIR/"
(cd "$RELEASE_BUILD_DIR" && ctest --output-on-failure -L unit)

STAGE="look for clang (the sanitizer build's compiler)"
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

step "all tests passed${SKIPPED:+ (skipped:${SKIPPED%;})}"
