/* The direct depthwise loops of conv_impl.c, written once for a vector of
 * DW_VL floats and included once per width (a template by #include):
 * conv_impl.c defines
 *   DW_VL      lanes of one vector: 16 (AVX-512, and the portable clone)
 *              or 8 (AVX2: GCC kept 16-float vectors of the AVX2 clone on
 *              the stack, piecewise, 26x the AVX-512 time on 24x112x112)
 *   DW_SFX(n)  n with this instance's suffix (its static helpers)
 *   DW_RANGE   the range function's name, DW_RANGE_ATTR its attributes
 *   DW_WIDE    an expression: true where the 8-unit blocks fit the
 *              registers (AVX-512's 32)
 * Blocks count in units of 16 outputs (DW_U vectors each): both widths walk
 * the same blocks and give every output the same chain, bias then the taps
 * in order. Needs conv_impl.c's build_planes, copy_floats, DW_INLINE and
 * the DW_BLOCK* constants. */

#define DW_U (16 / DW_VL)
typedef float DW_SFX(dwv) __attribute__((vector_size(DW_VL * 4)));
typedef float DW_SFX(dwvu) __attribute__((vector_size(DW_VL * 4), aligned(4), may_alias));

/* nu (1..8, a constant where inlined) units of outputs in independent
 * chains at grid offset g: bias + sum over taps, into out. */
DW_INLINE void DW_SFX(dw_blockn)(const float *planes, int64_t g, const int64_t *offk,
                                 int64_t taps, const float *w, float bv, float *out,
                                 const int nu) {
    DW_SFX(dwv) acc[8 * DW_U];
#pragma GCC unroll 16
    for (int v = 0; v < nu * DW_U; v++) acc[v] = (DW_SFX(dwv)){0} + bv;
    const float *base = planes + g;
    for (int64_t t = 0; t < taps; t++) {
        const float *src = base + offk[t];
        float wv = w[t];
#pragma GCC unroll 16
        for (int v = 0; v < nu * DW_U; v++)
            acc[v] += wv * *(const DW_SFX(dwvu) *)(src + DW_VL * v);
    }
#pragma GCC unroll 16
    for (int v = 0; v < nu * DW_U; v++) memcpy(out + DW_VL * v, &acc[v], DW_VL * 4);
}

/* The last n <= 128 outputs from g as one block (n <= DW_TAIL_MAX unless
 * wide). */
DW_INLINE void DW_SFX(dw_tail)(const float *planes, int64_t g, int64_t n, const int64_t *offk,
                               int64_t taps, const float *w, float bv, float *out) {
    switch ((n + 15) / 16) {
    case 1: DW_SFX(dw_blockn)(planes, g, offk, taps, w, bv, out, 1); break;
    case 2: DW_SFX(dw_blockn)(planes, g, offk, taps, w, bv, out, 2); break;
    case 3: DW_SFX(dw_blockn)(planes, g, offk, taps, w, bv, out, 3); break;
    case 4: DW_SFX(dw_blockn)(planes, g, offk, taps, w, bv, out, 4); break;
    case 5: DW_SFX(dw_blockn)(planes, g, offk, taps, w, bv, out, 5); break;
    case 6: DW_SFX(dw_blockn)(planes, g, offk, taps, w, bv, out, 6); break;
    case 7: DW_SFX(dw_blockn)(planes, g, offk, taps, w, bv, out, 7); break;
    case 8: DW_SFX(dw_blockn)(planes, g, offk, taps, w, bv, out, 8); break;
    default: break;
    }
}

/* One long block: 8 units where wide, else 4. */
DW_INLINE void DW_SFX(dw_block)(const float *planes, int64_t g, const int64_t *offk,
                                int64_t taps, const float *w, float bv, float *out, bool wide) {
    if (wide) DW_SFX(dw_blockn)(planes, g, offk, taps, w, bv, out, 8);
    else DW_SFX(dw_blockn)(planes, g, offk, taps, w, bv, out, 4);
}

DW_RANGE_ATTR void DW_RANGE(void *arg, int64_t begin, int64_t end, int thread) {
    const conv_dw_args *a = arg;
    const q8_conv_params *p = a->p;
    const conv_prep *cp = a->cp;
    const q8_conv_geom *G = &p->geo;
    const int64_t *offk = conv_offk(cp);
    int64_t OH = G->out[1], OW = G->out[2], P1 = cp->ph[1], P2 = cp->ph[2], taps = p->kprod;
    float *planes = (float *)((char *)a->scratch + (size_t)thread * a->per_thread);
    float *ybuf = planes + a->ybuf_at;
    q8_act_span span = {0};
    /* The same chain per output whatever the block size: the same bits. */
    const bool wide = DW_WIDE;
    const int64_t blk = wide ? DW_BLOCK_WIDE : DW_BLOCK, tmax = wide ? DW_BLOCK_WIDE : DW_TAIL_MAX;
    for (int64_t it = begin; it < end; it++) {
        int64_t img = it / p->c, ic = it % p->c;
        build_planes(p, cp, a->x + (img * p->c + ic) * p->in_sp, planes);
        memset(planes + cp->nph * cp->plane, 0, DW_BLOCK * sizeof(float));
        for (int64_t oc = ic * p->mg; oc < (ic + 1) * p->mg; oc++) {
            const float *w = a->w + oc * taps;
            float bv = a->bias ? a->bias[oc] : 0.0f;
            float *y = a->y + (img * p->m + oc) * p->out_sp;
            if (OW >= DW_ROWS_MIN) {
                /* Row by row, straight into Y; a row's whole units after
                 * its long blocks as one block; its last partial unit goes
                 * through ybuf. */
                for (int64_t od = 0; od < G->out[0]; od++)
                    for (int64_t oh = 0; oh < OH; oh++) {
                        int64_t g = (od * P1 + oh) * P2, j = 0;
                        float *yr = y + (od * OH + oh) * OW;
                        for (; j + blk <= OW; j += blk)
                            DW_SFX(dw_block)(planes, g + j, offk, taps, w, bv, yr + j, wide);
                        if (j + 16 <= OW) {
                            int64_t whole = (OW - j) / 16 * 16;
                            DW_SFX(dw_tail)(planes, g + j, whole, offk, taps, w, bv, yr + j);
                            j += whole;
                        }
                        if (j < OW) {
                            DW_SFX(dw_blockn)(planes, g + j, offk, taps, w, bv, ybuf, 1);
                            copy_floats(yr + j, ybuf, OW - j);
                        }
                    }
            } else {
                /* Narrow rows: the whole grid (garbage columns included) in
                 * long blocks, the last <= 80 in one block of as many units
                 * as they need (a 7x7 map's grid of 73 took two long
                 * blocks, 128 lanes; now 5 units), then only the real
                 * outputs into Y. */
                int64_t gi = 0;
                for (; cp->nprime - gi > tmax; gi += blk)
                    DW_SFX(dw_block)(planes, gi, offk, taps, w, bv, ybuf + gi, wide);
                DW_SFX(dw_tail)(planes, gi, cp->nprime - gi, offk, taps, w, bv, ybuf + gi);
                float *yr = y;
                for (int64_t od = 0; od < G->out[0]; od++)
                    for (int64_t oh = 0; oh < OH; oh++, yr += OW)
                        copy_floats(yr, ybuf + (od * P1 + oh) * P2, OW);
            }
            q8_conv_act_span(&p->act, &span, y, p->out_sp);
        }
    }
    q8_conv_act_span(&p->act, &span, NULL, 0);
}

#undef DW_U
/* the parameters too: the next instance defines its own */
#undef DW_VL
#undef DW_SFX
#undef DW_RANGE
#undef DW_RANGE_ATTR
#undef DW_WIDE
