/* The whole conversion behind the `quantize` tool: q8_quantize_model
 * (q8_tools.h). */
#ifndef Q8_QUANTIZE_MODEL_H
#define Q8_QUANTIZE_MODEL_H

#include "quantize.h"

#endif
