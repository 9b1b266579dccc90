# sbm-bench-gpu: the CUDA backend's block SpGEMM and SpMV against cuSPARSE and the CPU backend.
# Included from bench/CMakeLists.txt; built only with the CUDA backend (SBM_WITH_CUDA).
if(SBM_WITH_CUDA)
  add_executable(sbm-bench-gpu bench_gpu_main.c bench_gpu_block.c bench_gpu_report.c bench_gpu_csr.c
                               bench_gpu_csr_rows.c bench_gpu_csr_spmv.c bench_gpu_csr_spmm.c
                               bench_gpu_csr_gemm.c peer_cusparse.c peer_cusparse_spgemm.c generators.c
                               bench_util.c bench_copy.c)
  target_link_libraries(sbm-bench-gpu PRIVATE sbm_ba_static CUDA::cudart CUDA::cusparse m)
  # cusparse.h marks its legacy API deprecated; the BSR SpMV peer uses cusparseDbsrmv on purpose
  target_compile_options(sbm-bench-gpu PRIVATE -Wall -Wextra -Wno-deprecated-declarations)
  target_compile_definitions(sbm-bench-gpu PRIVATE SBM_BENCH_DATA_DIR="${SBM_DATA_DIR}" SBM_BENCH_HAVE_CUDART=1)
endif()
