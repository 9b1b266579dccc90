# SPDX-License-Identifier: BSD-3-Clause
# Dependencies come from Debian packages; a missing one stops configuration with the package name.

# OpenBLAS (BLAS) and LAPACKE
include(FindSbmLapacke)
if(NOT SbmLapacke_FOUND)
  message(FATAL_ERROR "${SbmLapacke_MESSAGE}")
endif()

# POSIX threads (the CPU backend's linearisations)
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)

# SuiteSparse AMD (ordering of the sparse block Cholesky)
include(FindSbmAmd)
if(NOT SbmAmd_FOUND)
  message(FATAL_ERROR "${SbmAmd_MESSAGE}")
endif()

# CUDA: auto-detected unless SBM_CUDA is ON or OFF.
set(SBM_WITH_CUDA OFF)
if(NOT SBM_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # the shared CUDA runtime everywhere (the default would add cudart_static beside the
    # CUDA::cudart the library and its programs link): one runtime per process
    set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
    enable_language(CUDA)
    enable_language(CXX)
    find_package(CUDAToolkit REQUIRED)
    set(SBM_WITH_CUDA ON)
  elseif(SBM_CUDA STREQUAL "ON")
    message(FATAL_ERROR "SBM_CUDA=ON but no CUDA compiler (nvcc) was found: install the CUDA toolkit "
                        "(Debian package nvidia-cuda-toolkit) or configure with -DSBM_CUDA=OFF")
  else()
    message(STATUS "sbm: nvcc not found, building without the CUDA backend")
  endif()
endif()

# NCCL (the multi-GPU communicator of src/dist, kernels/cuda/dist): with the CUDA backend only;
# auto-detected unless SBM_NCCL is ON or OFF. cmake/FindNCCL.cmake honours NCCL_ROOT.
set(SBM_WITH_NCCL OFF)
if(NOT SBM_NCCL STREQUAL "OFF")
  if(SBM_WITH_CUDA)
    find_package(NCCL)
    if(NCCL_FOUND)
      set(SBM_WITH_NCCL ON)
    elseif(SBM_NCCL STREQUAL "ON")
      message(FATAL_ERROR "SBM_NCCL=ON but NCCL was not found: install it (nccl.h, libnccl.so) or "
                          "point NCCL_ROOT at it, or configure with -DSBM_NCCL=OFF")
    endif()
  elseif(SBM_NCCL STREQUAL "ON")
    message(FATAL_ERROR "SBM_NCCL=ON needs the CUDA backend (SBM_CUDA AUTO or ON and nvcc found)")
  endif()
endif()
