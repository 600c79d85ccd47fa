/* Pooling, normalization, softmax, reductions and resize (the second nn
 * table, so that two people can add ops without touching the same file). */
#include "registry.h"

extern const q8_op_def q8_op_batchnorm;
extern const q8_op_def q8_op_maxpool;
extern const q8_op_def q8_op_averagepool;
extern const q8_op_def q8_op_globalaveragepool;
extern const q8_op_def q8_op_globalmaxpool;

const q8_op_def *const q8_ops_nn2[] = {
    &q8_op_batchnorm,
    &q8_op_maxpool,
    &q8_op_averagepool,
    &q8_op_globalaveragepool,
    &q8_op_globalmaxpool,
    NULL,
};
