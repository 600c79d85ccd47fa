/* The .q8 container: one aligned, checksummed, mmap-able file holding a
 * (quantized) graph, its metadata, its memory plan and a data blob. The
 * layout is specified in docs/format.md. */
#ifndef Q8_Q8FILE_H
#define Q8_Q8FILE_H

#include "graph.h"
#include "meta.h"
#include "planner.h"

#define Q8_FILE_MAGIC "Q8MODEL"   /* 8 bytes with the NUL */
#define Q8_FILE_VERSION 1
#define Q8_FILE_HEADER_SIZE 64
#define Q8_FILE_ALIGN 64

enum {
    Q8_SECTION_META = 1,
    Q8_SECTION_GRAPH = 2,
    Q8_SECTION_PLAN = 3,
    Q8_SECTION_DATA = 4,
};

enum {
    Q8_ENC_DENSE = 1,    /* numel * element size bytes */
    Q8_ENC_BITMASK = 2,  /* ceil(numel/8) mask bytes, then the non-zero elements */
};

/* Alignment of a constant's data inside DATA: 64 bytes, 8 for constants
 * smaller than 64 bytes (scales, zero points, shapes). */
static inline size_t q8_file_data_align(size_t stored_bytes) {
    return stored_bytes >= Q8_FILE_ALIGN ? Q8_FILE_ALIGN : 8;
}

/* Write g (no subgraphs), meta and plan (may be NULL) atomically to path.
 * Constants that are sparse enough are stored as bitmask + non-zeros. */
q8_status q8_file_write(const char *path, const q8_graph *g, const q8_meta *meta,
                        const q8_plan *plan, q8_error *err);

/* Serialize to memory (what q8_file_write writes). */
q8_status q8_file_encode(const q8_graph *g, const q8_meta *meta, const q8_plan *plan,
                         uint8_t **buf, size_t *len, q8_error *err);

/* Parse a whole file image. Dense constants point into buf (which must
 * outlive the graph); sparse ones are expanded into owned memory. meta may
 * be NULL. planned_arena gets the stored plan's arena size (0 if none). */
q8_status q8_file_parse(const uint8_t *buf, size_t len, q8_graph **out, q8_meta *meta,
                        size_t *planned_arena, q8_error *err);

/* True if the buffer starts with the .q8 magic. */
bool q8_file_is_q8(const uint8_t *buf, size_t len);
/* True if the file at path starts with it (false if it cannot be read). */
bool q8_file_has_magic(const char *path);

#endif
