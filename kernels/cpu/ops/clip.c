/* Clip on the CPU (semantics and params: src/core/ops/clip.h). */
#include "ew_kernels.h"
#include "ops/clip.h"

typedef struct clip_args {
    const void *x;
    void *y;
    const void *lo, *hi;    /* NULL: unbounded on that side */
} clip_args;

#define CLIP_RANGE(E, T, S, W)                                                             \
    static void clip_##S(void *p, int64_t b, int64_t e, int t) {                          \
        const clip_args *a = p;                                                           \
        const T *x = a->x;                                                                \
        T *y = a->y;                                                                      \
        T lo = a->lo ? *(const T *)a->lo : clip_min_##S();                                \
        T hi = a->hi ? *(const T *)a->hi : clip_max_##S();                                \
        for (int64_t i = b; i < e; i++) {                                                 \
            T v = x[i];                                                                   \
            v = v < lo ? lo : v;                                                          \
            y[i] = v > hi ? hi : v;                                                       \
        }                                                                                 \
    }

/* Default bounds (no input): the type's range. */
#define CLIP_SINT_LIMITS(E, T, S, W)                                                       \
    static inline T clip_min_##S(void) { return (T)((W)1 << (sizeof(T) * 8 - 1)); }       \
    static inline T clip_max_##S(void) { return (T)~clip_min_##S(); }
#define CLIP_UINT_LIMITS(E, T, S, W)                                                       \
    static inline T clip_min_##S(void) { return 0; }                                      \
    static inline T clip_max_##S(void) { return (T)~clip_min_##S(); }
Q8_EW_SINTS(CLIP_SINT_LIMITS)
Q8_EW_UINTS(CLIP_UINT_LIMITS)
static inline float clip_min_f32(void) { return -INFINITY; }
static inline float clip_max_f32(void) { return INFINITY; }
static inline double clip_min_f64(void) { return -INFINITY; }
static inline double clip_max_f64(void) { return INFINITY; }

Q8_EW_NUMS(CLIP_RANGE)

#define TAB_CLIP(E, T, S, W) [E] = clip_##S,
static const q8_range_fn clip_fns[Q8_DTYPE_COUNT] = {Q8_EW_NUMS(TAB_CLIP)};

static void clip_run(const q8_exec *x, const q8_node *n) {
    const q8_clip_params *p = n->params;
    const q8_tensor *t = q8_in(x->g, n, 0);
    clip_args a = {
        .x = Q8_IN_PTR(x, n, 0), .y = Q8_OUT_PTR(x, n, 0),
        .lo = p->has_lo ? Q8_IN_PTR(x, n, 1) : NULL,
        .hi = p->has_hi ? Q8_IN_PTR(x, n, 2) : NULL,
    };
    q8_parallel_for(x->pool, q8_tensor_numel(t), Q8_EW_GRAIN, clip_fns[t->dtype], &a);
}

const q8_cpu_op q8_cpu_clip = {.run = clip_run};
