/* Softmax and LogSoftmax: the input seen as outer x len x inner, each of
 * the outer * inner rows of len values (stride inner) normalized; len is
 * dims[axis] (default axis -1). */
#ifndef Q8_CORE_OPS_SOFTMAX_H
#define Q8_CORE_OPS_SOFTMAX_H

#include <stdbool.h>
#include <stdint.h>

typedef struct q8_softmax_params {
    int64_t outer, len, inner;
    bool log;                   /* LogSoftmax */
} q8_softmax_params;

#endif
