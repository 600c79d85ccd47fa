/* q8.If: the join of an If whose branches are scopes of the graph
 * (src/core/control.h). Inputs [cond, then outputs (n_out), else outputs
 * (n_out)], outputs n_out; output k is a copy of then output k when cond is
 * true, else of else output k. */
#ifndef Q8_CORE_OPS_IF_H
#define Q8_CORE_OPS_IF_H

typedef struct q8_if_params {
    int n_out;
    int then_scope, else_scope;
    /* [0] then, [1] else: why that side cannot run at the model's shapes
     * (its nodes dropped at load, src/passes/infer.c), or NULL */
    const char *fails[2];
} q8_if_params;

#endif
