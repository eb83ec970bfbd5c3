// CRC-32C for the x-amz-checksum-crc32c header. x86-64 CPUs since 2008 compute it in one
// instruction per 8 bytes (~8 GB/s, against ~3 GB/s for zlib's CRC-32); elsewhere a table.
#include "r2up_crc32c.h"

#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

static uint32_t table[256];
static int table_ready;

static void make_table(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        table[n] = c;
    }
    table_ready = 1;
}

static uint32_t crc32c_table(uint32_t crc, const uint8_t *p, size_t n) {
    if (!table_ready) make_table();  // idempotent: racing threads write the same values
    while (n--) crc = table[(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t crc32c_sse42(uint32_t crc, const uint8_t *p, size_t n) {
    uint64_t c = crc;
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_ia32_crc32di(c, word);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
    return c32;
}

static int has_sse42(void) {
    static int known = -1;
    if (known < 0) {
        unsigned a, b, c, d;
        known = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2) ? 1 : 0;
    }
    return known;
}
#endif

uint32_t r2up_crc32c(uint32_t crc, const void *bytes, size_t length) {
    const uint8_t *p = bytes;
    crc = ~crc;
#if defined(__x86_64__)
    if (has_sse42()) return ~crc32c_sse42(crc, p, length);
#endif
    return ~crc32c_table(crc, p, length);
}
