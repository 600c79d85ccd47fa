#include "proto_guard.h"

bool q8_pb_read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
    uint64_t r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p >= end) return false;
        uint8_t b = *(*p)++;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

static bool walk(const ProtobufCMessageDescriptor *desc, const uint8_t *p,
                 const uint8_t *end, int depth, const char **why) {
    if (depth <= 0) {
        *why = "messages nested too deeply";
        return false;
    }
    while (p < end) {
        uint64_t key;
        if (!q8_pb_read_varint(&p, end, &key)) {
            *why = "truncated field key";
            return false;
        }
        uint32_t field = (uint32_t)(key >> 3);
        switch (key & 7) {
        case 0: {
            uint64_t v;
            if (!q8_pb_read_varint(&p, end, &v)) {
                *why = "truncated varint";
                return false;
            }
            break;
        }
        case 1:
            if (end - p < 8) {
                *why = "truncated 64-bit field";
                return false;
            }
            p += 8;
            break;
        case 5:
            if (end - p < 4) {
                *why = "truncated 32-bit field";
                return false;
            }
            p += 4;
            break;
        case 2: {
            uint64_t len;
            if (!q8_pb_read_varint(&p, end, &len) || len > (uint64_t)(end - p)) {
                *why = "length-delimited field runs past the end";
                return false;
            }
            const ProtobufCFieldDescriptor *fd =
                desc && field ? protobuf_c_message_descriptor_get_field(desc, field) : NULL;
            if (fd && fd->type == PROTOBUF_C_TYPE_MESSAGE &&
                !walk(fd->descriptor, p, p + len, depth - 1, why))
                return false;
            p += len;
            break;
        }
        default:
            *why = "invalid wire type";
            return false;
        }
    }
    return true;
}

bool q8_proto_check(const ProtobufCMessageDescriptor *desc, const uint8_t *data,
                    size_t len, int max_depth, const char **why) {
    *why = "";
    return walk(desc, data, data + len, max_depth, why);
}
