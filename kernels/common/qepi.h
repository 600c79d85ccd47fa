/* The epilogue of a q8.Q* op made from the core's params (src/core/ops/qop.h):
 * clamp bounds, LeakyRelu table and float activation, plus the per-channel
 * arrays (mult, shift for int8 outputs; scale for float32) computed from the
 * scales. Host code both backends run, so the CPU and CUDA requantize with
 * the very same multipliers. */
#ifndef Q8_KERNELS_COMMON_QEPI_H
#define Q8_KERNELS_COMMON_QEPI_H

#include <stddef.h>

#include "common.h"
#include "ops/act.h"
#include "requant.h"

/* The INT8 epilogue's form of a fused activation (Relu, Clip, LeakyRelu:
 * what q8_qop_act accepts). */
q8_qact q8_qact_of(const q8_act *act);

/* What the epilogue needs besides the per-channel arrays, which live at
 * byte offsets of a blob of the backend's (q8_qepi_place). */
typedef struct q8_qepi {
    q8_epi_kind kind;
    int32_t lo, hi;
    bool has_lut;           /* int8 LeakyRelu: a 128-byte table in the blob */
    float lut_alpha;
    bool clip, leaky;
    float flo, fhi, alpha;
    int64_t channels;
    size_t off_mult, off_shift, off_scale, off_lut; /* byte offsets into the blob */
} q8_qepi;

/* Set q's kind, clamp and activation fields. */
void q8_qepi_init(q8_qepi *q, const q8_act *act, bool out_i8, float sy, int64_t channels);
/* Place the arrays (and the LeakyRelu table) at byte offset *off of the
 * blob (advanced; each Q8_QOP_CHAN_ALIGN-aligned). */
void q8_qepi_place(q8_qepi *q, size_t *off);
/* Fill the arrays: channel c has input scale product sx * sw[c] (sw NULL:
 * sw1 for every channel) and output scale sy. */
void q8_qepi_fill(const q8_qepi *q, void *blob, double sx, const float *sw, float sw1,
                  float sy);
/* The run-time view. */
void q8_qepi_view(const q8_qepi *q, const void *blob, q8_epi_chan chan, q8_epilogue *e);

/* Byte offset helper for blobs: reserve bytes at *off (64-aligned). */
static inline size_t q8_qop_reserve(size_t *off, size_t bytes) {
    size_t at = q8_align_up(*off, 64);
    *off = at + bytes;
    return at;
}

/* Per-channel arrays (init, mult, shift, scale) are read with unaligned
 * loads: 16-byte alignment keeps a blob's small arrays from taking 64 bytes
 * each (a squeeze-excite conv's 8 channels: 32 bytes an array). */
#define Q8_QOP_CHAN_ALIGN 16
static inline size_t q8_qop_reserve_chan(size_t *off, size_t bytes) {
    size_t at = q8_align_up(*off, Q8_QOP_CHAN_ALIGN);
    *off = at + bytes;
    return at;
}

#endif
