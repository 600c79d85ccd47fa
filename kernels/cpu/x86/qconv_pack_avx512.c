/* im2col straight into the packed lanes of the INT8 GEMM on AVX-512 VBMI
 * (see qconv_im2col.h): the same bytes as q8_qconv_im2col followed by
 * q8_ig_pack_lanes_kj(..., to_u8 = true), without the K x P intermediate.
 * A packed chunk holds, for 16 output pixels, four consecutive k = (c, kh,
 * kw) each; with KW >= 3 they come from at most two input rows (c, kh).
 * The 16 pixels of a panel lie on one output row or several (a run each);
 * for each run, each input row is one masked 64-byte load (columns outside
 * the plane and rows outside it read as 0), and each chunk is one vpermi2b
 * of the two rows' vectors per run, with an index table chosen by the
 * chunk's first kw, the runs' lanes ORed into one store. 1x1 convs with a
 * stride have their own loop below (sub_range). Only called when the CPU
 * has these ISAs. */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vbmi"))), \
                             apply_to = function)
#else
#pragma GCC target("avx512f,avx512bw,avx512vbmi")
#endif

#include <immintrin.h>

#include "igemm.h"
#include "qconv_im2col.h"

/* Bits i < 64 of the bytes c0 + i in [0, w). */
static inline uint64_t cols_mask(int64_t c0, int64_t w) {
    int64_t lo = c0 < 0 ? -c0 : 0, hi = w - c0;
    if (hi > 64) hi = 64;
    if (lo >= hi) return 0;
    uint64_t mh = hi >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << hi) - 1;
    return mh & ~(((uint64_t)1 << lo) - 1);
}

typedef struct lanes_args {
    const q8_qconv_geom *q;
    int64_t Cg;
    const int8_t *x;
    const uint8_t *tab;
    uint8_t *lanes;
} lanes_args;

/* One output row's lanes [l, l + len) of a panel: lane l's input bytes of
 * row (c, kh) lie at base + (c x H + kh x dh) x W + l x sw. */
typedef struct lane_run {
    uintptr_t base;   /* x + (the output row's first input row) x W + lane 0's column */
    uint64_t kh_ok;   /* bit kh: the input row of kh lies in the plane */
    uint64_t cm, lm;  /* columns inside the plane; the run's chunk bytes */
} lane_run;

/* Runs of a panel: one per output row it touches (16 at most, OW = 1). */
enum { MAX_RUNS = Q8_IG_LANES };

/* Row (c, kh) of run u at byte offset off, zeros outside the plane (a zero
 * mask reads nothing). */
static inline __m512i load_row(const lane_run *u, int64_t kh, int64_t off) {
    uint64_t m = (u->kh_ok >> kh & 1) ? u->cm : 0;
    return _mm512_maskz_loadu_epi8(m, (const void *)(u->base + (uintptr_t)off));
}

/* The G chunks of panel dst for its nr runs: each chunk one permute per
 * run into that run's lanes, one store. */
static inline __attribute__((always_inline)) void panel_chunks(const lanes_args *a,
                                                                uint8_t *dst,
                                                                const lane_run *runs, int nr,
                                                                uint64_t last) {
    const q8_qconv_geom *q = a->q;
    const int64_t KW = q->KW, KH = q->KH, G = q8_ig_kpad(a->Cg * KH * KW) / 4;
    /* byte offsets to the next row: kh + 1, or the next channel's kh = 0 */
    const int64_t step = q->dh * q->W, wrap = (q->H - (KH - 1) * q->dh) * q->W;
    const __m512i x80 = _mm512_set1_epi8((char)0x80), zero = _mm512_setzero_si512();
    /* va: row (c, kh) of the chunk's first k (at off), per run; vb: the next
     * row, loaded when a chunk reaches it */
    int64_t c = 0, kh = 0, kw0 = 0, off = 0;
    __m512i va[MAX_RUNS], vb[MAX_RUNS];
    for (int r = 0; r < nr; r++) va[r] = vb[r] = load_row(&runs[r], 0, 0);
    bool have_b = false;
    for (int64_t g = 0; g < G; g++) {
        if (kw0 + 3 >= KW && !have_b) {
            bool wraps = kh + 1 == KH;
            int64_t kh1 = wraps ? 0 : kh + 1, off1 = off + (wraps ? wrap : step);
            bool in = !wraps || c + 1 < a->Cg;
            for (int r = 0; r < nr; r++) vb[r] = in ? load_row(&runs[r], kh1, off1) : zero;
            have_b = true;
        }
        __m512i idx = _mm512_loadu_si512((const void *)(a->tab + kw0 * 64));
        uint64_t lk = g == G - 1 ? last : ~(uint64_t)0;
        __m512i v = zero;
        for (int r = 0; r < nr; r++)
            v = _mm512_or_si512(
                v, _mm512_maskz_permutex2var_epi8(runs[r].lm & lk, va[r], idx, vb[r]));
        _mm512_storeu_si512((void *)(dst + g * 64), _mm512_xor_si512(v, x80));
        kw0 += 4;
        if (kw0 >= KW) { /* the next chunk starts one row (or two, for KW = 3) further */
            int rows = 0;
            for (; kw0 >= KW; kw0 -= KW, rows++)
                if (++kh == KH) kh = 0, c++, off += wrap;
                else off += step;
            for (int r = 0; r < nr; r++)
                if (rows == 1 && have_b) va[r] = vb[r];
                else if (g + 1 < G) va[r] = load_row(&runs[r], kh, off);
            have_b = false;
        }
    }
}

/* Panels [pb, pe): a panel's 16 lanes may cross output rows (short rows, or
 * a panel that starts late in a row); each row it touches is one run, and
 * every chunk is made once for all of them (a pass per run with masked
 * stores was twice the work on 29- and 8-wide maps). */
static void lanes_range(void *arg, int64_t pb, int64_t pe, int t) {
    (void)t;
    const lanes_args *a = arg;
    const q8_qconv_geom *q = a->q;
    const int64_t K = a->Cg * q->KH * q->KW, G = q8_ig_kpad(K) / 4, J = q->OH * q->OW;
    /* the slots k < K of the last chunk, in every lane */
    const uint64_t last = (((uint64_t)1 << (K - 4 * (G - 1))) - 1) * 0x1111111111111111ull;
    lane_run runs[MAX_RUNS];
    for (int64_t p = pb; p < pe; p++) {
        int64_t j0 = p * Q8_IG_LANES, nl = J - j0 < 16 ? J - j0 : 16;
        int64_t oh = j0 / q->OW, ow = j0 % q->OW;
        int nr = 0;
        for (int64_t l = 0; l < nl; oh++, ow = 0) {
            int64_t len = nl - l < q->OW - ow ? nl - l : q->OW - ow;
            int64_t c0 = (ow - l) * q->sw - q->pl; /* lane 0's column */
            lane_run *u = &runs[nr++];
            int64_t ih0 = oh * q->sh - q->pt;
            u->base = (uintptr_t)a->x + (uintptr_t)(ih0 * q->W + c0);
            u->kh_ok = 0;
            for (int64_t kh = 0; kh < q->KH; kh++) {
                int64_t ih = ih0 + kh * q->dh;
                if (ih >= 0 && ih < q->H) u->kh_ok |= (uint64_t)1 << kh;
            }
            u->cm = cols_mask(c0, q->W);
            u->lm = (len == 16 ? ~(uint64_t)0 : ((uint64_t)1 << (4 * len)) - 1) << (4 * l);
            l += len;
        }
        /* one and two runs with their vectors in registers */
        uint8_t *dst = a->lanes + (size_t)(p * G) * 64;
        if (nr == 1) panel_chunks(a, dst, runs, 1, last);
        else if (nr == 2) panel_chunks(a, dst, runs, 2, last);
        else panel_chunks(a, dst, runs, nr, last);
    }
}

void q8_qconv_lanes_vbmi_block(const q8_qconv_geom *q, int64_t Cg, const int8_t *x,
                               const uint8_t *tab, int64_t p0, int64_t np, uint8_t *dst) {
    /* lanes_range writes panel p at lanes + p x G x 64: point lanes so that
     * panel p0 lands at dst (integer arithmetic, as in igemm.c) */
    int64_t G = q8_ig_kpad(Cg * q->KH * q->KW) / 4;
    lanes_args a = {q, Cg, x, tab, (uint8_t *)((uintptr_t)dst - (uintptr_t)(p0 * G) * 64)};
    lanes_range(&a, p0, p0 + np, 0);
}

void q8_qconv_lanes_vbmi(const q8_qconv_geom *q, int64_t Cg, const int8_t *x,
                         const uint8_t *tab, uint8_t *lanes, q8_pool *pool) {
    lanes_args a = {q, Cg, x, tab, lanes};
    int64_t G = q8_ig_kpad(Cg * q->KH * q->KW) / 4;
    q8_parallel_for(pool, q8_ig_panels(q->OH * q->OW), 1 + 2048 / (G + 1), lanes_range, &a);
}

/* ---- 1x1 convs with a stride (q8_qconv_lanes_sub_ok) ---------------------- */

typedef struct sub_args {
    const q8_qconv_geom *q;
    int64_t Cg;
    const int8_t *x;
    uint8_t *lanes;
} sub_args;

/* Panels [pb, pe) at a->lanes + p x G x 64. For each panel, idx holds each
 * lane's byte in the 128-byte window from the panel's first pixel, repeated
 * in the four 16-byte quarters; a chunk's channel s is picked into quarter
 * s by one zero-masked two-vector permute, and one byte permute (tr) turns the
 * 4 x 16 quarters into 16 lanes of 4 channels. */
static void sub_range(void *arg, int64_t pb, int64_t pe, int t) {
    (void)t;
    const sub_args *a = arg;
    const q8_qconv_geom *q = a->q;
    const int64_t HW = q->H * q->W, J = q->OH * q->OW, G = q8_ig_kpad(a->Cg) / 4;
    const __m512i x80 = _mm512_set1_epi8((char)0x80);
    _Alignas(64) uint8_t tr_b[64];
    for (int l = 0; l < 16; l++)
        for (int s = 0; s < 4; s++) tr_b[l * 4 + s] = (uint8_t)(16 * s + l);
    const __m512i tr = _mm512_load_si512((const void *)tr_b);
    for (int64_t p = pb; p < pe; p++) {
        int64_t j0 = p * Q8_IG_LANES, nl = J - j0 < 16 ? J - j0 : 16;
        int64_t oh = j0 / q->OW, ow = j0 % q->OW, pos0 = oh * q->sh * q->W + ow * q->sw;
        _Alignas(16) uint8_t idx_b[16] = {0};
        for (int64_t l = 0; l < nl; l++) {
            idx_b[l] = (uint8_t)(oh * q->sh * q->W + ow * q->sw - pos0);
            if (++ow == q->OW) ow = 0, oh++;
        }
        const __m512i idx = _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)idx_b));
        /* the window, clipped to the plane: nothing past it is read */
        int64_t left = HW - pos0;
        uint64_t m0 = left >= 64 ? ~0ull : ((uint64_t)1 << left) - 1;
        uint64_t m1 = left >= 128 ? ~0ull : left <= 64 ? 0 : ((uint64_t)1 << (left - 64)) - 1;
        uint64_t lm = nl == 16 ? ~0ull : ((uint64_t)1 << (4 * nl)) - 1;
        const int8_t *xp = a->x + pos0;
        uint8_t *dst = a->lanes + (size_t)(p * G) * 64;
        for (int64_t g = 0; g < G; g++) {
            __m512i v = _mm512_setzero_si512();
            for (int64_t s = 0; s < 4 && 4 * g + s < a->Cg; s++) {
                /* integer addresses: w + 64 may lie past the last plane
                 * (m1 is then 0 and nothing is read) */
                uintptr_t w = (uintptr_t)xp + (uintptr_t)((4 * g + s) * HW);
                __m512i lo = _mm512_maskz_loadu_epi8(m0, (const void *)w);
                __m512i hi = _mm512_maskz_loadu_epi8(m1, (const void *)(w + 64));
                __mmask64 quarter = (__mmask64)0xffff << (16 * s);
                v = _mm512_or_si512(v, _mm512_maskz_permutex2var_epi8(quarter, lo, idx, hi));
            }
            v = _mm512_xor_si512(_mm512_maskz_permutexvar_epi8(lm, tr, v), x80);
            _mm512_storeu_si512((void *)(dst + g * 64), v);
        }
    }
}

void q8_qconv_lanes_sub_block(const q8_qconv_geom *q, int64_t Cg, const int8_t *x, int64_t p0,
                              int64_t np, uint8_t *dst) {
    int64_t G = q8_ig_kpad(Cg) / 4; /* panel p0 lands at dst, as in the VBMI block */
    sub_args a = {q, Cg, x, (uint8_t *)((uintptr_t)dst - (uintptr_t)(p0 * G) * 64)};
    sub_range(&a, p0, p0 + np, 0);
}

void q8_qconv_lanes_sub(const q8_qconv_geom *q, int64_t Cg, const int8_t *x, uint8_t *lanes,
                        q8_pool *pool) {
    sub_args a = {q, Cg, x, lanes};
    int64_t G = q8_ig_kpad(Cg) / 4;
    q8_parallel_for(pool, q8_ig_panels(q->OH * q->OW), 1 + 2048 / (G + 1), sub_range, &a);
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
