/* im2col of the INT8 convs and its AVX-512 VBMI tables (qconv_im2col.h). */
#include "qconv_im2col.h"

#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* d[i] = s[2 i] for i < n: the even bytes, 16 at a time (the loads stay
 * below s[2 n - 1]). */
static void copy_stride2(uint8_t *d, const uint8_t *s, int64_t n) {
    int64_t i = 0;
#if defined(__SSE2__)
    const __m128i even = _mm_set1_epi16(0x00ff);
    for (; i + 17 <= n; i += 16) {
        __m128i a = _mm_and_si128(_mm_loadu_si128((const __m128i *)(s + 2 * i)), even);
        __m128i b = _mm_and_si128(_mm_loadu_si128((const __m128i *)(s + 2 * i + 16)), even);
        _mm_storeu_si128((__m128i *)(d + i), _mm_packus_epi16(a, b));
    }
#endif
    for (; i < n; i++) d[i] = s[2 * i];
}

typedef struct im2col_args {
    const q8_qconv_geom *q;
    const uint8_t *x;
    uint8_t pad;
    uint8_t *col;
} im2col_args;

static void im2col_range(void *arg, int64_t b, int64_t e, int t) {
    const im2col_args *a = arg;
    const q8_qconv_geom *q = a->q;
    int64_t P = q->OH * q->OW;
    for (int64_t k = b; k < e; k++) {
        int64_t c = k / (q->KH * q->KW), kh = k / q->KW % q->KH, kw = k % q->KW;
        int64_t off = kw * q->dw - q->pl, lo, hi;
        q8_qconv_valid_cols(off, q->sw, q->W, q->OW, &lo, &hi);
        if (q->sw == 1 && q->sh == 1 && off == 0 && lo == 0 && hi == q->OW && q->OW == q->W) {
            /* whole input rows, consecutive: the k-th row of col is one run
             * of x (a KH x 1 kernel without horizontal padding; per-row
             * calls on 8-16-byte rows were most of such a conv's time) */
            int64_t ih0 = kh * q->dh - q->pt, o0 = ih0 < 0 ? -ih0 : 0;
            if (o0 > q->OH) o0 = q->OH; /* a top pad past every output row of this tap */
            int64_t o1 = q->H - ih0 < q->OH ? q->H - ih0 : q->OH;
            if (o1 < o0) o1 = o0;
            uint8_t *d = a->col + k * P;
            memset(d, a->pad, (size_t)(o0 * q->OW));
            memcpy(d + o0 * q->OW, a->x + (c * q->H + ih0 + o0) * q->W,
                   (size_t)((o1 - o0) * q->OW));
            memset(d + o1 * q->OW, a->pad, (size_t)((q->OH - o1) * q->OW));
            continue;
        }
        for (int64_t oh = 0; oh < q->OH; oh++) {
            uint8_t *d = a->col + k * P + oh * q->OW;
            int64_t ih = oh * q->sh - q->pt + kh * q->dh;
            if (ih < 0 || ih >= q->H) {
                memset(d, a->pad, (size_t)q->OW);
                continue;
            }
            const uint8_t *s = a->x + (c * q->H + ih) * q->W; /* s[ow * sw + off] */
            memset(d, a->pad, (size_t)lo);
            if (q->sw == 1) memcpy(d + lo, s + lo + off, (size_t)(hi - lo));
            else if (q->sw == 2) copy_stride2(d + lo, s + 2 * lo + off, hi - lo);
            else
                for (int64_t ow = lo; ow < hi; ow++) d[ow] = s[ow * q->sw + off];
            memset(d + hi, a->pad, (size_t)(q->OW - hi));
        }
    }
}

void q8_qconv_im2col(const q8_qconv_geom *q, const uint8_t *x, uint8_t pad, uint8_t *col,
                     q8_pool *pool) {
    im2col_args a = {q, x, pad, col};
    int64_t K = q->C / q->group * q->KH * q->KW;
    q8_parallel_for(pool, K, 1 + 16384 / (q->OH * q->OW + 1), im2col_range, &a);
}

/* Four consecutive k stay within two (c, kh) rows when KW >= 3; the bytes of
 * 16 outputs of one input row must fit in one 64-byte load; the rows in the
 * window of an output row are a 64-bit mask. */
bool q8_qconv_lanes_vbmi_ok(const q8_qconv_geom *q) {
    return q->KW >= 3 && q->KH <= 64 && 15 * q->sw + (q->KW - 1) * q->dw + 1 <= 64;
}

/* Input byte of output pixel j in its channel's plane (1x1, no pads). */
static int64_t sub_pos(const q8_qconv_geom *q, int64_t j) {
    return j / q->OW * q->sh * q->W + j % q->OW * q->sw;
}

bool q8_qconv_lanes_sub_ok(const q8_qconv_geom *q) {
    if (q->KH != 1 || q->KW != 1 || q->pt || q->pl || q->pb || q->pr) return false;
    if (q->sh == 1 && q->sw == 1) return false; /* X itself is the GEMM operand */
    int64_t P = q->OH * q->OW;
    for (int64_t j = 0; j < P; j += 16) {
        int64_t last = j + 15 < P ? j + 15 : P - 1;
        if (sub_pos(q, last) - sub_pos(q, j) >= 128) return false;
    }
    return true;
}

/* Table kw0: for lane l and slot s, the byte of k = kw0 + s in the vectors of
 * rows ra (bytes 0..63) and ra + 1 (64..127) loaded at lane 0's column. */
void q8_qconv_lanes_tab(const q8_qconv_geom *q, uint8_t *tab) {
    for (int64_t kw0 = 0; kw0 < q->KW; kw0++)
        for (int l = 0; l < 16; l++)
            for (int s = 0; s < 4; s++) {
                int64_t kw = kw0 + s, next = kw >= q->KW;
                if (next) kw -= q->KW;
                tab[kw0 * 64 + l * 4 + s] = (uint8_t)(64 * next + l * q->sw + kw * q->dw);
            }
}
