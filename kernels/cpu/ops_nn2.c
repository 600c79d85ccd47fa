/* Pooling, normalization, softmax, reductions and resize (the second nn
 * table, so that two people can add ops without touching the same file). */
#include "registry.h"

extern const q8_op_def q8_op_batchnorm;
extern const q8_op_def q8_op_maxpool;
extern const q8_op_def q8_op_averagepool;
extern const q8_op_def q8_op_globalaveragepool;
extern const q8_op_def q8_op_globalmaxpool;
extern const q8_op_def q8_op_softmax;
extern const q8_op_def q8_op_logsoftmax;
extern const q8_op_def q8_op_layernorm;
extern const q8_op_def q8_op_reducesum;
extern const q8_op_def q8_op_reducemean;
extern const q8_op_def q8_op_reducemax;
extern const q8_op_def q8_op_reducemin;
extern const q8_op_def q8_op_reduceprod;
extern const q8_op_def q8_op_reducel1;
extern const q8_op_def q8_op_reducel2;
extern const q8_op_def q8_op_reducesumsquare;
extern const q8_op_def q8_op_reducelogsum;
extern const q8_op_def q8_op_reducelogsumexp;
extern const q8_op_def q8_op_resize;
extern const q8_op_def q8_op_upsample;

const q8_op_def *const q8_ops_nn2[] = {
    &q8_op_batchnorm,
    &q8_op_maxpool,
    &q8_op_averagepool,
    &q8_op_globalaveragepool,
    &q8_op_globalmaxpool,
    &q8_op_softmax,
    &q8_op_logsoftmax,
    &q8_op_layernorm,
    &q8_op_reducesum,
    &q8_op_reducemean,
    &q8_op_reducemax,
    &q8_op_reducemin,
    &q8_op_reduceprod,
    &q8_op_reducel1,
    &q8_op_reducel2,
    &q8_op_reducesumsquare,
    &q8_op_reducelogsum,
    &q8_op_reducelogsumexp,
    &q8_op_resize,
    &q8_op_upsample,
    NULL,
};
