/* Cloning a Loop's or Scan's body into the flat graph once per iteration
 * (src/passes/loop.c). Nodes made are queued and go into the graph, after
 * the Loop or Scan node, in q8_unroll_finish. */
#ifndef Q8_UNROLL_H
#define Q8_UNROLL_H

#include "graph.h"

typedef struct q8_unroll {
    q8_graph *g;
    const q8_node *n;   /* the Loop or Scan */
    q8_graph *b;        /* its body */
    int *consts;        /* per body tensor: its constant, moved into g; else -1 */
    q8_node **nodes;    /* queued */
    int count, cap;
} q8_unroll;

/* Refuses a body with subgraphs of its own (nested control flow); moves the
 * body's constants into g. */
q8_status q8_unroll_init(q8_unroll *u, q8_graph *g, const q8_node *n, q8_graph *b,
                         q8_error *err);
void q8_unroll_free(q8_unroll *u);
/* One iteration: the body's nodes cloned as "<node>/<tag>/<body node>",
 * reading in[k] for body input k; out[k] gets body output k's tensor. */
q8_status q8_unroll_body(q8_unroll *u, const char *tag, const int *in, int *out, q8_error *err);
/* A new node "<node>/<what>": op(in) -> out. */
q8_status q8_unroll_op(q8_unroll *u, const char *what, const char *op, const int *in, int n_in,
                       int out, q8_node **made, q8_error *err);
/* A new tensor named after the node; -1 when out of memory. */
int q8_unroll_tensor(q8_unroll *u, const char *tag);
/* A new constant tensor; -1 when out of memory. */
int q8_unroll_const(q8_unroll *u, const char *tag, q8_dtype dt, const int64_t *dims, int nd,
                    const void *bytes);
/* out = the parts stacked along a new axis (Unsqueeze each, Concat). */
q8_status q8_unroll_stack(q8_unroll *u, const char *what, const int *parts, int count,
                          int64_t axis, int out, q8_error *err);
/* Put the queued nodes after the node at pos, which is marked dead. */
q8_status q8_unroll_finish(q8_unroll *u, int pos, q8_error *err);

#endif
