/* Cast and CastLike between all numeric dtypes and bool (not strings): the
 * output has the input's shape and dtype `to` (Cast's attribute, an ONNX
 * TensorProto.DataType code) or CastLike's input 1's dtype.
 *
 * Every value is converted with one rounding: to float16/bfloat16 to
 * nearest even; float -> int truncates toward zero, NaN gives 0 and values
 * out of range saturate (C leaves these undefined); int -> narrower int
 * wraps; anything -> bool is "!= 0" (NaN is true). */
#ifndef Q8_CORE_OPS_CAST_H
#define Q8_CORE_OPS_CAST_H

#include "graph.h"

typedef struct q8_cast_params {
    q8_dtype from, to;
} q8_cast_params;

/* The dtype of an ONNX TensorProto.DataType code (Cast's `to`, EyeLike's
 * `dtype`); Q8_UNDEFINED for codes q8 does not know. */
q8_dtype q8_dtype_of_onnx_code(int64_t code);

#endif
