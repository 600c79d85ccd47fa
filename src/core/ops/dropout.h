/* Dropout at inference: output = input. Without the mask output it is a
 * view (and the passes usually remove it); when the mask is requested (or
 * the data is a constant), infer switches the node to the internal op
 * q8.DropoutMask (Q8_OP_DROPOUT_MASK), which copies the data (unless in
 * place) and writes an all-true mask. Training mode is not supported,
 * except with a constant ratio of 0, which is the identity too. */
#ifndef Q8_CORE_OPS_DROPOUT_H
#define Q8_CORE_OPS_DROPOUT_H

#include <stddef.h>
#include <stdint.h>

/* Only q8.DropoutMask nodes have params; both fields are 0 without a mask
 * output. */
typedef struct q8_dropout_params {
    size_t mask_esize;  /* byte size of the mask's elements (its dtype: bool, T before opset 10) */
    uint8_t one[8];     /* the mask's "kept" value in the mask dtype */
} q8_dropout_params;

#endif
