/* Depthwise q8.QConv: planning, packing and the channel loop of the direct
 * kernels (qconv_dw.h); the kernels are in qconv_dw_<isa>.c. */
#include "qconv_dw.h"

#include <stdint.h>
#include <string.h>

#include "common.h"
#include "cpu_features.h"
#include "qepi.h"

bool q8_qdw_has_vbmi(void) { return q8_cpu()->avx512vbmi; }

/* Taps in row-major order, four to a group, a group spanning at most two
 * kernel rows (always four for KW >= 3). Returns the number of groups, or
 * 0 if there are more than Q8_QDW_MAX_GROUPS. first[g]: the group's first
 * tap; the last group ends at KH * KW. */
static int make_groups(int64_t KH, int64_t KW, int8_t *ra, int8_t *rb, int *first) {
    int G = 0;
    for (int64_t t = 0; t < KH * KW;) {
        if (G == Q8_QDW_MAX_GROUPS) return 0;
        int64_t r0 = t / KW, n = 0;
        while (t < KH * KW && n < 4 && t / KW <= r0 + 1) t++, n++;
        ra[G] = (int8_t)r0;
        rb[G] = (int8_t)((t - 1) / KW);
        first[G++] = (int)(t - n);
    }
    first[G] = (int)(KH * KW);
    return G;
}

#if defined(__x86_64__) || defined(__i386__)
static bool plan_avx512(q8_qdw *d, const q8_qconv_geom *q) {
    if (q->KH > Q8_QDW_MAX_KH || q->KH * q->KW > 4 * Q8_QDW_MAX_GROUPS) return false;
    int first[Q8_QDW_MAX_GROUPS + 1];
    d->G = make_groups(q->KH, q->KW, d->ra, d->rb, first);
    if (d->G == 0) return false;
    /* Several output rows per block when a row is short; a block's bytes
     * of one input row must fit in its segment. */
    for (int R = q->OW <= 4 ? 4 : q->OW <= 8 ? 2 : 1; R >= 1; R /= 2) {
        int L = 16 / R, SB = 64 / R;
        if ((L - 1) * q->sw + (q->KW - 1) * q->dw + 1 <= SB) {
            d->R = R, d->L = L, d->SB = SB, d->NB = 1;
            /* stride 1: three blocks of 16 outputs from the same row vectors */
            if (R == 1 && q->OW > 16 && 47 * q->sw + (q->KW - 1) * q->dw + 1 <= 64) d->NB = 3;
            return true;
        }
    }
    return false;
}

static bool plan_avx2(q8_qdw *d, const q8_qconv_geom *q) {
    if ((q->sw != 1 && q->sw != 2) || q->dw != 1) return false;
    d->NP = (int)((q->KW + 1) / 2);
    d->OWr = (q->OW + 15) / 16 * 16;
    d->Hp = q->H + q->pt + q->pb;
    int64_t need = q->sw == 1 ? d->OWr + 2 * d->NP - 1 : 2 * d->OWr + 2 * d->NP - 2;
    int64_t wp = q->W + q->pl + q->pr, wide = q->pl + (q->W + 15) / 16 * 16;
    if (wp > need) need = wp;
    if (wide > need) need = wide;
    d->Wq = (need + 15) / 16 * 16;
    return true;
}
#endif

void q8_qdw_plan(q8_qdw *d, const q8_qconv_geom *q, q8_igemm_path path, const int8_t *w_rows4,
                 size_t *off) {
    memset(d, 0, sizeof *d);
    d->geo = *q;
    d->Mg = q->M / q->C;
    path = q8_igemm_resolve(path);
#if defined(__x86_64__) || defined(__i386__)
    if (path == Q8_IGEMM_AVX512VNNI && q8_qdw_has_vbmi() && plan_avx512(d, q)) {
        d->kind = Q8_QDW_AVX512;
        d->off_tab = q8_qop_reserve(off, (size_t)(d->NB * d->G) * 64 + 64);
        /* groups of four consecutive taps: [M][G] x 4 is [M][kp] */
        if (w_rows4 && 4 * (int64_t)(d->G - 1) < q->KH * q->KW && q->KW >= 2) d->w = w_rows4;
        else d->off_w = q8_qop_reserve(off, (size_t)q->M * (size_t)d->G * 4);
        /* global: taps 4g .. 4g + 3 in group g (KW >= 2), the reads of a
         * dword gather in int32 offsets, the last four bytes of an image
         * inside it */
        int64_t T = q->H * q->W;
        d->global = q->OH == 1 && q->OW == 1 && q->KH == q->H && q->KW == q->W && q->KW >= 2 &&
                    !q->pt && !q->pl && !q->pb && !q->pr && q->dh == 1 && q->dw == 1 &&
                    q->M == q->C && 4 * (int64_t)(d->G - 1) < T && q->C * T >= 4 &&
                    q->C * T <= INT32_MAX - 64;
    } else if (path != Q8_IGEMM_C && plan_avx2(d, q)) {
        d->kind = Q8_QDW_AVX2;
        d->off_w = q8_qop_reserve(off, (size_t)(q->M * q->KH * d->NP) * 4);
        d->per_thread = q8_align_up((size_t)(d->Hp * d->Wq) * 2, 64) +
                        2 * q8_align_up((size_t)d->OWr * 4, 64); /* acc, tmp */
    }
#else
    (void)path;
    (void)w_rows4;
#endif
    if (d->kind != Q8_QDW_NONE) d->off_init = q8_qop_reserve(off, (size_t)q->M * 4);
}

void q8_qdw_pack(const q8_qdw *d, const int8_t *w, int64_t ldw, const int32_t *bias,
                 void *packed) {
    const q8_qconv_geom *q = &d->geo;
    char *pk = packed;
    int32_t *init = (int32_t *)(pk + d->off_init);
    int64_t taps = q->KH * q->KW;
    if (d->kind == Q8_QDW_AVX512) {
        int8_t ra[Q8_QDW_MAX_GROUPS], rb[Q8_QDW_MAX_GROUPS];
        int first[Q8_QDW_MAX_GROUPS + 1];
        make_groups(q->KH, q->KW, ra, rb, first);
        uint8_t *tab = (uint8_t *)pk + d->off_tab;
        memset(tab, 0, (size_t)(d->NB * d->G) * 64 + 64);
        for (int nb = 0; nb < d->NB; nb++) /* block nb of a row: outputs 16 nb + l */
            for (int g = 0; g < d->G; g++)
                for (int l = 0; l < 16; l++)
                    for (int s = 0; s < first[g + 1] - first[g]; s++) {
                        int64_t t = first[g] + s, kh = t / q->KW, kw = t % q->KW;
                        int64_t b = (l / d->L) * d->SB + (16 * nb + l % d->L) * q->sw +
                                    kw * q->dw;
                        tab[(nb * d->G + g) * 64 + l * 4 + s] =
                            (uint8_t)(b + (kh != ra[g] ? 64 : 0));
                    }
        /* compaction of a multi-row block: output i <- lane (i / OW) * L + i % OW */
        uint8_t *cmp = tab + d->NB * d->G * 64;
        for (int i = 0; i < 16; i++)
            cmp[i] = (uint8_t)(d->R > 1 && i < d->R * q->OW ? i / q->OW * d->L + i % q->OW : i);
        int8_t *wq = (int8_t *)(pk + d->off_w);
        for (int64_t m = 0; m < q->M; m++) {
            const int8_t *wm = w + m * ldw;
            uint32_t sum = 0;
            for (int g = 0; !d->w && g < d->G; g++)
                for (int s = 0; s < 4; s++) {
                    int t = first[g] + s;
                    wq[(m * d->G + g) * 4 + s] = t < first[g + 1] ? wm[t] : 0;
                }
            for (int64_t t = 0; t < taps; t++) sum += (uint32_t)wm[t];
            init[m] = (int32_t)((bias ? (uint32_t)bias[m] : 0u) - 128u * sum);
        }
    } else if (d->kind == Q8_QDW_AVX2) {
        uint32_t *wp = (uint32_t *)(pk + d->off_w);
        for (int64_t m = 0; m < q->M; m++) {
            for (int64_t kh = 0; kh < q->KH; kh++)
                for (int p = 0; p < d->NP; p++) {
                    const int8_t *wr = w + m * ldw + kh * q->KW;
                    uint32_t lo = (uint16_t)wr[2 * p];
                    uint32_t hi = 2 * p + 1 < q->KW ? (uint16_t)wr[2 * p + 1] : 0;
                    wp[(m * q->KH + kh) * d->NP + p] = lo | hi << 16;
                }
            init[m] = bias ? bias[m] : 0;
        }
    }
}

typedef struct run_args {
    const q8_qdw *d;
    const void *packed;
    const q8_epilogue *e;
    const int8_t *x;
    char *y;
    char *scratch;
} run_args;

static void run_range(void *arg, int64_t b, int64_t e, int t) {
    const run_args *a = arg;
    const q8_qdw *d = a->d;
    const q8_qconv_geom *q = &d->geo;
    size_t es = a->e->kind == Q8_EPI_I8 ? 1 : 4;
    for (int64_t it = b; it < e; it++) { /* one output channel of one image */
        int64_t img = it / q->M, m = it % q->M;
        const int8_t *x = a->x + (img * q->C + m / d->Mg) * q->H * q->W;
        char *y = a->y + (size_t)((img * q->M + m) * q->OH * q->OW) * es;
#if defined(__x86_64__) || defined(__i386__)
        if (d->kind == Q8_QDW_AVX512) q8_qdw_chan_avx512(d, a->packed, a->e, m, x, y);
        else q8_qdw_chan_avx2(d, a->packed, a->e, m, x, y, a->scratch + (size_t)t * d->per_thread);
#else
        (void)x, (void)y, (void)m;
#endif
    }
}

/* Global depthwise: blocks of Q8_QDW_GLOBAL_CH channels of one image a task. */
static void global_range(void *arg, int64_t b, int64_t e, int t) {
    (void)t;
    const run_args *a = arg;
    const q8_qconv_geom *q = &a->d->geo;
    size_t es = a->e->kind == Q8_EPI_I8 ? 1 : 4;
    int64_t nb = (q->M + Q8_QDW_GLOBAL_CH - 1) / Q8_QDW_GLOBAL_CH;
    for (int64_t it = b; it < e; it++) {
        int64_t img = it / nb, m0 = it % nb * Q8_QDW_GLOBAL_CH;
        int64_t m1 = m0 + Q8_QDW_GLOBAL_CH < q->M ? m0 + Q8_QDW_GLOBAL_CH : q->M;
#if defined(__x86_64__) || defined(__i386__)
        q8_qdw_global_avx512(a->d, a->packed, a->e, a->x + img * q->C * q->H * q->W,
                             a->y + (size_t)(img * q->M) * es, m0, m1);
#else
        (void)img, (void)m1, (void)es;
#endif
    }
}

void q8_qdw_run(const q8_qdw *d, const void *packed, const q8_epilogue *e, const int8_t *x,
                void *y, void *scratch, q8_pool *pool) {
    const q8_qconv_geom *q = &d->geo;
    run_args a = {d, packed, e, x, y, scratch};
    if (d->global) {
        int64_t nb = (q->M + Q8_QDW_GLOBAL_CH - 1) / Q8_QDW_GLOBAL_CH;
        q8_parallel_for(pool, q->N * nb, 1, global_range, &a);
        return;
    }
    int64_t work = q->OH * q->OW * q->KH * q->KW / 4 + q->H * q->W + 1;
    q8_parallel_for(pool, q->N * q->M, 1 + 16384 / work, run_range, &a);
}
