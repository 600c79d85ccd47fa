/* Shape and data-movement ops. */
#include "registry.h"

extern const q8_op_def q8_op_identity, q8_op_reshape, q8_op_flatten, q8_op_squeeze,
    q8_op_unsqueeze, q8_op_dropout, q8_op_transpose, q8_op_concat, q8_op_split, q8_op_slice,
    q8_op_gather, q8_op_pad, q8_op_tile, q8_op_shape, q8_op_size, q8_op_constantofshape,
    q8_op_range, q8_op_gather_elements, q8_op_gathernd;

const q8_op_def *const q8_ops_tensor[] = {
    &q8_op_identity,
    &q8_op_reshape,
    &q8_op_flatten,
    &q8_op_squeeze,
    &q8_op_unsqueeze,
    &q8_op_dropout,
    &q8_op_transpose,
    &q8_op_concat,
    &q8_op_split,
    &q8_op_slice,
    &q8_op_gather,
    &q8_op_gather_elements,
    &q8_op_gathernd,
    &q8_op_pad,
    &q8_op_tile,
    &q8_op_shape,
    &q8_op_size,
    &q8_op_constantofshape,
    &q8_op_range,
    NULL,
};
