/* Control flow in a flat graph. An ONNX If with a condition computed at run
 * time becomes, at import (src/passes/infer.c):
 *
 *   the nodes of its then_branch, each with node->scope = T,
 *   the nodes of its else_branch, each with node->scope = E,
 *   one q8.If node: inputs [cond, then outputs..., else outputs...],
 *   outputs the If's, attributes then_scope = T and else_scope = E.
 *
 * Scopes nest: a q8.If inside a branch has that branch's scope, and its own
 * branches' scopes have it as parent. A node of scope S runs only when every
 * If on the way from S up to the graph chose the side S lies on; the q8.If
 * node then copies the chosen side's outputs to its own. Since only one side
 * runs, the planner lets the two sides share arena bytes. The rules below
 * (q8_graph_check_control) hold in every graph the passes make and every
 * .q8 file the runtime accepts. */
#ifndef Q8_CONTROL_H
#define Q8_CONTROL_H

#include "graph.h"

/* The scope tree of a graph. Scope ids are 0 (the graph) to n - 1. */
typedef struct q8_scopes {
    int n;
    int *owner;     /* per scope: index of the q8.If node that opens it; -1 for 0 / unused */
    bool *then_side;
    int *parent;    /* per scope: the scope of its owner; -1 for 0 / unused */
} q8_scopes;

/* Whether n is a q8.If node (op resolved or not: files are sorted before
 * their ops are resolved). */
bool q8_node_is_if(const q8_node *n);
/* Whether g has any q8.If node. */
bool q8_graph_has_control(const q8_graph *g);

/* Build the scope tree: every q8.If's then_scope and else_scope distinct,
 * positive, owned by no other If; no scope inside itself; every node's
 * scope owned by an If. */
q8_status q8_scopes_build(const q8_graph *g, q8_scopes *s, q8_error *err);
void q8_scopes_free(q8_scopes *s);
/* inner is outer or nested in it. */
bool q8_scope_within(const q8_scopes *s, int inner, int outer);
/* The innermost scope holding both. */
int q8_scope_common(const q8_scopes *s, int a, int b);
/* a and b lie on the two sides of one If: they never run in the same run. */
bool q8_scope_exclusive(const q8_scopes *s, int a, int b);

/* Check the rules of a flat graph with control flow (nodes in order):
 * a branch node comes after the conditions of all its enclosing Ifs are
 * computed and before its own If; a tensor computed in a branch is read
 * only inside that branch (nested ones included) or as that side's output
 * by its If; graph outputs are computed outside every branch. */
q8_status q8_graph_check_control(const q8_graph *g, q8_error *err);

/* Number the scopes 1, 2, ... in the order of their Ifs (passes that drop
 * Ifs leave gaps; a file's ids must stay below twice its node count).
 * Dead-node removal drops a branch's nodes with their If. */
q8_status q8_graph_renumber_scopes(q8_graph *g, q8_error *err);

/* The truth of a one-element condition of dtype dt (bool, int, float). */
bool q8_cond_value(const void *data, q8_dtype dt);

#endif
