/* Softmax and LogSoftmax: the input seen as outer x len x inner, each of
 * the outer * inner rows of len values (stride inner) normalized. Opset < 13
 * coerces the input to 2-D at `axis` (default 1), so len is the product of
 * dims [axis, rank) and inner is 1; from 13 on len is dims[axis] alone
 * (default axis -1). */
#ifndef Q8_CORE_OPS_SOFTMAX_H
#define Q8_CORE_OPS_SOFTMAX_H

#include <stdbool.h>
#include <stdint.h>

typedef struct q8_softmax_params {
    int64_t outer, len, inner;
    bool log;                   /* LogSoftmax */
} q8_softmax_params;

#endif
