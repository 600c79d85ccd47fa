/* quantize --speed-check (q8_quantize_speed in q8_tools.h). */
#ifndef Q8_QUANTIZE_SPEED_H
#define Q8_QUANTIZE_SPEED_H

#include "convert.h"
#include "q8_tools.h"

#endif
