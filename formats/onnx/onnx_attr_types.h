/* Attribute types declared by the ai.onnx operator schemas (generated table,
 * see gen_onnx_attr_types.py). */
#ifndef Q8_ONNX_ATTR_TYPES_H
#define Q8_ONNX_ATTR_TYPES_H

#include <stdint.h>

typedef struct q8_onnx_attr_type {
    const char *op;
    const char *attr;
    uint32_t mask; /* bit t set: AttributeProto type t is allowed */
} q8_onnx_attr_type;

extern const q8_onnx_attr_type q8_onnx_attr_types[];
extern const int q8_onnx_n_attr_types;

#endif
