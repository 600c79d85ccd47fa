/* Resize on the CPU (params: src/core/ops/resize.h). prepare
 * builds, per dim, the table of input offsets and weights of every output
 * index (the core's taps). run walks output rows (all dims but the last):
 * the taps of the leading dims combine into at most Q8_RESIZE_MAX_ROW_TAPS
 * (offset, weight) pairs per row, then each output of the row sums its
 * last-dim taps over them. The order is fixed, so results do not depend on
 * the thread count. */
#include <string.h>

#include "clones.h"
#include "cpu_op.h"
#include "ops/resize.h"
#include "resize_x86.h"

#define MAX_ROW_TAPS Q8_RESIZE_MAX_ROW_TAPS

/* The prepared blob: this header, then per dim its tables (offsets from the
 * blob's start): taps[d] input offsets (int64, in elements) and weights
 * (float) per output index, one byte per output index, 1 outside the crop,
 * and for int8 / uint8 linear the integer weights (int32). */
typedef struct resize_prep {
    size_t idx_off[Q8_MAX_DIMS], w_off[Q8_MAX_DIMS], ext_off[Q8_MAX_DIMS], wi_off[Q8_MAX_DIMS];
    int shift; /* int8 / uint8 linear: q8_resize_int_shift */
    /* every dim before the last two has one tap of weight 1 (not resized,
     * or nearest): a row's taps are its H taps moved by one offset */
    bool unit_outer;
    /* FP32 bilinear: q8_resize_hplan's runs for the last dim, 0 if none */
    size_t hplan_off;
} resize_prep;

/* Rows of horizontally interpolated values a bilinear pass keeps (two
 * input rows); wider outputs take the per-element path. */
#define RESIZE_HROW_MAX 2048

static bool int_linear(const q8_resize_params *p) {
    return p->mode == Q8_RESIZE_LINEAR && (p->dtype == Q8_I8 || p->dtype == Q8_U8);
}

static q8_status resize_prepare(const q8_graph *g, const q8_node *n, const q8_prep_env *env,
                                void **prep, size_t *bytes, q8_error *err) {
    const q8_resize_params *p = n->params;
    resize_prep h;
    memset(&h, 0, sizeof h);
    size_t off = q8_align_up(sizeof h, Q8_ALIGN);
    for (int d = 0; d < p->rank; d++) {
        size_t cnt = (size_t)p->out[d] * (size_t)p->taps[d];
        h.idx_off[d] = off;
        off += q8_align_up(cnt * sizeof(int64_t), Q8_ALIGN);
        h.w_off[d] = off;
        off += q8_align_up(cnt * sizeof(float), Q8_ALIGN);
        h.ext_off[d] = off;
        off += q8_align_up((size_t)p->out[d], Q8_ALIGN);
        if (int_linear(p)) {
            h.wi_off[d] = off;
            off += q8_align_up(cnt * sizeof(int32_t), Q8_ALIGN);
        }
    }
    h.shift = int_linear(p) ? q8_resize_int_shift(p) : 0;
    /* The internal attribute _resize_impl, for tests: "portable" keeps
     * f32_hrow where the AVX-512 pass along W would run (resize_x86.h). */
    const char *impl = q8_attr_str(n, "_resize_impl", "auto");
    if (strcmp(impl, "auto") != 0 && strcmp(impl, "portable") != 0)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "_resize_impl '%s' is not auto or portable",
                            impl);
    int last = p->rank - 1;
    bool hplan = (p->dtype == Q8_F32 || int_linear(p)) && p->mode == Q8_RESIZE_LINEAR &&
                 p->taps[last] == 2 && p->out[last] <= RESIZE_HROW_MAX &&
                 strcmp(impl, "auto") == 0;
    size_t hplan_at = off;
    if (hplan) off += sizeof(q8_resize_hrun) * (size_t)q8_resize_hruns(p->out[last]);
    uint8_t *pk = q8_aligned_alloc(off);
    if (!pk) return q8_fail(err, Q8_ERR_NOMEM, "out of memory building Resize tables");
    int64_t stride = 1;
    for (int d = p->rank - 1; d >= 0; d--) {
        q8_resize_dim_taps(p, d, stride, (int64_t *)(pk + h.idx_off[d]),
                           (float *)(pk + h.w_off[d]), pk + h.ext_off[d]);
        if (int_linear(p))
            q8_resize_int_weights(p, d, (const float *)(pk + h.w_off[d]),
                                  (int32_t *)(pk + h.wi_off[d]));
        stride *= p->in[d];
    }
    if (hplan && q8_resize_hplan((const int64_t *)(pk + h.idx_off[last]),
                                 (const float *)(pk + h.w_off[last]),
                                 int_linear(p) ? (const int32_t *)(pk + h.wi_off[last]) : NULL,
                                 p->out[last], p->in[last], (q8_resize_hrun *)(pk + hplan_at)))
        h.hplan_off = hplan_at;
    h.unit_outer = !p->extrap && p->rank >= 2;
    for (int d = 0; h.unit_outer && d < p->rank - 2; d++) {
        const float *wd = (const float *)(pk + h.w_off[d]);
        h.unit_outer = p->taps[d] == 1;
        for (int64_t o = 0; h.unit_outer && o < p->out[d]; o++) h.unit_outer = wd[o] == 1.0f;
    }
    memcpy(pk, &h, sizeof h);
    *prep = pk;
    *bytes = off;
    return Q8_OK;
}

typedef struct resize_args {
    const q8_resize_params *p;
    const resize_prep *h; /* the prepared blob: its header */
    const uint8_t *pk;    /* and its bytes */
    const void *x;
    void *y;
} resize_args;

/* An output row's index along each leading dim (all but the last), kept
 * as a counter from row to row: the divisions that found it per row were
 * a third of a 2x bilinear upsampling's time. */
static void row_at(const q8_resize_params *p, int64_t row, int64_t *od) {
    for (int d = p->rank - 2; d >= 0; d--) {
        od[d] = row % p->out[d];
        row /= p->out[d];
    }
}

static void row_next(const q8_resize_params *p, int64_t *od) {
    for (int d = p->rank - 2; d >= 0; d--) {
        if (++od[d] < p->out[d]) return;
        od[d] = 0;
    }
}

/* Where every dim before the last two has one tap of weight 1 (unit_outer):
 * the input offsets of the row at od's taps along H into off; returns their
 * count, and in *at where their weights start in H's tables. */
static int unit_outer_offsets(const resize_args *a, const int64_t *od, int64_t *off,
                              int64_t *at) {
    const q8_resize_params *p = a->p;
    int dh = p->rank - 2, t = p->taps[dh];
    int64_t base = 0;
    for (int d = 0; d < dh; d++) base += ((const int64_t *)(a->pk + a->h->idx_off[d]))[od[d]];
    *at = od[dh] * t;
    const int64_t *ix = (const int64_t *)(a->pk + a->h->idx_off[dh]) + *at;
    for (int j = 0; j < t; j++) off[j] = base + ix[j];
    return t;
}

/* The combined leading-dim taps of the output row at od (row_at); false if
 * the row lies outside the crop (tf_crop_and_resize). */
static bool row_taps(const resize_args *a, const int64_t *od, int64_t *off, float *w,
                     int *k_out) {
    const q8_resize_params *p = a->p;
    if (a->h->unit_outer) { /* the loop below, without its combinations */
        int64_t at;
        int t = *k_out = unit_outer_offsets(a, od, off, &at);
        const float *wx = (const float *)(a->pk + a->h->w_off[p->rank - 2]) + at;
        for (int j = 0; j < t; j++) w[j] = wx[j]; /* 1 * wx[j] * 1 ...: exact */
        return true;
    }
    int k = 1;
    off[0] = 0;
    w[0] = 1.0f;
    bool inside = true;
    for (int d = p->rank - 2; d >= 0; d--) {
        int64_t o = od[d];
        int t = p->taps[d];
        const int64_t *ix = (const int64_t *)(a->pk + a->h->idx_off[d]) + o * t;
        const float *wx = (const float *)(a->pk + a->h->w_off[d]) + o * t;
        if (p->extrap && a->pk[a->h->ext_off[d] + o]) inside = false;
        if (t == 1) { /* a dim not resized, or nearest: no new combinations */
            for (int i = 0; i < k; i++) {
                off[i] += ix[0];
                w[i] *= wx[0];
            }
            continue;
        }
        /* expand in place, last combination first */
        for (int i = k - 1; i >= 0; i--)
            for (int j = t - 1; j >= 0; j--) {
                off[i * t + j] = off[i] + ix[j];
                w[i * t + j] = w[i] * wx[j];
            }
        k *= t;
    }
    *k_out = k;
    return inside;
}


/* Which of the two kept rows (hoff: the input rows they hold) serves tap j
 * of an output row whose two taps read input rows off[0], off[1]. *fill:
 * the row must be made there first (the slot the other tap does not use;
 * hoff already says it holds off[j]). */
static int hrow_slot(int64_t hoff[2], const int64_t *off, int j, bool *fill) {
    int slot = hoff[0] == off[j] ? 0 : hoff[1] == off[j] ? 1 : -1;
    *fill = slot < 0;
    if (*fill) {
        slot = hoff[0] == off[1 - j] ? 1 : 0;
        hoff[slot] = off[j];
    }
    return slot;
}

/* FP32 bilinear, separable as the int8 path below: each input row is
 * interpolated along W once into h (w0 x0 + w1 x1, as the per-element
 * formula groups it), and each output row blends two such rows
 * (a0 h0 + a1 h1): the per-element formula's operations in its order, so
 * the same bits. Cloned per ISA; resize.c is built without FMA contraction
 * (CMakeLists.txt), so no clone fuses the blend and every one rounds alike. */
Q8_CLONES static void f32_hrow(const float *xr, const int64_t *ixw, const float *ww, int64_t n,
                               float *h) {
    for (int64_t o = 0; o < n; o++)
        h[o] = ww[2 * o] * xr[ixw[2 * o]] + ww[2 * o + 1] * xr[ixw[2 * o + 1]];
}

Q8_CLONES static void f32_blend(const float *h0, const float *h1, float a0, float a1, float *y,
                                int64_t n) {
    for (int64_t o = 0; o < n; o++) y[o] = a0 * h0[o] + a1 * h1[o];
}

static void resize_f32(void *arg, int64_t b, int64_t e, int tid) {
    const resize_args *a = arg;
    const q8_resize_params *p = a->p;
    int last = p->rank - 1, tw = p->taps[last];
    int64_t ow_n = p->out[last];
    const int64_t *ixw = (const int64_t *)(a->pk + a->h->idx_off[last]);
    const float *ww = (const float *)(a->pk + a->h->w_off[last]);
    const uint8_t *extw = a->pk + a->h->ext_off[last];
    const q8_resize_hrun *hplan =
        a->h->hplan_off ? (const q8_resize_hrun *)(a->pk + a->h->hplan_off) : NULL;
    const float *x = a->x;
    int64_t off[MAX_ROW_TAPS];
    float w[MAX_ROW_TAPS];
    float hbuf[2][RESIZE_HROW_MAX];
    int64_t hoff[2] = {-1, -1}; /* the input rows hbuf holds */
    int64_t od[Q8_MAX_DIMS];
    row_at(p, b, od);
    for (int64_t row = b; row < e; row++, row_next(p, od)) {
        float *y = (float *)a->y + row * ow_n;
        int k;
        if (!row_taps(a, od, off, w, &k)) {
            for (int64_t o = 0; o < ow_n; o++) y[o] = p->extrap_value;
            continue;
        }
        if (tw == 2 && k == 2 && ow_n <= RESIZE_HROW_MAX && !p->extrap) {
            const float *h[2];
            for (int j = 0; j < 2; j++) {
                bool fill;
                int slot = hrow_slot(hoff, off, j, &fill);
                if (fill && hplan)
                    q8_resize_hrow_x86(x + off[j], hplan, ow_n, p->in[last], hbuf[slot]);
                else if (fill)
                    f32_hrow(x + off[j], ixw, ww, ow_n, hbuf[slot]);
                h[j] = hbuf[slot];
            }
            f32_blend(h[0], h[1], w[0], w[1], y, ow_n);
            continue;
        }
        if (k == 1 && tw == 1) {
            const float *xr = x + off[0];
            for (int64_t o = 0; o < ow_n; o++) y[o] = xr[ixw[o]];
        } else if (tw == 2 && k == 2) {
            /* bilinear over the last two dims, the common case */
            const float *r0 = x + off[0], *r1 = x + off[1];
            float a0 = w[0], a1 = w[1];
            for (int64_t o = 0; o < ow_n; o++) {
                int64_t i0 = ixw[2 * o], i1 = ixw[2 * o + 1];
                float w0 = ww[2 * o], w1 = ww[2 * o + 1];
                y[o] = a0 * (w0 * r0[i0] + w1 * r0[i1]) + a1 * (w0 * r1[i0] + w1 * r1[i1]);
            }
        } else if (tw == 2) {
            for (int64_t o = 0; o < ow_n; o++) {
                int64_t i0 = ixw[2 * o], i1 = ixw[2 * o + 1];
                float w0 = ww[2 * o], w1 = ww[2 * o + 1], acc = 0.0f;
                for (int j = 0; j < k; j++) {
                    const float *xr = x + off[j];
                    acc += w[j] * (w0 * xr[i0] + w1 * xr[i1]);
                }
                y[o] = acc;
            }
        } else if (tw == 4) {
            /* cubic: same sums as below, unrolled */
            for (int64_t o = 0; o < ow_n; o++) {
                const int64_t *iq = ixw + 4 * o;
                const float *wq = ww + 4 * o;
                float acc = 0.0f;
                for (int j = 0; j < k; j++) {
                    const float *xr = x + off[j];
                    acc += w[j] * (wq[0] * xr[iq[0]] + wq[1] * xr[iq[1]] + wq[2] * xr[iq[2]] +
                                   wq[3] * xr[iq[3]]);
                }
                y[o] = acc;
            }
        } else {
            for (int64_t o = 0; o < ow_n; o++) {
                float acc = 0.0f;
                for (int j = 0; j < k; j++) {
                    const float *xr = x + off[j];
                    float s = 0.0f;
                    for (int q = 0; q < tw; q++) s += ww[o * tw + q] * xr[ixw[o * tw + q]];
                    acc += w[j] * s;
                }
                y[o] = acc;
            }
        }
        if (p->extrap)
            for (int64_t o = 0; o < ow_n; o++)
                if (extw[o]) y[o] = p->extrap_value;
    }
}

/* The integer form of row_taps for int8 / uint8 linear: at most two dims
 * interpolate, so the product of the leading dims' weights fits easily. */
static void row_taps_int(const resize_args *a, const int64_t *od, int64_t *off, int32_t *w,
                         int *k_out) {
    const q8_resize_params *p = a->p;
    if (a->h->unit_outer) { /* as row_taps: a one-tap dim's integer weight is 1 */
        int64_t at;
        int t = *k_out = unit_outer_offsets(a, od, off, &at);
        const int32_t *wx = (const int32_t *)(a->pk + a->h->wi_off[p->rank - 2]) + at;
        for (int j = 0; j < t; j++) w[j] = wx[j];
        return;
    }
    int k = 1;
    off[0] = 0;
    w[0] = 1;
    for (int d = p->rank - 2; d >= 0; d--) {
        int64_t o = od[d];
        int t = p->taps[d];
        const int64_t *ix = (const int64_t *)(a->pk + a->h->idx_off[d]) + o * t;
        const int32_t *wx = (const int32_t *)(a->pk + a->h->wi_off[d]) + o * t;
        for (int i = k - 1; i >= 0; i--)
            for (int j = t - 1; j >= 0; j--) {
                off[i * t + j] = off[i] + ix[j];
                w[i * t + j] = w[i] * wx[j];
            }
        k *= t;
    }
    *k_out = k;
}

/* int8 / uint8 linear (q8_resize_round of the integer sums, resize.h).
 * Bilinear (two taps along H and W, the common case) is separable, as in
 * OpenCV: each input row a thread needs is interpolated along W once into
 * an int32 row (w0 x0 + w1 x1 < 2^19), reused by the output rows that read
 * it, and each output row is a vectorizable blend of two such rows. The
 * sums are exact integers, so the order does not change a bit. */
#define RESIZE_INT_LINEAR(NAME, T, IS_U8)                                                         \
    static void NAME##_hrow(const T *xr, const int64_t *ixw, const int32_t *ww, int64_t n,        \
                            int32_t *h) {                                                         \
        for (int64_t o = 0; o < n; o++)                                                           \
            h[o] = ww[2 * o] * xr[ixw[2 * o]] + ww[2 * o + 1] * xr[ixw[2 * o + 1]];               \
    }                                                                                             \
    Q8_CLONES static void NAME##_blend(const int32_t *h0, const int32_t *h1, int32_t a0,         \
                                       int32_t a1, int shift, T *y, int64_t n) {                  \
        for (int64_t o = 0; o < n; o++) y[o] = (T)q8_resize_round(a0 * h0[o] + a1 * h1[o], shift); \
    }                                                                                             \
    static void NAME(void *arg, int64_t b, int64_t e, int tid) {                                  \
        const resize_args *a = arg;                                                               \
        const q8_resize_params *p = a->p;                                                         \
        int last = p->rank - 1, tw = p->taps[last], shift = a->h->shift;                          \
        int64_t ow_n = p->out[last];                                                              \
        const int64_t *ixw = (const int64_t *)(a->pk + a->h->idx_off[last]);                      \
        const int32_t *ww = (const int32_t *)(a->pk + a->h->wi_off[last]);                        \
        const q8_resize_hrun *hplan =                                                             \
            a->h->hplan_off ? (const q8_resize_hrun *)(a->pk + a->h->hplan_off) : NULL;           \
        const T *x = a->x;                                                                        \
        int64_t off[MAX_ROW_TAPS];                                                                \
        int32_t w[MAX_ROW_TAPS];                                                                  \
        int32_t hbuf[2][RESIZE_HROW_MAX];                                                         \
        int64_t hoff[2] = {-1, -1}; /* the input rows hbuf holds */                               \
        int64_t od[Q8_MAX_DIMS];                                                                  \
        row_at(p, b, od);                                                                         \
        for (int64_t row = b; row < e; row++, row_next(p, od)) {                                  \
            T *y = (T *)a->y + row * ow_n;                                                        \
            int k;                                                                                \
            row_taps_int(a, od, off, w, &k);                                                      \
            if (tw == 2 && k == 2 && ow_n <= RESIZE_HROW_MAX) {                                   \
                const int32_t *h[2];                                                              \
                for (int j = 0; j < 2; j++) {                                                     \
                    bool fill;                                                                    \
                    int slot = hrow_slot(hoff, off, j, &fill);                                    \
                    if (fill && hplan)                                                    \
                        q8_resize_hrow_int_x86(x + off[j], IS_U8, hplan, ow_n, p->in[last],   \
                                               hbuf[slot]);                                   \
                    else if (fill)                                                            \
                        NAME##_hrow(x + off[j], ixw, ww, ow_n, hbuf[slot]);                   \
                    h[j] = hbuf[slot];                                                            \
                }                                                                                 \
                NAME##_blend(h[0], h[1], w[0], w[1], shift, y, ow_n);                             \
                continue;                                                                         \
            }                                                                                     \
            for (int64_t o = 0; o < ow_n; o++) {                                                  \
                int32_t s = 0;                                                                    \
                for (int j = 0; j < k; j++) {                                                     \
                    const T *xr = x + off[j];                                                     \
                    int32_t rs = 0;                                                               \
                    for (int q = 0; q < tw; q++) rs += ww[o * tw + q] * xr[ixw[o * tw + q]];      \
                    s += w[j] * rs;                                                               \
                }                                                                                 \
                y[o] = (T)q8_resize_round(s, shift);                                              \
            }                                                                                     \
        }                                                                                         \
    }
RESIZE_INT_LINEAR(resize_i8_linear, int8_t, false)
RESIZE_INT_LINEAR(resize_u8_linear, uint8_t, true)

/* Upsampling by 2 along W (ixw[o] == o / 2, the common nearest 2x): each
 * element written twice, as one element twice as wide, which the compiler
 * vectorizes (the byte gather does not). */
static bool doubles_w(const int64_t *ixw, int64_t n) {
    if (n < 2 || n % 2) return false;
    for (int64_t o = 0; o < n; o++)
        if (ixw[o] != o / 2) return false;
    return true;
}

static void double_u8(const uint8_t *x, uint8_t *y, int64_t n_in) {
    for (int64_t i = 0; i < n_in; i++) {
        uint16_t v = (uint16_t)(x[i] * 0x0101u);
        memcpy(y + 2 * i, &v, 2);
    }
}

static void double_u32(const uint8_t *x, uint8_t *y, int64_t n_in) {
    for (int64_t i = 0; i < n_in; i++) {
        uint32_t v;
        memcpy(&v, x + 4 * i, 4);
        uint64_t w = (uint64_t)v * 0x100000001ull;
        memcpy(y + 8 * i, &w, 8);
    }
}

/* Nearest for any element size: every tap has weight 1, k == 1. An output
 * row that reads the input row the one before it read (upsampling along H)
 * is a copy of that output row. */
static void resize_gather(void *arg, int64_t b, int64_t e, int tid) {
    const resize_args *a = arg;
    const q8_resize_params *p = a->p;
    int last = p->rank - 1;
    int64_t ow_n = p->out[last];
    const int64_t *ixw = (const int64_t *)(a->pk + a->h->idx_off[last]);
    int64_t off[MAX_ROW_TAPS];
    float w[MAX_ROW_TAPS];
    size_t es = q8_dtype_size(p->dtype);
    bool twice = (es == 1 || es == 4) && doubles_w(ixw, ow_n);
    int64_t prev = -1, od[Q8_MAX_DIMS];
    row_at(p, b, od);
    for (int64_t row = b; row < e; row++, row_next(p, od)) {
        int k;
        row_taps(a, od, off, w, &k);
        const uint8_t *xr = (const uint8_t *)a->x + (size_t)off[0] * es;
        uint8_t *y = (uint8_t *)a->y + (size_t)(row * ow_n) * es;
        if (off[0] == prev) {
            memcpy(y, y - (size_t)ow_n * es, (size_t)ow_n * es);
            continue;
        }
        prev = off[0];
        if (twice) {
            (es == 1 ? double_u8 : double_u32)(xr, y, ow_n / 2);
            continue;
        }
        switch (es) {
        case 1:
            for (int64_t o = 0; o < ow_n; o++) y[o] = xr[ixw[o]];
            break;
        case 4:
            for (int64_t o = 0; o < ow_n; o++) memcpy(y + o * 4, xr + ixw[o] * 4, 4);
            break;
        default:
            for (int64_t o = 0; o < ow_n; o++) memcpy(y + o * 8, xr + ixw[o] * 8, 8);
            break;
        }
    }
}

static void resize_run(const q8_exec *x, const q8_node *n) {
    const q8_resize_params *p = n->params;
    int64_t ow_n = p->out[p->rank - 1];
    if (p->rows == 0 || ow_n == 0) return;
    resize_args a = {p, x->prep, x->prep, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0)};
    int64_t grain = ow_n >= 4096 ? 1 : 4096 / ow_n;
    /* an int8 linear Resize whose outputs all land on input indices (no
     * shift: every tap has weight 1) is a copy */
    bool copy = p->dtype != Q8_F32 && (!int_linear(p) || a.h->shift == 0);
    /* float nearest is a gather too (rows past a crop need resize_f32) */
    copy |= p->dtype == Q8_F32 && p->mode == Q8_RESIZE_NEAREST && !p->extrap;
    void (*fn)(void *, int64_t, int64_t, int) = copy                  ? resize_gather
                                                 : p->dtype == Q8_F32 ? resize_f32
                                                 : p->dtype == Q8_I8   ? resize_i8_linear
                                                                       : resize_u8_linear;
    q8_parallel_for(x->pool, p->rows, grain, fn, &a);
}

const q8_cpu_op q8_cpu_resize = {.prepare = resize_prepare, .run = resize_run};
