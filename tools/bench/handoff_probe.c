/* What splitting a small job over 2 threads gains on this machine now: the
 * median time of q8_parallel_for over one job of about 8 us of work, on a
 * pool of 1 thread and of 2 (speedup 2 would be free hand-offs). On a VM it
 * moves with where the host puts the vCPUs: on the 2-vCPU machine of
 * docs/performance.md an empty 2-thread job took 0.5 us in some hours and
 * 3.8 us in others, and small models' 2-thread times moved with it.
 * tools/bench/cpu_vs_ort.py prints it beside each table. Built by CMake
 * (internal headers: a benchmark, not a tool). Prints one JSON line. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "threadpool.h"

#define N_WORK 512

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static float buf[N_WORK];

/* a chain of 64 dependent multiply-adds per element */
static void work(void *a, int64_t b, int64_t e, int t) {
    (void)a, (void)t;
    for (int64_t i = b; i < e; i++) {
        float x = buf[i];
        for (int r = 0; r < 64; r++) x = x * 0.999f + 1.0f;
        buf[i] = x;
    }
}

static int cmp(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* median over 31 rounds of the mean time of 200 calls, us */
static double time_job(q8_pool *p, int64_t n, q8_range_fn fn) {
    double r[31];
    for (int k = 0; k < 31; k++) {
        double t0 = now_us();
        for (int i = 0; i < 200; i++) q8_parallel_for(p, n, 1, fn, NULL);
        r[k] = (now_us() - t0) / 200;
    }
    qsort(r, 31, sizeof r[0], cmp);
    return r[15];
}

int main(void) {
    q8_pool *one = q8_pool_create(1), *two = q8_pool_create(2);
    if (!one || !two) {
        fprintf(stderr, "handoff_probe: cannot start threads\n");
        return 1;
    }
    double w1 = time_job(one, N_WORK, work), w2 = time_job(two, N_WORK, work);
    printf("{\"job_1t_us\": %.3f, \"job_2t_us\": %.3f, \"speedup\": %.3f}\n", w1, w2, w1 / w2);
    q8_pool_free(one);
    q8_pool_free(two);
    return 0;
}
