# SPDX-License-Identifier: BSD-3-Clause
# Finds SuiteSparse AMD (the fill-reducing ordering of the sparse block Cholesky) and defines the
# imported target sbm::amd (libamd, with libsuitesparseconfig in its link interface). Sets
# SbmAmd_FOUND; when it is missing, SbmAmd_MESSAGE names the Debian package. Used by the build
# (cmake/SbmDependencies.cmake) and by the installed sbmConfig.cmake, whose static targets link it.
if(TARGET sbm::amd)
  set(SbmAmd_FOUND TRUE)
  return()
endif()
set(SbmAmd_FOUND FALSE)
find_path(SBM_AMD_INCLUDE_DIR NAMES suitesparse/amd.h)
find_library(SBM_AMD_LIBRARY NAMES amd)
find_library(SBM_SUITESPARSECONFIG_LIBRARY NAMES suitesparseconfig)
if(NOT SBM_AMD_INCLUDE_DIR OR NOT SBM_AMD_LIBRARY OR NOT SBM_SUITESPARSECONFIG_LIBRARY)
  set(SbmAmd_MESSAGE "SuiteSparse AMD not found (suitesparse/amd.h, libamd, libsuitesparseconfig): "
                     "install the Debian package libsuitesparse-dev")
  return()
endif()
add_library(sbm::suitesparseconfig UNKNOWN IMPORTED)
set_target_properties(sbm::suitesparseconfig PROPERTIES IMPORTED_LOCATION "${SBM_SUITESPARSECONFIG_LIBRARY}")
add_library(sbm::amd UNKNOWN IMPORTED)
set_target_properties(sbm::amd PROPERTIES IMPORTED_LOCATION "${SBM_AMD_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${SBM_AMD_INCLUDE_DIR}"
  INTERFACE_LINK_LIBRARIES sbm::suitesparseconfig)
set(SbmAmd_FOUND TRUE)
