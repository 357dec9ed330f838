/*
 * sha256.h - SHA-256 (FIPS 180-4), for ACL passwords: Redis keeps and shows
 * only the SHA-256 of a password ("#<64 hex digits>"), and so do we.
 */
#ifndef ATTIC_SHA256_H
#define ATTIC_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32

/* The digest of p[0, n) into out. */
void sha256(const void *p, size_t n, unsigned char out[SHA256_LEN]);

/* The digest as 64 lower-case hex digits and a NUL. */
void sha256_hex(const unsigned char digest[SHA256_LEN], char out[2 * SHA256_LEN + 1]);

#endif
