#include <stdatomic.h>

#include "testutil.h"
#include "threadpool.h"

typedef struct cover_args {
    atomic_int *hits;
    atomic_int calls;
} cover_args;

static void cover(void *p, int64_t b, int64_t e, int t) {
    cover_args *a = p;
    atomic_fetch_add(&a->calls, 1);
    for (int64_t i = b; i < e; i++) atomic_fetch_add(&a->hits[i], 1);
}

Test(threadpool, every_index_exactly_once) {
    for (int nt = 1; nt <= 4; nt++) {
        q8_pool *p = q8_pool_create(nt);
        cr_assert(p);
        cr_assert_eq(q8_pool_size(p), nt);
        for (int64_t n = 0; n < 2000; n += 137) {
            atomic_int *hits = calloc((size_t)n + 1, sizeof(atomic_int));
            cover_args a = {.hits = hits};
            for (int rep = 0; rep < 3; rep++) q8_parallel_for(p, n, 7, cover, &a);
            for (int64_t i = 0; i < n; i++) cr_assert_eq(atomic_load(&hits[i]), 3, "n=%lld i=%lld", (long long)n, (long long)i);
            free(hits);
        }
        q8_pool_free(p);
    }
}

Test(threadpool, null_pool_runs_serially) {
    atomic_int hits[10] = {0};
    cover_args a = {.hits = hits};
    q8_parallel_for(NULL, 10, 1, cover, &a);
    cr_assert_eq(atomic_load(&a.calls), 1);
    for (int i = 0; i < 10; i++) cr_assert_eq(atomic_load(&hits[i]), 1);
}

/* The split walks [0, n) in chunks of q8_pool_chunk: none shorter than grain
 * but the last, none longer than the one before, the last ones shorter than
 * a thread's even share (the point of the guided split: little waiting at
 * the end of a job), and few of them. */
Test(threadpool, guided_chunks) {
    const int64_t grains[] = {1, 7, 100, 5000};
    for (int nt = 2; nt <= 8; nt *= 2) {
        for (int gi = 0; gi < 4; gi++) {
            int64_t g = grains[gi];
            for (int64_t n = 1; n < 300000; n = n * 3 + 1) {
                int64_t b = 0, prev = n, count = 0, last = 0;
                while (b < n) {
                    int64_t c = q8_pool_chunk(n, g, nt, b);
                    cr_assert(c >= 1 && c <= n - b, "nt=%d g=%lld n=%lld b=%lld c=%lld", nt,
                              (long long)g, (long long)n, (long long)b, (long long)c);
                    if (b + c < n) cr_assert(c >= g, "chunk %lld under grain %lld", (long long)c, (long long)g);
                    cr_assert(c <= prev, "chunks grow: %lld after %lld", (long long)c, (long long)prev);
                    prev = last = c;
                    b += c;
                    count++;
                }
                cr_assert_eq(b, n);
                cr_assert(count <= 8 * nt + 8, "nt=%d n=%lld: %lld chunks", nt, (long long)n, (long long)count);
                /* a job of many grains ends in a chunk of at most 1/8 of a
                 * thread's share (the old even split of 4 a thread ended in
                 * 1/4), and starts in one of at least 1/(2 nt) of the job */
                if (n >= 64 * nt * g) {
                    cr_assert(last * 8 * nt <= n + 8 * nt, "nt=%d g=%lld n=%lld: last chunk %lld", nt,
                              (long long)g, (long long)n, (long long)last);
                    cr_assert(q8_pool_chunk(n, g, nt, 0) * 2 * nt >= n);
                }
            }
        }
    }
}

/* Which ranges the kernel sees depends on n, grain and threads only, not on
 * which thread took them or when. */
typedef struct range_log {
    atomic_int n;
    int64_t begin[1024];
    int64_t end[1024];
} range_log;

static void log_range(void *p, int64_t b, int64_t e, int t) {
    (void)t;
    range_log *l = p;
    int i = atomic_fetch_add(&l->n, 1);
    if (i < 1024) {
        l->begin[i] = b;
        l->end[i] = e;
    }
}

Test(threadpool, ranges_follow_the_split) {
    q8_pool *p = q8_pool_create(2);
    cr_assert(p);
    for (int64_t n = 50; n < 100000; n = n * 5 + 3) {
        for (int rep = 0; rep < 20; rep++) {
            static range_log l;
            atomic_store(&l.n, 0);
            q8_parallel_for(p, n, 3, log_range, &l);
            int cnt = atomic_load(&l.n);
            cr_assert(cnt <= 1024);
            /* every logged range is exactly the split's chunk at its begin */
            int64_t covered = 0;
            for (int i = 0; i < cnt; i++) {
                cr_assert_eq(l.end[i] - l.begin[i], q8_pool_chunk(n, 3, 2, l.begin[i]),
                             "n=%lld range [%lld, %lld)", (long long)n, (long long)l.begin[i],
                             (long long)l.end[i]);
                covered += l.end[i] - l.begin[i];
            }
            cr_assert_eq(covered, n);
        }
    }
    q8_pool_free(p);
}

/* ---- runs on the pool or on the caller, by measurement (adapt.h) ---- */

#include "adapt.h"
#include "q8_tools.h"

/* Drives one run of the schedule: its kind, and whether it ran serially;
 * the run "took" ms. */
static q8_adapt_run adapt_step(q8_adapt *a, double pool_ms, double serial_ms, bool *serial) {
    q8_adapt_run k = q8_adapt_begin(a);
    *serial = q8_adapt_run_serial(a);
    q8_adapt_end(a, *serial ? serial_ms : pool_ms);
    return k;
}

/* The priming runs, on the pool: until their time reaches Q8_ADAPT_PRIME_MS
 * (at least Q8_ADAPT_PRIME_MIN runs, at most Q8_ADAPT_PRIME_MAX). */
static int prime(q8_adapt *a, double pool_ms) {
    bool serial;
    int n = 0;
    while (!a->primed) {
        cr_assert_eq(adapt_step(a, pool_ms, 0, &serial), Q8_ADAPT_PRIME_POOL);
        cr_assert(!serial);
        n++;
    }
    return n;
}

Test(adapt, priming_lasts_a_time_within_run_bounds) {
    q8_adapt a;
    q8_adapt_init(&a);
    cr_assert_eq(prime(&a, 20.0), Q8_ADAPT_PRIME_MIN); /* a slow model: 2 runs */
    q8_adapt_init(&a);
    cr_assert_eq(prime(&a, 0.01), Q8_ADAPT_PRIME_MAX); /* a tiny one: 16 */
    q8_adapt_init(&a);
    cr_assert_eq(prime(&a, 0.4), 13);                  /* 13 x 0.4 >= 5 ms */
}

Test(adapt, schedule_times_both_ways_then_keeps_the_faster) {
    q8_adapt a;
    q8_adapt_init(&a);
    bool serial;
    /* prime: on the pool until Q8_ADAPT_PRIME_MS of runs (5 runs of 1 ms) */
    for (int r = 0; r < 5; r++) {
        cr_assert(!a.primed, "run %d", r);
        q8_adapt_run k = adapt_step(&a, 1.0, 0.6, &serial);
        cr_assert_eq(k, Q8_ADAPT_PRIME_POOL, "run %d", r);
        cr_assert(!serial, "run %d", r);
    }
    cr_assert(a.primed);
    /* warm: (pool untimed, pool timed, caller timed) x Q8_ADAPT_WARM */
    static const q8_adapt_run triple[3] = {Q8_ADAPT_WAKE_POOL, Q8_ADAPT_TIME_POOL,
                                           Q8_ADAPT_TIME_SERIAL};
    for (int r = 0; r < 3 * Q8_ADAPT_WARM; r++) {
        q8_adapt_run k = adapt_step(&a, 1.0, 0.6, &serial);
        cr_assert_eq(k, triple[r % 3], "run %d", r);
        cr_assert_eq(serial, r % 3 == 2, "run %d", r);
    }
    /* then decided (the caller was faster), with one timed pair per period,
     * its pool run right after an untimed one on the pool */
    int timed_pool = 0, timed_serial = 0, decided_serial = 0, wake = 0;
    q8_adapt_run prev = Q8_ADAPT_DECIDED;
    for (int r = 0; r < Q8_ADAPT_PERIOD; r++) {
        q8_adapt_run k = adapt_step(&a, 1.0, 0.6, &serial);
        timed_pool += k == Q8_ADAPT_TIME_POOL;
        timed_serial += k == Q8_ADAPT_TIME_SERIAL;
        wake += k == Q8_ADAPT_WAKE_POOL && !serial;
        decided_serial += k == Q8_ADAPT_DECIDED && serial;
        if (k == Q8_ADAPT_TIME_POOL) cr_assert_eq(prev, Q8_ADAPT_WAKE_POOL);
        prev = k;
    }
    cr_assert_eq(timed_pool, 1);
    cr_assert_eq(timed_serial, 1);
    cr_assert_eq(wake, 1);
    cr_assert_eq(decided_serial, Q8_ADAPT_PERIOD - 3);
}

Test(adapt, follows_a_change_once_old_times_age_out) {
    q8_adapt a;
    q8_adapt_init(&a);
    bool serial;
    prime(&a, 1.0);
    for (int r = 0; r < Q8_ADAPT_FIRST; r++) adapt_step(&a, 1.0, 0.6, &serial);
    cr_assert(a.serial);
    /* The machine changes: the pool is now the faster. The caller's old
     * times (0.6) weigh until most of its last Q8_ADAPT_KEEP are new. */
    int periods = 0;
    while (a.serial && periods < 3 * Q8_ADAPT_KEEP) {
        for (int r = 0; r < Q8_ADAPT_PERIOD; r++) adapt_step(&a, 0.5, 0.9, &serial);
        periods++;
    }
    cr_assert(!a.serial, "still on the caller after %d periods", periods);
    cr_assert_leq(periods, Q8_ADAPT_KEEP);
    cr_assert_geq(periods, 1);
    /* a tie keeps the caller: it frees the other threads */
    q8_adapt b;
    q8_adapt_init(&b);
    prime(&b, 0.7);
    for (int r = 0; r < Q8_ADAPT_FIRST; r++) adapt_step(&b, 0.7, 0.7, &serial);
    cr_assert(b.serial);
}

/* A pool slow only at first (the other vCPU waking after another
 * process's run) ties with the caller in the warm measurements: a tie is
 * measured again every Q8_ADAPT_SOON runs, so once the pool is fast the
 * session moves to it within a few such measurements, not after
 * Q8_ADAPT_KEEP periods. Apart (not close), the period is the long one. */
Test(adapt, a_tie_is_measured_again_soon) {
    q8_adapt a;
    q8_adapt_init(&a);
    bool serial;
    prime(&a, 0.42);
    for (int r = 0; r < Q8_ADAPT_FIRST; r++) adapt_step(&a, 0.42, 0.41, &serial);
    cr_assert(a.serial);
    int r = 0;
    for (; r < 4 * Q8_ADAPT_SOON && a.serial; r++) adapt_step(&a, 0.30, 0.42, &serial);
    cr_assert(!a.serial, "still on the caller after %d runs", r);
    /* now apart: the next measurement a whole period on */
    int timed = 0;
    for (int i = 0; i < Q8_ADAPT_PERIOD - 3; i++)
        timed += adapt_step(&a, 0.30, 0.42, &serial) == Q8_ADAPT_TIME_POOL;
    cr_assert_leq(timed, 1);
}

/* Chosen by the typical time, not the best: a pool that is fast now and
 * then but slow in most runs loses to the steady caller. */
Test(adapt, a_pool_fast_only_now_and_then_loses) {
    q8_adapt a;
    q8_adapt_init(&a);
    double pool[] = {0.40, 0.80, 0.82, 0.79, 0.81, 0.78, 0.80};
    prime(&a, 0.8);
    for (int r = 0, np = 0; r < Q8_ADAPT_FIRST; r++) {
        q8_adapt_run k = q8_adapt_begin(&a);
        q8_adapt_end(&a, k == Q8_ADAPT_TIME_POOL ? pool[np++] : 0.62);
    }
    cr_assert(a.serial);
}

Test(adapt, sessions_give_the_same_bits_whichever_way_they_run) {
    /* The MNIST CNN at batch 64: its convs split over the pool. */
    q8_input_shape shape = {.name = "input", .ndim = 4, .dims = {64, 1, 28, 28}};
    q8_load_options lo = {.input_shapes = &shape, .n_input_shapes = 1};
    q8_model *m = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_model_open(Q8_SOURCE_DIR "/models/mnist/cnn.onnx", &lo, &m, &err), Q8_OK, "%s",
                 err.msg);
    q8_host_tensor *x = NULL;
    cr_assert_eq(q8_tensor_file_read(Q8_SOURCE_DIR "/models/mnist/test_x.npy", &x, &err), Q8_OK,
                 "%s", err.msg);
    int64_t dims[4] = {64, 1, 28, 28};
    size_t out_bytes = 64 * 10 * sizeof(float);
    float *want = malloc(out_bytes);
    /* three sessions: one thread; two adaptive; two always on the pool */
    q8_session_options opts[3] = {{.n_threads = 1}, {.n_threads = 2}, {.n_threads = 2, .fixed_threads = 1}};
    for (int k = 0; k < 3; k++) {
        q8_session *s = NULL;
        cr_assert_eq(q8_session_create(m, &opts[k], &s, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(q8_session_set_input(s, "input", Q8_F32, dims, 4, x->data, &err), Q8_OK, "%s",
                     err.msg);
        /* enough runs for the warm phase and two timed pairs */
        int runs = k == 0 ? 1 : Q8_ADAPT_PRIME_MAX + Q8_ADAPT_FIRST + 2 * Q8_ADAPT_PERIOD;
        for (int r = 0; r < runs; r++) {
            cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
            q8_tensor_info info;
            const void *y = NULL;
            cr_assert_eq(q8_session_output(s, 0, &info, &y, &err), Q8_OK, "%s", err.msg);
            if (k == 0) memcpy(want, y, out_bytes);
            else cr_assert(memcmp(y, want, out_bytes) == 0, "session %d, run %d: other bits", k, r);
        }
        q8_session_stats st;
        q8_session_stats_get(s, &st);
        cr_assert(st.single_thread == 0 || (k == 1 && st.single_thread == 1), "session %d", k);
        q8_session_free(s);
    }
    free(want);
    q8_host_tensor_free(x);
    q8_model_free(m);
}
