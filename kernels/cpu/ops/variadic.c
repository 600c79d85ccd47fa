/* Max, Min, Sum, Mean on the CPU (semantics and params:
 * src/core/ops/variadic.c). Each row is done in blocks through a small
 * local accumulator: every input is read at a block's positions before the
 * output is written there, so the output may share a buffer with any
 * input. */
#include "clones.h"
#include "ew_kernels.h"

#define BLOCK 256

enum { V_MAX, V_MIN, V_SUM, V_MEAN };

/* Float max/min propagate NaN from either side. Bitwise '|', not '||': the
 * short circuit was a branch per element, and the loops stayed scalar (Max
 * with a per-channel constant at 2x ONNX Runtime's time); this file is also
 * built without trapping math (CMakeLists.txt) so that the selects vectorize. */
#define VMAXF(a, b) ((((a) > (b)) | ((a) != (a))) ? (a) : (b))
#define VMINF(a, b) ((((a) < (b)) | ((a) != (a))) ? (a) : (b))
#define VMAX(a, b) ((a) > (b) ? (a) : (b))
#define VMIN(a, b) ((a) < (b) ? (a) : (b))
#define VADD(a, b) ((a) + (b))

#define VAR_ROW(NAME, T, OP, FINAL) VAR_ROW_A(NAME, T, OP, FINAL, )
/* Float rows are cloned per ISA (Max with a per-channel constant: 0.064 ->
 * 0.039 ms on 1x64x64x64, ORT 0.035); the integer ones are rare and stay
 * single (the clones of every integer type cost 140 KB of code). */
#define VAR_ROW_F(NAME, T, OP, FINAL) VAR_ROW_A(NAME, T, OP, FINAL, Q8_CLONES)
#define VAR_ROW_A(NAME, T, OP, FINAL, ATTR)                                               \
    ATTR static void NAME(void *o_, const void *const *in, const int64_t *st, int64_t n,  \
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
    VAR_ROW(max_##S, T, VMAX, acc[i])                                                      \
    VAR_ROW(min_##S, T, VMIN, acc[i])
#define MAXMIN_ROWS_F(E, T, S, W)                                                          \
    VAR_ROW_F(max_##S, T, VMAXF, acc[i])                                                   \
    VAR_ROW_F(min_##S, T, VMINF, acc[i])
#define SUM_ROWS(E, T, S, W)                                                               \
    VAR_ROW_F(sum_##S, T, VADD, acc[i])                                                    \
    VAR_ROW_F(mean_##S, T, VADD, acc[i] / (T)p->n_in)
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

static void var_run(const q8_exec *x, const q8_node *n, int kind) {
    const q8_bcast *p = n->params;
    const void *in[Q8_BCAST_MAX_IN];
    size_t sz[Q8_BCAST_MAX_IN];
    q8_dtype dt = q8_in(x->g, n, 0)->dtype;
    Q8_ASSERT(rows[kind][dt]); /* the core's dtype set and these rows disagree */
    for (int k = 0; k < p->n_in; k++) {
        in[k] = Q8_IN_PTR(x, n, k);
        sz[k] = q8_dtype_size(dt);
    }
    q8_bcast_run(x->pool, p, Q8_OUT_PTR(x, n, 0), q8_dtype_size(dt), in, sz, rows[kind][dt], p,
                 Q8_EW_GRAIN);
}

#define VAR_OP(VAR, KIND)                                                                  \
    static void VAR##_run(const q8_exec *x, const q8_node *n) { var_run(x, n, KIND); }     \
    const q8_cpu_op q8_cpu_##VAR = {.run = VAR##_run};

VAR_OP(max, V_MAX)
VAR_OP(min, V_MIN)
VAR_OP(sum, V_SUM)
VAR_OP(mean, V_MEAN)
