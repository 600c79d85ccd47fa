/* Dropout at inference: output = input. Without the mask output it is a
 * view (and the passes usually remove it); when the mask is requested (or
 * the data is a constant), infer switches the node to the internal op
 * q8.DropoutMask (Q8_OP_DROPOUT_MASK), which copies the data (unless in
 * place) and writes an all-true mask. Training mode is not supported,
 * except with a constant ratio of 0, which is the identity too. */
#ifndef Q8_CORE_OPS_DROPOUT_H
#define Q8_CORE_OPS_DROPOUT_H

#include <stdbool.h>

/* Only q8.DropoutMask nodes have params. */
typedef struct q8_dropout_params {
    bool mask;          /* output 1, the bool mask, is written (all true) */
} q8_dropout_params;

#endif
