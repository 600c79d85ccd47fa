/* The CUDA plans of the shape and data-movement ops, generic over element
 * size (1, 2, 4, 8 bytes), so they move int8 activations as well as
 * float32: views (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout:
 * no kernel, the planner aliases them), Transpose and Slice (a strided
 * copy, kernels/common/strided.h), Concat, Pad, Gather. They read the core
 * params (src/core/ops/transpose.h, slice.h, concat.h, pad.h, gather.h),
 * which infer validated. */
#include <string.h>

#include "backend_cuda.h"
#include "op.h"
#include "ops/concat.h"
#include "ops/gather.h"
#include "ops/pad.h"
#include "ops/slice.h"
#include "ops/tensor_args.h"
#include "ops/transpose.h"
#include "strided.h"

#define PARAMS(T, var)                                                                 \
    T *var = q8_cu_params(nd, sizeof *var);                                            \
    if (!var) return q8_fail(err, Q8_ERR_NOMEM, "out of memory")

static q8_status elem_size(const q8_graph *g, const q8_node *n, int i, int *es, q8_error *err) {
    size_t s = q8_dtype_size(q8_in(g, n, i)->dtype);
    if (s != 1 && s != 2 && s != 4 && s != 8)
        return q8_cu_unsupported(err, n, "%s data", q8_dtype_name(q8_in(g, n, i)->dtype));
    *es = (int)s;
    return Q8_OK;
}

/* ---- views ------------------------------------------------------------------- */

typedef struct copy_cu {
    const void *src;
    void *dst;
    size_t bytes;
} copy_cu;

static q8_status copy_run(cu_ctx *c, const q8_node *n, void *pp, q8_error *err) {
    copy_cu *p = pp;
    const q8cu_stream *s = q8_cu_stream(c);
    if (s->emu) {
        memcpy(p->dst, p->src, p->bytes);
        return Q8_OK;
    }
    return q8_cu_launch_check(cudaMemcpyAsync(p->dst, p->src, p->bytes, cudaMemcpyDeviceToDevice,
                                              s->stream), n, "copy", err);
}

q8_status q8_cu_view_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                           q8_error *err) {
    if (!(q8_op_flags(n->op) & Q8_OPF_VIEW))
        return q8_cu_unsupported(err, n, "this form (a mask output)");
    const q8_tensor *x = q8_in(g, n, 0);
    if (!x->data) return Q8_OK; /* the planner gives the output the input's buffer */
    /* a view of a constant (normally folded away): copy it into the arena */
    PARAMS(copy_cu, p);
    p->src = q8_cu_tensor(pr, g, n->inputs[0]);
    p->dst = q8_cu_tensor(pr, g, n->outputs[0]);
    p->bytes = q8_tensor_nbytes(x);
    nd->run = copy_run;
    return Q8_OK;
}

/* ---- Transpose / Slice --------------------------------------------------------- */

static q8_status strided_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_strided_copy(q8_cu_stream(c), p), n, n->op_type, err);
}

static q8_status strided_finish(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                                const q8_strided *s, int es, q8_error *err) {
    PARAMS(q8cu_strided_args, p);
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    p->n = q8_tensor_numel(q8_out(g, n, 0));
    p->offset = s->offset;
    p->ndim = s->ndim;
    p->esize = es;
    for (int d = 0; d < s->ndim; d++) {
        p->dims[d] = s->dims[d];
        p->stride[d] = s->stride[d];
    }
    nd->run = strided_run;
    return Q8_OK;
}

q8_status q8_cu_transpose_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                                q8_error *err) {
    const q8_transpose_params *tp = n->params;
    int es = 1;
    Q8_TRY(elem_size(g, n, 0, &es, err));
    const q8_tensor *x = q8_in(g, n, 0);
    q8_strided s;
    q8_strided_permute(&s, x->dims, x->ndim, tp->perm, (size_t)es);
    return strided_finish(pr, g, n, nd, &s, es, err);
}

q8_status q8_cu_slice_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                            q8_error *err) {
    const q8_slice_params *sp = n->params;
    int es = 1;
    Q8_TRY(elem_size(g, n, 0, &es, err));
    const q8_tensor *x = q8_in(g, n, 0), *y = q8_out(g, n, 0);
    q8_strided s;
    q8_strided_slice(&s, x->dims, x->ndim, sp->start, sp->step, y->dims, (size_t)es);
    return strided_finish(pr, g, n, nd, &s, es, err);
}

/* ---- Concat --------------------------------------------------------------------- */

typedef struct concat_cu {
    int n;
    q8cu_rowcopy_args *parts;
} concat_cu;

static void concat_free(void *pp) { free(((concat_cu *)pp)->parts); }

static q8_status concat_run(cu_ctx *c, const q8_node *n, void *pp, q8_error *err) {
    concat_cu *p = pp;
    for (int i = 0; i < p->n; i++)
        Q8_TRY(q8_cu_launch_check(q8cu_rowcopy(q8_cu_stream(c), &p->parts[i]), n, "Concat", err));
    return Q8_OK;
}

q8_status q8_cu_concat_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                             q8_error *err) {
    int es = 1;
    Q8_TRY(elem_size(g, n, 0, &es, err));
    const q8_tensor *y = q8_out(g, n, 0);
    int axis = ((const q8_concat_params *)n->params)->axis;
    PARAMS(concat_cu, p);
    nd->free_params = concat_free;
    if (!(p->parts = calloc((size_t)n->n_inputs + 1, sizeof *p->parts)))
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    int64_t inner = q8_ta_prod(y->dims, axis + 1, y->ndim), rows = q8_ta_prod(y->dims, 0, axis);
    int64_t y_row = y->dims[axis] * inner, off = 0;
    void *Y = q8_cu_tensor(pr, g, n->outputs[0]);
    for (int i = 0; i < n->n_inputs; i++) {
        const q8_tensor *t = q8_in(g, n, i);
        int64_t row_n = t->dims[axis] * inner;
        void *X = q8_cu_tensor(pr, g, n->inputs[i]);
        /* an input the memory plan put inside the output is there already */
        bool in_place = Y && rows == 1 && X == (void *)((char *)Y + off * es);
        if (!in_place)
            p->parts[p->n++] = (q8cu_rowcopy_args){.x = X, .y = Y, .rows = rows, .row_n = row_n,
                                                   .y_row_n = y_row, .y_off = off, .esize = es};
        off += row_n;
    }
    nd->run = concat_run;
    return Q8_OK;
}

/* ---- Pad ------------------------------------------------------------------------ */

static q8_status pad_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_pad(q8_cu_stream(c), p), n, n->op_type, err);
}

q8_status q8_cu_pad_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                          q8_error *err) {
    const q8_pad_params *pp = n->params;
    int es = 1;
    Q8_TRY(elem_size(g, n, 0, &es, err));
    const q8_tensor *x = q8_in(g, n, 0), *y = q8_out(g, n, 0);
    int r = x->ndim;
    PARAMS(q8cu_pad_args, p);
    if (pp->value_input) {
        const q8_tensor *cv = q8_in(g, n, 2);
        if (!cv->data) return q8_cu_unsupported(err, n, "a computed constant_value");
        memcpy(p->value, cv->data, (size_t)es);
    } else {
        memset(p->value, 0, sizeof p->value);
    }
    switch (pp->mode) {
    case Q8_PAD_CONSTANT: p->mode = Q8CU_PAD_CONSTANT; break;
    case Q8_PAD_REFLECT: p->mode = Q8CU_PAD_REFLECT; break;
    case Q8_PAD_EDGE: p->mode = Q8CU_PAD_EDGE; break;
    case Q8_PAD_WRAP: p->mode = Q8CU_PAD_WRAP; break;
    }
    for (int d = 0; d < r; d++) {
        p->pb[d] = pp->pb[d];
        p->xdims[d] = x->dims[d];
        p->ydims[d] = y->dims[d];
    }
    p->ndim = r;
    p->esize = es;
    p->n = q8_tensor_numel(y);
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    nd->run = pad_run;
    return Q8_OK;
}

/* ---- Gather --------------------------------------------------------------------- */

static q8_status gather_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_gather(q8_cu_stream(c), p), n, n->op_type, err);
}

q8_status q8_cu_gather_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                             q8_error *err) {
    int es = 1;
    Q8_TRY(elem_size(g, n, 0, &es, err));
    const q8_tensor *x = q8_in(g, n, 0), *it = q8_in(g, n, 1);
    int axis = ((const q8_gather_params *)n->params)->axis;
    PARAMS(q8cu_gather_args, p);
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->idx = q8_cu_tensor(pr, g, n->inputs[1]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    p->outer = q8_ta_prod(x->dims, 0, axis);
    p->nidx = q8_tensor_numel(it);
    p->dim = x->dims[axis];
    p->blk = q8_ta_prod(x->dims, axis + 1, x->ndim);
    p->esize = es;
    p->idx64 = it->dtype == Q8_I64;
    nd->run = gather_run;
    return Q8_OK;
}
