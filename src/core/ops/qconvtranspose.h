/* q8.QConvTranspose: INT8 transposed convolution, 1-D or 2-D
 * (docs/int8-ops.md). As q8.QConv, but W is stored output-channel major
 * [M, C/group, *kernel] (per-channel scales over M), and output_padding /
 * output_shape are read too. */
#ifndef Q8_CORE_OPS_QCONVTRANSPOSE_H
#define Q8_CORE_OPS_QCONVTRANSPOSE_H

#include "ops/qconv_geom.h"
#include "ops/qop.h"

typedef struct q8_qconvtranspose_params {
    q8_qconv_geom geo;          /* transposed: H, W the input, OH, OW the output */
    int64_t Cg, Mg;             /* per group: input and output channels */
    q8_qop_quant q;             /* sx: X's scale; per-channel scales are W's */
    bool has_bias;              /* input 2 */
} q8_qconvtranspose_params;

#endif
