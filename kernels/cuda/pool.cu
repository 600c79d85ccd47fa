/* MaxPool (float32, int8, uint8) and AveragePool (float32) over up to 3
 * spatial dims, as kernels/cpu/ops/pool.c: the same window clipping (taps),
 * the same summation order, NaN wins a float max, count_include_pad, and
 * an empty window gives the lowest value (max) or 0 (average). One thread
 * per output element. */
#include "common.cuh"

__host__ __device__ static inline int64_t ceil_div(int64_t a, int64_t b) {
    int64_t rem;
    return a >= 0 ? q8cu_divmod(a + b - 1, b, &rem) : -q8cu_divmod(-a, b, &rem);
}

/* taps kk in [*lo, *hi) of output o along dim j fall inside the input;
 * *cnt_pad counts those inside the padded extent */
__host__ __device__ static inline void taps(const q8cu_pool_args *p, int j, int64_t o, int64_t *lo,
                                            int64_t *hi, int64_t *cnt_pad) {
    int64_t start = o * p->s[j] - p->pb[j], d = p->d[j], k = p->k[j], l, h, c;
    l = start >= 0 ? 0 : ceil_div(-start, d);
    h = ceil_div(p->in[j] - start, d);
    c = ceil_div(p->in[j] + p->pe[j] - start, d);
    if (h > k) h = k;
    if (h < l) h = l;
    *lo = l;
    *hi = h;
    *cnt_pad = c > k ? k : c;
}

__host__ __device__ static inline float load(const q8cu_pool_args *p, int64_t i) {
    return p->dtype == Q8CU_I8 ? (float)((const int8_t *)p->x)[i]
           : p->dtype == Q8CU_U8 ? (float)((const uint8_t *)p->x)[i]
                                 : ((const float *)p->x)[i];
}

__host__ __device__ static inline void pool_elem(const q8cu_pool_args *p, int64_t t) {
    int64_t ow, oh, od, r = q8cu_divmod(t, p->out[2], &ow);
    r = q8cu_divmod(r, p->out[1], &oh);
    int64_t nc = q8cu_divmod(r, p->out[0], &od);
    int64_t dlo, dhi, dcnt, hlo, hhi, hcnt, wlo, whi, wcnt;
    taps(p, 0, od, &dlo, &dhi, &dcnt);
    taps(p, 1, oh, &hlo, &hhi, &hcnt);
    taps(p, 2, ow, &wlo, &whi, &wcnt);
    int64_t D = p->in[0], H = p->in[1], W = p->in[2];
    int64_t plane = nc * D * H * W;
    int64_t d0 = od * p->s[0] - p->pb[0], h0 = oh * p->s[1] - p->pb[1];
    int64_t w0 = ow * p->s[2] - p->pb[2];
    /* int8 / uint8 values are exact in float, so one float loop serves all */
    float best = p->dtype == Q8CU_I8 ? -128.0f : p->dtype == Q8CU_U8 ? 0.0f : -INFINITY;
    float sum = 0.0f;
    bool nan = false;
    for (int64_t kd = dlo; kd < dhi; kd++)
        for (int64_t kh = hlo; kh < hhi; kh++) {
            int64_t row = plane + ((d0 + kd * p->d[0]) * H + h0 + kh * p->d[1]) * W + w0;
            for (int64_t kw = wlo; kw < whi; kw++) {
                float v = load(p, row + kw * p->d[2]);
                if (p->avg) {
                    sum += v;
                } else {
                    best = v > best ? v : best;
                    nan |= v != v;
                }
            }
        }
    if (p->avg) {
        int64_t cnt = p->include_pad ? dcnt * hcnt * wcnt : (dhi - dlo) * (hhi - hlo) * (whi - wlo);
        ((float *)p->y)[t] = cnt > 0 ? sum / (float)cnt : 0.0f;
    } else if (p->dtype == Q8CU_I8) {
        ((int8_t *)p->y)[t] = (int8_t)best;
    } else if (p->dtype == Q8CU_U8) {
        ((uint8_t *)p->y)[t] = (uint8_t)best;
    } else {
        ((float *)p->y)[t] = nan ? NAN : best;
    }
}

Q8CU_ELEMENTWISE(pool, q8cu_pool_args, pool_elem)

extern "C" cudaError_t q8cu_pool(const q8cu_stream *s, const q8cu_pool_args *p) {
    return pool_launch(s, p, p->nc * p->out[0] * p->out[1] * p->out[2]);
}
