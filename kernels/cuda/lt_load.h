/* cuBLASLt, loaded with dlopen when the first CUDA session is created.
 * Linking it costs every process that loads libq8 about 210 MB of resident
 * memory from the start (quantize --help: 2.4 MB in the CPU-only build,
 * 214 MB with cuBLASLt linked, 2026-11-28), CPU-only runs and quantize
 * included; on a Jetson that memory is the GPU's too. Code that calls
 * cuBLASLt includes this header (through backend_cuda.h): each cublasLt*
 * name below becomes q8_lt_cublasLt*, which forwards to the loaded library
 * and returns CUBLAS_STATUS_NOT_INITIALIZED (cublasLtGetVersion: 0) when it
 * could not be loaded. */
#ifndef Q8_CUDA_LT_LOAD_H
#define Q8_CUDA_LT_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include <cublasLt.h>

/* Load the library once (thread-safe); false with the reason in why. */
bool q8_cu_lt_load(char *why, size_t n);

#define Q8_LT_FUNCS(X)                                                                        \
    X(cublasLtCreate)                                                                         \
    X(cublasLtDestroy)                                                                        \
    X(cublasLtGetVersion)                                                                     \
    X(cublasLtMatmul)                                                                         \
    X(cublasLtMatmulAlgoGetHeuristic)                                                         \
    X(cublasLtMatmulDescCreate)                                                               \
    X(cublasLtMatmulDescDestroy)                                                              \
    X(cublasLtMatmulDescSetAttribute)                                                         \
    X(cublasLtMatmulPreferenceCreate)                                                         \
    X(cublasLtMatmulPreferenceDestroy)                                                        \
    X(cublasLtMatmulPreferenceSetAttribute)                                                   \
    X(cublasLtMatrixLayoutCreate)                                                             \
    X(cublasLtMatrixLayoutDestroy)                                                            \
    X(cublasLtMatrixLayoutSetAttribute)

/* q8_lt_<name> has exactly the library function's type */
#define Q8_LT_DECLARE(f) extern __typeof__(f) q8_lt_##f;
Q8_LT_FUNCS(Q8_LT_DECLARE)
#undef Q8_LT_DECLARE

#ifndef Q8_LT_LOADER /* everyone but lt_load.c calls the forwarders */
#define cublasLtCreate q8_lt_cublasLtCreate
#define cublasLtDestroy q8_lt_cublasLtDestroy
#define cublasLtGetVersion q8_lt_cublasLtGetVersion
#define cublasLtMatmul q8_lt_cublasLtMatmul
#define cublasLtMatmulAlgoGetHeuristic q8_lt_cublasLtMatmulAlgoGetHeuristic
#define cublasLtMatmulDescCreate q8_lt_cublasLtMatmulDescCreate
#define cublasLtMatmulDescDestroy q8_lt_cublasLtMatmulDescDestroy
#define cublasLtMatmulDescSetAttribute q8_lt_cublasLtMatmulDescSetAttribute
#define cublasLtMatmulPreferenceCreate q8_lt_cublasLtMatmulPreferenceCreate
#define cublasLtMatmulPreferenceDestroy q8_lt_cublasLtMatmulPreferenceDestroy
#define cublasLtMatmulPreferenceSetAttribute q8_lt_cublasLtMatmulPreferenceSetAttribute
#define cublasLtMatrixLayoutCreate q8_lt_cublasLtMatrixLayoutCreate
#define cublasLtMatrixLayoutDestroy q8_lt_cublasLtMatrixLayoutDestroy
#define cublasLtMatrixLayoutSetAttribute q8_lt_cublasLtMatrixLayoutSetAttribute
#endif

#endif
