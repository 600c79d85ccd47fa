/* q8.EwChain on the CPU (the op: src/core/ops/ewchain.h): blocks of
 * elements through a stack buffer (or Y itself for a float result), the
 * int8 end quantized by QuantizeLinear's own code. The steps' arithmetic is
 * kernels/common/ewchain_eval.h's; this file is built without FMA
 * contraction and trapping math (CMakeLists.txt), as the ops it replaces. */
#include "clones.h"
#include "cpu_op.h"
#include "ewchain_eval.h"
#include "ops/batchnorm.h"
#include "ops/ewchain.h"
#include "quant_simd.h"
#include "vmath_x86.h"

enum { EW_BLOCK = 1024 };

/* One loop a step over the block (one switch a step, not an element: the
 * loops vectorize, cloned per ISA); the block stays in L1 between steps.
 * Tried instead: every step on one vector in registers (GCC's vector
 * extensions, a switch a vector and step): 20% slower on PP-OCR
 * recognition's chains, its indirect jumps the bound. The first step reads
 * src, the others dst (src may be dst). */
#define EW_MAP(EXPR)                                  \
    for (int64_t i = 0; i < n; i++) {                 \
        float u = in[i];                              \
        dst[i] = (EXPR);                              \
    }                                                 \
    break;

Q8_CLONES static void steps_block(const q8_ewchain_params *p, const float *src, float *dst,
                                  int64_t n) {
    for (int k = 0; k < p->n_steps; k++) {
        const float c0 = p->steps[k].c0, c1 = p->steps[k].c1, *in = k ? dst : src;
        switch (p->steps[k].kind) {
        case Q8_EW_MUL: EW_MAP(u * c0)
        case Q8_EW_ADD: EW_MAP(u + c0)
        case Q8_EW_SUB: EW_MAP(u - c0)
        case Q8_EW_RSUB: EW_MAP(c0 - u)
        case Q8_EW_DIV: EW_MAP(u / c0)
        case Q8_EW_RDIV: EW_MAP(c0 / u)
        case Q8_EW_RELU: EW_MAP(q8_ew_relu(u))
        case Q8_EW_LEAKY_RELU: EW_MAP(q8_ew_leaky(u, c0))
        case Q8_EW_CLIP: EW_MAP(q8_ew_clip(u, c0, c1))
        case Q8_EW_HARD_SIGMOID: EW_MAP(q8_ew_hsigmoid(u, c0, c1))
        case Q8_EW_HARD_SWISH: EW_MAP(q8_ew_hswish(u, c0, c1))
        case Q8_EW_SWISH:
            if (q8_vmath_x86_ok()) { /* the same bits in half the instructions */
                q8_swish_x86(in, dst, n, c0);
                break;
            }
            EW_MAP(q8_ew_swish(u, c0))
        default: break; /* infer accepts no other */
        }
    }
}

/* DequantizeLinear's (float)(x - zp) * s, as kernels/cpu/ops/dequantizelinear.c */
Q8_CLONES static void dequant_i8(const int8_t *x, int32_t z, float s, float *v, int64_t n) {
    for (int64_t i = 0; i < n; i++) v[i] = (float)(x[i] - z) * s;
}
Q8_CLONES static void dequant_u8(const uint8_t *x, int32_t z, float s, float *v, int64_t n) {
    for (int64_t i = 0; i < n; i++) v[i] = (float)(x[i] - z) * s;
}
/* int32: a Cast to float (zero point 0, scale 1: (float)x exactly) */
Q8_CLONES static void dequant_i32(const int32_t *x, float s, float *v, int64_t n) {
    for (int64_t i = 0; i < n; i++) v[i] = (float)x[i] * s;
}

/* BatchNormalization's x * k + m, as kernels/cpu/ops/batchnorm.c */
Q8_CLONES static void affine(const float *src, float *dst, int64_t n, float k, float m) {
    for (int64_t i = 0; i < n; i++) dst[i] = src[i] * k + m;
}

typedef struct ew_args {
    const q8_ewchain_params *p;
    const void *x;
    void *y;
    const float *bn[4]; /* scale, B, mean, var */
    int64_t row_blocks; /* blocks a (n, c) row with a BatchNormalization */
} ew_args;

/* Elements i0 .. i0 + n - 1 through the chain; bn: their channel's k, m. */
static void ew_block(const ew_args *a, int64_t i0, int64_t n, const float *bn) {
    const q8_ewchain_params *p = a->p;
    float buf[EW_BLOCK];
    /* a float result goes to Y itself (X may be Y: in place) */
    float *v = p->y_dtype == Q8_F32 ? (float *)a->y + i0 : buf;
    const float *src = (const float *)a->x + i0;
    if (p->x_dtype != Q8_F32) {
        if (p->x_dtype == Q8_I8)
            dequant_i8((const int8_t *)a->x + i0, p->x_zero_point, p->x_scale, v, n);
        else if (p->x_dtype == Q8_U8)
            dequant_u8((const uint8_t *)a->x + i0, p->x_zero_point, p->x_scale, v, n);
        else
            dequant_i32((const int32_t *)a->x + i0, p->x_scale, v, n);
        src = v;
    }
    if (bn) {
        affine(src, v, n, bn[0], bn[1]);
        src = v;
    }
    steps_block(p, src, v, n);
    if (p->y_dtype != Q8_F32)
        q8_quantize_f32(v, (uint8_t *)a->y + i0, n, p->y_scale, p->y_zero_point,
                        p->y_dtype == Q8_I8);
}

static void ew_range(void *arg, int64_t b, int64_t e, int tid) {
    (void)tid;
    const ew_args *a = arg;
    const q8_ewchain_params *p = a->p;
    for (int64_t i0 = b * EW_BLOCK; i0 < e * EW_BLOCK && i0 < p->n; i0 += EW_BLOCK)
        ew_block(a, i0, p->n - i0 < EW_BLOCK ? p->n - i0 : EW_BLOCK, NULL);
}

/* With a BatchNormalization: task t is block (t % row_blocks) of row
 * (t / row_blocks), so that a block is one channel's. */
static void ew_range_bn(void *arg, int64_t b, int64_t e, int tid) {
    (void)tid;
    const ew_args *a = arg;
    const q8_ewchain_params *p = a->p;
    for (int64_t t = b; t < e; t++) {
        int64_t row = t / a->row_blocks, i = (t % a->row_blocks) * EW_BLOCK;
        float km[2];
        q8_bn_channel(a->bn[0], a->bn[1], a->bn[2], a->bn[3], p->bn_eps, row % p->bn_c, &km[0],
                      &km[1]);
        ew_block(a, row * p->bn_s + i, p->bn_s - i < EW_BLOCK ? p->bn_s - i : EW_BLOCK, km);
    }
}

static void ewchain_run(const q8_exec *x, const q8_node *n) {
    const q8_ewchain_params *p = n->params;
    ew_args a = {p, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0), {0}, 0};
    if (!p->bn) {
        int64_t blocks = (p->n + EW_BLOCK - 1) / EW_BLOCK;
        q8_parallel_for(x->pool, blocks, 16, ew_range, &a);
        return;
    }
    if (!p->bn_s) return;
    for (int i = 0; i < 4; i++) a.bn[i] = Q8_IN_PTR(x, n, i + 1);
    a.row_blocks = (p->bn_s + EW_BLOCK - 1) / EW_BLOCK;
    int64_t tasks = p->n / p->bn_s * a.row_blocks;
    q8_parallel_for(x->pool, tasks, a.row_blocks >= 16 ? 1 : 16 / a.row_blocks, ew_range_bn, &a);
}

const q8_cpu_op q8_cpu_ewchain = {.run = ewchain_run};
