/* Loop and Scan whose iteration counts are known at load, unrolled into the
 * flat graph (docs/architecture.md, "Control flow"): each iteration is a
 * copy of the body reading the previous copy's loop-carried outputs, scan
 * outputs are stacked with Unsqueeze + Concat. The copies are then ordinary
 * nodes: shapes are inferred, constants folded (the iteration number is a
 * constant in each copy), quantized and saved like any others. */
#include <string.h>

#include "control.h"
#include "passes.h"
#include "unroll.h"

/* The most body nodes an unrolled Loop or Scan may add to the graph. */
#define UNROLL_MAX_NODES 65536

static q8_status body_of(const q8_node *n, q8_graph **out, q8_error *err) {
    const q8_attr *a = q8_attr_find(n, "body");
    if (!a || a->type != Q8_ATTR_GRAPH || !a->g)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "missing its body");
    *out = a->g;
    return Q8_OK;
}

static q8_status check_size(const q8_node *n, const q8_graph *b, int64_t iters,
                            q8_error *err) {
    int64_t per = b->n_nodes + 2;
    if (iters > UNROLL_MAX_NODES / per)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "runs %lld times over a body of %d "
                            "nodes: more than the %d nodes q8 unrolls", (long long)iters,
                            b->n_nodes, UNROLL_MAX_NODES);
    return Q8_OK;
}

/* The Loop's condition as the body leaves it: 1 (the body passes cond_in
 * on, or makes a constant true), 0 (a constant false: the body runs once),
 * or -1 (computed from data: not supported). */
static int body_cond(const q8_graph *b) {
    int t = b->outputs[0];
    for (int hops = 0; hops <= b->n_nodes; hops++) {
        if (b->n_inputs > 1 && t == b->inputs[1]) return 1;
        const q8_tensor *bt = b->tensors[t];
        if (bt->data) return q8_tensor_numel(bt) == 1 && q8_cond_value(bt->data, bt->dtype);
        const q8_node *p = NULL;
        for (int j = 0; j < b->n_nodes && !p; j++)
            for (int k = 0; k < b->nodes[j]->n_outputs; k++)
                if (b->nodes[j]->outputs[k] == t) p = b->nodes[j];
        if (!p) return -1;
        if (strcmp(p->op_type, "Constant") == 0) {
            const q8_attr *v = q8_attr_find(p, "value");
            if (!v || v->type != Q8_ATTR_TENSOR || !v->t || !v->t->data) return -1;
            return q8_tensor_numel(v->t) == 1 && q8_cond_value(v->t->data, v->t->dtype);
        }
        if (strcmp(p->op_type, "Identity") != 0 || p->n_inputs < 1 || p->inputs[0] < 0) return -1;
        t = p->inputs[0];
    }
    return -1;
}

/* Input i of n, which must be a one-value constant known at load. */
static q8_status load_value(const q8_graph *g, const q8_node *n, int i, const char *what,
                            const q8_tensor **out, q8_error *err) {
    const q8_tensor *t = q8_in(g, n, i);
    if (!t->data)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input %d ('%s') must be a constant: "
                            "%s decides how many times the body runs, and q8 supports only "
                            "Loops whose trip count is known at load (bind the input it "
                            "comes from: --bind)", i, t->name, what);
    if (q8_tensor_numel(t) != 1)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input %d ('%s') must hold one value",
                            i, t->name);
    *out = t;
    return Q8_OK;
}

/* Loop-carried values and scan outputs after the last iteration: Identity
 * onto dst (the node's outputs; -1: unused), stacks for the scans (reversed
 * where asked); node names start with pre. */
static q8_status finish_outputs(q8_unroll *u, const char *pre, const int *dst,
                                const int *carried, int n_carried, int **scans, int n_scans,
                                int64_t iters, const int64_t *axes, const int64_t *rev,
                                q8_error *err) {
    for (int k = 0; k < n_carried; k++) {
        if (dst[k] < 0) continue;
        char what[64];
        snprintf(what, sizeof what, "%sfinal_%d", pre, k);
        Q8_TRY(q8_unroll_op(u, what, "Identity", &carried[k], 1, dst[k], NULL, err));
    }
    for (int k = 0; k < n_scans; k++) {
        if (dst[n_carried + k] < 0) continue;
        if (rev && rev[k])
            for (int64_t i = 0; i < iters / 2; i++) {
                int tmp = scans[k][i];
                scans[k][i] = scans[k][iters - 1 - i];
                scans[k][iters - 1 - i] = tmp;
            }
        char what[64];
        snprintf(what, sizeof what, "%sscan_%d", pre, k);
        Q8_TRY(q8_unroll_stack(u, what, scans[k], (int)iters, axes ? axes[k] : 0,
                               dst[n_carried + k], err));
    }
    return Q8_OK;
}

static int **scans_new(int n_scans, int64_t iters) {
    int **s = calloc((size_t)n_scans + 1, sizeof *s);
    for (int k = 0; s && k < n_scans; k++)
        if (!(s[k] = malloc(sizeof(int) * ((size_t)iters + 1)))) {
            for (int j = 0; j < k; j++) free(s[j]);
            free(s);
            return NULL;
        }
    return s;
}

static void scans_free(int **s, int n_scans) {
    for (int k = 0; s && k < n_scans; k++) free(s[k]);
    free(s);
}

static q8_status loop_iterations(const q8_graph *g, const q8_node *n, const q8_graph *b,
                                 int64_t *iters, q8_error *err) {
    if (n->n_inputs < 2 || n->inputs[0] < 0)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "has no trip count (M): a Loop that "
                            "runs until a condition computed at run time is not supported");
    const q8_tensor *m;
    Q8_TRY(load_value(g, n, 0, "the trip count M", &m, err));
    if (m->dtype != Q8_I64 && m->dtype != Q8_I32)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "trip count '%s' must be int64, not %s",
                            m->name, q8_dtype_name(m->dtype));
    int64_t count = m->dtype == Q8_I64 ? *(const int64_t *)m->data : *(const int32_t *)m->data;
    bool cond = true;
    if (n->inputs[1] >= 0) {
        const q8_tensor *c;
        Q8_TRY(load_value(g, n, 1, "the condition", &c, err));
        cond = q8_cond_value(c->data, c->dtype);
    }
    int keeps = body_cond(b);
    if (keeps < 0)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "its body computes the loop condition "
                            "('%s') from data: only Loops whose trip count is known at load "
                            "are supported", b->tensors[b->outputs[0]]->name);
    if (!cond || count < 0) count = 0;
    if (!keeps && count > 1) count = 1;
    *iters = count;
    return Q8_OK;
}

q8_status q8_unroll_loop(q8_graph *g, int pos, q8_error *err) {
    q8_node *n = g->nodes[pos];
    q8_graph *b = NULL;
    Q8_TRY(body_of(n, &b, err));
    int nc = n->n_inputs - 2, ns = n->n_outputs - nc;
    if (nc < 0 || ns < 0 || b->n_inputs != nc + 2 || b->n_outputs != 1 + nc + ns)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "has %d inputs and %d outputs, its body %d "
                            "and %d: expected 2 + N and N + K, the body 2 + N and 1 + N + K",
                            n->n_inputs, n->n_outputs, b->n_inputs, b->n_outputs);
    int64_t iters = 0;
    Q8_TRY(loop_iterations(g, n, b, &iters, err));
    Q8_TRY(check_size(n, b, iters, err));
    if (iters == 0 && ns > 0)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "runs zero times, so its scan outputs "
                            "have no shape");
    q8_unroll u;
    q8_status st = q8_unroll_init(&u, g, n, b, err);
    int *in = malloc(sizeof(int) * ((size_t)b->n_inputs + 1));
    int *out = malloc(sizeof(int) * ((size_t)b->n_outputs + 1));
    int **scans = scans_new(ns, iters);
    if (st == Q8_OK && (!in || !out || !scans)) st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int k = 0; st == Q8_OK && k < nc; k++) in[2 + k] = n->inputs[2 + k];
    uint8_t yes = 1;
    if (st == Q8_OK) {
        in[1] = n->inputs[1] >= 0 ? n->inputs[1]
                                  : q8_unroll_const(&u, "cond", Q8_BOOL, NULL, 0, &yes);
        if (in[1] < 0) st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    for (int64_t it = 0; st == Q8_OK && it < iters; it++) {
        char tag[32];
        snprintf(tag, sizeof tag, "iter%lld", (long long)it);
        in[0] = q8_unroll_const(&u, tag, Q8_I64, NULL, 0, &it);
        st = in[0] < 0 ? q8_fail(err, Q8_ERR_NOMEM, "out of memory")
                       : q8_unroll_body(&u, tag, in, out, err);
        for (int k = 0; st == Q8_OK && k < nc; k++) in[2 + k] = out[1 + k];
        for (int k = 0; st == Q8_OK && k < ns; k++) scans[k][it] = out[1 + nc + k];
    }
    if (st == Q8_OK)
        st = finish_outputs(&u, "", n->outputs, in + 2, nc, scans, ns, iters, NULL, NULL, err);
    if (st == Q8_OK) st = q8_unroll_finish(&u, pos, err);
    scans_free(scans, ns);
    free(in);
    free(out);
    q8_unroll_free(&u);
    return st;
}

/* A Scan list attribute of len values (default 0), each checked. */
static q8_status scan_list(const q8_node *n, const char *name, int len, int64_t *out,
                           q8_error *err) {
    int cnt = 0;
    const int64_t *v = q8_attr_ints(n, name, &cnt);
    if (v && cnt != len)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s has %d values, expected %d", name, cnt,
                            len);
    for (int i = 0; i < len; i++) out[i] = v ? v[i] : 0;
    return Q8_OK;
}

/* The scan inputs' sequence length along their axes (normalized in ax). */
static q8_status scan_length(const q8_graph *g, const q8_node *n, int nc, int nsi, int64_t *ax,
                             const int64_t *dir, int64_t *len, q8_error *err) {
    *len = -1;
    for (int j = 0; j < nsi; j++) {
        const q8_tensor *x = q8_in(g, n, nc + j);
        if (!x || !x->shape_known)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "scan input %d has no known shape", j);
        if (ax[j] < -x->ndim || ax[j] >= x->ndim)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "scan_input_axes[%d] = %lld is out of "
                                "range for rank %d", j, (long long)ax[j], x->ndim);
        if (ax[j] < 0) ax[j] += x->ndim;
        if (dir[j] != 0 && dir[j] != 1)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "scan_input_directions[%d] = %lld, "
                                "expected 0 or 1", j, (long long)dir[j]);
        int64_t l = x->dims[ax[j]];
        if (*len >= 0 && l != *len)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "scan input %d has %lld steps, input 0 "
                                "%lld", j, (long long)l, (long long)*len);
        *len = l;
    }
    return Q8_OK;
}

/* The lists and counts of a Scan: nc states, nsi scan inputs, ns scan
 * outputs; axes and directions (opset 8: time is axis 1 of the batched
 * inputs, axis 0 once a batch row is taken; outputs along it). */
typedef struct scan_form {
    int nc, nsi, ns;
    int64_t *iax, *idir, *oax, *odir, len;
} scan_form;

/* Steps 0..len-1 over the scan inputs ins[nc..] from states ins[0..nc),
 * results onto dst (nc + ns tensors); names start with pre. */
static q8_status scan_steps(q8_unroll *u, const scan_form *f, const char *pre, const int *ins,
                            const int *dst, q8_error *err) {
    const q8_graph *b = u->b;
    int nc = f->nc, ns = f->ns;
    int *in = malloc(sizeof(int) * ((size_t)b->n_inputs + 1));
    int *out = malloc(sizeof(int) * ((size_t)b->n_outputs + 1));
    int **scans = scans_new(ns, f->len);
    q8_status st = in && out && scans ? Q8_OK : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int k = 0; st == Q8_OK && k < nc; k++) in[k] = ins[k];
    for (int64_t t = 0; st == Q8_OK && t < f->len; t++) {
        char tag[64];
        /* each scan input's slice t (from the end where reversed): Gather */
        for (int j = 0; st == Q8_OK && j < f->nsi; j++) {
            int64_t at = f->idir[j] ? f->len - 1 - t : t;
            snprintf(tag, sizeof tag, "%sstep%lld_in%d", pre, (long long)t, j);
            int idx = q8_unroll_const(u, tag, Q8_I64, NULL, 0, &at);
            in[nc + j] = q8_unroll_tensor(u, tag);
            int gin[2] = {ins[nc + j], idx};
            q8_node *gn = NULL;
            st = idx < 0 || in[nc + j] < 0
                     ? q8_fail(err, Q8_ERR_NOMEM, "out of memory")
                     : q8_unroll_op(u, tag, "Gather", gin, 2, in[nc + j], &gn, err);
            q8_attr *a = st == Q8_OK ? q8_node_set_attr(gn, "axis", Q8_ATTR_INT) : NULL;
            if (st == Q8_OK && !a) st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            if (a) a->i = f->iax[j];
        }
        snprintf(tag, sizeof tag, "%sstep%lld", pre, (long long)t);
        if (st == Q8_OK) st = q8_unroll_body(u, tag, in, out, err);
        for (int k = 0; st == Q8_OK && k < nc; k++) in[k] = out[k];
        for (int k = 0; st == Q8_OK && k < ns; k++) scans[k][t] = out[nc + k];
    }
    if (st == Q8_OK)
        st = finish_outputs(u, pre, dst, in, nc, scans, ns, f->len, f->oax, f->odir, err);
    scans_free(scans, ns);
    free(in);
    free(out);
    return st;
}

/* Scan of opset 8: inputs [sequence_lens, states, scan inputs], all with a
 * batch axis 0. Each batch row is a Scan of its own (rows taken with
 * Gather), its results stacked along axis 0. */
static q8_status scan_batched(q8_unroll *u, const scan_form *f, int64_t batch, q8_error *err) {
    const q8_node *n = u->n;
    int nin = f->nc + f->nsi, nout = f->nc + f->ns;
    int *ins = malloc(sizeof(int) * ((size_t)nin + 1));
    int *dst = malloc(sizeof(int) * ((size_t)nout + 1));
    int **rows = scans_new(nout, batch);
    q8_status st = ins && dst && rows ? Q8_OK : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int64_t r = 0; st == Q8_OK && r < batch; r++) {
        char pre[48];
        for (int k = 0; st == Q8_OK && k < nin; k++) {
            snprintf(pre, sizeof pre, "row%lld_in%d", (long long)r, k);
            int idx = q8_unroll_const(u, pre, Q8_I64, NULL, 0, &r);
            ins[k] = q8_unroll_tensor(u, pre);
            int gin[2] = {n->inputs[1 + k], idx};
            st = idx < 0 || ins[k] < 0 ? q8_fail(err, Q8_ERR_NOMEM, "out of memory")
                                       : q8_unroll_op(u, pre, "Gather", gin, 2, ins[k], NULL,
                                                      err); /* axis 0: the default */
        }
        for (int k = 0; st == Q8_OK && k < nout; k++) {
            snprintf(pre, sizeof pre, "row%lld_out%d", (long long)r, k);
            dst[k] = rows[k][r] = n->outputs[k] >= 0 ? q8_unroll_tensor(u, pre) : -1;
            if (n->outputs[k] >= 0 && dst[k] < 0) st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        }
        snprintf(pre, sizeof pre, "row%lld/", (long long)r);
        if (st == Q8_OK) st = scan_steps(u, f, pre, ins, dst, err);
    }
    for (int k = 0; st == Q8_OK && k < nout; k++) {
        if (n->outputs[k] < 0) continue;
        char what[32];
        snprintf(what, sizeof what, "rows_%d", k);
        st = q8_unroll_stack(u, what, rows[k], (int)batch, 0, n->outputs[k], err);
    }
    scans_free(rows, nout);
    free(ins);
    free(dst);
    return st;
}

q8_status q8_unroll_scan(q8_graph *g, int pos, q8_error *err) {
    q8_node *n = g->nodes[pos];
    q8_graph *b = NULL;
    Q8_TRY(body_of(n, &b, err));
    bool v8 = q8_attr_int(n, Q8_SCAN8_ATTR, 0) != 0; /* set by q8_pass_canonicalize */
    int first = v8 ? 1 : 0, n_in = n->n_inputs - first;
    int64_t nsi = q8_attr_int(n, "num_scan_inputs", 0);
    if (nsi < 1 || nsi > n_in)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "num_scan_inputs is %lld, expected 1 to %d",
                            (long long)nsi, n_in);
    scan_form f = {.nc = n_in - (int)nsi, .nsi = (int)nsi, .ns = n->n_outputs - (n_in - (int)nsi)};
    if (f.ns < 0 || b->n_inputs != n_in || b->n_outputs != n->n_outputs)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "has %d inputs and %d outputs, its body %d "
                            "and %d (expected the same)", n_in, n->n_outputs, b->n_inputs,
                            b->n_outputs);
    if (v8 && n->n_inputs > 0 && n->inputs[0] >= 0)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "sequence_lens is given: sequences of "
                            "different lengths in one batch are not supported");
    for (int k = first; k < n->n_inputs; k++)
        if (n->inputs[k] < 0) return q8_node_fail(err, Q8_ERR_FORMAT, n, "input %d is missing", k);
    int64_t *lists = malloc(sizeof(int64_t) * (2 * (size_t)nsi + 2 * (size_t)f.ns + 1));
    if (!lists) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    f.iax = lists, f.idir = f.iax + nsi, f.oax = f.idir + nsi, f.odir = f.oax + f.ns;
    q8_status st = Q8_OK;
    int64_t batch = 1;
    if (v8) {
        /* time is axis 1 of a batched input, axis 0 of a row */
        st = scan_list(n, "directions", (int)nsi, f.idir, err);
        for (int j = 0; j < nsi; j++) f.iax[j] = 1;
        for (int k = 0; k < f.ns; k++) f.oax[k] = f.odir[k] = 0;
        const q8_tensor *x0 = q8_in(g, n, 1);
        if (st == Q8_OK && (!x0 || !x0->shape_known || x0->ndim < 1))
            st = q8_node_fail(err, Q8_ERR_SHAPE, n, "input 1 has no known batch axis");
        if (st == Q8_OK) batch = x0->dims[0];
    } else {
        st = scan_list(n, "scan_input_axes", (int)nsi, f.iax, err);
        if (st == Q8_OK) st = scan_list(n, "scan_input_directions", (int)nsi, f.idir, err);
        if (st == Q8_OK) st = scan_list(n, "scan_output_axes", f.ns, f.oax, err);
        if (st == Q8_OK) st = scan_list(n, "scan_output_directions", f.ns, f.odir, err);
    }
    if (st == Q8_OK) st = scan_length(g, n, first + f.nc, (int)nsi, f.iax, f.idir, &f.len, err);
    if (st == Q8_OK) st = check_size(n, b, batch * f.len * (1 + nsi), err);
    if (st == Q8_OK && (f.len == 0 || batch == 0) && f.ns > 0)
        st = q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "scans zero steps, so its scan outputs "
                          "have no shape");
    if (v8 && f.iax) /* a row's time axis */
        for (int j = 0; j < nsi; j++) f.iax[j] = 0;
    q8_unroll u;
    memset(&u, 0, sizeof u);
    if (st == Q8_OK) st = q8_unroll_init(&u, g, n, b, err);
    if (st == Q8_OK)
        st = v8 ? scan_batched(&u, &f, batch, err)
                : scan_steps(&u, &f, "", n->inputs, n->outputs, err);
    if (st == Q8_OK) st = q8_unroll_finish(&u, pos, err);
    free(lists);
    q8_unroll_free(&u);
    return st;
}
