#include "meta.h"

#include <string.h>

static q8_meta_entry *slot(q8_meta *m, const char *key, q8_error *err) {
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->e[i].key, key) == 0) {
            free(m->e[i].s);
            m->e[i].s = NULL;
            return &m->e[i];
        }
    q8_meta_entry *e = realloc(m->e, sizeof *e * (size_t)(m->n + 1));
    if (!e) {
        q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        return NULL;
    }
    m->e = e;
    q8_meta_entry *x = &m->e[m->n];
    memset(x, 0, sizeof *x);
    if (!(x->key = q8_strdup(key))) {
        q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        return NULL;
    }
    m->n++;
    return x;
}

q8_status q8_meta_set_str(q8_meta *m, const char *key, const char *v, q8_error *err) {
    q8_meta_entry *e = slot(m, key, err);
    if (!e) return Q8_ERR_NOMEM;
    e->type = Q8_META_STR;
    if (!(e->s = q8_strdup(v))) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    return Q8_OK;
}

q8_status q8_meta_set_int(q8_meta *m, const char *key, int64_t v, q8_error *err) {
    q8_meta_entry *e = slot(m, key, err);
    if (!e) return Q8_ERR_NOMEM;
    e->type = Q8_META_INT;
    e->i = v;
    return Q8_OK;
}

q8_status q8_meta_set_float(q8_meta *m, const char *key, double v, q8_error *err) {
    q8_meta_entry *e = slot(m, key, err);
    if (!e) return Q8_ERR_NOMEM;
    e->type = Q8_META_FLOAT;
    e->f = v;
    return Q8_OK;
}

const q8_meta_entry *q8_meta_get(const q8_meta *m, const char *key) {
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->e[i].key, key) == 0) return &m->e[i];
    return NULL;
}

void q8_meta_free(q8_meta *m) {
    for (int i = 0; i < m->n; i++) {
        free(m->e[i].key);
        free(m->e[i].s);
    }
    free(m->e);
    m->e = NULL;
    m->n = 0;
}
