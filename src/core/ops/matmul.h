/* MatMul with numpy semantics: 1-D operands are promoted (and the added dim
 * removed from the output), batch dims broadcast; plus an optional fused
 * activation. Seen as `batch` products [m, k] x [k, n] -> [m, n] over
 * contiguous matrices. When B has no batch dims, the whole of A (contiguous)
 * is one [batch*m, k]: its batch folds into m and there is one product. */
#ifndef Q8_CORE_OPS_MATMUL_H
#define Q8_CORE_OPS_MATMUL_H

#include <stdint.h>

#include "graph.h"
#include "ops/act.h"

typedef struct q8_matmul_params {
    int64_t m, n, k;        /* each product; m == 0 when the output is empty */
    int64_t batch;          /* products; 1 when A's batch folded into m (or empty) */
    /* batch > 1: the broadcast batch dims of Y (row-major, product i is
     * Y's matrix i) and the element strides of A's and B's matrices along
     * them (0 where an operand is broadcast). */
    int nbat;
    int64_t bat[Q8_MAX_DIMS];
    int64_t a_stride[Q8_MAX_DIMS], b_stride[Q8_MAX_DIMS];
    q8_act act;             /* fused activation */
} q8_matmul_params;

#endif
