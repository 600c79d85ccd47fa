/* Elementwise and activation ops. */
#include "registry.h"

extern const q8_op_def q8_op_relu;

const q8_op_def *const q8_ops_math[] = {
    &q8_op_relu,
    NULL,
};
