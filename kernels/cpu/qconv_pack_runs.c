/* Packed GEMM lanes straight from the input for long kernels (qconv_im2col.h):
 * with horizontal dilation 1, each (c, kh) gives an output pixel KW
 * consecutive input bytes, so a lane's K bytes are Cg * KH copied runs. An
 * STFT front end (KW 256, stride 128) would otherwise write a K x P im2col
 * twice the input's size one byte at a time, then transpose it. */
#include <string.h>

#include "igemm.h"
#include "qconv_im2col.h"

#define RUNS_MIN_KW 16
#define RUNS_MAX_KP 4096 /* one lane's bytes on the stack */

bool q8_qconv_lanes_runs_ok(const q8_qconv_geom *q) {
    return q->dw == 1 && q->KW >= RUNS_MIN_KW &&
           q8_ig_kpad(q->C / q->group * q->KH * q->KW) <= RUNS_MAX_KP;
}

typedef struct runs_args {
    const q8_qconv_geom *q;
    int64_t Cg, K, kp, P;
    const uint8_t *x;
    uint8_t *lanes;
} runs_args;

/* Lane j's K bytes (int8 values, 0 for padding and for k >= K up to kp). */
static void lane_bytes(const runs_args *a, int64_t j, uint8_t *buf) {
    const q8_qconv_geom *q = a->q;
    memset(buf, 0, (size_t)a->kp);
    if (j >= a->P) return;
    int64_t oh = j / q->OW, col0 = j % q->OW * q->sw - q->pl;
    int64_t lo = col0 < 0 ? -col0 : 0, hi = q->W - col0 < q->KW ? q->W - col0 : q->KW;
    if (hi <= lo) return;
    uint8_t *d = buf;
    for (int64_t c = 0; c < a->Cg; c++)
        for (int64_t kh = 0; kh < q->KH; kh++, d += q->KW) {
            int64_t ih = oh * q->sh - q->pt + kh * q->dh;
            if (ih >= 0 && ih < q->H)
                memcpy(d + lo, a->x + (c * q->H + ih) * q->W + col0 + lo, (size_t)(hi - lo));
        }
}

static void runs_range(void *arg, int64_t pb, int64_t pe, int t) {
    (void)t;
    const runs_args *a = arg;
    _Alignas(64) uint8_t buf[RUNS_MAX_KP];
    for (int64_t p = pb; p < pe; p++) {
        uint8_t *panel = a->lanes + (size_t)p * (size_t)(a->kp / 4) * 64;
        for (int l = 0; l < Q8_IG_LANES; l++) {
            lane_bytes(a, p * Q8_IG_LANES + l, buf);
            uint8_t *d = panel + 4 * l;
            for (int64_t g = 0; g < a->kp / 4; g++, d += 64) { /* uint8 = int8 + 128 */
                uint32_t v;
                memcpy(&v, buf + 4 * g, 4);
                v ^= 0x80808080u;
                memcpy(d, &v, 4);
            }
        }
    }
}

void q8_qconv_lanes_runs(const q8_qconv_geom *q, int64_t Cg, const int8_t *x, uint8_t *lanes,
                         q8_pool *pool) {
    int64_t K = Cg * q->KH * q->KW;
    runs_args a = {q, Cg, K, q8_ig_kpad(K), q->OH * q->OW, (const uint8_t *)x, lanes};
    q8_parallel_for(pool, q8_ig_panels(a.P), 1 + 32768 / (Q8_IG_LANES * a.kp + 1), runs_range,
                    &a);
}
