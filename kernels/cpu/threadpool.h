/* A small fixed pool of worker threads for data-parallel loops. The split of
 * [0, n) into chunks depends only on n, grain and the pool size (never on
 * timing), and kernels that write disjoint outputs give identical results
 * for any thread count. */
#ifndef Q8_THREADPOOL_H
#define Q8_THREADPOOL_H

#include <stdint.h>

typedef struct q8_pool q8_pool;

/* fn handles [begin, end); thread is in [0, q8_pool_size). */
typedef void (*q8_range_fn)(void *arg, int64_t begin, int64_t end, int thread);

/* n_threads <= 1 gives a pool that runs everything on the caller. NULL on
 * failure to start threads. */
q8_pool *q8_pool_create(int n_threads);
void q8_pool_free(q8_pool *p);
int q8_pool_size(const q8_pool *p);   /* 1 for NULL */

/* Run fn over [0, n) split into chunks of at least grain items; the caller
 * thread takes part. Returns when all chunks are done. p may be NULL. */
void q8_parallel_for(q8_pool *p, int64_t n, int64_t grain, q8_range_fn fn, void *arg);

/* Length of the chunk that starts at item begin of a job of n items on
 * n_threads threads (exposed for tests): chunks shrink as the job runs out,
 * none is shorter than grain except the one that ends the job. */
int64_t q8_pool_chunk(int64_t n, int64_t grain, int n_threads, int64_t begin);

int q8_cpu_count(void);

#endif
