/* Activations fused into the epilogue of GEMM-like ops (Conv, ConvTranspose,
 * Gemm, MatMul and their INT8 forms). The fusion pass sets the internal
 * attributes `_act` ("Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid",
 * "HardSwish") and its floats `_act_min`/`_act_max` (Clip), `_act_alpha`
 * (LeakyRelu, HardSigmoid), `_act_beta` (HardSigmoid); infer reads them into
 * a q8_act. */
#ifndef Q8_CORE_OPS_ACT_H
#define Q8_CORE_OPS_ACT_H

#include "graph.h"

typedef enum q8_act_kind {
    Q8_ACT_NONE = 0,
    Q8_ACT_RELU,
    Q8_ACT_CLIP,         /* p0 = min, p1 = max */
    Q8_ACT_LEAKY_RELU,   /* p0 = alpha */
    Q8_ACT_SIGMOID,
    Q8_ACT_HARD_SIGMOID, /* max(0, min(1, p0*x + p1)) */
    Q8_ACT_HARD_SWISH,   /* x * hard_sigmoid(x) with 1/6, 1/2, as the HardSwish op */
} q8_act_kind;

typedef struct q8_act {
    q8_act_kind kind;
    float p0, p1;
} q8_act;

/* Parse the node's `_act*` attributes (none: Q8_ACT_NONE). */
q8_status q8_act_from_node(const q8_node *n, q8_act *act, q8_error *err);

#endif
