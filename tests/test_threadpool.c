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
