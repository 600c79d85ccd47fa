/* 2-D MaxPool straight from X on AVX-512: see maxpool_x86.h. Compiled for
 * AVX-512 whatever the build flags; only called when the CPU has it
 * (q8_maxpool_x86_fits checks). */
#include "maxpool_x86.h"

#include "cpu_features.h"
#include "pool_taps.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define MAXPOOL_X86 1
#include <immintrin.h>

#include "conv_px_avx512.h" /* in_mask */
#else
#define MAXPOOL_X86 0
#endif

/* Masks of (output chunk, kw) pairs live on the stack: at most this many;
 * AveragePool's per-lane counts too: at most this many chunks of 16. */
enum { MP_MAX_MASKS = 256, AVG_MAX_CHUNKS = 32 };

#if MAXPOOL_X86
/* Output lanes a vector: 16 floats or 64 bytes. */
static int64_t lanes_of(q8_dtype dt) { return dt == Q8_F32 ? 16 : 64; }
#endif

bool q8_maxpool_x86_fits(const q8_pool_params *p) {
#if MAXPOOL_X86
    const q8_cpu_features *f = q8_cpu();
    if (p->in[0] != 1 || p->k[0] != 1 || p->out[0] != 1 || p->pb[0] || p->pe[0]) return false;
    if (p->d[1] != 1 || p->d[2] != 1 || (p->s[2] != 1 && p->s[2] != 2)) return false;
    if (p->avg) /* float only; its per-lane counts live on the stack */
        return p->dtype == Q8_F32 && f->avx512f && (p->out[2] + 15) / 16 <= AVG_MAX_CHUNKS &&
               (p->out[2] + 15) / 16 * p->k[2] <= MP_MAX_MASKS;
    if (p->dtype == Q8_F32) {
        if (!f->avx512f) return false;
    } else if (p->dtype == Q8_I8 || p->dtype == Q8_U8) {
        if (!f->avx512bw || (p->s[2] == 2 && !f->avx512vbmi)) return false;
    } else {
        return false;
    }
    int64_t L = lanes_of(p->dtype);
    return (p->out[2] + L - 1) / L * p->k[2] <= MP_MAX_MASKS;
#else
    (void)p;
    return false;
#endif
}

#if MAXPOOL_X86

/* The valid input lanes of each (chunk c, tap kw): mk[c*KW + kw][0] for the
 * first load of L inputs, [1] for the second (stride 2 reads 2L). */
static void masks_of(const q8_pool_params *p, int64_t L, uint64_t (*mk)[2]) {
    int64_t sw = p->s[2], KW = p->k[2], W = p->in[2], nch = (p->out[2] + L - 1) / L;
    for (int64_t c = 0; c < nch; c++)
        for (int64_t kw = 0; kw < KW; kw++) {
            int64_t s = c * L * sw - p->pb[2] + kw;
            mk[c * KW + kw][0] = in_mask(s, W, L);
            mk[c * KW + kw][1] = sw == 2 ? in_mask(s + L, W, L) : 0;
        }
}

#define TAP_T(TGT) __attribute__((target(TGT), always_inline)) static inline

/* One tap of L outputs: x[s + sw j], the lowest value where m has no input
 * (and not read there). */
TAP_T("avx512f") __m512 tap_f32(const float *s, const uint64_t *m, int sw, __m512 low,
                                __m512i evens) {
    if (sw == 1)
        return m[0] == 0xffffu ? _mm512_loadu_ps(s)
                               : _mm512_mask_loadu_ps(low, (__mmask16)m[0], s);
    __m512 a, b;
    if ((m[0] & m[1]) == 0xffffu) {
        a = _mm512_loadu_ps(s);
        b = _mm512_loadu_ps(s + 16);
    } else {
        a = _mm512_mask_loadu_ps(low, (__mmask16)m[0], s);
        b = _mm512_mask_loadu_ps(low, (__mmask16)m[1], s + 16);
    }
    return _mm512_permutex2var_ps(a, evens, b);
}

TAP_T("avx512f,avx512bw") __m512i tap_b_s1(const void *s, const uint64_t *m, int sw,
                                           __m512i low, __m512i evens) {
    (void)sw, (void)evens;
    return m[0] == ~0ull ? _mm512_loadu_si512(s) : _mm512_mask_loadu_epi8(low, m[0], s);
}

TAP_T("avx512f,avx512bw,avx512vbmi") __m512i tap_b_s2(const void *s, const uint64_t *m, int sw,
                                                      __m512i low, __m512i evens) {
    (void)sw;
    __m512i a = _mm512_mask_loadu_epi8(low, m[0], s);
    __m512i b = _mm512_mask_loadu_epi8(low, m[1], (const char *)s + 64);
    return _mm512_permutex2var_epi8(a, evens, b);
}

/* The float running max: v > m ? v : m (maxps), so the first of equal
 * values stays. maxps drops a NaN v: it is kept in *nan's lane instead (a
 * blend, not a mask OR: mask-to-GPR moves were the loop's slowest step). */
TAP_T("avx512f") __m512 max_f32(__m512 v, __m512 m, __m512 *nan) {
    *nan = _mm512_mask_mov_ps(*nan, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v);
    return _mm512_max_ps(v, m);
}
TAP_T("avx512f,avx512bw") __m512i max_i8(__m512i v, __m512i m, __m512i *nan) {
    (void)nan;
    return _mm512_max_epi8(v, m);
}
TAP_T("avx512f,avx512bw") __m512i max_u8(__m512i v, __m512i m, __m512i *nan) {
    (void)nan;
    return _mm512_max_epu8(v, m);
}

/* Store the first n (<= L) lanes; float lanes with a NaN tap get NaN. */
TAP_T("avx512f") void store_f32(float *y, __m512 m, __m512 nan, int64_t n) {
    __mmask16 k = _mm512_cmp_ps_mask(nan, nan, _CMP_UNORD_Q);
    m = _mm512_mask_mov_ps(m, k, _mm512_set1_ps(__builtin_nanf("")));
    _mm512_mask_storeu_ps(y, (__mmask16)((1u << n) - 1), m);
}
TAP_T("avx512f,avx512bw") void store_b(void *y, __m512i m, __m512i nan, int64_t n) {
    (void)nan;
    _mm512_mask_storeu_epi8(y, n == 64 ? ~0ull : (1ull << n) - 1, m);
}

/* Rows [b, e) of output, each in chunks of L outputs. Each window row's
 * taps are one running max, and the rows' maxima are then taken in order:
 * the earlier stays on a tie, so the first of equal values in raster order
 * wins, as in one chain over all taps; separate chains run in parallel
 * (one chain of maxps was latency-bound at 2x this time). */
#define DEFINE_ROWS(NAME, TGT, T, V, L, SW, LOW, EVENS, TAP, MAX, STORE)                         \
    __attribute__((target(TGT))) static void NAME(const q8_pool_params *p, const T *x, T *y,     \
                                                   int64_t b, int64_t e,                         \
                                                   const uint64_t (*mk)[2]) {                    \
        const int64_t H = p->in[1], W = p->in[2], OH = p->out[1], OW = p->out[2];                \
        const int64_t KH = p->k[1], KW = p->k[2];                                                \
        const V low = LOW;                                                                       \
        const __m512i evens = EVENS;                                                             \
        int64_t oh = b % OH; /* stepped: a division per row costs more than a row */             \
        const T *xplane = x + b / OH * H * W;                                                    \
        for (int64_t r = b; r < e; r++, oh = oh + 1 == OH ? (xplane += H * W, 0) : oh + 1) {    \
            int64_t h0 = oh * p->s[1] - p->pb[1];                                                \
            int64_t hlo = h0 >= 0 ? 0 : -h0, hhi = H - h0 < KH ? H - h0 : KH;                    \
            const T *xp = xplane - p->pb[2];                                                     \
            T *yr = y + r * OW;                                                                  \
            for (int64_t c0 = 0, c = 0; c0 < OW; c0 += (L), c++) {                               \
                V m = low, nan = (V)_mm512_setzero_si512();                                      \
                const uint64_t(*k)[2] = mk + c * KW;                                             \
                for (int64_t kh = hlo; kh < hhi; kh++) {                                         \
                    const T *row = xp + (h0 + kh) * W + c0 * (SW);                               \
                    V mr = low;                                                                  \
                    if (KW == 3) /* the common width, unrolled (0.026 -> 0.023 ms) */            \
                        for (int64_t kw = 0; kw < 3; kw++)                                       \
                            mr = MAX(TAP(row + kw, k[kw], SW, low, evens), mr, &nan);            \
                    else                                                                         \
                        for (int64_t kw = 0; kw < KW; kw++)                                      \
                            mr = MAX(TAP(row + kw, k[kw], SW, low, evens), mr, &nan);            \
                    m = MAX(mr, m, &nan); /* mr holds no NaN: a blend of nothing */              \
                }                                                                                \
                STORE(yr + c0, m, nan, OW - c0 < (L) ? OW - c0 : (L));                           \
            }                                                                                    \
        }                                                                                        \
    }

#define F32_LOW _mm512_set1_ps(-__builtin_inff())
#define F32_EVENS \
    _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30)
/* Byte lanes 0, 2, ..., 126 of two vectors (VBMI's byte permute). */
#define B_EVENS                                                                                 \
    _mm512_set_epi8(126, 124, 122, 120, 118, 116, 114, 112, 110, 108, 106, 104, 102, 100, 98,   \
                    96, 94, 92, 90, 88, 86, 84, 82, 80, 78, 76, 74, 72, 70, 68, 66, 64, 62, 60, \
                    58, 56, 54, 52, 50, 48, 46, 44, 42, 40, 38, 36, 34, 32, 30, 28, 26, 24, 22, \
                    20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0)

DEFINE_ROWS(rows_f32_s1, "avx512f", float, __m512, 16, 1, F32_LOW, F32_EVENS, tap_f32,
            max_f32, store_f32)
DEFINE_ROWS(rows_f32_s2, "avx512f", float, __m512, 16, 2, F32_LOW, F32_EVENS, tap_f32,
            max_f32, store_f32)
DEFINE_ROWS(rows_i8_s1, "avx512f,avx512bw", int8_t, __m512i, 64, 1, _mm512_set1_epi8(INT8_MIN),
            _mm512_setzero_si512(), tap_b_s1, max_i8, store_b)
DEFINE_ROWS(rows_u8_s1, "avx512f,avx512bw", uint8_t, __m512i, 64, 1, _mm512_setzero_si512(),
            _mm512_setzero_si512(), tap_b_s1, max_u8, store_b)
DEFINE_ROWS(rows_i8_s2, "avx512f,avx512bw,avx512vbmi", int8_t, __m512i, 64, 2,
            _mm512_set1_epi8(INT8_MIN), B_EVENS, tap_b_s2, max_i8, store_b)
DEFINE_ROWS(rows_u8_s2, "avx512f,avx512bw,avx512vbmi", uint8_t, __m512i, 64, 2,
            _mm512_setzero_si512(), B_EVENS, tap_b_s2, max_u8, store_b)

/* Float MaxPool by blocks of output rows of one plane: first the maxima
 * along W of each input row the block reads, once (rows_f32_* take them
 * per output row: an input row of a 3x3/2 pool serves 1.5 of them), into
 * hm; then those down H. No NaN bookkeeping per tap: the block's input rows
 * are checked first (one compare per 16 inputs) and a block holding a NaN
 * is redone by rows_f32_*. Each row's maxima and then the rows' are the
 * composition rows_f32_* computes: the same bits. A 3x3/2 pool on
 * 128x29x29 (the emotion classifier's): 0.026 -> 0.014 ms, 1 thread; 2x2/2
 * on 64x126x126 (antispoof's, no input row shared) 0.109 -> 0.108. */
enum { HM_FLOATS = 8192 }; /* 32 KiB of row maxima on the stack */

static bool hm_fits(const q8_pool_params *p) {
    return p->dtype == Q8_F32 && !p->avg && (p->out[2] + 15) / 16 * 16 * p->k[1] <= HM_FLOATS;
}

/* A row's maxima along W into hr, and whether its inputs hold a NaN. A
 * row of up to 16 outputs whose taps lie within 32 inputs (narrow: (OW - 1) SW + KW <= 32,
 * the planes of up to ~30 columns that small nets pool last) is loaded
 * once, two vectors, its taps permutes of them; else per tap (tap_f32). */
__attribute__((target("avx512f"), always_inline)) static inline bool
hm_row(const q8_pool_params *p, const float *row, float *hr, int sw, bool narrow,
       const uint64_t (*mk)[2], const __m512i *nidx) {
    const int64_t W = p->in[2], OW = p->out[2], KW = p->k[2];
    const __m512 low = F32_LOW;
    __mmask16 bad = 0;
    if (narrow) {
        __m512 a = _mm512_mask_loadu_ps(low, (__mmask16)mk[0][0], row - p->pb[2]);
        __m512 b = _mm512_mask_loadu_ps(low, (__mmask16)mk[0][1], row - p->pb[2] + 16);
        bad = _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q);
        __m512 mr = low;
        if (KW == 3) { /* the common window unrolled: the loop's same steps */
            mr = _mm512_max_ps(_mm512_permutex2var_ps(a, nidx[0], b), mr);
            mr = _mm512_max_ps(_mm512_permutex2var_ps(a, nidx[1], b), mr);
            mr = _mm512_max_ps(_mm512_permutex2var_ps(a, nidx[2], b), mr);
        } else {
            for (int64_t kw = 0; kw < KW; kw++)
                mr = _mm512_max_ps(_mm512_permutex2var_ps(a, nidx[kw], b), mr);
        }
        _mm512_store_ps(hr, mr);
        return bad != 0;
    }
    const __m512i evens = F32_EVENS;
    if (sw == 2) {
        /* Stride 2: taps 0 and 1 are the even and odd lanes of the same two
         * loads (their NaN check too); later taps their own loads */
        const __m512i odds = _mm512_add_epi32(evens, _mm512_set1_epi32(1));
        const float *rs = row - p->pb[2];
        for (int64_t c0 = 0, c = 0; c0 < OW; c0 += 16, c++) {
            const uint64_t(*k)[2] = mk + c * KW;
            const float *t = rs + c0 * 2;
            __m512 a = _mm512_mask_loadu_ps(low, (__mmask16)k[0][0], t);
            __m512 b = _mm512_mask_loadu_ps(low, (__mmask16)k[0][1], t + 16);
            bad |= _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q);
            __m512 mr = _mm512_max_ps(_mm512_permutex2var_ps(a, evens, b), low);
            if (KW > 1) mr = _mm512_max_ps(_mm512_permutex2var_ps(a, odds, b), mr);
            for (int64_t kw = 2; kw < KW; kw++) {
                __m512 v = tap_f32(t + kw, k[kw], 2, low, evens);
                bad |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
                mr = _mm512_max_ps(v, mr);
            }
            _mm512_store_ps(hr + c0, mr);
        }
        return bad != 0;
    }
    const __mmask16 wtail = (__mmask16)((1u << (W % 16)) - 1);
    int64_t j = 0;
    for (; j + 16 <= W; j += 16) {
        __m512 v = _mm512_loadu_ps(row + j);
        bad |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    }
    if (wtail) {
        __m512 v = _mm512_maskz_loadu_ps(wtail, row + j);
        bad |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    }
    const float *rs = row - p->pb[2];
    for (int64_t c0 = 0, c = 0; c0 < OW; c0 += 16, c++) {
        const uint64_t(*k)[2] = mk + c * KW;
        const float *t = rs + c0 * sw;
        __m512 mr = low;
        if (KW == 3)
            for (int64_t kw = 0; kw < 3; kw++)
                mr = _mm512_max_ps(tap_f32(t + kw, k[kw], sw, low, evens), mr);
        else
            for (int64_t kw = 0; kw < KW; kw++)
                mr = _mm512_max_ps(tap_f32(t + kw, k[kw], sw, low, evens), mr);
        _mm512_store_ps(hr + c0, mr);
    }
    return bad != 0;
}

#define DEFINE_HM(NAME, SW, ROWS)                                                               \
    __attribute__((target("avx512f"))) static void NAME(const q8_pool_params *p,               \
                                                         const float *x, float *y, int64_t b,  \
                                                         int64_t e, const uint64_t (*mk)[2]) { \
        const int64_t H = p->in[1], W = p->in[2], OH = p->out[1], OW = p->out[2];              \
        const int64_t KH = p->k[1], KW = p->k[2], sh = p->s[1], pbh = p->pb[1];                \
        const int64_t owp = (OW + 15) / 16 * 16, rb = (HM_FLOATS / owp - KH) / sh + 1;         \
        const bool narrow = OW <= 16 && (OW - 1) * (SW) + KW <= 32;                             \
        uint64_t nmk[1][2] = {{in_mask(-p->pb[2], W, 16), in_mask(16 - p->pb[2], W, 16)}};      \
        __m512i nidx[32];                                                                       \
        for (int64_t kw = 0; narrow && kw < KW; kw++)                                           \
            nidx[kw] = _mm512_add_epi32(                                                        \
                _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,  \
                                                     13, 14, 15),                               \
                                   _mm512_set1_epi32(SW)),                                      \
                _mm512_set1_epi32((int)kw));                                                    \
        const __m512 low = F32_LOW;                                                             \
        float hm[HM_FLOATS] __attribute__((aligned(64)));                                       \
        for (int64_t r = b; r < e;) {                                                           \
            int64_t pl = r / OH, oa = r % OH, ob = oa + rb;                                     \
            if (ob > OH) ob = OH;                                                               \
            if (ob - oa > e - r) ob = oa + (e - r);                                             \
            int64_t ha = oa * sh - pbh, hb = (ob - 1) * sh - pbh + KH;                          \
            ha = ha < 0 ? 0 : ha;                                                               \
            hb = hb > H ? H : hb;                                                               \
            const float *xp = x + pl * H * W;                                                   \
            bool bad = false;                                                                   \
            for (int64_t h = ha; h < hb; h++)                                                   \
                bad |= narrow ? hm_row(p, xp + h * W, hm + (h - ha) * owp, SW, true, nmk, nidx) \
                              : hm_row(p, xp + h * W, hm + (h - ha) * owp, SW, false, mk, NULL);\
            if (bad) {                                                                          \
                ROWS(p, x, y, r, r + (ob - oa), mk);                                            \
                r += ob - oa;                                                                   \
                continue;                                                                       \
            }                                                                                   \
            for (int64_t oh = oa; oh < ob; oh++) {                                              \
                int64_t h0 = oh * sh - pbh;                                                     \
                int64_t hlo = h0 >= 0 ? 0 : -h0, hhi = H - h0 < KH ? H - h0 : KH;               \
                float *yr = y + (pl * OH + oh) * OW;                                            \
                const float *hr0 = hm + (h0 + hlo - ha) * owp;                                  \
                for (int64_t c0 = 0; c0 < OW; c0 += 16) {                                       \
                    __m512 m = low;                                                             \
                    if (hhi - hlo == 3) { /* unrolled: the loop's same steps */                 \
                        m = _mm512_max_ps(_mm512_load_ps(hr0 + c0), m);                         \
                        m = _mm512_max_ps(_mm512_load_ps(hr0 + owp + c0), m);                   \
                        m = _mm512_max_ps(_mm512_load_ps(hr0 + 2 * owp + c0), m);               \
                    } else {                                                                    \
                        for (int64_t kh = 0; kh < hhi - hlo; kh++)                              \
                            m = _mm512_max_ps(_mm512_load_ps(hr0 + kh * owp + c0), m);          \
                    }                                                                           \
                    int64_t n = OW - c0 < 16 ? OW - c0 : 16;                                    \
                    _mm512_mask_storeu_ps(yr + c0, (__mmask16)((1u << n) - 1), m);              \
                }                                                                               \
            }                                                                                   \
            r += ob - oa;                                                                       \
        }                                                                                       \
    }

DEFINE_HM(hm_f32_s1, 1, rows_f32_s1)
DEFINE_HM(hm_f32_s2, 2, rows_f32_s2)

/* Float 2x2 stride-2 windows all inside the input (no padding, 2-D): no
 * input row is shared between output rows, so each output row is its two
 * input rows' pair maxima (the even and odd lanes of two loads each) and
 * then the larger of the two rows, straight into Y: hm_f32_s2's max
 * operations in its order, less its identity max with the lowest value and
 * its row buffer. A row holding a NaN is redone by rows_f32_s2, as hm
 * does: the same bits. Antispoof's 64x126x126 pool: 0.117 -> 0.074 ms
 * (1 thread). */
static bool pool2_fits(const q8_pool_params *p) {
    bool ok = !p->avg && p->in[0] == 1 && p->out[0] == 1 &&
              p->k[0] == 1 && p->k[1] == 2 && p->k[2] == 2 && p->s[1] == 2 && p->s[2] == 2;
    for (int i = 0; i < 3; i++) ok &= p->d[i] == 1 && p->pb[i] == 0;
    return ok && (p->out[1] - 1) * 2 + 2 <= p->in[1] && (p->out[2] - 1) * 2 + 2 <= p->in[2];
}

__attribute__((target("avx512f"))) static void pool2_f32(const q8_pool_params *p, const float *x,
                                                         float *y, int64_t b, int64_t e,
                                                         const uint64_t (*mk)[2]) {
    const int64_t H = p->in[1], W = p->in[2], OH = p->out[1], OW = p->out[2];
    const __m512i evens = F32_EVENS;
    const __m512i odds = _mm512_add_epi32(evens, _mm512_set1_epi32(1));
    int64_t oh = b % OH; /* stepped, as the rows loops */
    const float *xplane = x + b / OH * H * W;
    for (int64_t r = b; r < e; r++, oh = oh + 1 == OH ? (xplane += H * W, 0) : oh + 1) {
        const float *r0 = xplane + oh * 2 * W, *r1 = r0 + W;
        float *yr = y + r * OW;
        __mmask16 bad = 0;
        for (int64_t c0 = 0; c0 < OW; c0 += 16) {
            int64_t n = OW - c0 < 16 ? OW - c0 : 16;
            uint32_t in = n == 16 ? 0xffffffffu : (1u << 2 * n) - 1;
            __mmask16 ma = (__mmask16)in, mb = (__mmask16)(in >> 16);
            const float *t0 = r0 + 2 * c0, *t1 = r1 + 2 * c0;
            __m512 a0 = _mm512_maskz_loadu_ps(ma, t0), b0 = _mm512_maskz_loadu_ps(mb, t0 + 16);
            __m512 a1 = _mm512_maskz_loadu_ps(ma, t1), b1 = _mm512_maskz_loadu_ps(mb, t1 + 16);
            bad |= _mm512_cmp_ps_mask(a0, a1, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(b0, b1, _CMP_UNORD_Q);
            __m512 h0 = _mm512_max_ps(_mm512_permutex2var_ps(a0, odds, b0),
                                      _mm512_permutex2var_ps(a0, evens, b0));
            __m512 h1 = _mm512_max_ps(_mm512_permutex2var_ps(a1, odds, b1),
                                      _mm512_permutex2var_ps(a1, evens, b1));
            _mm512_mask_storeu_ps(yr + c0, (__mmask16)((1u << n) - 1), _mm512_max_ps(h1, h0));
        }
        if (bad) rows_f32_s2(p, x, y, r, r + 1, mk);
    }
}

/* int8 / uint8 2x2 stride-2 windows all inside the input, as pool2_f32 for
 * bytes: per 64 outputs, the two input rows' maxima (four loads, two
 * maxes), then the larger of each pair (the even and odd bytes, one byte
 * permute each). Integer max is exact in any order: the same bytes as the
 * tap-by-tap loops (rows_*_s2: two loads and a permute per tap). Antispoof's
 * INT8 pool on 64x126x126: 0.040 -> 0.015 ms (1 thread). */
#define DEFINE_POOL2_B(NAME, T, MAX)                                                            \
    __attribute__((target("avx512f,avx512bw,avx512vbmi"))) static void NAME(                    \
        const q8_pool_params *p, const T *x, T *y, int64_t b, int64_t e) {                      \
        const int64_t H = p->in[1], W = p->in[2], OH = p->out[1], OW = p->out[2];               \
        const __m512i evens = B_EVENS;                                                          \
        const __m512i odds = _mm512_add_epi8(evens, _mm512_set1_epi8(1));                       \
        int64_t oh = b % OH; /* stepped, as the rows loops */                                   \
        const T *xplane = x + b / OH * H * W;                                                   \
        for (int64_t r = b; r < e; r++, oh = oh + 1 == OH ? (xplane += H * W, 0) : oh + 1) {   \
            const T *r0 = xplane + oh * 2 * W, *r1 = r0 + W;                                    \
            T *yr = y + r * OW;                                                                 \
            for (int64_t c0 = 0; c0 < OW; c0 += 64) {                                           \
                int64_t n = OW - c0 < 64 ? OW - c0 : 64;                                        \
                __mmask64 ma = n >= 32 ? ~0ull : (1ull << 2 * n) - 1;                           \
                __mmask64 mb = n >= 64 ? ~0ull : n > 32 ? (1ull << (2 * n - 64)) - 1 : 0;       \
                const T *t0 = r0 + 2 * c0, *t1 = r1 + 2 * c0;                                   \
                __m512i a = MAX(_mm512_maskz_loadu_epi8(ma, t0), _mm512_maskz_loadu_epi8(ma, t1)); \
                __m512i v = MAX(_mm512_maskz_loadu_epi8(mb, t0 + 64),                           \
                                _mm512_maskz_loadu_epi8(mb, t1 + 64));                          \
                __m512i m = MAX(_mm512_permutex2var_epi8(a, evens, v),                          \
                                _mm512_permutex2var_epi8(a, odds, v));                          \
                _mm512_mask_storeu_epi8(yr + c0, n >= 64 ? ~0ull : (1ull << n) - 1, m);         \
            }                                                                                   \
        }                                                                                       \
    }

DEFINE_POOL2_B(pool2_i8, int8_t, _mm512_max_epi8)
DEFINE_POOL2_B(pool2_u8, uint8_t, _mm512_max_epu8)

/* int8 / uint8 rows of at most 64 inputs (and outputs): the maxima over
 * the window's rows first (one load each), then each tap one byte permute
 * of that vector, lanes outside the row masked to the lowest value.
 * 3x3: 12 operations an output row against the tap-by-tap loops' 36 (the
 * emotion classifier's INT8 pools, 15 outputs a row in 64 lanes, were 12%
 * of its time). The plane and row are stepped, not divided out of r (a
 * 64-bit division per row was a third of the time), and a 3x3 window
 * inside the input is unrolled: 3x3/2 on 128x29x29 13.3 -> 7.5 us
 * (standalone, 1 thread). Lanes past W load as 0 and no permute reads
 * them. Integer max is exact in any order: the same bytes. */
enum { NARROW_MAX_KW = 16 };

#define DEFINE_NARROW(NAME, T, LOWEST, MAX)                                                     \
    __attribute__((target("avx512f,avx512bw,avx512vbmi"))) static void NAME(                    \
        const q8_pool_params *p, const T *x, T *y, int64_t b, int64_t e) {                      \
        const int64_t H = p->in[1], W = p->in[2], OH = p->out[1], OW = p->out[2];               \
        const int64_t KH = p->k[1], KW = p->k[2];                                               \
        const __m512i low = _mm512_set1_epi8((char)(LOWEST));                                   \
        const __mmask64 wm = W >= 64 ? ~0ull : (1ull << W) - 1;                                 \
        const __mmask64 om = OW >= 64 ? ~0ull : (1ull << OW) - 1;                               \
        __m512i idx[NARROW_MAX_KW];                                                             \
        __mmask64 ok[NARROW_MAX_KW];                                                            \
        for (int64_t kw = 0; kw < KW; kw++) {                                                   \
            uint8_t ix[64];                                                                     \
            uint64_t m = 0;                                                                     \
            for (int64_t j = 0; j < 64; j++) {                                                  \
                int64_t s = j * p->s[2] + kw - p->pb[2];                                        \
                bool in = j < OW && s >= 0 && s < W;                                            \
                ix[j] = (uint8_t)(in ? s : 0);                                                  \
                m |= (uint64_t)in << j;                                                         \
            }                                                                                   \
            idx[kw] = _mm512_loadu_si512(ix);                                                   \
            ok[kw] = m;                                                                         \
        }                                                                                       \
        int64_t oh = b % OH;                                                                    \
        const T *xp = x + b / OH * H * W;                                                       \
        for (int64_t r = b; r < e; r++, oh = oh + 1 == OH ? (xp += H * W, 0) : oh + 1) {       \
            int64_t h0 = oh * p->s[1] - p->pb[1];                                               \
            int64_t hlo = h0 >= 0 ? 0 : -h0, hhi = H - h0 < KH ? H - h0 : KH;                   \
            const T *xr = xp + h0 * W;                                                          \
            __m512i v = low, m;                                                                 \
            if (KH == 3 && hlo == 0 && hhi == 3)                                                \
                v = MAX(MAX(_mm512_maskz_loadu_epi8(wm, xr), _mm512_maskz_loadu_epi8(wm, xr + W)), \
                        _mm512_maskz_loadu_epi8(wm, xr + 2 * W));                               \
            else                                                                                \
                for (int64_t kh = hlo; kh < hhi; kh++) {                                        \
                    __m512i t = _mm512_maskz_loadu_epi8(wm, xr + kh * W);                       \
                    v = kh == hlo ? t : MAX(v, t);                                              \
                }                                                                               \
            if (KW == 3)                                                                        \
                m = MAX(MAX(_mm512_mask_permutexvar_epi8(low, ok[0], idx[0], v),                \
                            _mm512_mask_permutexvar_epi8(low, ok[1], idx[1], v)),               \
                        _mm512_mask_permutexvar_epi8(low, ok[2], idx[2], v));                   \
            else {                                                                              \
                m = low;                                                                        \
                for (int64_t kw = 0; kw < KW; kw++)                                             \
                    m = MAX(m, _mm512_mask_permutexvar_epi8(low, ok[kw], idx[kw], v));          \
            }                                                                                   \
            _mm512_mask_storeu_epi8(y + r * OW, om, m);                                         \
        }                                                                                       \
    }

DEFINE_NARROW(narrow_i8, int8_t, INT8_MIN, _mm512_max_epi8)
DEFINE_NARROW(narrow_u8, uint8_t, 0, _mm512_max_epu8)

/* AveragePool, float: the sum of a window's taps in raster order from +0,
 * a padding tap loaded as +0 (adding +0 changes no such sum: it is never
 * -0), rows outside the input skipped; then / its count, per lane from
 * wvalid (taps inside the input along W) or wpad (inside the padded extent,
 * count_include_pad), as the portable loop does: the same bits. */
#define DEFINE_AVG_ROWS(NAME, SW)                                                               \
    __attribute__((target("avx512f"))) static void NAME(                                        \
        const q8_pool_params *p, const float *x, float *y, int64_t b, int64_t e,                \
        const uint64_t (*mk)[2], const float *wvalid, const float *wpad) {                      \
        const int64_t H = p->in[1], W = p->in[2], OH = p->out[1], OW = p->out[2];               \
        const int64_t KW = p->k[2];                                                             \
        const __m512 zero = _mm512_setzero_ps();                                                \
        const __m512i evens = F32_EVENS;                                                        \
        int64_t oh = b % OH; /* stepped, as the rows loops */                                   \
        const float *xplane = x + b / OH * H * W;                                               \
        for (int64_t r = b; r < e; r++, oh = oh + 1 == OH ? (xplane += H * W, 0) : oh + 1) {   \
            int64_t h0 = oh * p->s[1] - p->pb[1], hlo, hhi, hpad;                               \
            q8_pool_taps(p, 1, oh, &hlo, &hhi, &hpad); /* the portable loop's counts */         \
            const __m512 hv = _mm512_set1_ps((float)(hhi - hlo));                               \
            const __m512 hp = _mm512_set1_ps((float)hpad);                                      \
            const float *xp = xplane - p->pb[2];                                                \
            float *yr = y + r * OW;                                                             \
            for (int64_t c0 = 0, c = 0; c0 < OW; c0 += 16, c++) {                               \
                const uint64_t(*k)[2] = mk + c * KW;                                            \
                __m512 s = zero;                                                                \
                for (int64_t kh = hlo; kh < hhi; kh++) {                                        \
                    const float *row = xp + (h0 + kh) * W + c0 * (SW);                          \
                    for (int64_t kw = 0; kw < KW; kw++)                                         \
                        s = _mm512_add_ps(s, tap_f32(row + kw, k[kw], SW, zero, evens));        \
                }                                                                               \
                __m512 cnt = p->include_pad ? _mm512_mul_ps(hp, _mm512_loadu_ps(wpad + c0))     \
                                            : _mm512_mul_ps(hv, _mm512_loadu_ps(wvalid + c0));  \
                __mmask16 some = _mm512_cmp_ps_mask(cnt, zero, _CMP_GT_OQ); /* cnt > 0 */       \
                __m512 q = _mm512_maskz_div_ps(some, s, cnt);                                   \
                int64_t n = OW - c0 < 16 ? OW - c0 : 16;                                        \
                _mm512_mask_storeu_ps(yr + c0, (__mmask16)((1u << n) - 1), q);                  \
            }                                                                                   \
        }                                                                                       \
    }

DEFINE_AVG_ROWS(avg_f32_s1, 1)
DEFINE_AVG_ROWS(avg_f32_s2, 2)

/* Per output lane of each chunk: its taps inside the input along W, and
 * inside the padded extent (1 past OW, to keep unused lanes finite). */
static void avg_counts(const q8_pool_params *p, float *wvalid, float *wpad) {
    int64_t nl = (p->out[2] + 15) / 16 * 16;
    for (int64_t o = 0; o < nl; o++) {
        int64_t lo, hi, pad;
        q8_pool_taps(p, 2, o, &lo, &hi, &pad);
        wvalid[o] = o < p->out[2] ? (float)(hi - lo) : 1.0f;
        wpad[o] = o < p->out[2] ? (float)pad : 1.0f;
    }
}

void q8_maxpool_x86_range(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const q8_maxpool_x86_args *a = arg;
    const q8_pool_params *p = a->p;
    if (p->dtype != Q8_F32 && p->in[2] <= 64 && p->out[2] <= 64 && p->k[2] <= NARROW_MAX_KW &&
        q8_cpu()->avx512vbmi) {
        if (p->dtype == Q8_I8) narrow_i8(p, a->x, a->y, begin, end);
        else narrow_u8(p, a->x, a->y, begin, end);
        return;
    }
    if (p->dtype != Q8_F32 && pool2_fits(p)) {
        if (p->dtype == Q8_I8) pool2_i8(p, a->x, a->y, begin, end);
        else pool2_u8(p, a->x, a->y, begin, end);
        return;
    }
    uint64_t mk[MP_MAX_MASKS][2];
    masks_of(p, lanes_of(p->dtype), mk);
    const uint64_t(*m)[2] = (const uint64_t(*)[2])mk;
    bool s1 = p->s[2] == 1;
    if (p->avg) {
        float wvalid[AVG_MAX_CHUNKS * 16], wpad[AVG_MAX_CHUNKS * 16];
        avg_counts(p, wvalid, wpad);
        (s1 ? avg_f32_s1 : avg_f32_s2)(p, a->x, a->y, begin, end, m, wvalid, wpad);
        return;
    }
    if (p->dtype == Q8_F32 && pool2_fits(p)) pool2_f32(p, a->x, a->y, begin, end, m);
    else if (hm_fits(p)) (s1 ? hm_f32_s1 : hm_f32_s2)(p, a->x, a->y, begin, end, m);
    else if (p->dtype == Q8_F32) (s1 ? rows_f32_s1 : rows_f32_s2)(p, a->x, a->y, begin, end, m);
    else if (p->dtype == Q8_I8) (s1 ? rows_i8_s1 : rows_i8_s2)(p, a->x, a->y, begin, end, m);
    else (s1 ? rows_u8_s1 : rows_u8_s2)(p, a->x, a->y, begin, end, m);
}

#else

void q8_maxpool_x86_range(void *arg, int64_t begin, int64_t end, int thread) {
    (void)arg, (void)begin, (void)end, (void)thread;
}

#endif
