/*
 * crc32c.c - CRC32C (Castagnoli polynomial 0x82F63B78), the checksum of every
 * log record. Runs in every process (frontends compute it while encoding,
 * the logger's recovery and the store's replay verify it).
 *
 * Uses the SSE4.2 crc32 instruction when the CPU has it (chosen once, at the
 * first call), else a byte-wise table. Both give identical results; the test
 * suite checks the standard check value 0xE3069283 for "123456789".
 */
#include "crc32c.h"

#include <string.h>

static uint32_t crc_table[256];

static void crc_table_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_table[i] = c;
    }
}

static uint32_t crc32c_sw(uint32_t crc, const unsigned char *p, size_t n)
{
    while (n--)
        crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const unsigned char *p,
                                                            size_t n)
{
    uint64_t c = crc;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (n--)
        c32 = __builtin_ia32_crc32qi(c32, *p++);
    return c32;
}
#endif

typedef uint32_t (*crc_fn)(uint32_t, const unsigned char *, size_t);
static crc_fn crc_impl;

static crc_fn crc_choose(void)
{
    crc_table_init();
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) return crc32c_hw;
#endif
    return crc32c_sw;
}

uint32_t crc32c(uint32_t crc, const void *p, size_t n)
{
    /* The choice is idempotent, so a race between threads only repeats it. */
    crc_fn f = __atomic_load_n(&crc_impl, __ATOMIC_ACQUIRE);
    if (!f) {
        f = crc_choose();
        __atomic_store_n(&crc_impl, f, __ATOMIC_RELEASE);
    }
    return ~f(~crc, (const unsigned char *)p, n);
}
