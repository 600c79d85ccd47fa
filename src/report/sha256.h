/* SHA-256 (FIPS 180-4), for the source model's fingerprint in .q8 metadata. */
#ifndef Q8_SHA256_H
#define Q8_SHA256_H

#include <stddef.h>
#include <stdint.h>

void q8_sha256(const void *data, size_t len, uint8_t out[32]);
/* 64 lowercase hex digits + NUL */
void q8_sha256_hex(const void *data, size_t len, char out[65]);

#endif
