# SPDX-License-Identifier: BSD-3-Clause
# Finds OpenBLAS and LAPACKE and defines the imported targets sbm::blas and sbm::lapacke.
# Sets SbmLapacke_FOUND; when a library is missing, SbmLapacke_MESSAGE names the Debian package.
# Used by the build (cmake/SbmDependencies.cmake) and by the installed sbmConfig.cmake, whose
# static targets link these two.
if(TARGET sbm::lapacke)
  set(SbmLapacke_FOUND TRUE)
  return()
endif()
set(SbmLapacke_FOUND FALSE)
find_library(SBM_OPENBLAS_LIBRARY NAMES openblas PATH_SUFFIXES openblas-pthread openblas-openmp openblas-serial)
if(NOT SBM_OPENBLAS_LIBRARY)
  set(SbmLapacke_MESSAGE "OpenBLAS not found: install the Debian package libopenblas-dev")
  return()
endif()
find_path(SBM_LAPACKE_INCLUDE_DIR NAMES lapacke.h PATH_SUFFIXES openblas)
find_library(SBM_LAPACKE_LIBRARY NAMES lapacke)
if(NOT SBM_LAPACKE_INCLUDE_DIR OR NOT SBM_LAPACKE_LIBRARY)
  set(SbmLapacke_MESSAGE "LAPACKE not found: install the Debian package liblapacke-dev")
  return()
endif()
add_library(sbm::blas UNKNOWN IMPORTED)
set_target_properties(sbm::blas PROPERTIES IMPORTED_LOCATION "${SBM_OPENBLAS_LIBRARY}")
add_library(sbm::lapacke UNKNOWN IMPORTED)
set_target_properties(sbm::lapacke PROPERTIES IMPORTED_LOCATION "${SBM_LAPACKE_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${SBM_LAPACKE_INCLUDE_DIR}")
set(SbmLapacke_FOUND TRUE)
