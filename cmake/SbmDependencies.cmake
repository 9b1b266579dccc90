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
