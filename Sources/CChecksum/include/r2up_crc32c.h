#ifndef R2UP_CRC32C_H
#define R2UP_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/// CRC-32C (Castagnoli, the `x-amz-checksum-crc32c` header) of `length` bytes, continuing
/// from `crc` (0 to start). Uses the SSE 4.2 instruction when the CPU has it.
uint32_t r2up_crc32c(uint32_t crc, const void *bytes, size_t length);

#endif
