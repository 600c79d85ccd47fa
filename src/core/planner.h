/* Static memory plan: one arena holds every activation and each node's
 * scratch. Tensors that alias (views, in-place ops) share a buffer, and so
 * do a Concat's inputs, each written as a slice of its output (outputs with
 * nothing before the axis); buffers whose lifetimes do not overlap share
 * bytes (greedy by size). */
#ifndef Q8_PLANNER_H
#define Q8_PLANNER_H

#include "graph.h"

#define Q8_PLAN_NONE SIZE_MAX

typedef struct q8_plan {
    int n_tensors, n_nodes;
    size_t arena_bytes;         /* planned peak */
    size_t *offset;             /* per tensor; Q8_PLAN_NONE: constant or unused */
    size_t *scratch_offset;     /* per node */
    size_t *scratch_bytes;      /* per node */
    int *buffer;                /* per tensor: buffer id, -1 if none (for tests) */
    int64_t *first, *last;      /* per buffer: lifetime in node steps */
    size_t *size;               /* per buffer */
    int n_buffers;
} q8_plan;

/* scratch_bytes(g, i, ctx) gives node i's scratch need (may be NULL). */
typedef size_t (*q8_scratch_fn)(const q8_graph *g, int node, void *ctx);
q8_status q8_plan_build(const q8_graph *g, q8_scratch_fn scratch_bytes, void *ctx, q8_plan *p,
                        q8_error *err);
void q8_plan_free(q8_plan *p);
/* The placement q8_plan_build makes, on bare buffers (bytes, first and
 * last step alive): each buffer's offset in off; returns the arena's bytes
 * (SIZE_MAX when out of memory). For tests. */
size_t q8_plan_place(const size_t *size, const int64_t *first, const int64_t *last, int n,
                     size_t *off);

#endif
