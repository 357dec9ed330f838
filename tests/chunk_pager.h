/*
 * chunk_pager.h - the store's pager (store/pager.c) played by a unit test
 * for a chunked collection (lists, D63; streams, D64): records built by
 * the type's builder and written as the store would write them, some
 * applied at once and some held in flight across the test's next writes
 * (which may make them no-ops), through the store harness
 * (store_harness.h).
 *
 * Uses Criterion's assertions: for Criterion test programs only.
 */
#ifndef ATTIC_TEST_CHUNK_PAGER_H
#define ATTIC_TEST_CHUNK_PAGER_H

#include <stdint.h>

#include "store/core/chunked.h"
#include "store/store-internal.h"

/* A type's builder: st_list_page_build, st_stream_page_build. */
typedef int (*cp_build_fn)(store_ctx_t *ctx, void *obj, const st_pgpolicy_t *pol,
                           st_cpbuilt_t *out);

/* One turn for the collection obj at key (NULL: none): when wanted, build
 * records of op (at most a few in flight), then apply some of those in
 * flight; rnd is the test's generator, which decides. */
void cp_turn(uint16_t op, const char *key, void *obj, int wanted, cp_build_fn build,
             const st_pgpolicy_t *pol, uint64_t (*rnd)(void));
/* Apply every record still in flight. */
void cp_drain(void);
/* Records applied so far. */
extern uint64_t cp_applied;

/* A checkpoint round trip of the collection at key in database 0 (with
 * at least a few pages): written, read back and bound, it must agree with
 * itself (its type's check), digest the same and have the same figures
 * (its type's DEBUG PAGED stats), and every cut of the written bytes must
 * be refused. Returns the object read back (the caller's). */
struct st_obj *cp_ckpt_round_trip(const char *key, void (*stats)(void *obj, long long v[7]),
                                  const char *(*check)(void *obj));

#endif
