#include "threadpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

/* Workers spin briefly before sleeping: ops follow each other within
 * microseconds, and a condition-variable wake-up costs more than that. */
#define SPIN_ITERS 20000

struct q8_pool {
    int n;                      /* threads including the caller */
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_done;
    atomic_uint_fast64_t gen;   /* bumped for every job */
    atomic_bool stop;
    /* the current job */
    q8_range_fn fn;
    void *arg;
    int64_t n_items, grain;
    _Atomic int64_t next;       /* first item not yet taken */
    atomic_bool open;           /* the job accepts workers */
    atomic_int active;          /* workers inside a job (never reset: it
                                   returns to 0 on its own) */
};

typedef struct worker_arg {
    q8_pool *p;
    int tid;
} worker_arg;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

int64_t q8_pool_chunk(int64_t n, int64_t grain, int n_threads, int64_t begin) {
    /* Guided: a share of what is left, so the last chunks are short and the
     * thread that finishes first waits little for the other's last one; but
     * never under 1/16 of a thread's share, so there are few chunks. */
    int64_t nt = n_threads < 1 ? 1 : n_threads;
    int64_t least = (n + nt * 16 - 1) / (nt * 16);
    if (least < grain) least = grain;
    int64_t left = n - begin;
    int64_t c = (left + nt * 2 - 1) / (nt * 2);
    if (c < least) c = least;
    return c < left ? c : left;
}

static void run_chunks(q8_pool *p, int tid) {
    int64_t b = atomic_load(&p->next);
    for (;;) {
        if (b >= p->n_items) break;
        int64_t e = b + q8_pool_chunk(p->n_items, p->grain, p->n, b);
        /* on failure b is reloaded with the other thread's claim */
        if (!atomic_compare_exchange_weak(&p->next, &b, e)) continue;
        p->fn(p->arg, b, e, tid);
        b = atomic_load(&p->next);
    }
}

static void *worker_main(void *v) {
    worker_arg *wa = v;
    q8_pool *p = wa->p;
    int tid = wa->tid;
    free(wa);
    uint64_t seen = 0;
    for (;;) {
        for (int i = 0; i < SPIN_ITERS && atomic_load(&p->gen) == seen &&
                        !atomic_load(&p->stop); i++)
            cpu_relax();
        if (atomic_load(&p->gen) == seen && !atomic_load(&p->stop)) {
            pthread_mutex_lock(&p->mu);
            while (atomic_load(&p->gen) == seen && !atomic_load(&p->stop))
                pthread_cond_wait(&p->cv_work, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        if (atomic_load(&p->stop)) break;
        seen = atomic_load(&p->gen);
        /* Join only an open job: the caller does not wait for workers that
         * wake up late (descheduled on a busy machine); it closes the job
         * once every chunk is taken and waits only for workers inside. */
        atomic_fetch_add(&p->active, 1);
        if (atomic_load(&p->open)) run_chunks(p, tid);
        if (atomic_fetch_sub(&p->active, 1) == 1 && !atomic_load(&p->open)) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->cv_done);
            pthread_mutex_unlock(&p->mu);
        }
    }
    return NULL;
}

int q8_cpu_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

q8_pool *q8_pool_create(int n_threads) {
    q8_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->n = n_threads < 1 ? 1 : n_threads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv_work, NULL);
    pthread_cond_init(&p->cv_done, NULL);
    if (p->n > 1) {
        p->threads = calloc((size_t)p->n - 1, sizeof(pthread_t));
        if (!p->threads) goto fail;
        for (int i = 1; i < p->n; i++) {
            worker_arg *wa = malloc(sizeof *wa);
            if (!wa) goto fail_started;
            wa->p = p;
            wa->tid = i;
            if (pthread_create(&p->threads[i - 1], NULL, worker_main, wa) != 0) {
                free(wa);
                goto fail_started;
            }
            continue;
        fail_started:
            p->n = i; /* only threads 1..i-1 exist */
            q8_pool_free(p);
            return NULL;
        }
    }
    return p;
fail:
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv_work);
    pthread_cond_destroy(&p->cv_done);
    free(p);
    return NULL;
}

void q8_pool_free(q8_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->stop, true);
    pthread_cond_broadcast(&p->cv_work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 1; i < p->n; i++) pthread_join(p->threads[i - 1], NULL);
    free(p->threads);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv_work);
    pthread_cond_destroy(&p->cv_done);
    free(p);
}

int q8_pool_size(const q8_pool *p) { return p ? p->n : 1; }

void q8_parallel_for(q8_pool *p, int64_t n, int64_t grain, q8_range_fn fn, void *arg) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    int nt = q8_pool_size(p);
    if (nt == 1 || n <= grain) {
        fn(arg, 0, n, 0);
        return;
    }
    p->fn = fn;
    p->arg = arg;
    p->n_items = n;
    p->grain = grain;
    atomic_store(&p->next, 0);
    atomic_store(&p->open, true);
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add(&p->gen, 1);
    pthread_cond_broadcast(&p->cv_work);
    pthread_mutex_unlock(&p->mu);
    run_chunks(p, 0);
    /* every chunk is taken: late workers must not join any more */
    atomic_store(&p->open, false);
    for (int i = 0; i < SPIN_ITERS && atomic_load(&p->active) > 0; i++) cpu_relax();
    if (atomic_load(&p->active) > 0) {
        pthread_mutex_lock(&p->mu);
        while (atomic_load(&p->active) > 0) pthread_cond_wait(&p->cv_done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
}
