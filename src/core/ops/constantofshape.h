/* ConstantOfShape: a tensor of the shape given by a constant int64 input,
 * filled with the one-element `value` attribute (default float32 0). Its
 * input is constant, so it is folded at load time. */
#ifndef Q8_CORE_OPS_CONSTANTOFSHAPE_H
#define Q8_CORE_OPS_CONSTANTOFSHAPE_H

#include <stddef.h>
#include <stdint.h>

typedef struct q8_constant_of_shape_params {
    size_t esize;       /* the output's element size in bytes, at most 8 */
    uint8_t value[8];   /* the fill element (its first esize bytes) */
} q8_constant_of_shape_params;

#endif
