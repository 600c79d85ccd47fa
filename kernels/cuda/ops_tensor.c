/* The CUDA plans of the shape and data-movement ops, generic over element
 * size (1, 2, 4, 8 bytes), so they move int8 activations as well as
 * float32: views (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout:
 * no kernel, the planner aliases them), Transpose and Slice (a strided
 * copy), Concat, Pad, Gather. The argument rules are those of
 * kernels/cpu/ops/transpose.c, slice.c, concat.c, pad.c and gather.c, through
 * the same helpers (tensor_util.h). */
#include <string.h>

#include "backend_cuda.h"
#include "tensor_util.h"

#define PARAMS(T, var)                                                                 \
    T *var = q8_cu_params(nd, sizeof *var);                                            \
    if (!var) return q8_fail(err, Q8_ERR_NOMEM, "out of memory")

static bool has_input(const q8_node *n, int i) { return i < n->n_inputs && n->inputs[i] >= 0; }

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
    if (!(q8_op_flags(n->op) & Q8_OPF_VIEW)) return q8_cu_unsupported(err, n, "this form (a mask output)");
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
                                q8_strided *s, int es, q8_error *err) {
    q8_tu_strided_simplify(s);
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
    int es = 1;
    Q8_TRY(elem_size(g, n, 0, &es, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int r = x->ndim, np;
    int64_t perm[Q8_MAX_DIMS], in_stride[Q8_MAX_DIMS];
    const int64_t *pa = q8_attr_ints(n, "perm", &np);
    for (int i = 0; i < r; i++) perm[i] = pa && np == r ? pa[i] : r - 1 - i;
    q8_tu_strides(x->dims, r, in_stride);
    q8_strided s = {.ndim = r, .esize = (size_t)es};
    for (int k = 0; k < r; k++) {
        s.dims[k] = x->dims[perm[k]];
        s.stride[k] = in_stride[perm[k]];
    }
    return strided_finish(pr, g, n, nd, &s, es, err);
}

q8_status q8_cu_slice_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                            q8_error *err) {
    int es = 1;
    Q8_TRY(elem_size(g, n, 0, &es, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int r = x->ndim, ns, ne, na, nst = 0;
    int64_t starts[Q8_MAX_DIMS], ends[Q8_MAX_DIMS], axes[Q8_MAX_DIMS], steps[Q8_MAX_DIMS];
    bool has_s, has_e, has_a, has_st = false;
    Q8_TRY(q8_tu_ints_arg(g, n, "starts", 10, 1, starts, Q8_MAX_DIMS, &ns, &has_s, err));
    Q8_TRY(q8_tu_ints_arg(g, n, "ends", 10, 2, ends, Q8_MAX_DIMS, &ne, &has_e, err));
    Q8_TRY(q8_tu_ints_arg(g, n, "axes", 10, 3, axes, Q8_MAX_DIMS, &na, &has_a, err));
    if (g->opset >= 10)
        Q8_TRY(q8_tu_ints_arg(g, n, "steps", 10, 4, steps, Q8_MAX_DIMS, &nst, &has_st, err));
    if (!has_s || !has_e || ns != ne || (has_a && na != ns) || (has_st && nst != ns))
        return q8_cu_unsupported(err, n, "these starts / ends / axes / steps");
    if (!has_a)
        for (int i = 0; i < ns; i++) axes[i] = i;
    if (!has_st)
        for (int i = 0; i < ns; i++) steps[i] = 1;
    Q8_TRY(q8_tu_norm_axes(n, "axes", axes, ns, r, err));
    /* kernels/cpu/ops/slice.c's clamping, step by step */
    int64_t start[Q8_MAX_DIMS], step[Q8_MAX_DIMS], stride[Q8_MAX_DIMS];
    for (int d = 0; d < r; d++) {
        start[d] = 0;
        step[d] = 1;
    }
    for (int i = 0; i < ns; i++) {
        int d = (int)axes[i];
        int64_t dim = x->dims[d], s = starts[i], e = ends[i], st = steps[i];
        if (st == 0) return q8_cu_unsupported(err, n, "a zero step");
        if (st > dim + 1) st = dim + 1;
        if (st < -dim - 1) st = -dim - 1;
        if (s < 0) s += dim;
        if (e < 0) e += dim;
        int64_t len;
        if (dim == 0) {
            len = 0;
        } else if (st > 0) {
            s = s < 0 ? 0 : s > dim ? dim : s;
            e = e < 0 ? 0 : e > dim ? dim : e;
            len = e > s ? 1 + (e - s - 1) / st : 0;
        } else {
            s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
            e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
            len = s > e ? 1 + (s - e - 1) / -st : 0;
        }
        start[d] = len ? s : 0;
        step[d] = len > 1 ? st : 1;
    }
    const q8_tensor *y = q8_out(g, n, 0);
    q8_tu_strides(x->dims, r, stride);
    q8_strided s = {.ndim = r, .esize = (size_t)es};
    for (int d = 0; d < r; d++) {
        s.offset += start[d] * stride[d];
        s.dims[d] = y->dims[d];
        s.stride[d] = step[d] * stride[d];
    }
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
    int axis;
    if (!q8_norm_axis(q8_attr_int(n, "axis", 0), y->ndim, &axis))
        return q8_cu_unsupported(err, n, "this axis");
    PARAMS(concat_cu, p);
    nd->free_params = concat_free;
    if (!(p->parts = calloc((size_t)n->n_inputs + 1, sizeof *p->parts)))
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    int64_t inner = q8_tu_prod(y->dims, axis + 1, y->ndim), rows = q8_tu_prod(y->dims, 0, axis);
    int64_t y_row = y->dims[axis] * inner, off = 0;
    void *Y = q8_cu_tensor(pr, g, n->outputs[0]);
    for (int i = 0; i < n->n_inputs; i++) {
        const q8_tensor *t = q8_in(g, n, i);
        int64_t row_n = t->dims[axis] * inner;
        p->parts[p->n++] = (q8cu_rowcopy_args){.x = q8_cu_tensor(pr, g, n->inputs[i]), .y = Y,
                                          .rows = rows, .row_n = row_n, .y_row_n = y_row,
                                          .y_off = off, .esize = es};
        off += row_n;
    }
    nd->run = concat_run;
    return Q8_OK;
}

/* ---- Pad ------------------------------------------------------------------------ */

static q8_status pad_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_pad(q8_cu_stream(c), p), n, n->op_type, err);
}

/* The opset < 11 `value` attribute as one element (kernels/cpu/ops/pad.c). */
static bool value_bytes(q8_dtype dt, float v, uint8_t *out) {
    memset(out, 0, 8);
    switch (dt) {
    case Q8_F32: memcpy(out, &v, 4); return true;
    case Q8_I8: case Q8_U8: out[0] = (uint8_t)(int64_t)v; return true;
    case Q8_BOOL: out[0] = v != 0.0f; return true;
    case Q8_I32: case Q8_U32: {
        uint32_t x = (uint32_t)(int64_t)v;
        memcpy(out, &x, 4);
        return true;
    }
    case Q8_I64: case Q8_U64: { int64_t x = (int64_t)v; memcpy(out, &x, 8); return true; }
    default: return v == 0.0f;
    }
}

q8_status q8_cu_pad_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                          q8_error *err) {
    int es = 1;
    Q8_TRY(elem_size(g, n, 0, &es, err));
    const q8_tensor *x = q8_in(g, n, 0), *y = q8_out(g, n, 0);
    int r = x->ndim, np, na = r;
    int64_t pads[2 * Q8_MAX_DIMS], axes[Q8_MAX_DIMS];
    bool present;
    Q8_TRY(q8_tu_ints_arg(g, n, "pads", 11, 1, pads, 2 * Q8_MAX_DIMS, &np, &present, err));
    PARAMS(q8cu_pad_args, p);
    if (g->opset < 11) {
        if (!value_bytes(x->dtype, q8_attr_float(n, "value", 0.0f), p->value))
            return q8_cu_unsupported(err, n, "this pad value");
    } else if (has_input(n, 2)) {
        const q8_tensor *cv = q8_in(g, n, 2);
        if (q8_tensor_numel(cv) == 1) {
            if (!cv->data) return q8_cu_unsupported(err, n, "a computed constant_value");
            memcpy(p->value, cv->data, (size_t)es);
        }
    }
    if (has_input(n, 3)) {
        Q8_TRY(q8_const_ints(g, n, 3, axes, Q8_MAX_DIMS, &na, err));
        Q8_TRY(q8_tu_norm_axes(n, "axes", axes, na, r, err));
    } else {
        for (int i = 0; i < r; i++) axes[i] = i;
    }
    if (!present || np != 2 * na) return q8_cu_unsupported(err, n, "these pads");
    const char *mode = q8_attr_str(n, "mode", "constant");
    p->mode = strcmp(mode, "reflect") == 0 ? Q8CU_PAD_REFLECT
              : strcmp(mode, "edge") == 0  ? Q8CU_PAD_EDGE
              : strcmp(mode, "wrap") == 0  ? Q8CU_PAD_WRAP
                                           : Q8CU_PAD_CONSTANT;
    for (int i = 0; i < na; i++) p->pb[axes[i]] = pads[i];
    for (int d = 0; d < r; d++) {
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
    int axis;
    if (!q8_norm_axis(q8_attr_int(n, "axis", 0), x->ndim, &axis))
        return q8_cu_unsupported(err, n, "this axis");
    PARAMS(q8cu_gather_args, p);
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->idx = q8_cu_tensor(pr, g, n->inputs[1]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    p->outer = q8_tu_prod(x->dims, 0, axis);
    p->nidx = q8_tensor_numel(it);
    p->dim = x->dims[axis];
    p->blk = q8_tu_prod(x->dims, axis + 1, x->ndim);
    p->esize = es;
    p->idx64 = it->dtype == Q8_I64;
    nd->run = gather_run;
    return Q8_OK;
}
