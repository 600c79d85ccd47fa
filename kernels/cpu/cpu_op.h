/* The CPU backend's op table: for each op id, how the CPU runs it. The op's
 * meaning (validation, shapes, params) is its core schema (src/core/op.h);
 * this is only the computation. */
#ifndef Q8_KERNELS_CPU_CPU_OP_H
#define Q8_KERNELS_CPU_CPU_OP_H

#include "op.h"
#include "threadpool.h"

/* What run sees: the graph (shapes, params), one data pointer per tensor,
 * the node's scratch and what prepare made for it. */
typedef struct q8_exec {
    const q8_graph *g;
    void *const *ptr;       /* per tensor index: data, or NULL if unused */
    q8_pool *pool;          /* may be NULL: run serially */
    void *scratch;          /* the node's scratch bytes, 64-byte aligned */
    const void *prep;       /* what prepare made (NULL without prepare) */
} q8_exec;

/* What prepare knows of the session it prepares for. */
typedef struct q8_prep_env {
    /* The session frees the constants each node reads only through prep
     * (packed_input) once every reader is prepared (a session that owns
     * its model, as q8run's): a compact copy made in prep then replaces
     * the loader's rather than adding to it. */
    bool releases;
} q8_prep_env;

typedef struct q8_cpu_op {
    /* Optional, once per session: derive the kernel's data from the node's
     * constants (packed weights, the kernel chosen for this CPU) into one
     * q8_aligned_alloc'd blob *prep of *bytes bytes (counted as weights),
     * owned and freed by the session. A weight already in the layout the
     * kernel reads (t->layout, core/layout.h: a .q8 stores them so) is
     * pointed at, not copied; the blob may hold that pointer. */
    q8_status (*prepare)(const q8_graph *g, const q8_node *n, const q8_prep_env *env,
                         void **prep, size_t *bytes, q8_error *err);
    /* Compute; never fails (the schema's infer checked the node). NULL for
     * views (Q8_OPF_VIEW), which the planner aliases. */
    void (*run)(const q8_exec *x, const q8_node *n);
    /* Optional: scratch bytes run needs with n_threads threads. */
    size_t (*scratch)(const q8_graph *g, const q8_node *n, const void *prep, int n_threads);
    /* Optional: true when run reads the constant input j only through prep
     * (prepare packed it), so the graph's own copy may be released
     * (q8_session_release_model_weights). NULL: run reads every input. */
    bool (*packed_input)(const void *prep, int j);
} q8_cpu_op;

#define Q8_CPU_DECLARE_(ID, sym, domain, name) extern const q8_cpu_op q8_cpu_##sym;
Q8_OP_LIST(Q8_CPU_DECLARE_)
#undef Q8_CPU_DECLARE_

/* Indexed by op id: every op has a CPU entry (the CPU is the reference). */
extern const q8_cpu_op *const q8_cpu_ops[Q8_OP_COUNT];

/* Data pointer of input / output i of n. */
#define Q8_IN_PTR(x, n, i) ((x)->ptr[(n)->inputs[i]])
#define Q8_OUT_PTR(x, n, i) ((x)->ptr[(n)->outputs[i]])

#endif
