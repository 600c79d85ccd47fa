/* Pooling, normalization, softmax, reductions and resize (the second nn
 * table, so that two people can add ops without touching the same file). */
#include "registry.h"

const q8_op_def *const q8_ops_nn2[] = {
    NULL,
};
