/* What the INT8 ops' CPU prepare steps share beyond the core's checks
 * (src/core/ops/qop.h) and the epilogue (kernels/common/qepi.h): the GEMM
 * path of a node. */
#ifndef Q8_KERNELS_CPU_QOP_UTIL_H
#define Q8_KERNELS_CPU_QOP_UTIL_H

#include "cpu_op.h"
#include "graph.h"
#include "igemm.h"

/* The GEMM path for this node: the internal attribute _igemm_path ("c",
 * "avx2", "avxvnni", "avx512vnni"; absent: the best this CPU has). Lets
 * tests run every op on every path. */
q8_status q8_qop_path(const q8_node *n, q8_igemm_path *path, q8_error *err);

/* The prepare step of the ops that look bytes up in tables (q8.QLut,
 * q8.QPRelu; kernels/cpu/ops/qlut.c): the blob is the q8_qlut_path for
 * this node's GEMM path (qlut.h). */
q8_status q8_qlut_prepare(const q8_graph *g, const q8_node *n, const q8_prep_env *env,
                          void **prep, size_t *bytes, q8_error *err);

#endif
