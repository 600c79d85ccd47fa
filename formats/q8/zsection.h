/* Deflated META and GRAPH sections (.q8 version 5, docs/format.md): zlib
 * streams, inflated at load into owned memory within fixed bounds. DATA is
 * never deflated as a whole (its weights are used in place from the
 * mapping); since version 8 a constant that is expanded at load anyway
 * (small tables: QLut's) may be (Q8_ENC_DEFLATE). */
#ifndef Q8_ZSECTION_H
#define Q8_ZSECTION_H

#include <stddef.h>
#include <stdint.h>

#include "bytes.h"
#include "common.h"

/* A section's flag: its bytes are a zlib stream; the entry's last u32
 * holds the inflated size. */
#define Q8_SECTION_DEFLATED 1u
/* The most a deflated section may inflate to, and deflate's best ratio
 * (a declared size above either is refused before anything is allocated). */
#define Q8_ZSECTION_MAX ((uint64_t)256 << 20)
#define Q8_ZSECTION_RATIO 1032u

/* Deflate src (level 9) into out; false when out of memory. */
bool q8_zsection_deflate(const uint8_t *src, size_t n, q8_wbuf *out);

/* Deflate a constant's bytes (level 9), whichever of zlib's default
 * strategy and Huffman codes alone is smaller: pruned INT8 weights have
 * few repeats for LZ77 to find, and a Huffman code of their bytes beats
 * the bitmask form (FaceMesh's head: 9% smaller). One zlib stream either
 * way, read by q8_zdata_inflate. False when out of memory or over the
 * reader's bounds (4 GiB). */
bool q8_zdata_deflate(const uint8_t *src, size_t n, q8_wbuf *out);

/* Inflate section `what`'s stored bytes into a new buffer of exactly
 * `declared` bytes (*out, freed by the caller). */
q8_status q8_zsection_inflate(const char *what, const uint8_t *src, size_t n,
                              uint64_t declared, uint8_t **out, q8_error *err);

/* Inflate a deflated constant's n stored bytes into dst: exactly `bytes`
 * (its dense size), bounded as sections are. */
q8_status q8_zdata_inflate(const char *name, const uint8_t *src, size_t n, uint8_t *dst,
                           uint64_t bytes, q8_error *err);

#endif
