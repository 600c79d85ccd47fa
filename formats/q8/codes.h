/* The .q8 file's explicit numbers for dtypes, attribute types and ops, and
 * the conversions to and from the in-memory enums (codes.c). 0 is never a
 * valid code. */
#ifndef Q8_FORMATS_Q8_CODES_H
#define Q8_FORMATS_Q8_CODES_H

#include "graph.h"

uint8_t q8_code_of_dtype(q8_dtype t);
q8_dtype q8_dtype_of_code(uint8_t c);          /* Q8_UNDEFINED: unknown code */
uint8_t q8_code_of_attr(q8_attr_type t);
bool q8_attr_of_code(uint8_t c, q8_attr_type *t);
uint16_t q8_code_of_op(q8_op_id id);
q8_op_id q8_op_of_code(uint16_t c);            /* Q8_OP_NONE: unknown code */

#endif
