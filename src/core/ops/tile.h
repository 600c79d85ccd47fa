/* Tile: out dim k = in dim k * repeats[k] (repeats: the constant input 1);
 * out[i] = in[i mod in dims]. */
#ifndef Q8_CORE_OPS_TILE_H
#define Q8_CORE_OPS_TILE_H

#include <stddef.h>

typedef struct q8_tile_params {
    size_t esize;   /* element size in bytes */
} q8_tile_params;

#endif
