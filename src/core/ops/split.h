/* Split along one axis into the outputs. Sizes: the constant input 1 if
 * given; else equal parts, which must divide the dim evenly, or with
 * `num_outputs` ceil-sized parts where the last ones may be smaller. */
#ifndef Q8_CORE_OPS_SPLIT_H
#define Q8_CORE_OPS_SPLIT_H

#include <stddef.h>
#include <stdint.h>

/* The most outputs (and split sizes) a Split may have. */
#define Q8_SPLIT_MAX_OUT 4096

typedef struct q8_split_params {
    int axis;           /* in [0, rank) */
    int n;              /* outputs */
    size_t esize;       /* element size in bytes */
    int64_t sizes[];    /* n sizes along the axis */
} q8_split_params;

#endif
