/* The .q8 container: one aligned, checksummed, mmap-able file holding a
 * (quantized) graph, its metadata and a data blob. The layout is specified
 * in docs/format.md; the numbers the file uses for dtypes, attribute types
 * and ops are its own (codes.c). */
#ifndef Q8_Q8FILE_H
#define Q8_Q8FILE_H

#include "graph.h"
#include "meta.h"

#define Q8_FILE_MAGIC "Q8MODEL"   /* 8 bytes with the NUL */
/* written; 3 added weight layouts and a page-aligned DATA, 4 the compact
 * GRAPH and META (varints, front-coded names, an attribute table), 5 META
 * and GRAPH deflated (zsection.h), 6 version 5's records with depthwise
 * q8.QConv weights stored rows4 (which a reader before that change refused
 * as a layout mismatch: the bump makes it a version refusal instead), 7
 * quantization scales in 16 bits where they fit (scale16.h), 8 deflated
 * constants (Q8_ENC_DEFLATE), 9 bitmask data at any offset (expanded at
 * load, never read in place: its 64-byte alignment bought nothing), 10
 * the taps4 layout (implicit INT8 convs' weights) */
#define Q8_FILE_VERSION 10
#define Q8_FILE_VERSION_MIN 2 /* read; 1: before explicit codes (2026-11-23), refused */
#define Q8_FILE_HEADER_SIZE 64
#define Q8_FILE_ALIGN 64
/* Version 3: DATA starts on a page, so weights map on their own pages;
 * version 4: when DATA is at least 64 pages (else 64-byte aligned). */
#define Q8_FILE_DATA_ALIGN 4096

enum {
    Q8_SECTION_META = 1,
    Q8_SECTION_GRAPH = 2,
    /* 3 was PLAN (version 1), which nothing read */
    Q8_SECTION_DATA = 4,
};

enum {
    Q8_ENC_DENSE = 1,    /* numel * element size bytes */
    Q8_ENC_BITMASK = 2,  /* ceil(numel/8) mask bytes, then the non-zeros (v9: unaligned) */
    Q8_ENC_VARINT = 3,   /* version 4: int32/int64 elements as zigzag varints, unaligned */
    Q8_ENC_ZEROS = 4,    /* version 4: every byte zero; no data */
    Q8_ENC_DEFLATE = 5,  /* version 8: a zlib stream of the dense bytes, unaligned */
};

/* Write g (ops resolved, no subgraphs) and meta atomically to path.
 * Constants that are sparse enough are stored as bitmask + non-zeros. */
q8_status q8_file_write(const char *path, const q8_graph *g, const q8_meta *meta, q8_error *err);

/* How the writer stores constants (no format change: what it may choose). */
typedef struct q8_file_options {
    /* Every constant, dense weights included, deflated where that is
     * smaller (version 8's encoding 5): the smallest file, but no weight is
     * then used in place from the mapping; each is inflated into owned
     * memory at load. For pruned models (quantize --compress-weights). */
    bool deflate_all;
} q8_file_options;

/* q8_file_write with options (NULL: the defaults, as q8_file_write). */
q8_status q8_file_write_opts(const char *path, const q8_graph *g, const q8_meta *meta,
                             const q8_file_options *o, q8_error *err);

/* Serialize to memory (what q8_file_write writes). */
q8_status q8_file_encode(const q8_graph *g, const q8_meta *meta, uint8_t **buf, size_t *len,
                         q8_error *err);

/* The same in an older version (3) or this one: for tests of old readers. */
q8_status q8_file_encode_version(const q8_graph *g, const q8_meta *meta, uint32_t version,
                                 uint8_t **buf, size_t *len, q8_error *err);

/* q8_file_encode with options (NULL: the defaults). */
q8_status q8_file_encode_opts(const q8_graph *g, const q8_meta *meta, const q8_file_options *o,
                              uint8_t **buf, size_t *len, q8_error *err);

/* Parse a whole file image. Dense constants point into buf (which must
 * outlive the graph); sparse ones are expanded into owned memory. Nodes come
 * back with their ops resolved. meta may be NULL. */
q8_status q8_file_parse(const uint8_t *buf, size_t len, q8_graph **out, q8_meta *meta,
                        q8_error *err);

/* True if the buffer starts with the .q8 magic. */
bool q8_file_is_q8(const uint8_t *buf, size_t len);
/* True if the file at path starts with it (false if it cannot be read). */
bool q8_file_has_magic(const char *path);

#endif
