/*
 * hash.h - the hash type's data structure (core/hash.c): a key's fields
 * and their values, and the type's operations table (st_hash_ops, for
 * entry.c, COPY, the digest and checkpoints). The commands are in
 * types/t_hash.c.
 *
 * A field is an idx_entry_t laid out as a string entry (entry.h): the
 * field's name where a key's bytes are, then its value inline, as one log
 * extent, or as a piece list held in RAM, so core/value.c's readers and
 * replies serve a field's value as they serve a string's (st_ent_vlen,
 * st_read_value, st_reply_value on the field). Its expire_at_ms is unused,
 * except by a set in the hashtable encoding: a member's place in its order
 * (hash.c).
 */
#ifndef ATTIC_STORE_HASH_H
#define ATTIC_STORE_HASH_H

#include <stdint.h>

#include "entry.h"
#include "object.h"

typedef struct st_hash st_hash_t;

extern const st_type_ops_t st_hash_ops;
/* Sets are the same structure: members are fields with empty values, and
 * the small encoding is Redis' intset (members that are integers, kept in
 * integer order) instead of listpack. */
extern const st_type_ops_t st_set_ops;

/* A new, empty hash (listpack encoding); seed keys its field table once it
 * has one. */
st_hash_t *st_hash_new(uint64_t seed);
/* A new, empty set: intset-encoded when intset is set (its members must
 * then be integers as str_to_ll reads them until st_hash_convert). */
st_hash_t *st_set_new(uint64_t seed, int intset);
int st_hash_is_sorted(const st_hash_t *h);

static inline st_hash_t *st_ent_hash(idx_entry_t *e)
{
    return (st_hash_t *)st_ent_obj(e);
}

uint32_t st_hash_len(const st_hash_t *h);
/* 1 once the hash is in its hashtable encoding (it never goes back). */
int st_hash_is_table(const st_hash_t *h);
/* Move the fields into a hash table (OBJECT ENCODING says "hashtable"). */
void st_hash_convert(st_hash_t *h);
/* RAM held, requested bytes (st_hash_ops.mem_usage). */
uint64_t st_hash_bytes(const st_hash_t *h);

/* The field named f[0, n), or NULL. */
idx_entry_t *st_hash_find(st_hash_t *h, const void *f, uint32_t n);
/* Set field f to v[0, vlen). vlsn is the log position of v's bytes when they
 * are a record's argument (values longer than STORE_INLINE_MAX then stay in
 * the log as an extent), 0 when they are not (a computed value: held in
 * RAM). Returns 1 when the field is new, 0 when it was replaced. A
 * listpack-encoded hash keeps insertion order; a replaced field keeps its
 * place (as Redis' listpack). */
int st_hash_set(st_hash_t *h, st_live_t *live, const void *f, uint32_t n, const unsigned char *v,
                uint64_t vlen, uint64_t vlsn);
/* Remove field f. Returns 1 when it was there, 0 when not. */
int st_hash_del(st_hash_t *h, st_live_t *live, const void *f, uint32_t n);

/* Visit every field once: insertion order (listpack), table order
 * (hashtable), and for a set its members' order (hash.c's banner: a
 * function of the log in every encoding). fn returns nonzero to stop; that
 * value is returned. */
int st_hash_foreach(st_hash_t *h, idx_visit_fn fn, void *arg);
/* HSCAN: the fields at cursor; returns the next cursor (0 = done). A
 * listpack-encoded hash is visited whole in one call, as Redis does. fn's
 * return value is ignored (nothing is removed). */
uint64_t st_hash_scan(st_hash_t *h, uint64_t cursor, idx_visit_fn fn, void *arg);
/* A random field (NULL when empty); *rng is the caller's generator. */
idx_entry_t *st_hash_random(st_hash_t *h, uint64_t *rng);
/* Field i in st_hash_foreach's order, for a listpack-encoded hash or any
 * set (else NULL). */
idx_entry_t *st_hash_at(st_hash_t *h, uint32_t i);

#endif
