/* DFT, STFT and MelWeightMatrix on the CPU (params: src/core/ops/spectral.h).
 * Every line (a signal along the axis, or a frame) is transformed by an FFT
 * in double, in buffers of its thread, the lines split over the threads (so
 * results do not depend on the thread count):
 * - n a power of two: radix 2, in place;
 * - n whose prime factors are all at most Q8_FFT_MAX_RADIX (400 = 4 4 5 5, a
 *   speech front end's frame): mixed radix;
 * - any other n (a large prime factor): Bluestein's chirp-z transform, the
 *   n-point transform as a convolution done by radix-2 FFTs of M >= 2n - 1
 *   points.
 * The tables (twiddles, chirp, the chirp's transform) are made by run in
 * scratch, once per run. */
#include <math.h>
#include <string.h>

#include "cpu_op.h"
#include "ops/spectral.h"

#define Q8_FFT_MAX_RADIX 64

static const double two_pi = 6.283185307179586476925286766559;

/* tw[2m], tw[2m + 1] = cos, sin of 2 pi m / n. Indices into it are reduced
 * exactly (mod n), which keeps every angle exact however large they get. */
static void twiddles(double *tw, int64_t n) {
    for (int64_t m = 0; m < n; m++) {
        double a = two_pi * (double)m / (double)n;
        tw[2 * m] = cos(a);
        tw[2 * m + 1] = sin(a);
    }
}

/* In-place radix-2 FFT of the n (a power of two) points of buf, (re, im)
 * pairs: sign -1 forward, +1 inverse (unscaled); tw is the n-point table. */
static void fft_pow2(double *buf, int64_t n, const double *tw, double sign) {
    for (int64_t i = 1, j = 0; i < n; i++) { /* bit-reversed order */
        int64_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            double r = buf[2 * i], m = buf[2 * i + 1];
            buf[2 * i] = buf[2 * j], buf[2 * i + 1] = buf[2 * j + 1];
            buf[2 * j] = r, buf[2 * j + 1] = m;
        }
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
        int64_t half = len / 2, stride = n / len;
        for (int64_t s = 0; s < n; s += len)
            for (int64_t k = 0; k < half; k++) {
                double c = tw[2 * k * stride], sn = sign * tw[2 * k * stride + 1];
                double *a = buf + 2 * (s + k), *b = a + 2 * half;
                double br = b[0] * c - b[1] * sn, bi = b[0] * sn + b[1] * c;
                b[0] = a[0] - br, b[1] = a[1] - bi;
                a[0] += br, a[1] += bi;
            }
    }
}

/* n's factors for the mixed-radix FFT, 4s first, then primes ascending, in
 * fac (at most 63 of them, 0-terminated); false when a prime factor
 * exceeds Q8_FFT_MAX_RADIX. */
static bool fft_factors(int64_t n, int *fac) {
    int k = 0;
    while (n % 4 == 0 && n > 4) fac[k++] = 4, n /= 4;
    for (int p = 2; n > 1; p++) {
        if (p > Q8_FFT_MAX_RADIX) return false;
        while (n % p == 0) fac[k++] = p, n /= p;
    }
    fac[k] = 0;
    return true;
}

/* out (n contiguous (re, im) points) = the n-point transform of in[0],
 * in[s], in[2 s], ... by decimation in time over fac; tw is the N-point
 * table (N / n its step), sign -1 forward, +1 inverse (unscaled). Each
 * stage's p-point butterflies read and write the same p points. */
static void fft_mixed(const double *in, int64_t s, double *out, int64_t n, const int *fac,
                      int64_t N, const double *tw, double sign) {
    int p = fac[0];
    int64_t m = n / p, step = N / n, wp = N / p;
    if (m == 1) {
        for (int q = 0; q < p; q++) out[2 * q] = in[2 * q * s], out[2 * q + 1] = in[2 * q * s + 1];
    } else {
        for (int q = 0; q < p; q++)
            fft_mixed(in + 2 * q * s, s * p, out + 2 * q * m, m, fac + 1, N, tw, sign);
    }
    double v[2 * Q8_FFT_MAX_RADIX];
    for (int64_t k = 0; k < m; k++) {
        for (int q = 0; q < p; q++) { /* times W_n^(q k): q k step < N */
            const double *o = out + 2 * (q * m + k);
            int64_t e = q * k * step;
            double c = tw[2 * e], sn = sign * tw[2 * e + 1];
            v[2 * q] = o[0] * c - o[1] * sn;
            v[2 * q + 1] = o[0] * sn + o[1] * c;
        }
        for (int u = 0; u < p; u++) { /* the p-point DFT: W_p^(q u) = tw[(q u mod p) N / p] */
            double sr = 0, si = 0;
            for (int q = 0, qu = 0; q < p; q++, qu = (qu + u) % p) {
                double c = tw[2 * qu * wp], sn = sign * tw[2 * qu * wp + 1];
                sr += v[2 * q] * c - v[2 * q + 1] * sn;
                si += v[2 * q] * sn + v[2 * q + 1] * c;
            }
            out[2 * (u * m + k)] = sr;
            out[2 * (u * m + k) + 1] = si;
        }
    }
}

static bool pow2(int64_t n) { return n >= 2 && (n & (n - 1)) == 0; }

typedef enum fft_kind { FFT_ONE, FFT_POW2, FFT_MIXED, FFT_CHIRP } fft_kind;

/* How an n-point line is transformed, and its tables in scratch. */
typedef struct fft_plan {
    fft_kind kind;
    int64_t n, m;           /* m: the chirp-z convolution's length (a power of two) */
    double sign;
    int fac[64];            /* FFT_MIXED */
    double *tw;             /* n-point table; FFT_CHIRP: m-point */
    double *chirp;          /* FFT_CHIRP: w_k = e^(sign i pi k^2 / n), k < n */
    double *bhat;           /* FFT_CHIRP: the transform of conj(w) wrapped to m points */
    double *bufs;           /* per thread: the line, then the work buffer */
    int64_t per_thread;     /* doubles a thread */
} fft_plan;

static fft_kind kind_of(int64_t n, int *fac, int64_t *m) {
    *m = 1;
    if (n == 1) return FFT_ONE;
    if (pow2(n)) return FFT_POW2;
    if (fft_factors(n, fac)) return FFT_MIXED;
    while (*m < 2 * n - 1) *m <<= 1;
    return FFT_CHIRP;
}

/* Doubles of the tables and of one thread's buffers. */
static void fft_sizes(int64_t n, int64_t *tables, int64_t *per_thread) {
    int fac[64];
    int64_t m;
    switch (kind_of(n, fac, &m)) {
    case FFT_ONE: *tables = 0, *per_thread = 2; break;
    case FFT_POW2: *tables = 2 * n, *per_thread = 2 * n; break;
    case FFT_MIXED: *tables = 2 * n, *per_thread = 4 * n; break;
    default: *tables = 2 * m + 2 * n + 2 * m, *per_thread = 2 * n + 2 * m; break;
    }
}

static size_t fft_scratch(int64_t n, int threads) {
    int64_t tables, per;
    fft_sizes(n, &tables, &per);
    return sizeof(double) * (size_t)(tables + per * (threads < 1 ? 1 : threads));
}

/* The plan for n points and sign in scratch (fft_scratch's bytes): tables
 * filled, thread buffers after them. */
static void fft_plan_make(fft_plan *pl, int64_t n, double sign, double *scratch) {
    int64_t tables;
    pl->n = n;
    pl->sign = sign;
    pl->kind = kind_of(n, pl->fac, &pl->m);
    fft_sizes(n, &tables, &pl->per_thread);
    pl->tw = scratch;
    pl->bufs = scratch + tables;
    if (pl->kind == FFT_POW2 || pl->kind == FFT_MIXED) twiddles(pl->tw, n);
    if (pl->kind != FFT_CHIRP) return;
    int64_t m = pl->m;
    pl->chirp = pl->tw + 2 * m;
    pl->bhat = pl->chirp + 2 * n;
    twiddles(pl->tw, m);
    for (int64_t k = 0; k < n; k++) { /* pi k^2 / n, k^2 reduced mod 2n exactly */
        double a = two_pi * 0.5 * (double)((k * k) % (2 * n)) / (double)n;
        pl->chirp[2 * k] = cos(a);
        pl->chirp[2 * k + 1] = sign * sin(a);
    }
    memset(pl->bhat, 0, sizeof(double) * 2 * (size_t)m);
    for (int64_t k = 0; k < n; k++) { /* b[k] = b[m - k] = conj(w_k) */
        pl->bhat[2 * k] = pl->chirp[2 * k], pl->bhat[2 * k + 1] = -pl->chirp[2 * k + 1];
        if (k) pl->bhat[2 * (m - k)] = pl->bhat[2 * k], pl->bhat[2 * (m - k) + 1] = pl->bhat[2 * k + 1];
    }
    fft_pow2(pl->bhat, m, pl->tw, -1.0);
}

/* Thread t's line buffer (n points). */
static double *fft_buf(const fft_plan *pl, int t) { return pl->bufs + pl->per_thread * t; }

/* The transform of the n points in buf (fft_buf of thread t), in place. */
static void fft_line(const fft_plan *pl, double *buf) {
    int64_t n = pl->n, m = pl->m;
    double *tmp = buf + 2 * n;
    switch (pl->kind) {
    case FFT_ONE: return;
    case FFT_POW2: fft_pow2(buf, n, pl->tw, pl->sign); return;
    case FFT_MIXED:
        memcpy(tmp, buf, sizeof(double) * 2 * (size_t)n);
        fft_mixed(tmp, 1, buf, n, pl->fac, n, pl->tw, pl->sign);
        return;
    case FFT_CHIRP: break;
    }
    /* X_k = w_k sum_j (x_j w_j) conj(w_(k - j)): a convolution over m points */
    const double *w = pl->chirp;
    for (int64_t j = 0; j < n; j++) {
        double xr = buf[2 * j], xi = buf[2 * j + 1];
        tmp[2 * j] = xr * w[2 * j] - xi * w[2 * j + 1];
        tmp[2 * j + 1] = xr * w[2 * j + 1] + xi * w[2 * j];
    }
    memset(tmp + 2 * n, 0, sizeof(double) * 2 * (size_t)(m - n));
    fft_pow2(tmp, m, pl->tw, -1.0);
    for (int64_t k = 0; k < m; k++) {
        double ar = tmp[2 * k], ai = tmp[2 * k + 1], br = pl->bhat[2 * k], bi = pl->bhat[2 * k + 1];
        tmp[2 * k] = ar * br - ai * bi;
        tmp[2 * k + 1] = ar * bi + ai * br;
    }
    fft_pow2(tmp, m, pl->tw, 1.0);
    double inv = 1.0 / (double)m;
    for (int64_t k = 0; k < n; k++) {
        double cr = tmp[2 * k] * inv, ci = tmp[2 * k + 1] * inv;
        buf[2 * k] = cr * w[2 * k] - ci * w[2 * k + 1];
        buf[2 * k + 1] = cr * w[2 * k + 1] + ci * w[2 * k];
    }
}

/* The m samples x[j * stride] (times w[j] when w is given) into buf as n
 * complex points, zero-padded. */
#define GATHER(T, NAME)                                                                   \
    static void NAME(double *buf, const T *x, int64_t stride, bool cplx, const T *w,     \
                     int64_t m, int64_t n) {                                              \
        for (int64_t j = 0; j < m; j++) {                                                 \
            double wj = w ? (double)w[j] : 1.0;                                           \
            buf[2 * j] = (double)x[j * stride] * wj;                                      \
            buf[2 * j + 1] = cplx ? (double)x[j * stride + 1] * wj : 0.0;                 \
        }                                                                                 \
        memset(buf + 2 * m, 0, sizeof(double) * 2 * (size_t)(n - m));                     \
    }

GATHER(float, gather_f32)
GATHER(double, gather_f64)

/* Lines per chunk: about 16k butterflies each. */
static int64_t fft_grain(int64_t n) { return n >= 2048 ? 1 : 16384 / (n * 8); }

/* ---- DFT ---- */

typedef struct dft_args {
    const q8_dft_params *p;
    const void *x;
    void *y;
    const fft_plan *pl;
} dft_args;

/* Items are lines (o, i), each transformed in the thread's buffers. */
#define DFT_FFT_RANGE(T, NAME, GATHER_FN)                                                 \
    static void NAME(void *arg, int64_t b, int64_t e, int t) {                            \
        const dft_args *a = arg;                                                          \
        const q8_dft_params *p = a->p;                                                    \
        int64_t c = p->complex_in ? 2 : 1, m = p->len < p->n ? p->len : p->n;             \
        double scale = p->inverse ? 1.0 / (double)p->n : 1;                               \
        double *buf = fft_buf(a->pl, t);                                                  \
        for (int64_t it = b; it < e; it++) {                                              \
            int64_t o = it / p->inner, i = it % p->inner;                                 \
            GATHER_FN(buf, (const T *)a->x + (o * p->len * p->inner + i) * c, p->inner * c, \
                      p->complex_in, NULL, m, p->n);                                      \
            fft_line(a->pl, buf);                                                         \
            T *y = (T *)a->y + (o * p->bins * p->inner + i) * 2;                          \
            for (int64_t k = 0; k < p->bins; k++) {                                       \
                y[k * p->inner * 2] = (T)(buf[2 * k] * scale);                            \
                y[k * p->inner * 2 + 1] = (T)(buf[2 * k + 1] * scale);                    \
            }                                                                             \
        }                                                                                 \
    }

DFT_FFT_RANGE(float, dft_fft_f32, gather_f32)
DFT_FFT_RANGE(double, dft_fft_f64, gather_f64)

static size_t dft_scratch(const q8_graph *g, const q8_node *n, const void *prep, int threads) {
    (void)g, (void)prep;
    return fft_scratch(((const q8_dft_params *)n->params)->n, threads);
}

static void dft_run(const q8_exec *x, const q8_node *n) {
    const q8_dft_params *p = n->params;
    fft_plan pl;
    fft_plan_make(&pl, p->n, p->inverse ? 1.0 : -1.0, x->scratch);
    dft_args a = {p, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0), &pl};
    q8_parallel_for(x->pool, p->outer * p->inner, fft_grain(p->n),
                    p->f64 ? dft_fft_f64 : dft_fft_f32, &a);
}

/* ---- STFT ---- */

typedef struct stft_args {
    const q8_stft_params *p;
    const void *x, *w;      /* w: the window, or NULL */
    void *y;
    const fft_plan *pl;
} stft_args;

/* Items are frames (batch, frame), each transformed in the thread's
 * buffers. */
#define STFT_FFT_RANGE(T, NAME, GATHER_FN)                                                \
    static void NAME(void *arg, int64_t b, int64_t e, int t) {                            \
        const stft_args *a = arg;                                                         \
        const q8_stft_params *p = a->p;                                                   \
        int64_t c = p->complex_in ? 2 : 1;                                                \
        double *buf = fft_buf(a->pl, t);                                                  \
        for (int64_t it = b; it < e; it++) {                                              \
            int64_t f = it % p->frames, bt = it / p->frames;                              \
            GATHER_FN(buf, (const T *)a->x + (bt * p->len + f * p->step) * c, c,          \
                      p->complex_in, a->w, p->frame, p->frame);                           \
            fft_line(a->pl, buf);                                                         \
            T *y = (T *)a->y + 2 * it * p->bins;                                          \
            for (int64_t k = 0; k < 2 * p->bins; k++) y[k] = (T)buf[k];                   \
        }                                                                                 \
    }

STFT_FFT_RANGE(float, stft_fft_f32, gather_f32)
STFT_FFT_RANGE(double, stft_fft_f64, gather_f64)

static size_t stft_scratch(const q8_graph *g, const q8_node *n, const void *prep, int threads) {
    (void)g, (void)prep;
    return fft_scratch(((const q8_stft_params *)n->params)->frame, threads);
}

static void stft_run(const q8_exec *x, const q8_node *n) {
    const q8_stft_params *p = n->params;
    fft_plan pl;
    fft_plan_make(&pl, p->frame, -1.0, x->scratch);
    stft_args a = {p, Q8_IN_PTR(x, n, 0), p->window ? Q8_IN_PTR(x, n, 2) : NULL,
                   Q8_OUT_PTR(x, n, 0), &pl};
    q8_parallel_for(x->pool, p->batch * p->frames, fft_grain(p->frame),
                    p->f64 ? stft_fft_f64 : stft_fft_f32, &a);
}

/* ---- MelWeightMatrix ---- */

/* numpy's float floor division (npy_divmod): floor of a / b through fmod,
 * which is not always floor(a / b). */
static double np_floor_div(double a, double b) {
    double mod = fmod(a, b), div = (a - mod) / b;
    if (mod != 0 && (b < 0) != (mod < 0)) div -= 1.0;
    if (div == 0) return copysign(0.0, a / b);
    double f = floor(div);
    return div - f > 0.5 ? f + 1.0 : f;
}

/* A bin index as numpy's astype(int) of an integral double, kept within
 * +-2^40 (NaN: the low end) so that index arithmetic cannot overflow; such
 * points fall outside the matrix anyway. */
static int64_t bin_index(double v) {
    const double lim = 1099511627776.0;
    if (!(v > -lim)) return -((int64_t)1 << 40);
    return v < lim ? (int64_t)v : (int64_t)1 << 40;
}

/* The reference's mel points (mels + 2 of them): the edges in mel, the
 * step in the edges' dtype (float32 arithmetic for float32 edges), the
 * points in double, as bins of the (dft_length + 1)-point grid. */
static void mel_points(const q8_mel_params *p, const void *lo_p, const void *hi_p, double rate,
                       int64_t *pts) {
    double lo_mel, step;
    if (p->edge_dtype == Q8_F32) {
        float lo = *(const float *)lo_p, hi = *(const float *)hi_p;
        float lm = 2595.0f * (float)log10((double)(1.0f + lo / 700.0f));
        float hm = 2595.0f * (float)log10((double)(1.0f + hi / 700.0f));
        lo_mel = lm;
        step = (hm - lm) / (float)(p->mels + 2);
    } else {
        double lo = *(const double *)lo_p, hi = *(const double *)hi_p;
        lo_mel = 2595.0 * log10(1.0 + lo / 700.0);
        step = (2595.0 * log10(1.0 + hi / 700.0) - lo_mel) / (double)(p->mels + 2);
    }
    for (int64_t i = 0; i < p->mels + 2; i++) {
        double hz = 700.0 * (pow(10.0, ((double)i * step + lo_mel) / 2595.0) - 1.0);
        pts[i] = bin_index(np_floor_div((double)(p->dft_length + 1) * hz, rate));
    }
}

/* out[j, mel] = v where j is a row of the matrix. */
static void mel_put(const q8_mel_params *p, void *out, int64_t j, int64_t mel, double v) {
    if (j < 0 || j >= p->bins) return;
    if (p->f64) ((double *)out)[j * p->mels + mel] = v;
    else ((float *)out)[j * p->mels + mel] = (float)v;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Filter mel: up from pts[mel] to pts[mel + 1], down to pts[mel + 2]. */
static void mel_filter(const q8_mel_params *p, void *out, const int64_t *pts, int64_t mel) {
    int64_t l = pts[mel], c = pts[mel + 1], h = pts[mel + 2];
    if (c == l) {
        mel_put(p, out, c, mel, 1.0);
    } else { /* only the rows inside the matrix (l > c: none) */
        for (int64_t j = max64(l, 0); j <= min64(c, p->bins - 1); j++)
            mel_put(p, out, j, mel, (double)(j - l) / (double)(c - l));
    }
    for (int64_t j = max64(c, 0); j < min64(h, p->bins); j++)
        mel_put(p, out, j, mel, (double)(h - j) / (double)(h - c));
}

static size_t mel_scratch(const q8_graph *g, const q8_node *n, const void *prep, int threads) {
    (void)g, (void)prep, (void)threads;
    return sizeof(int64_t) * (size_t)(((const q8_mel_params *)n->params)->mels + 2);
}

static void mel_run(const q8_exec *x, const q8_node *n) {
    const q8_mel_params *p = n->params;
    const void *r = Q8_IN_PTR(x, n, 2);
    double rate = p->rate_dtype == Q8_I64 ? (double)*(const int64_t *)r
                                          : (double)*(const int32_t *)r;
    void *out = Q8_OUT_PTR(x, n, 0);
    memset(out, 0, (size_t)(p->bins * p->mels) * (p->f64 ? sizeof(double) : sizeof(float)));
    int64_t *pts = x->scratch;
    mel_points(p, Q8_IN_PTR(x, n, 3), Q8_IN_PTR(x, n, 4), rate, pts);
    for (int64_t mel = 0; mel < p->mels; mel++) mel_filter(p, out, pts, mel);
}

const q8_cpu_op q8_cpu_dft = {.run = dft_run, .scratch = dft_scratch};
const q8_cpu_op q8_cpu_stft = {.run = stft_run, .scratch = stft_scratch};
const q8_cpu_op q8_cpu_mel_weight_matrix = {.run = mel_run, .scratch = mel_scratch};
