#include "cpu_features.h"

#include <pthread.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

static q8_cpu_features features;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void detect(void) {
    q8_cpu_features *f = &features;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    f->avx2 = __builtin_cpu_supports("avx2");
    f->fma = __builtin_cpu_supports("fma");
    f->popcnt = __builtin_cpu_supports("popcnt");
    f->avx512f = __builtin_cpu_supports("avx512f");
    f->avx512bw = __builtin_cpu_supports("avx512bw");
    f->avx512vl = __builtin_cpu_supports("avx512vl");
    f->avx512vnni = __builtin_cpu_supports("avx512vnni");
    f->avx512vbmi = __builtin_cpu_supports("avx512vbmi");
    f->avx512vbmi2 = __builtin_cpu_supports("avx512vbmi2");
    /* AVX-VNNI is CPUID.(EAX=7,ECX=1):EAX[4]; older compilers lack the
     * __builtin_cpu_supports name. The OS saves ymm state if AVX2 is usable. */
    unsigned a, b, c, d;
    f->avxvnni = f->avx2 && __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a >> 4 & 1);
#elif defined(__aarch64__) && defined(__linux__)
    unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
    f->asimddp = hw & (1ul << 20);  /* HWCAP_ASIMDDP */
    f->i8mm = hw2 & (1ul << 13);    /* HWCAP2_I8MM */
#endif
}

const q8_cpu_features *q8_cpu(void) {
    pthread_once(&once, detect);
    return &features;
}
