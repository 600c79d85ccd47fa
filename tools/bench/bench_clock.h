/* Timing helpers shared by the stand-alone kernel benchmarks in this
 * folder: a monotonic clock in seconds and a qsort comparator for doubles
 * (medians of runs). */
#ifndef Q8_TOOLS_BENCH_CLOCK_H
#define Q8_TOOLS_BENCH_CLOCK_H

#include <time.h>

static inline double bench_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#endif
