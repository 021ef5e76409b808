#!/usr/bin/env bash
# setup.sh: install smdplan's build and test dependencies from Debian packages.
#
# Idempotent: packages already present are not downloaded again, so a second
# run takes a second or two. CUDA and NCCL are not Debian packages; they are
# used from /usr/local/cuda when that toolkit is installed (see CMakeLists.txt,
# WITH_CUDA / WITH_NCCL).
set -euo pipefail

# libclang-rt-dev holds clang's sanitizer and libFuzzer runtimes; clang only
# recommends it, and recommends are not installed here.
pkgs=(
  build-essential cmake pkg-config
  libgsl-dev libsqlite3-dev libcjson-dev
  libopenmpi-dev openmpi-bin
  libopenblas-dev
  gnuplot-nox libcmocka-dev
  clang libclang-rt-dev
)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "setup: missing ${missing[*]}; run this script as root (or install sudo)" >&2
      exit 1
    fi
    SUDO="sudo"
  fi
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: all Debian packages present"
fi

if [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: CUDA toolkit found at /usr/local/cuda ($(/usr/local/cuda/bin/nvcc --version | tail -n 1))"
else
  echo "setup: no CUDA toolkit at /usr/local/cuda; the CPU/MPI build is used"
fi
