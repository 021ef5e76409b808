# Optional GPU and MPI pieces: WITH_CUDA / WITH_NCCL / WITH_MPI = AUTO/ON/OFF.
# The result is one generated header (smd_config.h) with HAVE_CUDA, HAVE_NCCL,
# HAVE_MPI set to 0 or 1. CUDA is looked for under /usr/local/cuda, where
# CMake would not find nvcc unless it is on PATH.
set(HAVE_CUDA 0)
set(HAVE_NCCL 0)
set(HAVE_MPI 0)

foreach(opt WITH_CUDA WITH_NCCL WITH_MPI)
  if(NOT ${opt} MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "${opt}=${${opt}}: allowed values are AUTO, ON, OFF")
  endif()
endforeach()

# GPU architectures the CUDA kernels are built for: the device needs bf16
# tensor cores (sm_80, A100) and is tuned on sm_90 (H100); PTX of the newest
# lets later GPUs run them. Few architectures keep nvcc's time small.
set(SMD_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures of the kernels")

if(NOT WITH_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES ${SMD_CUDA_ARCHITECTURES})
  endif()
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    find_package(CUDAToolkit)
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND)
    set(HAVE_CUDA 1)
  elseif(WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "WITH_CUDA=ON but no CUDA toolkit was found (looked for /usr/local/cuda/bin/nvcc)")
  endif()
endif()

if(NOT WITH_NCCL STREQUAL "OFF")
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS /usr/local/cuda/include ${CUDAToolkit_INCLUDE_DIRS})
  find_library(NCCL_LIBRARY nccl HINTS /usr/local/cuda/lib64 ${CUDAToolkit_LIBRARY_DIR})
  if(HAVE_CUDA AND NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    set(HAVE_NCCL 1)
  elseif(WITH_NCCL STREQUAL "ON")
    message(FATAL_ERROR "WITH_NCCL=ON but nccl.h / libnccl were not found under /usr/local/cuda (NCCL also needs CUDA)")
  endif()
endif()

if(NOT WITH_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS C QUIET)
  if(MPI_C_FOUND)
    set(HAVE_MPI 1)
  elseif(WITH_MPI STREQUAL "ON")
    message(FATAL_ERROR "WITH_MPI=ON but no MPI C library was found (install libopenmpi-dev)")
  endif()
endif()

message(STATUS "smdplan features: CUDA=${HAVE_CUDA} NCCL=${HAVE_NCCL} MPI=${HAVE_MPI}")
