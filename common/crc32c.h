/* crc32c.h - CRC32C (Castagnoli), hardware accelerated where the CPU has SSE4.2. */
#ifndef ATTIC_CRC32C_H
#define ATTIC_CRC32C_H
#include <stddef.h>
#include <stdint.h>

/* Extend crc (0 to start) over n bytes at p. */
uint32_t crc32c(uint32_t crc, const void *p, size_t n);

#endif
