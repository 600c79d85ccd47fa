/* DepthToSpace and SpaceToDepth on NCHW data of any dtype, blocksize b.
 * DepthToSpace: [N, C, H, W] -> [N, C/b^2, H*b, W*b]; output (n, c, h*b + i,
 * w*b + j) is input channel (i*b + j)*C/b^2 + c (mode DCR, the default) or
 * c*b^2 + i*b + j (mode CRD), at (n, ., h, w). SpaceToDepth is DCR's
 * inverse: [N, C, H, W] -> [N, C*b^2, H/b, W/b], output channel (i*b + j)*C
 * + c at (h, w) is input (n, c, h*b + i, w*b + j). */
#ifndef Q8_CORE_OPS_DEPTH_SPACE_H
#define Q8_CORE_OPS_DEPTH_SPACE_H

#include "common.h"

typedef enum q8_depth_space_mode {
    Q8_D2S_DCR, Q8_D2S_CRD, Q8_S2D,
} q8_depth_space_mode;

typedef struct q8_depth_space_params {
    q8_depth_space_mode mode;
    size_t elem;                    /* bytes an element */
    int64_t b;                      /* blocksize */
    int64_t n, c, h, w;             /* the output's dims */
    int64_t ci, hi, wi;             /* the input's C, H, W */
} q8_depth_space_params;

#endif
