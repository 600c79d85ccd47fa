/* The model's wire bytes without the raw_data of its graph's initializers
 * and of its nodes' tensor attributes (onnx_strip.h). ModelProto.graph is
 * field 7, GraphProto.node field 1 and initializer field 5, NodeProto.attribute
 * field 5, AttributeProto.t field 5, TensorProto.raw_data field 9
 * (onnx.proto). */
#include "onnx_strip.h"

#include <stdlib.h>
#include <string.h>

#include "proto_guard.h"

enum {
    MODEL_GRAPH = 7,
    GRAPH_NODE = 1,
    GRAPH_INITIALIZER = 5,
    NODE_ATTRIBUTE = 5,
    ATTRIBUTE_T = 5,
    TENSOR_RAW_DATA = 9,
    WIRE_LEN = 2
};

typedef struct out_buf {
    uint8_t *p;
    size_t n, cap;
} out_buf;

static bool put(out_buf *o, const void *src, size_t n) {
    if (n > o->cap - o->n) return false; /* the output never outgrows the input */
    memcpy(o->p + o->n, src, n);
    o->n += n;
    return true;
}

static bool put_varint(out_buf *o, uint64_t v) {
    uint8_t b[10];
    size_t k = 0;
    do {
        b[k] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) b[k] |= 0x80;
        k++;
    } while (v);
    return put(o, b, k);
}

/* One field at *p: its number, wire type and, for length-delimited fields,
 * the payload. *p moves past it. False on anything but the four wire types
 * protobuf-c reads (groups included: stripping is an optimization, the
 * caller then unpacks the model as it is). */
typedef struct field {
    uint32_t num;
    int wire;
    const uint8_t *start, *payload;
    size_t len;             /* payload bytes (WIRE_LEN) */
} field;

static bool next_field(const uint8_t **p, const uint8_t *end, field *f) {
    f->start = *p;
    f->payload = NULL;
    f->len = 0;
    uint64_t key, v;
    if (!q8_pb_read_varint(p, end, &key)) return false;
    f->num = (uint32_t)(key >> 3);
    f->wire = (int)(key & 7);
    switch (f->wire) {
    case 0: return q8_pb_read_varint(p, end, &v);
    case 1:
        if (end - *p < 8) return false;
        *p += 8;
        return true;
    case 5:
        if (end - *p < 4) return false;
        *p += 4;
        return true;
    case WIRE_LEN:
        if (!q8_pb_read_varint(p, end, &v) || v > (uint64_t)(end - *p)) return false;
        f->payload = *p;
        f->len = (size_t)v;
        *p += v;
        return true;
    default: return false;
    }
}

/* A TensorProto without raw_data; r gets where the last raw_data was. */
static bool strip_tensor(const uint8_t *base, const uint8_t *p, const uint8_t *end, out_buf *o,
                         q8_onnx_raw *r) {
    r->present = false;
    field f;
    while (p < end) {
        if (!next_field(&p, end, &f)) return false;
        if (f.num == TENSOR_RAW_DATA && f.wire == WIRE_LEN) {
            r->present = true;
            r->off = (size_t)(f.payload - base);
            r->len = f.len;
        } else if (!put(o, f.start, (size_t)(p - f.start))) {
            return false;
        }
    }
    return true;
}

/* Field num of the payload in sub, as a length-delimited field of o. */
static bool put_message(out_buf *o, uint32_t num, const out_buf *sub) {
    return put_varint(o, (uint64_t)num << 3 | WIRE_LEN) && put_varint(o, sub->n) &&
           put(o, sub->p, sub->n);
}

/* A new record at the end of *list. */
static q8_onnx_raw *next_raw(q8_onnx_raw **list, size_t *n, size_t *cap) {
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        q8_onnx_raw *r = realloc(*list, sizeof *r * c);
        if (!r) return NULL;
        *list = r;
        *cap = c;
    }
    return &(*list)[(*n)++];
}

typedef enum { MSG_TENSOR, MSG_ATTRIBUTE, MSG_NODE, MSG_GRAPH } msg_kind;

/* The message at [p, end) of the given kind, stripped, as field num of o
 * (r: where a MSG_TENSOR's raw_data is recorded). The stripped message is
 * shorter than the original: it is written after what o holds, then moved
 * behind its key and length. */
static bool strip_message(const uint8_t *base, msg_kind kind, uint32_t num, const uint8_t *p,
                          const uint8_t *end, out_buf *o, q8_onnx_stripped *s, q8_onnx_raw *r);

/* The kind of field num of a kind message, when it is a message this follows. */
static bool child_kind(msg_kind kind, uint32_t num, msg_kind *child) {
    *child = MSG_TENSOR;
    switch (kind) {
    case MSG_GRAPH:
        if (num == GRAPH_NODE) *child = MSG_NODE;
        return num == GRAPH_NODE || num == GRAPH_INITIALIZER;
    case MSG_NODE:
        *child = MSG_ATTRIBUTE;
        return num == NODE_ATTRIBUTE;
    case MSG_ATTRIBUTE: return num == ATTRIBUTE_T;
    default: return false;
    }
}

/* The fields of a graph, node or attribute message, each written to o as
 * it is or stripped: the top graph's initializers and its nodes' tensor
 * attributes lose their raw_data. */
static bool strip_fields(const uint8_t *base, msg_kind kind, const uint8_t *p,
                         const uint8_t *end, out_buf *o, q8_onnx_stripped *s) {
    field f;
    int tensors = 0;
    while (p < end) {
        if (!next_field(&p, end, &f)) return false;
        msg_kind child;
        if (f.wire != WIRE_LEN || !child_kind(kind, f.num, &child)) {
            if (!put(o, f.start, (size_t)(p - f.start))) return false;
            continue;
        }
        q8_onnx_raw *r = NULL;
        if (child == MSG_TENSOR) {
            bool attr = kind == MSG_ATTRIBUTE;
            /* protobuf merges a repeated message field: not worth following */
            if (attr && ++tensors > 1) return false;
            r = attr ? next_raw(&s->attr_raw, &s->n_attr_raw, &s->cap_attr_raw)
                     : next_raw(&s->raw, &s->n_raw, &s->cap_raw);
            if (!r) return false;
        }
        if (!strip_message(base, child, f.num, f.payload, f.payload + f.len, o, s, r))
            return false;
    }
    return true;
}

static bool strip_message(const uint8_t *base, msg_kind kind, uint32_t num, const uint8_t *p,
                          const uint8_t *end, out_buf *o, q8_onnx_stripped *s, q8_onnx_raw *r) {
    out_buf t = {.p = o->p + o->n, .cap = o->cap - o->n};
    bool ok = kind == MSG_TENSOR ? strip_tensor(base, p, end, &t, r)
                                 : strip_fields(base, kind, p, end, &t, s);
    if (!ok) return false;
    uint8_t *tmp = malloc(t.n ? t.n : 1);
    if (!tmp) return false;
    memcpy(tmp, t.p, t.n);
    out_buf sub = {.p = tmp, .n = t.n, .cap = t.n};
    ok = put_message(o, num, &sub);
    free(tmp);
    return ok;
}

bool q8_onnx_strip(const uint8_t *buf, size_t len, q8_onnx_stripped *s) {
    memset(s, 0, sizeof *s);
    out_buf o = {.p = malloc(len ? len : 1), .cap = len};
    bool ok = o.p != NULL;
    int graphs = 0;
    const uint8_t *p = buf, *end = buf + len;
    field f;
    while (ok && p < end) {
        ok = next_field(&p, end, &f);
        if (!ok) break;
        if (f.num == MODEL_GRAPH && f.wire == WIRE_LEN) {
            /* a repeated graph field is merged by protobuf: not worth following */
            ok = ++graphs == 1 && strip_message(buf, MSG_GRAPH, MODEL_GRAPH, f.payload,
                                                f.payload + f.len, &o, s, NULL);
        } else {
            ok = put(&o, f.start, (size_t)(p - f.start));
        }
    }
    if (!ok) {
        free(o.p);
        q8_onnx_stripped_free(s);
        return false;
    }
    s->bytes = o.p;
    s->len = o.n;
    return true;
}

void q8_onnx_stripped_free(q8_onnx_stripped *s) {
    free(s->bytes);
    free(s->raw);
    free(s->attr_raw);
    memset(s, 0, sizeof *s);
}
