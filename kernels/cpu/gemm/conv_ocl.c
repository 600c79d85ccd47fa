/* Direct Conv with the output channels in the lanes: which nodes take it,
 * its weight layout and scratch (the AVX-512 loops:
 * kernels/cpu/x86/conv_ocl_avx512.c). */
#include "conv_ocl.h"

#include "conv_fewc.h"
#include "cpu_features.h"

bool q8_conv_ocl_fits(const q8_conv_params *p) {
#if Q8_OCL_X86
    const q8_conv_geom *G = &p->geo;
    if (!q8_cpu()->avx512f) return false;
    if (p->g != 1 || p->kprod == 1) return false;
    if (G->in[0] != 1 || G->k[0] != 1 || G->pb[0] != 0 || G->pe[0] != 0) return false;
    /* Stride 2 in both dims: there the lowerings build four phase planes
     * and compact a grid output; on stride-1 and 1x1 convs this kernel ran
     * as fast or slower (docs/performance.md, "Stride-2 convolutions with
     * the channels in the lanes"). A block of 32 channels and a tile of 12
     * pixels mostly filled. */
    if (G->s[1] != 2 || G->s[2] != 2) return false;
    /* Few input channels (a 3-channel 7x7 or 6x6 first conv) ran slower
     * than the GEMM: a tile's epilogue over a short K. */
    if (p->m < 24 || p->cg < 8 || G->out[2] < Q8_OCL_NP) return false;
    int64_t lo, hi;
    q8_conv_ocl_inside(G, &lo, &hi);
    return G->out[2] - (hi - lo) <= Q8_OCL_MAX_EDGES;
#else
    (void)p;
    return false;
#endif
}

size_t q8_conv_ocl_packed_floats(const q8_conv_params *p) {
    return q8_conv_blocks_packed_floats(p, Q8_OCL_MB);
}

void q8_conv_ocl_pack(const q8_conv_params *p, const float *w, float *dst) {
    q8_conv_blocks_pack(p, w, Q8_OCL_MB, dst);
}

void q8_conv_ocl_inside(const q8_conv_geom *G, int64_t *lo, int64_t *hi) {
    int64_t sw = G->s[2], pl = G->pb[2], reach = (G->k[2] - 1) * G->d[2];
    int64_t first = (pl + sw - 1) / sw;        /* ow * sw >= pl */
    int64_t last = G->in[2] - 1 - reach + pl;  /* ow * sw <= last */
    int64_t b = last < 0 ? 0 : last / sw + 1;
    if (b > G->out[2]) b = G->out[2];
    *lo = first < b ? first : b;
    *hi = b;
}

/* Bytes of each scratch part, in order (64-byte aligned). */
static void scratch_parts(const q8_conv_params *p, size_t part[5]) {
    size_t k = (size_t)p->kg;
    part[0] = q8_align_up(sizeof(float *) * k, 64);                    /* rows */
    part[1] = part[0];                                                   /* cptr */
    part[2] = q8_align_up(sizeof(float) * k * Q8_OCL_MAX_EDGES, 64);     /* cbuf */
    part[3] = q8_align_up(sizeof(float) * Q8_OCL_MB * Q8_OCL_NP, 64);    /* yblk */
    part[4] = q8_align_up(sizeof(float) * (size_t)p->geo.in[2], 64);     /* zero */
}

size_t q8_conv_ocl_per_thread(const q8_conv_params *p) {
    size_t part[5], sum = 0;
    scratch_parts(p, part);
    for (int i = 0; i < 5; i++) sum += part[i];
    return sum;
}

void q8_conv_ocl_scratch_at(const q8_conv_params *p, char *base, q8_conv_ocl_scratch *s) {
    size_t part[5];
    scratch_parts(p, part);
    s->rows = (const float **)base;
    s->cptr = (const float **)(base += part[0]);
    s->cbuf = (float *)(base += part[1]);
    s->yblk = (float *)(base += part[2]);
    s->zero = (float *)(base + part[3]);
}

int64_t q8_conv_ocl_items(const q8_conv_params *p) {
    return p->nb * p->geo.out[1] * ((p->m + Q8_OCL_MB - 1) / Q8_OCL_MB);
}
