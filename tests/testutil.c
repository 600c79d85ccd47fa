#define _GNU_SOURCE /* nftw */
#include "testutil.h"

#include "backend.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model.h"
#include "npy.h"
#include "onnx.pb-c.h"
#include "passes.h"

uint64_t q8t_next(q8t_rng *r) {
    uint64_t x = r->s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return r->s = x;
}

float q8t_uniform(q8t_rng *r, float lo, float hi) {
    return lo + (hi - lo) * (float)((q8t_next(r) >> 40) / (double)(1ull << 24));
}

void q8t_fill(q8t_rng *r, float *x, int64_t n, float lo, float hi) {
    for (int64_t i = 0; i < n; i++) x[i] = q8t_uniform(r, lo, hi);
}

q8_graph *q8t_graph1(const char *op_type, const q8t_in *ins, int n_in, int n_out) {
    q8_graph *g = q8_graph_new();
    cr_assert(g);
    int in_idx[32], out_idx[32];
    g->inputs = malloc(sizeof(int) * 32);
    g->outputs = malloc(sizeof(int) * 32);
    for (int i = 0; i < n_in; i++) {
        if (!ins[i].name) {
            in_idx[i] = -1;
            continue;
        }
        int t = q8_graph_add_tensor(g, ins[i].name, NULL);
        cr_assert(t >= 0);
        q8_tensor *tt = g->tensors[t];
        q8_tensor_set_shape(tt, ins[i].dtype, ins[i].dims, ins[i].ndim);
        if (ins[i].data) {
            cr_assert(q8_tensor_alloc_data(tt, NULL) == Q8_OK);
            memcpy(tt->data, ins[i].data, q8_tensor_nbytes(tt));
        } else {
            g->inputs[g->n_inputs++] = t;
        }
        in_idx[i] = t;
    }
    for (int i = 0; i < n_out; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "out%d", i);
        out_idx[i] = q8_graph_add_tensor(g, nm, NULL);
        g->outputs[g->n_outputs++] = out_idx[i];
    }
    int ni = q8_graph_add_node(g, "node", op_type);
    cr_assert(ni >= 0);
    cr_assert(q8_node_set_io(g->nodes[ni], in_idx, n_in, out_idx, n_out, NULL) == Q8_OK);
    return g;
}

static q8_attr *new_attr(q8_graph *g, const char *name, q8_attr_type type) {
    q8_node *n = g->nodes[g->n_nodes - 1];
    n->attrs = realloc(n->attrs, sizeof(q8_attr) * (size_t)(n->n_attrs + 1));
    q8_attr *a = &n->attrs[n->n_attrs++];
    memset(a, 0, sizeof *a);
    a->name = q8_strdup(name);
    a->type = type;
    return a;
}

void q8t_attr_int(q8_graph *g, const char *name, int64_t v) { new_attr(g, name, Q8_ATTR_INT)->i = v; }
void q8t_attr_float(q8_graph *g, const char *name, float v) { new_attr(g, name, Q8_ATTR_FLOAT)->f = v; }
void q8t_attr_str(q8_graph *g, const char *name, const char *v) {
    new_attr(g, name, Q8_ATTR_STRING)->s = q8_strdup(v);
}
void q8t_attr_ints(q8_graph *g, const char *name, const int64_t *v, int n) {
    q8_attr *a = new_attr(g, name, Q8_ATTR_INTS);
    a->n = n;
    a->ints = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (n) memcpy(a->ints, v, sizeof(int64_t) * (size_t)n);
}
void q8t_attr_floats(q8_graph *g, const char *name, const float *v, int n) {
    q8_attr *a = new_attr(g, name, Q8_ATTR_FLOATS);
    a->n = n;
    a->floats = malloc(sizeof(float) * (size_t)(n ? n : 1));
    if (n) memcpy(a->floats, v, sizeof(float) * (size_t)n);
}

/* Run the model on one session of the given device; outputs copied out.
 * owning: the session takes the model (freed with it, or at once if the
 * session fails). */
static q8_status run_on(q8_model *m, bool owning, q8_device dev, const void *const *in_data,
                        int n_threads, int runs, void **outs, q8_tensor_info *infos, int max_out,
                        q8_error *err) {
    q8_session *sess;
    q8_session_options so = {.n_threads = n_threads, .device = dev};
    Q8_TRY(owning ? q8_session_create_owning(m, &so, &sess, err)
                  : q8_session_create(m, &so, &sess, err));
    q8_status s = Q8_OK;
    for (int i = 0; i < m->g->n_inputs && s == Q8_OK; i++) {
        const q8_tensor *t = m->g->tensors[m->g->inputs[i]];
        s = q8_session_set_input(sess, t->name, t->dtype, t->dims, t->ndim, in_data[i], err);
    }
    for (int r = 0; r < runs && s == Q8_OK; r++) {
        s = q8_session_run(sess, err);
        for (int k = 0; s == Q8_OK && k < m->g->n_outputs && k < max_out; k++) {
            const void *d;
            q8_tensor_info info;
            q8_session_output(sess, k, &info, &d, NULL);
            int64_t numel;
            q8_shape_numel(info.dims, info.ndim, &numel);
            size_t nb = (size_t)numel * q8_dtype_size(info.dtype);
            if (r == 0) {
                infos[k] = info;
                infos[k].name = NULL; /* points into the model, which is freed */
                outs[k] = malloc(nb ? nb : 1);
                memcpy(outs[k], d, nb);
            } else { /* a second run (on CUDA: a graph replay) gives the same bytes */
                cr_assert(memcmp(outs[k], d, nb) == 0, "%s: output %d changed on run %d",
                          dev == Q8_DEVICE_CUDA ? "cuda" : "cpu", k, r + 1);
            }
        }
    }
    q8_session_free(sess);
    return s;
}

/* Can this build's backend b run sessions here? CUDA without a GPU runs in
 * host emulation (Q8_CUDA_EMULATE): the same plans and kernels, on the host. */
static bool usable(const q8_backend *b, bool *emulated) {
    char why[256];
    *emulated = getenv("Q8_CUDA_EMULATE") != NULL;
    if (b->available(why, sizeof why)) return true;
    if (b->device != Q8_DEVICE_CUDA) return false;
    setenv("Q8_CUDA_EMULATE", "1", 1);
    *emulated = true;
    return b->available(why, sizeof why);
}

/* Ops whose float32 sums another backend takes in another order than the
 * CPU's blocked GEMM (the CUDA direct Conv): equal to rounding only, even
 * in emulation. */
static bool sums_reordered(const q8_graph *g) {
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->op == Q8_OP_CONV) return true;
    return false;
}

/* Every other backend of the build against the CPU's outputs: integer and
 * bool outputs bit for bit, float ones bit for bit in emulation and within
 * 1e-4 relative (plus 1e-5 of the largest value) on a GPU or where sums are
 * reordered. A graph a backend does not support is skipped (its check
 * names what it lacks). */
static int check_other_backends(q8_model *m, const void *const *in_data, void *const *want,
                                const q8_tensor_info *winfo, int n_out, bool gpu_exact) {
    int ran = 0;
    bool reordered = sums_reordered(m->g);
    for (int b = 0; b < q8_backend_count(); b++) {
        const q8_backend *be = q8_backend_at(b);
        bool emulated;
        if (be == q8_backend_host() || !usable(be, &emulated)) continue;
        void *got[8] = {0};
        q8_tensor_info ginfo[8];
        q8_error err = {0};
        q8_status s = run_on(m, false, be->device, in_data, 2, 2, got, ginfo, n_out, &err);
        if (s == Q8_ERR_UNSUPPORTED) continue;
        cr_assert_eq(s, Q8_OK, "%s backend: %s", be->name, err.msg);
        ran++;
        for (int k = 0; k < n_out; k++) {
            cr_assert_eq(ginfo[k].dtype, winfo[k].dtype, "%s: output %d dtype", be->name, k);
            cr_assert_eq(ginfo[k].ndim, winfo[k].ndim, "%s: output %d rank", be->name, k);
            int64_t n;
            q8_shape_numel(winfo[k].dims, winfo[k].ndim, &n);
            size_t nb = (size_t)n * q8_dtype_size(winfo[k].dtype);
            const float *w = want[k], *g = got[k];
            if (winfo[k].dtype == Q8_F32 && (emulated || gpu_exact) && !reordered) {
                /* the same bits; a NaN's sign and payload are not the op's */
                for (int64_t i = 0; i < n; i++)
                    cr_assert(isnan(w[i]) ? isnan(g[i]) : memcmp(&w[i], &g[i], 4) == 0,
                              "%s%s backend: output %d [%lld] is %.9g, the CPU's %.9g", be->name,
                              emulated ? " (emulated)" : "", k, (long long)i, g[i], w[i]);
                continue;
            }
            if (winfo[k].dtype != Q8_F32) {
                cr_assert(memcmp(got[k], want[k], nb) == 0,
                          "%s backend: output %d (%s) differs from the CPU's", be->name, k,
                          q8_dtype_name(winfo[k].dtype));
                continue;
            }
            float mx = 0; /* the largest finite value */
            for (int64_t i = 0; i < n; i++)
                if (isfinite(w[i])) mx = fabsf(w[i]) > mx ? fabsf(w[i]) : mx;
            q8t_assert_close(g, w, n, 1e-4f, 1e-5f * mx, be->name);
        }
        for (int k = 0; k < n_out; k++) free(got[k]);
    }
    return ran;
}

q8_status q8t_model_of(q8_graph *g, q8_model **m, q8_error *err) {
    q8_status s = q8_passes_run(g, NULL, err);
    if (s != Q8_OK) {
        q8_graph_free(g);
        return s;
    }
    return q8_model_from_graph(g, "test", m, err);
}

q8_status q8t_run_backends(q8_graph *g, const void *const *in_data, int n_threads, void **outs,
                           q8_tensor_info *infos, int max_out, bool gpu_exact, int *others,
                           q8_error *err) {
    q8_model *m;
    Q8_TRY(q8t_model_of(g, &m, err));
    int n_out = m->g->n_outputs < max_out ? m->g->n_outputs : max_out;
    q8_status s = run_on(m, false, Q8_DEVICE_CPU, in_data, n_threads, 1, outs, infos, n_out, err);
    int ran = 0;
    if (s == Q8_OK && n_out <= 8) ran = check_other_backends(m, in_data, outs, infos, n_out, gpu_exact);
    if (others) *others = ran;
    q8_model_free(m);
    return s;
}

int q8t_other_backends(void) { return q8_backend_count() - 1; }

q8_status q8t_run(q8_graph *g, const void *const *in_data, int n_threads, void **outs,
                  q8_tensor_info *infos, int max_out, q8_error *err) {
    return q8t_run_backends(g, in_data, n_threads, outs, infos, max_out, false, NULL, err);
}

q8_status q8t_run_owning(q8_graph *g, const void *const *in_data, int n_threads, void **outs,
                         q8_tensor_info *infos, int max_out, q8_error *err) {
    q8_model *m;
    Q8_TRY(q8t_model_of(g, &m, err));
    int n_out = m->g->n_outputs < max_out ? m->g->n_outputs : max_out;
    return run_on(m, true, Q8_DEVICE_CPU, in_data, n_threads, 1, outs, infos, n_out, err);
}

void q8t_assert_close(const float *got, const float *want, int64_t n, float rtol, float atol,
                      const char *what) {
    for (int64_t i = 0; i < n; i++) {
        if (isnan(want[i])) {
            cr_assert(isnan(got[i]), "%s[%lld]: got %g, want NaN", what, (long long)i, got[i]);
            continue;
        }
        if (got[i] == want[i]) continue; /* an infinity too (inf - inf is NaN) */
        float d = fabsf(got[i] - want[i]);
        cr_assert(d <= atol + rtol * fabsf(want[i]), "%s[%lld]: got %.9g, want %.9g", what,
                  (long long)i, got[i], want[i]);
    }
}

int64_t q8t_numel(const int64_t *d, int n) {
    int64_t v = 1;
    for (int i = 0; i < n; i++) v *= d[i];
    return v;
}

size_t q8t_info_bytes(const q8_tensor_info *in) {
    return (size_t)q8t_numel(in->dims, in->ndim) * q8_dtype_size(in->dtype);
}

void q8t_assert_shape(const q8_tensor_info *in, const int64_t *dims, int nd) {
    cr_assert_eq(in->ndim, nd, "rank %d, want %d", in->ndim, nd);
    for (int i = 0; i < nd; i++)
        cr_assert_eq(in->dims[i], dims[i], "dim %d is %lld, want %lld", i, (long long)in->dims[i],
                     (long long)dims[i]);
}

/* ---- files and commands ---- */

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f) {
    (void)st, (void)flag, (void)f;
    return remove(p);
}

char *q8t_tmpdir(const char *tag) {
    char *d = malloc(strlen(tag) + 32);
    cr_assert(d);
    sprintf(d, "/tmp/q8%sXXXXXX", tag);
    cr_assert(mkdtemp(d), "mkdtemp: %s", strerror(errno));
    return d;
}

void q8t_rm_rf(const char *dir) {
    chmod(dir, 0755);
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void q8t_path(char *out, size_t n, const char *dir, const char *name) {
    cr_assert((size_t)snprintf(out, n, "%s/%s", dir, name) < n, "path too long");
}

void q8t_write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    cr_assert(f && fwrite(data, 1, n, f) == n && fclose(f) == 0, "cannot write %s", path);
}

char *q8t_slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0, r;
    char *b = malloc(cap + 1);
    while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) b = realloc(b, (cap *= 2) + 1);
    }
    fclose(f);
    if (b) b[n] = 0;
    if (len) *len = n;
    return b;
}

q8t_cmd q8t_run_cmd(const char *scratch_dir, int timeout_s, char *const argv[]) {
    char op[4096], ep[4096];
    q8t_path(op, sizeof op, scratch_dir, ".stdout");
    q8t_path(ep, sizeof ep, scratch_dir, ".stderr");
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int o = open(op, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(ep, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int in = open("/dev/null", O_RDONLY);
        if (o < 0 || e < 0 || in < 0) _exit(127);
        dup2(o, 1);
        dup2(e, 2);
        dup2(in, 0);
        alarm((unsigned)timeout_s);
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0) cr_assert(errno == EINTR);
    q8t_cmd r = {.exited = WIFEXITED(st), .code = WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st)};
    r.out = q8t_slurp(op, NULL);
    r.err = q8t_slurp(ep, NULL);
    unlink(op);
    unlink(ep);
    cr_assert(r.out && r.err);
    return r;
}

void q8t_cmd_free(q8t_cmd *r) {
    free(r->out);
    free(r->err);
}

double q8t_mnist_top1(const char *model_path) {
    q8_tensor *x = NULL, *y = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_npy_read(Q8_SOURCE_DIR "/models/mnist/test_x.npy", &x, &err), Q8_OK, "%s",
                 err.msg);
    cr_assert_eq(q8_npy_read(Q8_SOURCE_DIR "/models/mnist/test_y.npy", &y, &err), Q8_OK, "%s",
                 err.msg);
    q8_input_shape sh = {.name = NULL, .ndim = x->ndim};
    memcpy(sh.dims, x->dims, sizeof sh.dims);
    q8_load_options lo = {.input_shapes = &sh, .n_input_shapes = 1};
    q8_model *m;
    cr_assert_eq(q8_model_open(model_path, &lo, &m, &err), Q8_OK, "%s", err.msg);
    q8_session *s;
    q8_session_options so = {.n_threads = 2};
    cr_assert_eq(q8_session_create(m, &so, &s, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_set_input(s, NULL, x->dtype, x->dims, x->ndim, x->data, &err), Q8_OK,
                 "%s", err.msg);
    cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
    q8_tensor_info info;
    const float *out;
    q8_session_output(s, 0, &info, (const void **)&out, NULL);
    cr_assert(info.ndim == 2 && info.dims[0] == x->dims[0] && info.dims[1] == 10);
    int64_t hits = 0, n = x->dims[0];
    for (int64_t i = 0; i < n; i++) {
        int am = 0;
        for (int k = 1; k < 10; k++)
            if (out[i * 10 + k] > out[i * 10 + am]) am = k;
        hits += am == ((const int64_t *)y->data)[i];
    }
    q8_session_free(s);
    q8_model_free(m);
    q8_tensor_free(x);
    q8_tensor_free(y);
    return (double)hits / (double)n;
}

int q8t_tensor(q8_graph *g, const char *name) {
    int t = q8_graph_find(g, name);
    if (t < 0) t = q8_graph_add_tensor(g, name, NULL);
    cr_assert(t >= 0, "cannot add tensor '%s'", name);
    return t;
}

void q8t_run_each(q8_graph *g, const int64_t *dims, int ndim, const float *xs,
                  int64_t in_floats, int n_samples, float *out, int64_t out_floats) {
    q8_error err = {0};
    q8_model *m = NULL;
    cr_assert_eq(q8_model_from_graph(g, "", &m, &err), Q8_OK, "%s", err.msg);
    q8_session *sess = NULL;
    q8_session_options so = {.n_threads = 1, .device = Q8_DEVICE_CPU};
    cr_assert_eq(q8_session_create(m, &so, &sess, &err), Q8_OK, "%s", err.msg);
    for (int i = 0; i < n_samples; i++) {
        cr_assert_eq(q8_session_set_input(sess, "x", Q8_F32, dims, ndim, xs + i * in_floats, &err),
                     Q8_OK, "%s", err.msg);
        cr_assert_eq(q8_session_run(sess, &err), Q8_OK, "%s", err.msg);
        q8_tensor_info info;
        const void *y;
        cr_assert_eq(q8_session_output(sess, 0, &info, &y, &err), Q8_OK, "%s", err.msg);
        memcpy(out + i * out_floats, y, sizeof(float) * (size_t)out_floats);
    }
    q8_session_free(sess);
    q8_model_free(m);
}

void q8t_write_xy_model(const char *path, const char *name, Onnx__NodeProto **nodes, int n_nodes,
                        Onnx__TensorProto **inits, int n_inits, const int64_t xd[4],
                        bool any_size) {
    Onnx__TensorShapeProto__Dimension dims[4], *dp[4];
    for (int i = 0; i < 4; i++) {
        Onnx__TensorShapeProto__Dimension d = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
        if (any_size && i >= 2) { /* symbolic H and W */
            d.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d.dim_param = i == 2 ? "h" : "w";
        } else {
            d.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d.dim_value = xd[i];
        }
        dims[i] = d;
        dp[i] = &dims[i];
    }
    Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
    shape.n_dim = 4, shape.dim = dp;
    Onnx__TypeProto__Tensor tx = ONNX__TYPE_PROTO__TENSOR__INIT, ty;
    tx.has_elem_type = 1, tx.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, tx.shape = &shape;
    ty = tx;
    ty.shape = NULL;
    Onnx__TypeProto px = ONNX__TYPE_PROTO__INIT, py;
    px.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE, px.tensor_type = &tx;
    py = px;
    py.tensor_type = &ty;
    Onnx__ValueInfoProto vx = ONNX__VALUE_INFO_PROTO__INIT, vy;
    vx.name = "x", vx.type = &px;
    vy = vx;
    vy.name = "y", vy.type = &py;
    Onnx__ValueInfoProto *ins[1] = {&vx}, *outs[1] = {&vy};
    Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
    g.name = (char *)name, g.n_node = (size_t)n_nodes, g.node = nodes;
    g.n_initializer = (size_t)n_inits, g.initializer = inits;
    g.n_input = 1, g.input = ins, g.n_output = 1, g.output = outs;
    Onnx__OperatorSetIdProto op = ONNX__OPERATOR_SET_ID_PROTO__INIT, *ops[1] = {&op};
    op.domain = "", op.has_version = 1, op.version = 13;
    Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
    mp.has_ir_version = 1, mp.ir_version = 8, mp.n_opset_import = 1, mp.opset_import = ops;
    mp.graph = &g;
    size_t n = onnx__model_proto__get_packed_size(&mp);
    uint8_t *buf = malloc(n);
    onnx__model_proto__pack(&mp, buf);
    q8t_write_file(path, buf, n);
    free(buf);
}

/* x[1,1,8,8] (H and W symbolic with any_size) -> Conv 1x1 to c channels
 * (weights w1) -> Conv 1x1 back to one (weights w2) -> y, written to path. */
void q8t_two_conv_model(const char *path, int c, const float *w1, const float *w2, bool any_size) {
    int64_t d1[4] = {c, 1, 1, 1}, d2[4] = {1, c, 1, 1};
    Onnx__TensorProto t1 = ONNX__TENSOR_PROTO__INIT, t2 = ONNX__TENSOR_PROTO__INIT;
    t1.name = "w1", t1.n_dims = 4, t1.dims = d1, t1.has_data_type = 1;
    t1.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, t1.n_float_data = (size_t)c;
    t1.float_data = (float *)w1;
    t2 = t1;
    t2.name = "w2", t2.dims = d2, t2.float_data = (float *)w2;
    Onnx__TensorProto *inits[2] = {&t1, &t2};
    static char *in1[2] = {"x", "w1"}, *in2[2] = {"h", "w2"}, *o1[1] = {"h"}, *o2[1] = {"y"};
    Onnx__NodeProto n1 = ONNX__NODE_PROTO__INIT, n2 = ONNX__NODE_PROTO__INIT;
    n1.name = "c1", n1.op_type = "Conv", n1.n_input = 2, n1.input = in1;
    n1.n_output = 1, n1.output = o1;
    n2 = n1;
    n2.name = "c2", n2.input = in2, n2.output = o2;
    Onnx__NodeProto *nodes[2] = {&n1, &n2};
    q8t_write_xy_model(path, "cancel", nodes, 2, inits, 2, (const int64_t[]){1, 1, 8, 8}, any_size);
}

bool q8t_has_meta(const char *q8, const char *key) {
    q8_model *m = NULL;
    q8_load_options lo = {0};
    q8_error err = {0};
    cr_assert_eq(q8_model_open(q8, &lo, &m, &err), Q8_OK, "%s", err.msg);
    bool has = q8_meta_get(&m->meta, key) != NULL;
    q8_model_free(m);
    return has;
}

/* n samples [1, 1, side, side] of uniform [-1, 1) values from seed, in dir
 * (made), named s0.npy, s1.npy, ... */
void q8t_square_samples(const char *dir, int n, int64_t side, uint64_t seed) {
    mkdir(dir, 0755);
    q8t_rng rng = q8t_seed(seed);
    float *x = malloc(sizeof(float) * (size_t)(side * side));
    for (int i = 0; i < n; i++) {
        q8t_fill(&rng, x, side * side, -1, 1);
        char p[600], name[32];
        snprintf(name, sizeof name, "s%d.npy", i);
        q8t_path(p, sizeof p, dir, name);
        q8_error err = {0};
        cr_assert_eq(q8_npy_write(p, Q8_F32, (const int64_t[]){1, 1, side, side}, 4, x, &err), Q8_OK,
                     "%s", err.msg);
    }
    free(x);
}

