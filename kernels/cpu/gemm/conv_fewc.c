/* Direct Conv for few input channels: which nodes take it and its weight
 * layout (the AVX-512 loops: kernels/cpu/x86/conv_fewc_avx512.c). */
#include "conv_fewc.h"

#include "conv_dwx.h"
#include "cpu_features.h"

/* Limits: four input channels cover RGB(A) inputs; up to 3x3 taps (a K of
 * at most 36, one K block of the SGEMM, whose FMA chain this kernel
 * repeats). Larger windows (ResNet's 7x7) ran slower than the GEMM: each
 * tap's loads and permute are redone per 16 output channels. */
#define FEWC_MAX_CG 4
#define FEWC_MAX_K 36

bool q8_conv_fewc_fits(const q8_conv_params *p) {
#if Q8_FEWC_X86
    const q8_conv_geom *G = &p->geo;
    if (!q8_cpu()->avx512f) return false;
    if (p->g != 1 || p->cg > FEWC_MAX_CG || p->kprod == 1 || p->kg > FEWC_MAX_K) return false;
    if (G->in[0] != 1 || G->k[0] != 1 || G->pb[0] != 0 || G->pe[0] != 0) return false;
    /* Stride 1 or 2 along W (one or two loads per 16 pixels); rows long
     * enough to fill vectors. */
    return (G->s[2] == 1 || G->s[2] == 2) && G->out[2] >= 16;
#else
    (void)p;
    return false;
#endif
}

size_t q8_conv_blocks_packed_floats(const q8_conv_params *p, int64_t mb) {
    return (size_t)((p->m + mb - 1) / mb * p->kg * mb);
}

void q8_conv_blocks_pack(const q8_conv_params *p, const float *w, int64_t mb, float *dst) {
    for (int64_t m0 = 0; m0 < p->m; m0 += mb)
        for (int64_t k = 0; k < p->kg; k++)
            for (int64_t i = 0; i < mb; i++)
                *dst++ = m0 + i < p->m ? w[(m0 + i) * p->kg + k] : 0.0f;
}

size_t q8_conv_fewc_packed_floats(const q8_conv_params *p) {
    return q8_conv_blocks_packed_floats(p, Q8_FEWC_MB);
}

void q8_conv_fewc_pack(const q8_conv_params *p, const float *w, float *dst) {
    q8_conv_blocks_pack(p, w, Q8_FEWC_MB, dst);
}

bool q8_conv_dwx_fits(const q8_conv_params *p) {
#if Q8_FEWC_X86
    const q8_conv_geom *G = &p->geo;
    if (!q8_cpu()->avx512f) return false;
    if (p->cg != 1 || p->mg != 1) return false;
    if (G->in[0] != 1 || G->k[0] != 1 || G->pb[0] != 0 || G->pe[0] != 0) return false;
    /* Stride 2 along W only: there the planes loops copy every input twice
     * (2x2 phases, padded); with stride 1 they ran as fast or faster (their
     * loads need no masks), measured on MobileNet's shapes. */
    if (G->d[1] != 1 || G->d[2] != 1 || G->s[2] != 2) return false;
    /* Output rows of <= 8 (MobileNetV3's 14x14 -> 7x7) fill at most half
     * of each vector here; the planes loops' grid ran a 288-channel 5x5
     * layer in 75% of the time. */
    if (G->out[2] <= 8) return false;
    return (G->out[2] + 15) / 16 * G->k[2] <= Q8_DWX_MAX_MASKS;
#else
    (void)p;
    return false;
#endif
}
