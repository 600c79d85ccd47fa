/* Max, Min (float32/64, all integers), Sum, Mean (float32/64): 1 to
 * Q8_BCAST_MAX_IN inputs, all broadcast together.
 *
 * Inputs are combined left to right (in0 op in1 op in2 ...), so float sums
 * do not depend on the thread count. Max/Min propagate NaN (like numpy's
 * maximum/minimum). Each row is done in blocks through a small local
 * accumulator: every input is read at a block's positions before the output
 * is written there, so the output may share a buffer with any input. */
#include "elementwise.h"

#define BLOCK 256

enum { V_MAX, V_MIN, V_SUM, V_MEAN };

/* Float max/min propagate NaN from either side. */
#define VMAXF(a, b) ((a) > (b) || (a) != (a) ? (a) : (b))
#define VMINF(a, b) ((a) < (b) || (a) != (a) ? (a) : (b))
#define VMAX(a, b) ((a) > (b) ? (a) : (b))
#define VMIN(a, b) ((a) < (b) ? (a) : (b))
#define VADD(a, b) ((a) + (b))

#define VAR_ROW(NAME, T, OP, FINAL)                                                        \
    static void NAME(void *o_, const void *const *in, const int64_t *st, int64_t n,       \
                     const void *ctx) {                                                   \
        const q8_bcast *p = ctx;                                                          \
        T *o = o_, acc[BLOCK];                                                            \
        for (int64_t b = 0; b < n; b += BLOCK) {                                          \
            int64_t m = n - b < BLOCK ? n - b : BLOCK;                                    \
            const T *x0 = (const T *)in[0] + b * st[0];                                   \
            for (int64_t i = 0; i < m; i++) acc[i] = x0[i * st[0]];                       \
            for (int k = 1; k < p->n_in; k++) {                                           \
                const T *xk = (const T *)in[k] + b * st[k];                               \
                if (st[k])                                                                \
                    for (int64_t i = 0; i < m; i++) acc[i] = OP(acc[i], xk[i]);           \
                else                                                                      \
                    for (int64_t i = 0; i < m; i++) acc[i] = OP(acc[i], xk[0]);           \
            }                                                                             \
            for (int64_t i = 0; i < m; i++) o[b + i] = FINAL;                             \
        }                                                                                 \
    }

#define MAXMIN_ROWS(E, T, S, W)                                                            \
    VAR_ROW(max_##S, T, VMAX, acc[i])                                                     \
    VAR_ROW(min_##S, T, VMIN, acc[i])
#define MAXMIN_ROWS_F(E, T, S, W)                                                          \
    VAR_ROW(max_##S, T, VMAXF, acc[i])                                                    \
    VAR_ROW(min_##S, T, VMINF, acc[i])
#define SUM_ROWS(E, T, S, W)                                                               \
    VAR_ROW(sum_##S, T, VADD, acc[i])                                                     \
    VAR_ROW(mean_##S, T, VADD, acc[i] / (T)p->n_in)
Q8_EW_INTS(MAXMIN_ROWS)
Q8_EW_FLOATS(MAXMIN_ROWS_F)
Q8_EW_FLOATS(SUM_ROWS)

#define TAB_MAX(E, T, S, W) [E] = max_##S,
#define TAB_MIN(E, T, S, W) [E] = min_##S,
#define TAB_SUM(E, T, S, W) [E] = sum_##S,
#define TAB_MEAN(E, T, S, W) [E] = mean_##S,
static const q8_bcast_row_fn rows[4][Q8_DTYPE_COUNT] = {
    [V_MAX] = {Q8_EW_NUMS(TAB_MAX)},
    [V_MIN] = {Q8_EW_NUMS(TAB_MIN)},
    [V_SUM] = {Q8_EW_FLOATS(TAB_SUM)},
    [V_MEAN] = {Q8_EW_FLOATS(TAB_MEAN)},
};

static q8_status var_infer(q8_graph *g, q8_node *n, int kind, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, Q8_BCAST_MAX_IN, 1, 1, err));
    for (int i = 0; i < n->n_inputs; i++) {
        if (n->inputs[i] < 0)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "input %d is missing", i);
        Q8_TRY(q8_check_input(g, n, i, Q8_UNDEFINED, err));
    }
    q8_dtype dt = q8_in(g, n, 0)->dtype;
    for (int i = 1; i < n->n_inputs; i++)
        if (q8_in(g, n, i)->dtype != dt)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "input %d is %s, input 0 is %s", i,
                                q8_dtype_name(q8_in(g, n, i)->dtype), q8_dtype_name(dt));
    if (dt <= Q8_UNDEFINED || dt >= Q8_DTYPE_COUNT || !rows[kind][dt]) {
        char list[256];
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "dtype %s is not supported (only %s)",
                            q8_dtype_name(dt), q8_ew_dtype_list(rows[kind], list, sizeof list));
    }
    int64_t dims[Q8_MAX_DIMS];
    int nd;
    Q8_TRY(q8_bcast_shapes(g, n, 0, n->n_inputs, dims, &nd, err));
    Q8_TRY(q8_bcast_plan_new(n, g, 0, n->n_inputs, dims, nd, err));
    return q8_set_output(g, n, 0, dt, dims, nd, err);
}

static void var_run(const q8_exec *x, const q8_node *n, int kind) {
    const q8_bcast *p = n->params;
    const void *in[Q8_BCAST_MAX_IN];
    size_t sz[Q8_BCAST_MAX_IN];
    q8_dtype dt = q8_in(x->g, n, 0)->dtype;
    for (int k = 0; k < p->n_in; k++) {
        in[k] = Q8_IN_PTR(x, n, k);
        sz[k] = q8_dtype_size(dt);
    }
    q8_bcast_run(x->pool, p, Q8_OUT_PTR(x, n, 0), q8_dtype_size(dt), in, sz, rows[kind][dt], p,
                 Q8_EW_GRAIN);
}

#define VAR_OP(VAR, NAME, KIND)                                                            \
    static q8_status VAR##_infer(q8_graph *g, q8_node *n, q8_error *err) {               \
        return var_infer(g, n, KIND, err);                                                \
    }                                                                                     \
    static void VAR##_run(const q8_exec *x, const q8_node *n) { var_run(x, n, KIND); }    \
    const q8_op_schema q8_schema_##VAR = {.infer = VAR##_infer, .flags = Q8_OPF_INPLACE}; \
    const q8_cpu_op q8_cpu_##VAR = {.run = VAR##_run};

VAR_OP(max, "Max", V_MAX)
VAR_OP(min, "Min", V_MIN)
VAR_OP(sum, "Sum", V_SUM)
VAR_OP(mean, "Mean", V_MEAN)
