/* Shared infer pieces of the elementwise ops: sets of dtypes and the infer
 * of the plain binary ops (params: the broadcast plan, ops/broadcast.h). */
#ifndef Q8_CORE_OPS_ELEMENTWISE_H
#define Q8_CORE_OPS_ELEMENTWISE_H

#include "ops/broadcast.h"

/* Sets of dtypes, one bit per q8_dtype. */
#define Q8_EW_DT(t) (1u << (t))
#define Q8_EW_DT_FLOATS (Q8_EW_DT(Q8_F32) | Q8_EW_DT(Q8_F64))
#define Q8_EW_DT_SINTS (Q8_EW_DT(Q8_I8) | Q8_EW_DT(Q8_I16) | Q8_EW_DT(Q8_I32) | Q8_EW_DT(Q8_I64))
#define Q8_EW_DT_UINTS (Q8_EW_DT(Q8_U8) | Q8_EW_DT(Q8_U16) | Q8_EW_DT(Q8_U32) | Q8_EW_DT(Q8_U64))
#define Q8_EW_DT_INTS (Q8_EW_DT_SINTS | Q8_EW_DT_UINTS)
#define Q8_EW_DT_NUMS (Q8_EW_DT_FLOATS | Q8_EW_DT_INTS)

/* Whether dtype t is in the set. */
static inline bool q8_ew_dtype_in(unsigned set, q8_dtype t) {
    return t > Q8_UNDEFINED && t < Q8_DTYPE_COUNT && (set & Q8_EW_DT(t));
}

/* "float32, int64, ..." listing the dtypes of the set. */
const char *q8_ew_dtype_list(unsigned set, char *buf, size_t size);

/* Broadcast inputs 0 and 1 of n into dims (rank *nd) and store the plan as
 * n->params. */
q8_status q8_ew_binary_plan(q8_graph *g, q8_node *n, int64_t *dims, int *nd, q8_error *err);
/* Shared infer of plain binary ops (same dtype on both inputs, one of
 * dtypes). out_dtype Q8_UNDEFINED means "the inputs' dtype". */
q8_status q8_ew_binary_infer(q8_graph *g, q8_node *n, unsigned dtypes, q8_dtype out_dtype,
                             q8_error *err);

#endif
