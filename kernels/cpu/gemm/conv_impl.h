/* Internal to Conv on the CPU: the lowering its prepare picks (the start of
 * its prep blob) and the data-movement kernels that turn a convolution into
 * GEMMs (conv_impl.c). The op itself is src/core/ops/conv.h. */
#ifndef Q8_CONV_IMPL_H
#define Q8_CONV_IMPL_H

#include "cpu_op.h"
#include "fused_act.h"
#include "ops/conv.h"

typedef enum conv_mode {
    CONV_SHIFT,     /* phase planes + shifted rows (stride/dilation/pad folded) */
    CONV_IM2COL,    /* implicit im2col: B panels gathered from X */
    CONV_1X1,       /* 1x1, stride 1, no pads: X is the B matrix */
    CONV_COL1,      /* one output pixel: the column gathered into scratch, GEMV */
    CONV_DEPTHWISE, /* one input channel per group: direct loops on the planes */
    CONV_FEWC,      /* few input channels, AVX-512: direct loops on X (conv_fewc.h) */
    CONV_OCL,       /* output channels in the lanes, AVX-512: direct loops on X (conv_ocl.h) */
} conv_mode;

/* What prepare decided for one node: the start of its prep blob (a packed
 * W follows, 64-byte aligned). */
typedef struct conv_prep {
    conv_mode mode;
    bool col_is_x;      /* CONV_COL1: the column is X (window = whole input) */
    bool dwx;           /* CONV_DEPTHWISE: the AVX-512 loops on X (conv_dwx.h) */
    bool dwc;           /* CONV_DEPTHWISE: 16 channels in the lanes (conv_dwc.h) */
    bool dwr;           /* CONV_DEPTHWISE: input rows shared in registers (conv_dwr.h) */
    bool rows_1x1;      /* CONV_1X1: B panels read in place from X (offk, nph 1,
                           plane in_sp) */
    bool bands;         /* CONV_SHIFT: bands of output rows may be used (conv.c,
                           "banded shift"); false when the lowering was forced */
    bool planes_are_x;  /* CONV_SHIFT, stride 1, no padding: the one plane per
                           channel is X itself, read in place (nothing built) */
    /* CONV_SHIFT, CONV_DEPTHWISE: input padded and split by stride phase
     * into planes of ph[0]*ph[1]*ph[2] floats (nph per channel); output
     * computed on the plane grid, n' = (od*ph[1] + oh)*ph[2] + ow for
     * n' < nprime, then compacted into Y unless `direct` (the grid is Y's
     * layout). */
    int64_t ph[3], nph, plane, nprime;
    bool direct;
    const void *a_packed;   /* W packed for q8_sgemm (later in this blob), or NULL */
    const float *direct_w;    /* CONV_FEWC, CONV_OCL: W packed for it (later in this blob) */
    int64_t ngemm;      /* GEMM offset entries (4 each) at tail[0] */
    int64_t tail[];     /* offs[4*ngemm], then (planes) offk[kg] */
} conv_prep;

static inline const int64_t *conv_offs(const conv_prep *cp) { return cp->tail; }
static inline const int64_t *conv_offk(const conv_prep *cp) { return cp->tail + 4 * cp->ngemm; }

/* b_pack context: X (im2col) or the phase planes (shift). */
typedef struct conv_pack_ctx {
    const q8_conv_params *p;
    const conv_prep *cp;
    const float *src;
    const int64_t *offk;    /* shift: row offsets into src (NULL: conv_offk) */
} conv_pack_ctx;

/* q8_sgemm_pack_fn for CONV_IM2COL: GEMM number = image * g + group. */
void q8_conv_im2col_pack(const void *ctx, int64_t batch, int64_t k0, int64_t kc, int64_t n0,
                         int64_t nc, int nr, float *dst);
/* q8_sgemm_pack_fn for CONV_SHIFT: GEMM number = group (one image). */
void q8_conv_shift_pack(const void *ctx, int64_t batch, int64_t k0, int64_t kc, int64_t n0,
                        int64_t nc, int nr, float *dst);

/* CONV_COL1: the column of the single output pixel; x is one image's
 * group (cg channels). */
void q8_conv_col1(const q8_conv_params *p, const float *x, float *col);

/* Floats in the planes of one channel plus slack: whole blocks of the
 * depthwise grid loop may read a little past the last plane. */
static inline int64_t conv_planes_floats(const conv_prep *cp) {
    return cp->nph * cp->plane + 64;
}

/* Range functions for q8_parallel_for. */
typedef struct conv_planes_args {
    const q8_conv_params *p;
    const conv_prep *cp;
    const float *x;         /* one image */
    float *planes;
} conv_planes_args;
void q8_conv_planes_range(void *arg, int64_t begin, int64_t end, int thread); /* channels */
/* How many of the s[0] s[1] s[2] stride phases a kernel tap reads: only
 * those planes are built. */
int64_t q8_conv_phases_read(const q8_conv_geom *G);

/* A band of the planes of a 2-D conv with one group: rows [b0, b1) of each
 * (channel, phase) plane, at dst + (channel * nph + phase) * band_plane. */
void q8_conv_band_planes(const q8_conv_params *p, const conv_prep *cp, const float *x,
                         int64_t b0, int64_t b1, int64_t band_plane, float *dst);

typedef struct conv_compact_args {
    const q8_conv_params *p;
    const conv_prep *cp;
    const float *cbuf;
    float *y;               /* one image */
} conv_compact_args;
/* q8_sgemm_op.block_done: grid block (rows m0..m1 of group grp, grid
 * columns n0..n1) copied to Y (the GEMM applied bias and activation). */
void q8_conv_compact_block(const void *ctx, int64_t grp, int64_t m0, int64_t m1, int64_t n0,
                           int64_t n1);

typedef struct conv_dw_args {
    const q8_conv_params *p;
    const conv_prep *cp;
    const float *x, *w, *bias;
    float *y;
    void *scratch;          /* per thread: planes, then the grid output */
    size_t per_thread;      /* bytes */
    int64_t ybuf_at;        /* floats from the planes to the grid output */
} conv_dw_args;
/* Items: (image, input channel). */
void q8_conv_dw_range(void *arg, int64_t begin, int64_t end, int thread);
/* Which instance of those loops runs: 0, the CPU's (8-float vectors on
 * AVX2 without AVX-512, else 16); 8 or 16 forces one (tests: both on any
 * AVX2 machine; 8 is ignored without AVX2). */
extern int q8_conv_dw_lanes;

/* The depthwise loops' activation, one call per run of adjacent outputs
 * (consecutive channels' outputs are adjacent in Y): per 7x7 channel the
 * call cost as much as the work. */
typedef struct q8_act_span {
    float *start;
    int64_t len;
} q8_act_span;
/* Outputs y[0..len) are final: add them to the run, applying it once it is
 * long (or y is NULL: the end). y follows the run's end or starts a new one. */
static inline void q8_conv_act_span(const q8_act *act, q8_act_span *s, float *y, int64_t len) {
    if (act->kind == Q8_ACT_NONE) return;
    if (s->len && (!y || y != s->start + s->len)) {
        q8_act_apply(act, s->start, s->len);
        s->len = 0;
    }
    if (!y) return;
    if (!s->len) s->start = y;
    s->len += len;
    /* 1024 floats: still in L1 when applied. */
    if (s->len >= 1024) {
        q8_act_apply(act, s->start, s->len);
        s->len = 0;
    }
}

#endif
