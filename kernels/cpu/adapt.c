#include "adapt.h"

#include <math.h>

void q8_adapt_init(q8_adapt *a) {
    *a = (q8_adapt){0};
    for (int k = 0; k < Q8_ADAPT_KEEP; k++) a->pool_ms[k] = a->serial_ms[k] = INFINITY;
}

static q8_adapt_run kind_of(const q8_adapt *a, long long r) {
    /* each measurement: a pool run that wakes the workers, a timed pool
     * run, a timed caller run (after which the workers may sleep again) */
    long long k = r < 3 * Q8_ADAPT_WARM ? r % 3 : r - a->probe_at;
    return k == 0   ? Q8_ADAPT_WAKE_POOL
           : k == 1 ? Q8_ADAPT_TIME_POOL
           : k == 2 ? Q8_ADAPT_TIME_SERIAL
                    : Q8_ADAPT_DECIDED;
}

q8_adapt_run q8_adapt_begin(q8_adapt *a) {
    a->current = a->primed ? kind_of(a, a->runs++) : Q8_ADAPT_PRIME_POOL;
    return a->current;
}

bool q8_adapt_run_serial(const q8_adapt *a) {
    return a->current == Q8_ADAPT_TIME_SERIAL || (a->current == Q8_ADAPT_DECIDED && a->serial);
}

/* The median of the times measured so far (INFINITY: none). The median,
 * not the minimum: where the pool is fast in some runs and slow in most
 * (a host that moves the vCPUs), its minimum would choose it. */
static double typical(const double *ms) {
    double v[Q8_ADAPT_KEEP];
    int n = 0;
    for (int k = 0; k < Q8_ADAPT_KEEP; k++)
        if (isfinite(ms[k])) {
            int i = n++;
            for (; i > 0 && v[i - 1] > ms[k]; i--) v[i] = v[i - 1];
            v[i] = ms[k];
        }
    if (n == 0) return INFINITY;
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void q8_adapt_end(q8_adapt *a, double ms) {
    if (a->current == Q8_ADAPT_PRIME_POOL) {
        a->prime_ms += ms;
        a->prime_runs++;
        a->primed = (a->prime_runs >= Q8_ADAPT_PRIME_MIN && a->prime_ms >= Q8_ADAPT_PRIME_MS) ||
                    a->prime_runs >= Q8_ADAPT_PRIME_MAX;
        return;
    }
    if (a->current == Q8_ADAPT_TIME_POOL) {
        a->pool_ms[a->next_pool] = ms;
        a->next_pool = (a->next_pool + 1) % Q8_ADAPT_KEEP;
    } else if (a->current == Q8_ADAPT_TIME_SERIAL) {
        a->serial_ms[a->next_serial] = ms;
        a->next_serial = (a->next_serial + 1) % Q8_ADAPT_KEEP;
    } else {
        return;
    }
    double p = typical(a->pool_ms), s = typical(a->serial_ms);
    /* Not measured both ways yet: the pool, as without measurements. */
    a->serial = isfinite(p) && isfinite(s) && s <= p;
    /* A measurement ends with its caller run: when the next one begins
     * (its triple ends Q8_ADAPT_PERIOD or Q8_ADAPT_SOON runs after this). */
    if (a->current == Q8_ADAPT_TIME_SERIAL && a->runs >= 3 * Q8_ADAPT_WARM) {
        bool close = fabs(p - s) <= Q8_ADAPT_CLOSE * fmin(p, s);
        a->probe_at = a->runs + (close ? Q8_ADAPT_SOON : Q8_ADAPT_PERIOD) - 3;
    }
}
