/* CRC-32C (Castagnoli), as used by iSCSI, ext4 and many file formats: the
 * .q8 sections' checksum. Hardware instruction on x86-64 with SSE4.2 and on
 * ARMv8 with the CRC extension, table-driven elsewhere. */
#ifndef Q8_CRC32C_H
#define Q8_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* crc of data, continuing from crc (start with 0). */
uint32_t q8_crc32c(uint32_t crc, const void *data, size_t len);
/* The portable version, for tests. */
uint32_t q8_crc32c_portable(uint32_t crc, const void *data, size_t len);

#endif
