/* What the INT8 ops' CPU prepare steps share beyond the core's checks
 * (src/core/ops/qop.h) and the epilogue (kernels/common/qepi.h): the GEMM
 * path of a node. */
#ifndef Q8_KERNELS_CPU_QOP_UTIL_H
#define Q8_KERNELS_CPU_QOP_UTIL_H

#include "cpu_op.h"
#include "graph.h"
#include "igemm.h"
#include "igemv_sparse.h"

/* The GEMM path for this node: the internal attribute _igemm_path ("c",
 * "avx2", "avxvnni", "avx512vnni"; absent: the best this CPU has). Lets
 * tests run every op on every path. */
q8_status q8_qop_path(const q8_node *n, q8_igemm_path *path, q8_error *err);

/* A pruned weight the loader expanded (the tensor owns it) stays compressed
 * (igemv_sparse.h) where the session releases the expanded copy, the CPU
 * has a fast expander for path (q8_isp_kept), and the form of [N][K] takes at most
 * Q8_ISP_MAX_SHARE of dense_bytes (the weight as the op counts it dense:
 * a 50%-pruned weight's form is about 0.625; past about 60% it saves too
 * little to give up the dense kernels, and small weights pay the form's
 * fixed 100-200 bytes). Plans the form as the first thing after the op's
 * header of header_bytes at *off and returns true, advancing *off, only
 * then. nnz is counted on the weight as stored (layouts pad with 0). */
#define Q8_ISP_MAX_SHARE 0.75
bool q8_qop_plan_sparse(const q8_tensor *wt, const q8_prep_env *env, q8_igemm_path path,
                        int64_t N, int64_t K, size_t dense_bytes, size_t header_bytes,
                        q8_isp *isp, size_t *off);

/* The prepare step of the ops that look bytes up in tables (q8.QLut,
 * q8.QPRelu; kernels/cpu/ops/qlut.c): the blob is the q8_qlut_path for
 * this node's GEMM path (qlut.h). */
q8_status q8_qlut_prepare(const q8_graph *g, const q8_node *n, const q8_prep_env *env,
                          void **prep, size_t *bytes, q8_error *err);

#endif
