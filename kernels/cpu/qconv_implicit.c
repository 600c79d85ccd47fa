/* The implicit INT8 conv's copy of X and its lanes (qconv_implicit.h). */
#include "qconv_implicit.h"

#include <string.h>

#include "cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

void q8_qimp_plan(q8_qimp *m, const q8_qconv_geom *q, int64_t Cg) {
    m->Hp = q->H + q->pt + q->pb;
    m->Wp = q->W + q->pl + q->pr;
    m->cg4 = (Cg + 3) / 4;
    m->J = q->OH * m->Wp;
    /* the last panel's last column (J + 14 at most) plus the farthest tap */
    int64_t reach = m->Hp * m->Wp + 15 + (q->KW - 1) * q->dw;
    m->S = (reach + 15) / 16 * 16;
    m->G = q->KH * q->KW * m->cg4;
}

void q8_qimp_offsets(const q8_qimp *m, const q8_qconv_geom *q, int64_t *off) {
    for (int64_t cg = 0; cg < m->cg4; cg++)
        for (int64_t kh = 0; kh < q->KH; kh++)
            for (int64_t kw = 0; kw < q->KW; kw++)
                *off++ = (cg * m->S + kh * q->dh * m->Wp + kw * q->dw) * 4;
}

typedef struct copy_args {
    const q8_qimp *m;
    const q8_qconv_geom *q;
    int64_t Cg;
    const int8_t *x;
    uint8_t *xp;
    bool avx512;
} copy_args;

/* W pixels of 4 channel rows (NULL: a channel past Cg) interleaved as
 * uint8 at dst. */
static void interleave(const int8_t *const r[4], int64_t W, uint8_t *dst) {
    int64_t w = 0;
#if defined(__x86_64__) || defined(__i386__)
    const __m128i x80 = _mm_set1_epi8((char)0x80);
    for (; w + 16 <= W; w += 16) {
        __m128i v[4];
        for (int i = 0; i < 4; i++)
            v[i] = r[i] ? _mm_xor_si128(_mm_loadu_si128((const __m128i *)(r[i] + w)), x80) : x80;
        __m128i ab0 = _mm_unpacklo_epi8(v[0], v[1]), ab1 = _mm_unpackhi_epi8(v[0], v[1]);
        __m128i cd0 = _mm_unpacklo_epi8(v[2], v[3]), cd1 = _mm_unpackhi_epi8(v[2], v[3]);
        __m128i *o = (__m128i *)(dst + w * 4);
        _mm_storeu_si128(o, _mm_unpacklo_epi16(ab0, cd0));
        _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(ab0, cd0));
        _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(ab1, cd1));
        _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(ab1, cd1));
    }
#elif defined(__aarch64__)
    const uint8x16_t x80 = vdupq_n_u8(0x80);
    for (; w + 16 <= W; w += 16) { /* st4 interleaves the four rows byte by byte */
        uint8x16x4_t v;
        for (int i = 0; i < 4; i++)
            v.val[i] = r[i] ? veorq_u8(vld1q_u8((const uint8_t *)r[i] + w), x80) : x80;
        vst4q_u8(dst + w * 4, v);
    }
#endif
    for (; w < W; w++)
        for (int i = 0; i < 4; i++) dst[w * 4 + i] = r[i] ? (uint8_t)(r[i][w] ^ 0x80) : 0x80;
}

/* Items: padded rows (channel group, row); the last row of a group also
 * fills what lies past its plane. */
static void copy_range(void *arg, int64_t b, int64_t e, int t) {
    (void)t;
    const copy_args *a = arg;
    const q8_qimp *m = a->m;
    const q8_qconv_geom *q = a->q;
    for (int64_t it = b; it < e; it++) {
        int64_t cg = it / m->Hp, hp = it % m->Hp, h = hp - q->pt;
        uint8_t *dst = a->xp + (cg * m->S + hp * m->Wp) * 4;
        if (h < 0 || h >= q->H) {
            memset(dst, 0x80, (size_t)(m->Wp * 4));
        } else {
            const int8_t *r[4];
            for (int i = 0; i < 4; i++) {
                int64_t c = cg * 4 + i;
                r[i] = c < a->Cg ? a->x + (c * q->H + h) * q->W : NULL;
            }
            if (q->pl) memset(dst, 0x80, (size_t)(q->pl * 4));
#if defined(__x86_64__) || defined(__i386__)
            if (a->avx512) q8_qimp_row_avx512(r, q->W, dst + q->pl * 4);
            else
#endif
                interleave(r, q->W, dst + q->pl * 4);
            if (q->pr) memset(dst + (q->pl + q->W) * 4, 0x80, (size_t)(q->pr * 4));
        }
        if (hp == m->Hp - 1)
            memset(dst + m->Wp * 4, 0x80, (size_t)((m->S - m->Hp * m->Wp) * 4));
    }
}

void q8_qimp_copy(const q8_qimp *m, const q8_qconv_geom *q, int64_t Cg, const int8_t *x,
                  uint8_t *xp, q8_pool *pool) {
    copy_args a = {m, q, Cg, x, xp, q8_cpu()->avx512bw};
    q8_parallel_for(pool, m->cg4 * m->Hp, 1 + 16384 / (m->Wp * 4 + 1), copy_range, &a);
}

void q8_qimp_lanes(const q8_qimp *m, const uint8_t *xp, const int64_t *off, int64_t p0,
                   int64_t np, uint8_t *dst) {
    for (int64_t p = p0; p < p0 + np; p++) {
        const uint8_t *base = xp + p * 64;
        for (int64_t g = 0; g < m->G; g++, dst += 64) memcpy(dst, base + off[g], 64);
    }
}
