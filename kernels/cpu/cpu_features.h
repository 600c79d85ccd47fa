/* What this CPU can run, asked in one place: every ISA choice of the CPU
 * kernels reads this. Read once (the answer never changes in a process). */
#ifndef Q8_KERNELS_CPU_CPU_FEATURES_H
#define Q8_KERNELS_CPU_CPU_FEATURES_H

#include <stdbool.h>

typedef struct q8_cpu_features {
    /* x86-64 */
    bool avx2, fma;
    bool popcnt;            /* the compressed-weight kernels count mask bits with it */
    bool avx512f, avx512bw, avx512vl, avx512vnni, avx512vbmi, avx512vbmi2;
    bool avxvnni;           /* 256-bit VNNI (VEX), Alder Lake and later */
    /* aarch64 */
    bool asimddp;           /* SDOT / UDOT (ARMv8.2 dot product) */
    bool i8mm;              /* SMMLA (ARMv8.6 int8 matrix multiply) */
} q8_cpu_features;

const q8_cpu_features *q8_cpu(void);

#endif
