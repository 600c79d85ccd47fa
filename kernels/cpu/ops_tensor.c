/* Shape and data-movement ops. */
#include "registry.h"

extern const q8_op_def q8_op_identity;

const q8_op_def *const q8_ops_tensor[] = {
    &q8_op_identity,
    NULL,
};
