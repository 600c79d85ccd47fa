/* Key/value metadata of a model (.q8 META section): provenance, calibration,
 * pruning, per-layer summaries. */
#ifndef Q8_META_H
#define Q8_META_H

#include "common.h"

typedef enum q8_meta_type { Q8_META_STR = 1, Q8_META_INT = 2, Q8_META_FLOAT = 3 } q8_meta_type;

typedef struct q8_meta_entry {
    char *key;
    q8_meta_type type;
    char *s;
    int64_t i;
    double f;
} q8_meta_entry;

typedef struct q8_meta {
    q8_meta_entry *e;
    int n;
} q8_meta;

/* Set (replace) a key. */
q8_status q8_meta_set_str(q8_meta *m, const char *key, const char *v, q8_error *err);
q8_status q8_meta_set_int(q8_meta *m, const char *key, int64_t v, q8_error *err);
q8_status q8_meta_set_float(q8_meta *m, const char *key, double v, q8_error *err);
const q8_meta_entry *q8_meta_get(const q8_meta *m, const char *key);
void q8_meta_free(q8_meta *m);

#endif
