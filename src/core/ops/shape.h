/* Shape and Size: int64 results that depend only on the input's shape, so
 * they are always folded to constants. Shape takes start/end attributes,
 * clamped to [0, rank] after adding the rank to negative values. Size has
 * no params. */
#ifndef Q8_CORE_OPS_SHAPE_H
#define Q8_CORE_OPS_SHAPE_H

typedef struct q8_shape_params {
    int start, end;     /* the input dims [start, end), 0 <= start <= end <= rank */
} q8_shape_params;

#endif
