/* crc32.h - zlib's CRC-32, faster on long inputs (internal; crc32.c). */
#ifndef MP_CRC32_H
#define MP_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Exactly zlib's crc32(crc, p, len), for any crc, p and len. */
uint32_t mp__crc32(uint32_t crc, const uint8_t *p, size_t len);

#endif
