/* Accuracy-aware quantization (quantize --max-drop): quantize, measure the
 * accuracy drop against FP32 on the user's data, and while it is larger
 * than allowed, fall back on the most damaged layer (pruned INT8 -> dense
 * INT8 -> FP32), one step per trial, within a trial budget. */
#ifndef Q8_QUANTIZE_SEARCH_H
#define Q8_QUANTIZE_SEARCH_H

#include "convert.h"
#include "q8_tools.h"

#endif
