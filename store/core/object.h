/*
 * object.h - the store's value types beyond strings: the type of an entry,
 * and the table of operations each collection type gives the code that
 * must handle every type without knowing any (entry.c frees and counts
 * them, COPY duplicates them, state.c digests them, checkpoints write and
 * read them, OBJECT ENCODING names them). No code switches over types:
 * it calls the entry's object's ops.
 *
 * A collection entry has vkind VK_OBJ (entry.h): its tail is a pointer to
 * an st_obj_t, whose first member is its ops, and vkind's bits 4-7 repeat
 * ops->type, so a type check (WRONGTYPE) reads the entry only. A string
 * entry (VK_INLINE, VK_EXTENT, VK_LIST) has type ST_STRING and no ops.
 */
#ifndef ATTIC_STORE_OBJECT_H
#define ATTIC_STORE_OBJECT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "entry.h"

/* Type numbers are in checkpoints (ckpt_write's caller writes them): never
 * renumber. */
enum st_type {
    ST_STRING = 0,
    ST_HASH = 1,
    ST_LIST = 2,
    ST_SET = 3,
    ST_ZSET = 4,
    ST_STREAM = 5,
    ST__NTYPES
};

typedef struct st_obj {
    const struct st_type_ops *ops;
} st_obj_t;

typedef struct st_type_ops {
    unsigned type;    /* enum st_type */
    const char *name; /* TYPE's answer: "hash" */
    /* Free the object and everything it holds. */
    void (*free)(st_obj_t *o);
    /* A deep copy (COPY); log extents are shared (the log is immutable). */
    st_obj_t *(*dup)(const st_obj_t *o);
    /* A digest of the contents, independent of the order they are kept in
     * (store_digest, tests). Reads values back from the log. Returns 0, or
     * -1 on an I/O error (logged). */
    int (*digest)(store_ctx_t *ctx, const st_obj_t *o, uint64_t *out);
    /* RAM the object holds (requested bytes), for ctx->entry_bytes. */
    uint64_t (*mem_usage)(const st_obj_t *o);
    /* Count (sign > 0) or uncount (sign < 0) in t the log bytes the
     * object's values refer to (their extents): the live-bytes table
     * (core/live.c) decides which log segments may be deleted. An object
     * in an index is counted (st_ent_store counts it whole); its type's
     * writes then count each value they add or drop themselves. */
    void (*count_log)(const st_obj_t *o, st_live_t *t, int sign);
    /* OBJECT ENCODING's answer. */
    const char *(*encoding)(const st_obj_t *o);
    /* Checkpoints: append a self-describing byte stream of the contents
     * (log extents as LSN + length, never their bytes) to out. */
    void (*ckpt_write)(const st_obj_t *o, buf_t *out);
    /* Read what ckpt_write wrote, from p[0, len): returns the bytes used
     * and sets *out, or -1 when the bytes are not such a stream. */
    long (*ckpt_read)(const unsigned char *p, size_t len, st_obj_t **out);
    /* An object read from a checkpoint is ctx's now (a paged hash reads
     * its pages through it). NULL: nothing to do. */
    void (*bind)(st_obj_t *o, store_ctx_t *ctx);
} st_type_ops_t;

#define VK_TYPE_SHIFT 4

/* The object of a VK_OBJ entry. */
static inline st_obj_t *st_ent_obj(idx_entry_t *e)
{
    st_obj_t *o;
    __builtin_memcpy(&o, e->data + e->klen + e->ilen, sizeof(o));
    return o;
}

/* The type of any entry (enum st_type). */
static inline unsigned st_ent_type(const idx_entry_t *e)
{
    return (e->vkind & VK_KIND_MASK) == VK_OBJ ? (unsigned)(e->vkind >> VK_TYPE_SHIFT) : ST_STRING;
}

/* The ops of type t, or NULL (ST_STRING has none; checkpoints read with
 * these: core/types.c). */
const st_type_ops_t *st_type_ops(unsigned t);

/* 1 when e is a hash, list, set or sorted set with no members left: its
 * handler removes it next (an empty one does not exist, in Redis as here; a
 * stream does), so whoever looks at it meanwhile must take it as absent. */
int st_ent_emptied(idx_entry_t *e);

/* TYPE's answer for type t ("string", "hash", ...; "none" past the last),
 * and for entry e. */
const char *st_type_name_of(unsigned t);
const char *st_type_name(const idx_entry_t *e);

/* A new entry named key holding object o (its ops give the type), not yet
 * in any index (entry.c). */
idx_entry_t *st_ent_new_obj(const rec_arg_t *key, st_obj_t *o, int64_t expire_at);

/* Redis' text for a command on a key of another type. */
#define ST_ERR_WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"

/* 1 (after appending the WRONGTYPE error to r when r is not NULL) when slot
 * holds a key whose type is not t; 0 when absent or of type t. */
int st_wrongtype(idx_entry_t **slot, unsigned t, buf_t *r);

/* The multi-key pops' lookup (LMPOP, ZMPOP and their blocking forms): the
 * slot of the first of keys[0..n) that is live (an expired one is reaped),
 * with *which its index; NULL when none is, or when the first live one is
 * not of type t (then *wrong is 1 and WRONGTYPE is in r, as Redis). */
idx_entry_t **st_first_live_of(st_db_t *db, const rec_arg_t *keys, uint32_t n, unsigned t,
                               int64_t now, uint32_t *which, int *wrong, buf_t *r);

#endif
