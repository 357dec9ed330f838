/*
 * digest.h - the 160-bit digest of DEBUG DIGEST (store/digest.c), for tests
 * and tools as well as the command.
 */
#ifndef ATTIC_STORE_DIGEST_H
#define ATTIC_STORE_DIGEST_H

#include <stdint.h>

#include "store-internal.h"

#define STORE_DIGEST_BYTES 20
#define STORE_DIGEST_HEX   40

/* The order-independent digest of every key live at now_ms (all databases),
 * all zeros when there is none. Returns 0, or -1 when a value could not be
 * read. */
int store_digest160(store_ctx_t *ctx, int64_t now_ms, unsigned char out[STORE_DIGEST_BYTES]);

/* As 40 lower-case hex digits and a NUL. */
void store_digest_hex(const unsigned char d[STORE_DIGEST_BYTES], char out[STORE_DIGEST_HEX + 1]);

#endif
