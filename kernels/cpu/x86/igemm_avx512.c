/* AVX-512 VNNI path: vpdpbusd tiles of up to 6 rows x 64 lanes, and the
 * AVX-512 epilogue (64-bit requantization, masked tails). Compiled for
 * these ISAs whatever the build flags; only called when the CPU has them. */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))), \
                             apply_to = function)
#pragma STDC FP_CONTRACT OFF
#else
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni")
#pragma GCC optimize("fp-contract=off")
#endif

#include <immintrin.h>

#include "igemm.h"
#include "qsimd_avx512.h"

typedef int32_t __attribute__((may_alias, aligned(1))) i32u;

/* A tile of MR rows x NP panels (MR, NP compile-time constants after
 * inlining) with named accumulators: GCC keeps an array of vectors in
 * registers too, but then copies every one of them each iteration. U: the
 * broadcast row bytes are the unsigned operand. */
#define DP(c, b, l) c = U ? _mm512_dpbusd_epi32(c, b, l) : _mm512_dpbusd_epi32(c, l, b)
#define ROW(r, c0, c1, c2, c3)                                                              \
    if (MR > r) {                                                                           \
        __m512i b = _mm512_set1_epi32(*(const i32u *)(R + (r) * kp));                       \
        DP(c0, b, l0);                                                                      \
        if (NP > 1) DP(c1, b, l1);                                                          \
        if (NP > 2) DP(c2, b, l2);                                                          \
        if (NP > 3) DP(c3, b, l3);                                                          \
    }
#define STORE(r, c0, c1, c2, c3)                                                            \
    if (MR > r) {                                                                           \
        _mm512_store_si512((void *)(tile + (r) * 64), c0);                                  \
        if (NP > 1) _mm512_store_si512((void *)(tile + (r) * 64 + 16), c1);                 \
        if (NP > 2) _mm512_store_si512((void *)(tile + (r) * 64 + 32), c2);                 \
        if (NP > 3) _mm512_store_si512((void *)(tile + (r) * 64 + 48), c3);                 \
    }

#if defined(__clang__)
#define EPI_UNROLL
#else
#define EPI_UNROLL _Pragma("GCC unroll 4")
#endif

/* The first n of 16 lanes (none for n <= 0, all for n >= 16). */
static inline __mmask16 lanes16(int64_t n) {
    return n >= 16 ? 0xffff : n <= 0 ? 0 : (__mmask16)((1u << n) - 1);
}

/* Where the lanes of a vector of columns [j, j + 16) go on a grid of rows
 * of vrow columns (q8_igemm_args.vrow): a run per grid row they touch (16
 * at most), each a mask and the element offset of lane 0 from row i's
 * start; lanes past valid (a mask) are dropped. */
typedef struct vr_runs {
    int n;
    __mmask16 m[16];
    int64_t at[16];
} vr_runs;

static inline vr_runs vr_map(const q8_igemm_args *a, int64_t j, __mmask16 valid) {
    vr_runs v = {0};
    int64_t gr = j / a->vrow, col = j % a->vrow;
    for (int64_t l = 0; l < 16; gr++, col = 0) {
        int64_t len = a->vrow - col; /* lanes to this grid row's end */
        if (len > 16 - l) len = 16 - l;
        int64_t n = a->vcols - col < len ? a->vcols - col : len;
        if (n > 0) {
            v.m[v.n] = (__mmask16)((((1u << n) - 1) << l) & valid);
            v.at[v.n++] = gr * a->vcols + col - l;
        }
        l += len;
    }
    return v;
}

/* Vector v of a tile row's results to row i of the output: at column j0 +
 * 16 v under mask m, or mapped (VR). es: element size; store(p, m, y). */
#define PUT(VR, base, es, v, mv, store)                                                   \
    do {                                                                                  \
        if (!(VR)) {                                                                      \
            store((base) + (j0 + 16 * (v)) * (es), mv);                                   \
        } else {                                                                          \
            const vr_runs *vr_ = &vr[v];                                                  \
            for (int u_ = 0; u_ < vr_->n; u_++)                                           \
                store((char *)((uintptr_t)(base) + (uintptr_t)(vr_->at[u_] * (es))),      \
                      vr_->m[u_]);                                                        \
        }                                                                                 \
    } while (0)

/* The epilogue of one tile row (output row i = i0 + r, columns from
 * j0 = 16 * p0, nj of them valid) from its accumulators, without a trip
 * through memory: the init_row add, then the per-row requantization / float
 * scale (rows are channels: Q8_CH_ROW, or Q8_CH_ONE). VR: the columns are
 * mapped (q8_igemm_args.vrow) as vr[v] says for vector v (the same for every
 * row: made once a tile; its masks already exclude columns past nj). */
static inline __attribute__((always_inline)) void epi_row(const q8_igemm_args *a, int64_t i,
                                                          int64_t j0, int64_t nj, int NP,
                                                          bool VR, const vr_runs *vr,
                                                          __m512i c0, __m512i c1, __m512i c2,
                                                          __m512i c3) {
    const q8_epilogue *e = a->epi;
    __m512i init = _mm512_set1_epi32(a->init_row ? a->init_row[i] : 0);
    __m512i acc[4] = {_mm512_add_epi32(c0, init), _mm512_add_epi32(c1, init),
                      _mm512_add_epi32(c2, init), _mm512_add_epi32(c3, init)};
    __mmask16 m[4];
    EPI_UNROLL for (int v = 0; v < NP; v++) m[v] = lanes16(nj - 16 * v);
    int64_t ch = e->chan == Q8_CH_ONE ? 0 : i + a->chan_offset;
    if (e->kind == Q8_EPI_I8) {
        char *o8 = (char *)a->out + i * a->ldo; /* row i's start */
        int8_t *o = (int8_t *)o8 + j0;
        int32_t sh = e->shift[ch];
        __m512i y[4];
        if (sh >= 33 && !e->leaky_lut) {
            /* the clamp to [-128, 127] by saturation when packing */
            q8v16_rq r = q8v16_rq_chan(e->mult[ch], sh, e->lo, e->hi);
            EPI_UNROLL for (int v = 0; v < NP; v++) {
                y[v] = q8v16_requant_fast_raw(acc[v], r.mult, r.mult, r.rnd, r.sh);
                if (e->lo > -128) y[v] = _mm512_max_epi32(y[v], r.lo);
                if (e->hi < 127) y[v] = _mm512_min_epi32(y[v], r.hi);
            }
            if (!VR && NP == 4 && m[3] == 0xffff) {
                _mm512_storeu_si512((void *)o, q8v16_pack4_sat(y[0], y[1], y[2], y[3]));
            } else {
                EPI_UNROLL for (int v = 0; v < NP; v++) {
#define ST(p, mk) _mm512_mask_cvtsepi32_storeu_epi8(p, mk, y[v])
                    PUT(VR, o8, 1, v, m[v], ST);
#undef ST
                }
            }
            return;
        }
        if (sh >= 33) {
            q8v16_rq r = q8v16_rq_chan(e->mult[ch], sh, e->lo, e->hi);
            EPI_UNROLL for (int v = 0; v < NP; v++)
                y[v] = q8v16_requant_fast(acc[v], r.mult, r.mult, r.rnd, r.sh, r.lo, r.hi);
        } else {
            __m512i mult = _mm512_set1_epi32(e->mult[ch]), shift = _mm512_set1_epi32(sh);
            __m512i lo = _mm512_set1_epi64(e->lo), hi = _mm512_set1_epi64(e->hi);
            EPI_UNROLL for (int v = 0; v < NP; v++)
                y[v] = q8v16_requant_any(acc[v], mult, shift, lo, hi);
        }
        if (e->leaky_lut)
            EPI_UNROLL for (int v = 0; v < NP; v++) y[v] = q8v16_leaky(y[v], e->leaky_lut);
        EPI_UNROLL for (int v = 0; v < NP; v++) {
#define ST(p, mk) _mm512_mask_cvtepi32_storeu_epi8(p, mk, y[v])
            PUT(VR, o8, 1, v, m[v], ST);
#undef ST
        }
    } else if (e->kind == Q8_EPI_F32) {
        char *of = (char *)((float *)a->out + i * a->ldo);
        const __m512 scale = _mm512_set1_ps(e->scale[ch]);
        EPI_UNROLL for (int v = 0; v < NP; v++) {
            __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[v]), scale);
            if (e->clip)
                y = _mm512_min_ps(_mm512_max_ps(y, _mm512_set1_ps(e->flo)), _mm512_set1_ps(e->fhi));
            if (e->leaky)
                y = _mm512_mask_mul_ps(y, _mm512_cmp_ps_mask(y, _mm512_setzero_ps(), _CMP_LT_OQ),
                                       y, _mm512_set1_ps(e->alpha));
#define ST(p, mk) _mm512_mask_storeu_ps(p, mk, y)
            PUT(VR, of, 4, v, m[v], ST);
#undef ST
        }
    } else {
        char *oi = (char *)((int32_t *)a->out + i * a->ldo);
        EPI_UNROLL for (int v = 0; v < NP; v++) {
#define ST(p, mk) _mm512_mask_storeu_epi32(p, mk, acc[v])
            PUT(VR, oi, 4, v, m[v], ST);
#undef ST
        }
    }
}

#define EPI(r, c0, c1, c2, c3)                                                              \
    if (MR > r) epi_row(a, i0 + (r), j0, nj, NP, VR, vr, c0, c1, c2, c3);

/* FUSED: the epilogue straight from the accumulators (epi_row) instead of
 * storing them to tile. IMP: the lanes read in place (lane_off), panels 64
 * bytes apart; the fused epilogue then maps the columns if vrow is set. */
static inline __attribute__((always_inline)) void tile_vnni(const q8_igemm_args *a, int64_t i0,
                                                            int64_t p0, int32_t *tile, int MR,
                                                            int NP, bool U, bool FUSED,
                                                            bool IMP) {
    size_t kp = (size_t)q8_ig_kpad(a->K), ps = IMP ? 64 : kp * Q8_IG_LANES;
    const uint8_t *L = a->lanes + (size_t)p0 * ps, *R = a->rows + (size_t)i0 * kp;
    const int64_t *off = a->lane_off;
    __m512i c00 = _mm512_setzero_si512(), c01 = c00, c02 = c00, c03 = c00;
    __m512i c10 = c00, c11 = c00, c12 = c00, c13 = c00, c20 = c00, c21 = c00, c22 = c00;
    __m512i c23 = c00, c30 = c00, c31 = c00, c32 = c00, c33 = c00, c40 = c00, c41 = c00;
    __m512i c42 = c00, c43 = c00, c50 = c00, c51 = c00, c52 = c00, c53 = c00;
    for (size_t k4 = 0; k4 < kp / 4; k4++, R += 4) {
        const uint8_t *Lk = IMP ? L + off[k4] : L + k4 * 64;
        __m512i l0 = _mm512_loadu_si512((const void *)Lk), l1 = l0, l2 = l0, l3 = l0;
        if (NP > 1) l1 = _mm512_loadu_si512((const void *)(Lk + ps));
        if (NP > 2) l2 = _mm512_loadu_si512((const void *)(Lk + 2 * ps));
        if (NP > 3) l3 = _mm512_loadu_si512((const void *)(Lk + 3 * ps));
        ROW(0, c00, c01, c02, c03)
        ROW(1, c10, c11, c12, c13)
        ROW(2, c20, c21, c22, c23)
        ROW(3, c30, c31, c32, c33)
        ROW(4, c40, c41, c42, c43)
        ROW(5, c50, c51, c52, c53)
    }
    if (FUSED) {
        int64_t j0 = p0 * Q8_IG_LANES, nj = a->J - j0;
        const bool VR = IMP && a->vrow;
        vr_runs vr[4];
        for (int v = 0; VR && v < NP; v++) vr[v] = vr_map(a, j0 + 16 * v, lanes16(nj - 16 * v));
        EPI(0, c00, c01, c02, c03)
        EPI(1, c10, c11, c12, c13)
        EPI(2, c20, c21, c22, c23)
        EPI(3, c30, c31, c32, c33)
        EPI(4, c40, c41, c42, c43)
        EPI(5, c50, c51, c52, c53)
    } else {
        STORE(0, c00, c01, c02, c03)
        STORE(1, c10, c11, c12, c13)
        STORE(2, c20, c21, c22, c23)
        STORE(3, c30, c31, c32, c33)
        STORE(4, c40, c41, c42, c43)
        STORE(5, c50, c51, c52, c53)
    }
}

#define TILE_CASE(MR, NP)                                                                   \
    case MR * 8 + NP:                                                                       \
        if (a->rows_u8) tile_vnni(a, i0, p0, tile, MR, NP, true, false, false);             \
        else tile_vnni(a, i0, p0, tile, MR, NP, false, false, false);                       \
        break;
#define TILE_ROW(MR) TILE_CASE(MR, 1) TILE_CASE(MR, 2) TILE_CASE(MR, 3) TILE_CASE(MR, 4)

void q8_ig_tile_avx512vnni(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np,
                           int32_t *tile) {
    switch (mr * 8 + np) {
        TILE_ROW(1) TILE_ROW(2) TILE_ROW(3) TILE_ROW(4) TILE_ROW(5) TILE_ROW(6)
    default: __builtin_unreachable();
    }
}

/* Every MR x NP instance of tile_vnni with R signed, FUSED and IMP fixed. */
#define SIGNED_CASE(MR, NP, T, FUSED, IMP)                                                  \
    case MR * 8 + NP: tile_vnni(a, i0, p0, T, MR, NP, false, FUSED, IMP); break;
#define SIGNED_ROW(MR, T, F, I)                                                             \
    SIGNED_CASE(MR, 1, T, F, I) SIGNED_CASE(MR, 2, T, F, I) SIGNED_CASE(MR, 3, T, F, I)     \
    SIGNED_CASE(MR, 4, T, F, I)
#define SIGNED_SWITCH(T, F, I)                                                              \
    switch (mr * 8 + np) {                                                                  \
        SIGNED_ROW(1, T, F, I) SIGNED_ROW(2, T, F, I) SIGNED_ROW(3, T, F, I)                \
        SIGNED_ROW(4, T, F, I) SIGNED_ROW(5, T, F, I) SIGNED_ROW(6, T, F, I)                \
    default: __builtin_unreachable();                                                       \
    }

/* The tile with its epilogue: rows are channels (Q8_CH_ROW or Q8_CH_ONE),
 * no init_col, R signed (the QConv / QMatMul orientation). */
void q8_ig_tile_epi_avx512vnni(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np) {
    SIGNED_SWITCH(NULL, true, false)
}

/* The implicit conv's tiles: lanes in place, R signed (its weights). */
void q8_ig_tile_imp_avx512vnni(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np,
                               int32_t *tile) {
    SIGNED_SWITCH(tile, false, true)
}

void q8_ig_tile_imp_epi_avx512vnni(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0,
                                   int np) {
    SIGNED_SWITCH(NULL, true, true)
}

/* ---- depthwise row ------------------------------------------------------- */

/* 32 outputs at a time, all taps in registers, the tail masked. Two taps
 * per vpmaddwd as in the AVX2 version; unpacklo/hi leave the outputs in
 * 128-bit blocks 0-3 8-11 16-19 24-27 | 4-7 12-15 20-23 28-31. */
void q8_dw_row_avx512(const int8_t *x, const int64_t *off, const int8_t *w, int64_t taps,
                      int32_t init, int64_t n, int32_t *out) {
    const __m512i i0 = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
    const __m512i i1 = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
    for (int64_t o = 0; o < n; o += 32) {
        __mmask32 m = n - o >= 32 ? 0xffffffffu : (__mmask32)((1u << (n - o)) - 1);
        __m512i lo = _mm512_set1_epi32(init), hi = lo;
        for (int64_t t = 0; t < taps; t += 2) {
            __m512i x0 = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, x + off[t] + o));
            __m512i x1 = t + 1 < taps
                             ? _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, x + off[t + 1] + o))
                             : x0;
            uint32_t w1 = t + 1 < taps ? (uint16_t)w[t + 1] : 0;
            __m512i wp = _mm512_set1_epi32((int32_t)((uint16_t)w[t] | w1 << 16));
            lo = _mm512_add_epi32(lo, _mm512_madd_epi16(_mm512_unpacklo_epi16(x0, x1), wp));
            hi = _mm512_add_epi32(hi, _mm512_madd_epi16(_mm512_unpackhi_epi16(x0, x1), wp));
        }
        _mm512_mask_storeu_epi32(out + o, (__mmask16)m, _mm512_permutex2var_epi64(lo, i0, hi));
        _mm512_mask_storeu_epi32(out + o + 16, (__mmask16)(m >> 16),
                                 _mm512_permutex2var_epi64(lo, i1, hi));
    }
}

/* ---- epilogue ----------------------------------------------------------- */

void q8_ig_epi_avx512(const q8_epilogue *e, const int32_t *acc, int64_t n, int64_t ch0,
                      void *out) {
    bool col = e->chan == Q8_CH_COL;
    int64_t c = e->chan == Q8_CH_ONE ? 0 : ch0;
    if (e->kind == Q8_EPI_I32) {
        for (int64_t j = 0; j < n; j += 16) {
            __mmask16 m = n - j >= 16 ? 0xffff : (__mmask16)((1u << (n - j)) - 1);
            _mm512_mask_storeu_epi32((int32_t *)out + j, m, _mm512_maskz_loadu_epi32(m, acc + j));
        }
    } else if (e->kind == Q8_EPI_I8) {
        int8_t *o = out;
        if (!col && e->shift[c] >= 33) { /* one channel: the fast requantization */
            q8v16_rq r = q8v16_rq_chan(e->mult[c], e->shift[c], e->lo, e->hi);
            for (int64_t j = 0; j < n; j += 16) {
                __mmask16 m = n - j >= 16 ? 0xffff : (__mmask16)((1u << (n - j)) - 1);
                __m512i y = q8v16_requant_fast(_mm512_maskz_loadu_epi32(m, acc + j), r.mult,
                                               r.mult, r.rnd, r.sh, r.lo, r.hi);
                if (e->leaky_lut) y = q8v16_leaky(y, e->leaky_lut);
                _mm512_mask_cvtepi32_storeu_epi8(o + j, m, y);
            }
            return;
        }
        __m512i mult = _mm512_set1_epi32(e->mult[c]), shift = _mm512_set1_epi32(e->shift[c]);
        for (int64_t j = 0; j < n; j += 16) {
            __mmask16 m = n - j >= 16 ? 0xffff : (__mmask16)((1u << (n - j)) - 1);
            if (col) {
                mult = _mm512_maskz_loadu_epi32(m, e->mult + c + j);
                shift = _mm512_mask_loadu_epi32(_mm512_set1_epi32(1), m, e->shift + c + j);
            }
            __m512i y = q8v16_requant_lanes(_mm512_maskz_loadu_epi32(m, acc + j), mult, shift, m,
                                            e->lo, e->hi);
            if (e->leaky_lut) y = q8v16_leaky(y, e->leaky_lut);
            _mm512_mask_cvtepi32_storeu_epi8(o + j, m, y);
        }
    } else {
        const __m512 flo = _mm512_set1_ps(e->flo), fhi = _mm512_set1_ps(e->fhi);
        const __m512 alpha = _mm512_set1_ps(e->alpha), zero = _mm512_setzero_ps();
        __m512 scale = _mm512_set1_ps(e->scale[c]);
        for (int64_t j = 0; j < n; j += 16) {
            __mmask16 m = n - j >= 16 ? 0xffff : (__mmask16)((1u << (n - j)) - 1);
            if (col) scale = _mm512_maskz_loadu_ps(m, e->scale + c + j);
            __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_maskz_loadu_epi32(m, acc + j)),
                                     scale);
            if (e->clip) y = _mm512_min_ps(_mm512_max_ps(y, flo), fhi);
            if (e->leaky) {
                __mmask16 neg = _mm512_cmp_ps_mask(y, zero, _CMP_LT_OQ);
                y = _mm512_mask_mul_ps(y, neg, y, alpha);
            }
            _mm512_mask_storeu_ps((float *)out + j, m, y);
        }
    }
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
