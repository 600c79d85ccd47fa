/* PRelu on the CPU (semantics and params: src/core/ops/prelu.c). */
#include "clones.h"
#include "ew_kernels.h"

#if defined(__GNUC__) && !defined(__clang__)
#define NO_TRAPS __attribute__((optimize("no-trapping-math")))
#else
#define NO_TRAPS
#endif

/* out = a < 0 ? a * b : a. Vectorized in each clone: with the default
 * -ftrapping-math the multiply under the condition stayed a branch per
 * element (scalar, mispredicted at every sign change: FaceMesh's 28 PRelu
 * were 1.46 ms of its 2.0 ms in INT8); no-trapping-math lets GCC take the
 * product everywhere and blend. The same values either way. */
#define PRELU_ROW(NAME, T)                                                                   \
    NO_TRAPS Q8_CLONES static void NAME(void *o_, const void *const *in_, const int64_t *st, \
                                        int64_t n, const void *ctx_) {                      \
        T *o = o_;                                                                           \
        const T *pa = in_[0], *pb = in_[1];                                                  \
        (void)ctx_;                                                                          \
        if (st[0] && st[1]) {                                                                \
            for (int64_t i = 0; i < n; i++) {                                                \
                T a = pa[i], b = pb[i];                                                      \
                o[i] = a < 0 ? a * b : a;                                                    \
            }                                                                                \
        } else if (st[0]) { /* the common case: one slope per channel row */                \
            const T b = pb[0];                                                               \
            for (int64_t i = 0; i < n; i++) {                                                \
                T a = pa[i];                                                                 \
                o[i] = a < 0 ? a * b : a;                                                    \
            }                                                                                \
        } else {                                                                             \
            const T a = pa[0];                                                               \
            for (int64_t i = 0; i < n; i++) {                                                \
                T b = pb[i * st[1]];                                                         \
                o[i] = a < 0 ? a * b : a;                                                    \
            }                                                                                \
        }                                                                                    \
    }

PRELU_ROW(prelu_f32, float)
PRELU_ROW(prelu_f64, double)

static const q8_bcast_row_fn prelu_rows[Q8_DTYPE_COUNT] = {
    [Q8_F32] = prelu_f32, [Q8_F64] = prelu_f64,
};

static void prelu_run(const q8_exec *x, const q8_node *n) {
    q8_ew_binary_run(x, n, prelu_rows, Q8_EW_GRAIN);
}

const q8_cpu_op q8_cpu_prelu = {.run = prelu_run};
