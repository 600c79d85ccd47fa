/* The epilogue of the q8.Q* ops (qepi.h). */
#include "qepi.h"

#include <math.h>
#include <string.h>

q8_qact q8_qact_of(const q8_act *act) {
    q8_qact q = {Q8_QACT_NONE, -INFINITY, INFINITY, 0.01f};
    if (act->kind == Q8_ACT_RELU) {
        q.kind = Q8_QACT_RELU;
    } else if (act->kind == Q8_ACT_CLIP) {
        q.kind = Q8_QACT_CLIP;
        q.lo = act->p0;
        q.hi = act->p1;
    } else if (act->kind == Q8_ACT_LEAKY_RELU) {
        q.kind = Q8_QACT_LEAKY;
        q.alpha = act->p0;
    }
    Q8_ASSERT(act->kind == Q8_ACT_NONE || q.kind != Q8_QACT_NONE); /* q8_qop_act checked it */
    return q;
}

void q8_qepi_init(q8_qepi *q, const q8_act *core_act, bool out_i8, float sy, int64_t channels) {
    q8_qact qa = q8_qact_of(core_act), *act = &qa;
    memset(q, 0, sizeof *q);
    q->channels = channels;
    if (out_i8) {
        q->kind = Q8_EPI_I8;
        q8_act_i8_bounds(act, sy, &q->lo, &q->hi);
        if (act->kind == Q8_QACT_LEAKY) {
            q->has_lut = true;
            q->lut_alpha = act->alpha;
        }
        return;
    }
    q->kind = Q8_EPI_F32;
    q8_epilogue e = {0};
    q8_epilogue_set_f32_act(&e, act);
    q->clip = e.clip;
    q->leaky = e.leaky;
    q->flo = e.flo;
    q->fhi = e.fhi;
    q->alpha = e.alpha;
}

void q8_qepi_place(q8_qepi *q, size_t *off) {
    size_t b = (size_t)q->channels * 4;
    if (q->kind == Q8_EPI_I8) {
        q->off_mult = q8_qop_reserve_chan(off, b);
        q->off_shift = q8_qop_reserve_chan(off, b);
        if (q->has_lut) q->off_lut = q8_qop_reserve_chan(off, 128);
    } else {
        q->off_scale = q8_qop_reserve_chan(off, b);
    }
}

void q8_qepi_fill(const q8_qepi *q, void *blob, double sx, const float *sw, float sw1,
                  float sy) {
    char *p = blob;
    if (q->has_lut) q8_act_leaky_lut(q->lut_alpha, (int8_t *)(p + q->off_lut));
    for (int64_t c = 0; c < q->channels; c++) {
        double s = sx * (double)(sw ? sw[c] : sw1);
        if (q->kind == Q8_EPI_I8) {
            q8_requant r = q8_requant_make(s / (double)sy);
            ((int32_t *)(p + q->off_mult))[c] = r.mult;
            ((int32_t *)(p + q->off_shift))[c] = r.shift;
        } else {
            ((float *)(p + q->off_scale))[c] = (float)s;
        }
    }
}

void q8_qepi_view(const q8_qepi *q, const void *blob, q8_epi_chan chan, q8_epilogue *e) {
    const char *p = blob;
    *e = (q8_epilogue){.kind = q->kind, .chan = chan, .lo = q->lo, .hi = q->hi,
                       .leaky_lut = q->has_lut ? (const int8_t *)(p + q->off_lut) : NULL,
                       .clip = q->clip,
                       .leaky = q->leaky, .flo = q->flo, .fhi = q->fhi, .alpha = q->alpha};
    if (q->kind == Q8_EPI_I8) {
        e->mult = (const int32_t *)(p + q->off_mult);
        e->shift = (const int32_t *)(p + q->off_shift);
    } else {
        e->scale = (const float *)(p + q->off_scale);
    }
}
