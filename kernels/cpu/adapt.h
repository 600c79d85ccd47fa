/* A session's runs: on the thread pool, or on the calling thread alone,
 * chosen by measurement.
 *
 * Splitting work over threads pays only when it outweighs the hand-offs,
 * and what a hand-off costs depends on the machine and on the moment: on
 * the 2-vCPU VM of docs/performance.md, MobileNetV3 INT8 ran at 0.45 ms on
 * 2 threads in one hour and at 0.80 ms in the next, against 0.61-0.65 ms
 * on 1 thread at both times. So a session with a pool times whole runs
 * both ways now and then and runs the way that was faster. Outputs do not
 * depend on it: every CPU kernel gives the same bits for any thread count
 * (threadpool.h).
 *
 * Why whole runs and not node by node: choosing per node by per-node times
 * measured in all-pool and all-caller runs made PP-OCR detection 12%
 * slower than the pool alone, where the per-node sums predicted 4% faster.
 * A node's time depends on its neighbours' mode: a serial stretch longer
 * than the workers' spin puts them to sleep (the next pool node pays the
 * wake-up), and data one core wrote is read from the other core's cache.
 *
 * Schedule: runs on the pool first, untimed for the choice, until they
 * have taken Q8_ADAPT_PRIME_MS in all (at least Q8_ADAPT_PRIME_MIN runs,
 * at most Q8_ADAPT_PRIME_MAX); then Q8_ADAPT_WARM measurements, each an
 * untimed pool run (it wakes the workers), a timed pool run and a timed
 * run on the caller; then one measurement every Q8_ADAPT_PERIOD runs, or
 * every Q8_ADAPT_SOON runs while the two medians are within
 * Q8_ADAPT_CLOSE of each other. Runs use the caller alone when the median
 * of its last Q8_ADAPT_KEEP times is no slower than the median of the
 * pool's.
 *
 * Why sooner when close: right after another process's run (ONNX
 * Runtime's, in tools/bench/cpu_vs_ort.py) the pool ran the emotion
 * classifier at the caller's 0.42 ms for its first ~25 runs and at 0.30
 * from then on; the warm measurements saw a tie, chose the caller, and a
 * 50-run process kept it (4 of 6 such processes at 0.42 ms). A tie is
 * where a moment's state decides, so it is looked at again soon.
 *
 * Why the untimed pool runs: a pool that has been idle is slow for its
 * first runs (workers asleep, the other vCPU idle at the host: on the VM
 * of docs/performance.md a mini-Xception ran 0.39-0.47 ms on the pool for
 * its first 7 runs, about 3 ms, then 0.23 ms, against 0.385 ms on the
 * caller), so a comparison made at the start, or after a stretch of
 * serial runs, chose the caller and kept it (half of the 300-run
 * processes ran at 0.38 ms). */
#ifndef Q8_ADAPT_H
#define Q8_ADAPT_H

#include <stdbool.h>

#define Q8_ADAPT_PRIME_MS 5.0
#define Q8_ADAPT_PRIME_MIN 2
#define Q8_ADAPT_PRIME_MAX 16
#define Q8_ADAPT_WARM 3
#define Q8_ADAPT_PERIOD 64
#define Q8_ADAPT_SOON 8
#define Q8_ADAPT_CLOSE 0.15 /* |pool - caller| <= this x the faster */
#define Q8_ADAPT_KEEP 5
/* the runs of the first measurements, after the priming runs */
#define Q8_ADAPT_FIRST (3 * Q8_ADAPT_WARM)

typedef enum q8_adapt_run {
    Q8_ADAPT_DECIDED,     /* the way decided; not timed */
    Q8_ADAPT_TIME_POOL,   /* on the pool, timed */
    Q8_ADAPT_TIME_SERIAL, /* on the caller alone, timed */
    Q8_ADAPT_WAKE_POOL,   /* on the pool, not timed: before a timed pool run */
    Q8_ADAPT_PRIME_POOL,  /* on the pool, timed only to end the priming */
} q8_adapt_run;

typedef struct q8_adapt {
    long long runs;          /* runs begun after the priming */
    long long probe_at;      /* the run that begins the next measurement */
    long long prime_runs;    /* priming runs */
    double prime_ms;         /* their time */
    bool primed;             /* the priming is over */
    q8_adapt_run current;    /* the kind of the run in progress */
    double pool_ms[Q8_ADAPT_KEEP], serial_ms[Q8_ADAPT_KEEP]; /* INFINITY: none yet */
    int next_pool, next_serial;
    bool serial;             /* decided: the caller alone */
} q8_adapt;

void q8_adapt_init(q8_adapt *a);
/* Starts a run: what kind it is. */
q8_adapt_run q8_adapt_begin(q8_adapt *a);
/* Whether the run begun runs on the caller alone. */
bool q8_adapt_run_serial(const q8_adapt *a);
/* Ends the run begun; ms: its time (read only for timed runs). */
void q8_adapt_end(q8_adapt *a, double ms);

#endif
