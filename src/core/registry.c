/* The one list of backends: the CPU always, CUDA when built with it. This
 * is the only place that knows which backends a build has. */
#include "backend.h"

extern const q8_backend q8_backend_cpu;  /* kernels/cpu/backend.c */
#ifdef Q8_HAVE_CUDA
extern const q8_backend q8_backend_cuda; /* kernels/cuda/backend.c */
#endif

static const q8_backend *const backends[] = {
    &q8_backend_cpu,
#ifdef Q8_HAVE_CUDA
    &q8_backend_cuda,
#endif
};

#define N_BACKENDS ((int)(sizeof backends / sizeof backends[0]))

int q8_backend_count(void) { return N_BACKENDS; }

const q8_backend *q8_backend_at(int i) {
    if (i < 0 || i >= N_BACKENDS) return NULL;
    Q8_ASSERT(backends[i]->abi == Q8_BACKEND_ABI);
    return backends[i];
}

const q8_backend *q8_backend_for(q8_device d) {
    for (int i = 0; i < N_BACKENDS; i++)
        if (backends[i]->device == d) return q8_backend_at(i);
    return NULL;
}

const q8_backend *q8_backend_host(void) { return q8_backend_at(0); }
