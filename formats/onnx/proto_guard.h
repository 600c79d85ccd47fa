/* A pre-check of protobuf wire data before protobuf-c unpacks it: protobuf-c
 * recurses once per nested message, so a crafted file (graph -> node ->
 * attribute -> graph -> ...) could exhaust the stack. This walks the wire
 * format with the message descriptors and bounds the nesting depth. */
#ifndef Q8_PROTO_GUARD_H
#define Q8_PROTO_GUARD_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define Q8_PROTO_MAX_DEPTH 64

/* false if the data nests messages deeper than max_depth or is not
 * well-formed wire data; *why gets a static reason. */
bool q8_proto_check(const ProtobufCMessageDescriptor *desc, const uint8_t *data,
                    size_t len, int max_depth, const char **why);

/* Read one base-128 varint at *p (< end), advancing *p; false if truncated. */
bool q8_pb_read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v);

#endif
