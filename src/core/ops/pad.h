/* Pad: a constant pads input, an optional constant_value input (read at
 * run time, so it may be computed; absent or empty: 0) and an optional
 * constant axes input. Modes constant, reflect, edge and wrap (the `mode`
 * attribute). Negative pads crop; edge,
 * reflect and wrap then still refer to the uncropped input's borders (as if
 * the input were padded first and cropped after). */
#ifndef Q8_CORE_OPS_PAD_H
#define Q8_CORE_OPS_PAD_H

#include "common.h"

typedef enum q8_pad_mode { Q8_PAD_CONSTANT, Q8_PAD_REFLECT, Q8_PAD_EDGE, Q8_PAD_WRAP } q8_pad_mode;

/* Output coordinate c along dim d reads input coordinate c - pb[d], mapped
 * into [0, dim) by the mode when outside it (constant: the fill value).
 * The pads at the end are implied by the output's shape. */
typedef struct q8_pad_params {
    q8_pad_mode mode;
    size_t esize;               /* element size in bytes */
    int64_t pb[Q8_MAX_DIMS];    /* pads at the start of each dim (< 0 crops) */
    bool value_input;           /* constant mode fills with input 2's one element, else 0 */
} q8_pad_params;

#endif
