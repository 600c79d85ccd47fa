/* q8.EwChain's step kinds (ewchain.h says what each computes): apart, so
 * that the CUDA kernels (C++, kernels/cuda/ewchain.cu) include them without
 * the IR's headers. */
#ifndef Q8_CORE_OPS_EWCHAIN_KINDS_H
#define Q8_CORE_OPS_EWCHAIN_KINDS_H

typedef enum q8_ew_kind {
    Q8_EW_MUL = 1,
    Q8_EW_ADD,
    Q8_EW_SUB,
    Q8_EW_RSUB,
    Q8_EW_DIV,
    Q8_EW_RDIV,
    Q8_EW_RELU,
    Q8_EW_LEAKY_RELU,
    Q8_EW_CLIP,
    Q8_EW_HARD_SIGMOID,
    Q8_EW_HARD_SWISH,
    Q8_EW_SWISH,
    Q8_EW_KIND_END
} q8_ew_kind;

#endif
