/* protobuf-c copies every bytes field it unpacks, so a model unpacked whole
 * holds its weights twice (the file's bytes and the protos'). This makes a
 * copy of the model's wire bytes without the raw_data of the top graph's
 * initializers and of its nodes' tensor attributes (Constant nodes: some
 * exporters, paddle2onnx among them, store every weight so), and says where
 * each one's data is in the original bytes, so the importer copies each
 * weight once, straight from the mapped file. */
#ifndef Q8_ONNX_STRIP_H
#define Q8_ONNX_STRIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct q8_onnx_raw {
    bool present;           /* the initializer had raw_data */
    size_t off, len;        /* where, in the original bytes */
} q8_onnx_raw;

typedef struct q8_onnx_stripped {
    uint8_t *bytes;         /* the model without the initializers' raw_data */
    size_t len;
    q8_onnx_raw *raw;       /* per initializer of the top graph, in order */
    size_t n_raw, cap_raw;
    /* per tensor attribute (AttributeProto.t) of the top graph's nodes, in
     * node order, then attribute order */
    q8_onnx_raw *attr_raw;
    size_t n_attr_raw, cap_attr_raw;
} q8_onnx_stripped;

/* False when the bytes are not wire data this can follow (the caller then
 * unpacks them as they are, and reports what is wrong). */
bool q8_onnx_strip(const uint8_t *buf, size_t len, q8_onnx_stripped *s);
void q8_onnx_stripped_free(q8_onnx_stripped *s);

#endif
