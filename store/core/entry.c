/*
 * entry.c - the store's entries (entry.h): the layout of one key's
 * allocation, its accounting in the counters INFO and DBSIZE report, and
 * the few ways an entry enters, changes shape in, or leaves a database's
 * index. Every layer above (values, WATCH, the type handlers) changes an
 * entry only through these functions, which is what keeps the counters
 * right.
 *
 * Store process only (and tests and tools); single-threaded. Invariants:
 * ctx->entry_bytes is the sum of ent_bytes() over every entry in every
 * index, ctx->live counts every log byte an entry's value refers to
 * (core/live.c), and ctx->expires / db->expires count the entries with a TTL; the
 * index's free callback (st_ent_free) is the one way out, so that holds
 * whichever path removed an entry. Nothing here looks at a clock: the
 * caller passes `now`. A crash loses nothing: the state is rebuilt by
 * replaying the log.
 *
 * Entry layout (one allocation, index.h header of 19 bytes):
 *     header | key | inline prefix (ilen bytes) | tail | [aux word]
 * where the tail is, by vkind:
 *     VK_INLINE  nothing
 *     VK_EXTENT  one extent: u64 lsn, u32 len (an argument of one record,
 *                so under 4 GiB)
 *     VK_LIST    a pointer to an st_pieces_t: log extents, zero runs and
 *                bytes held in RAM (what APPEND, SETRANGE, SETBIT and
 *                INCRBYFLOAT make; core/value.c explains the design and
 *                its RAM bound)
 *     VK_OBJ     a pointer to a collection's st_obj_t (core/object.h): its
 *                ops free it and say how much RAM it holds, so nothing
 *                here knows any collection type
 * (vkind's low bits; its upper bits hold the string encoding that OBJECT
 * ENCODING reports: entry.h.) The aux word, 8 bytes, is there when eflags
 * has ENT_AUX: a key's TTL, a hash member's place or stamp (entry.h, D74).
 * RAM per key: 19 + klen + ilen + {0, 12, 8} bytes, 8 more with a TTL
 * (plus, for VK_LIST, the piece list and any bytes it holds in RAM:
 * bounded as value.c explains), rounded up by the allocator to its size
 * class, plus one 8-byte bucket pointer per 1 to 2 keys (load factor 1-2,
 * D73). E.g. a 16-byte key with a 100-byte value and no TTL: 19 + 16 + 12
 * = 47 bytes (mimalloc's 48-byte class) + 4-8 bytes of buckets. D73 and
 * D74 have the measures at 10M keys.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "entry.h"
#include "index.h"
#include "log.h"
#include "object.h"
#include "pieces.h"
#include "resp.h"

/* ---- entries ---------------------------------------------------------- */

void st_ent_set_aux(idx_entry_t *e, int64_t v)
{
    if (!(e->eflags & ENT_AUX)) {
        log_warn("store: an entry without room for its aux word was given one");
        abort();
    }
    memcpy((unsigned char *)e + st_entry_size(e->klen, e->ilen, e->vkind), &v, 8);
}

idx_entry_t *st_ent_alloc(const void *key, uint32_t klen, uint8_t ilen, uint8_t vkind, int64_t aux)
{
    size_t n = st_entry_size(klen, ilen, vkind);
    return st_ent_init(st_xmalloc(n + (aux ? 8 : 0)), key, klen, ilen, vkind, aux);
}

idx_entry_t *st_ent_init(void *at, const void *key, uint32_t klen, uint8_t ilen, uint8_t vkind,
                         int64_t aux)
{
    idx_entry_t *e = at;
    e->klen = klen;
    e->ilen = ilen;
    e->vkind = vkind;
    e->eflags = aux ? ENT_AUX : 0;
    if (key && klen) memcpy(e->data, key, klen);
    if (aux) st_ent_set_aux(e, aux == ST_AUX_ROOM ? 0 : aux);
    return e;
}

unsigned char *st_ent_inline(idx_entry_t *e)
{
    return e->data + e->klen;
}

unsigned char *st_ent_tail(idx_entry_t *e)
{
    return e->data + e->klen + e->ilen;
}

void st_ent_get_ext1(idx_entry_t *e, uint64_t *lsn, uint32_t *len)
{
    memcpy(lsn, st_ent_tail(e), 8);
    memcpy(len, st_ent_tail(e) + 8, 4);
}

void st_ent_set_ext1(idx_entry_t *e, uint64_t lsn, uint32_t len)
{
    memcpy(st_ent_tail(e), &lsn, 8);
    memcpy(st_ent_tail(e) + 8, &len, 4);
}

st_pieces_t *st_ent_pieces(idx_entry_t *e)
{
    st_pieces_t *l;
    memcpy(&l, st_ent_tail(e), sizeof(l));
    return l;
}

void st_ent_set_pieces(idx_entry_t *e, st_pieces_t *l)
{
    memcpy(st_ent_tail(e), &l, sizeof(l));
}

uint64_t st_ent_vlen(idx_entry_t *e)
{
    uint64_t n = e->ilen;
    if (st_ent_kind(e) == VK_EXTENT) {
        uint64_t lsn;
        uint32_t len;
        st_ent_get_ext1(e, &lsn, &len);
        n += len;
    } else if (st_ent_kind(e) == VK_LIST) {
        n += st_pieces_len(st_ent_pieces(e));
    }
    return n;
}

uint64_t st_ent_bytes(idx_entry_t *e)
{
    uint64_t n = st_ent_alloc_size(e);
    if (st_ent_kind(e) == VK_LIST) n += st_pieces_bytes(st_ent_pieces(e));
    if (st_ent_kind(e) == VK_OBJ) n += st_ent_obj(e)->ops->mem_usage(st_ent_obj(e));
    return n;
}

void st_ent_live_add(st_live_t *t, idx_entry_t *e, int sign)
{
    if (st_ent_kind(e) == VK_EXTENT) {
        uint64_t lsn;
        uint32_t len;
        st_ent_get_ext1(e, &lsn, &len);
        st_live_add(t, lsn, len, sign);
    } else if (st_ent_kind(e) == VK_LIST) {
        const st_pieces_t *l = st_ent_pieces(e);
        for (uint32_t i = 0; i < l->n; i++)
            if (st_piece_kind(&l->p[i]) == PIECE_LOG)
                st_live_add(t, l->p[i].where, st_piece_end(&l->p[i]) - st_piece_start(l, i), sign);
    }
}

void st_ent_count_log(store_ctx_t *ctx, idx_entry_t *e, int sign)
{
    if (st_ent_kind(e) == VK_OBJ)
        st_ent_obj(e)->ops->count_log(st_ent_obj(e), &ctx->live, sign);
    else
        st_ent_live_add(&ctx->live, e, sign);
}

/* Take e's bytes, log references and TTL out of db's counters
 * (st_ent_store puts them in). */
static void ent_uncount(st_db_t *db, idx_entry_t *e)
{
    db->ctx->entry_bytes -= st_ent_bytes(e);
    st_ent_count_log(db->ctx, e, -1);
    if (st_ent_expire(e)) {
        db->ctx->expires--;
        db->expires--;
    }
}

/* The index's free callback: every removal passes here, so the counters
 * stay right whichever path removed the entry. */
void st_ent_free(void *arg, idx_entry_t *e)
{
    ent_uncount(arg, e);
    if (st_ent_kind(e) == VK_LIST) st_pieces_free(st_ent_pieces(e));
    if (st_ent_kind(e) == VK_OBJ) st_ent_obj(e)->ops->free(st_ent_obj(e));
    free(e);
}

idx_entry_t *st_ent_take(st_db_t *db, idx_entry_t **slot)
{
    idx_entry_t *e = idx_unlink(&db->ix, slot);
    ent_uncount(db, e);
    return e;
}

/* A new entry holding a SET-style value: inline when short, else one extent
 * pointing at the value's bytes in the log. */
idx_entry_t *st_ent_new(const rec_arg_t *key, const rec_arg_t *val, uint64_t val_lsn,
                        int64_t expire_at)
{
    int small = val->len <= STORE_INLINE_MAX;
    uint8_t ilen = small ? (uint8_t)val->len : 0;
    uint8_t vkind = small ? VK_INLINE : VK_EXTENT;
    idx_entry_t *e = st_ent_alloc(key->ptr, key->len, ilen, vkind, expire_at);
    if (small) {
        if (val->len) memcpy(st_ent_inline(e), val->ptr, val->len); /* a set member's NULL */
    } else
        st_ent_set_ext1(e, val_lsn, val->len);
    return e;
}

idx_entry_t *st_ent_new_obj(const rec_arg_t *key, st_obj_t *o, int64_t expire_at)
{
    idx_entry_t *e = st_ent_alloc(key->ptr, key->len, 0,
                                  (uint8_t)(VK_OBJ | (o->ops->type << VK_TYPE_SHIFT)), expire_at);
    memcpy(st_ent_tail(e), &o, sizeof(o));
    return e;
}

int st_wrongtype(idx_entry_t **slot, unsigned t, buf_t *r)
{
    if (!slot || st_ent_type(*slot) == t) return 0;
    if (r) resp_error(r, ST_ERR_WRONGTYPE);
    return 1;
}

idx_entry_t **st_first_live_of(st_db_t *db, const rec_arg_t *keys, uint32_t n, unsigned t,
                               int64_t now, uint32_t *which, int *wrong, buf_t *r)
{
    *wrong = 0;
    for (uint32_t i = 0; i < n; i++) {
        idx_entry_t **slot = st_find_live(db, &keys[i], now, 1);
        if (!slot) continue;
        if (st_wrongtype(slot, t, r)) {
            *wrong = 1;
            return NULL;
        }
        *which = i;
        return slot;
    }
    return NULL;
}

/* Put e into the index, in place of *slot's entry when slot is not NULL. */
static void note_expiry(st_db_t *db, int64_t at)
{
    if (!at) return;
    if (at < db->next_expiry) db->next_expiry = at;
    if (at < db->set_min) db->set_min = at;
}

void st_ent_store(st_db_t *db, idx_entry_t **slot, idx_entry_t *e)
{
    note_expiry(db, st_ent_expire(e));
    db->ctx->entry_bytes += st_ent_bytes(e);
    st_ent_count_log(db->ctx, e, 1);
    if (st_ent_expire(e)) {
        db->ctx->expires++;
        db->expires++;
    }
    if (slot) {
        idx_entry_t *old = *slot;
        idx_relink(slot, old, e);
        st_ent_free(db, old);
    } else {
        idx_insert(&db->ix, e);
        if (db->ctx->on_new) db->ctx->on_new(db->ctx, db, e);
    }
    /* A write is a use, at the apply clock's time (the record's, on
     * replay); an overwrite keeps the old key's data (relinked with it),
     * as Redis keeps an overwritten key's LFU counter. */
    if (slot)
        st_access_touch(&db->ctx->access, e, db->ctx->now);
    else
        st_access_new(&db->ctx->access, e, db->ctx->now);
}

/* Reallocate *slot's entry for a value of this shape, with the room for
 * its aux word or without (the word kept while the room stays), and relink
 * it through slot; entry_bytes follows the allocation's size. */
static idx_entry_t *ent_reshape(st_db_t *db, idx_entry_t **slot, uint8_t ilen, uint8_t vkind,
                                int room)
{
    idx_entry_t *e = *slot;
    int64_t aux = st_ent_aux(e);
    db->ctx->entry_bytes -= st_ent_alloc_size(e);
    e = st_xrealloc(e, st_entry_size(e->klen, ilen, vkind) + (room ? 8 : 0));
    *slot = e; /* next and hash moved with the bytes */
    e->ilen = ilen;
    e->vkind = (uint8_t)((e->vkind & ~VK_KIND_MASK) | (vkind & VK_KIND_MASK));
    e->eflags = (uint8_t)(room ? (e->eflags | ENT_AUX) : (e->eflags & ~ENT_AUX));
    if (room) st_ent_set_aux(e, aux);
    db->ctx->entry_bytes += st_ent_alloc_size(e);
    return e;
}

/* Resize *slot's entry for a new value shape; the caller fills it in. The
 * bytes up to the old tail are kept (realloc), and so are the encoding and
 * the aux word. */
idx_entry_t *st_ent_resize(st_db_t *db, idx_entry_t **slot, uint8_t ilen, uint8_t vkind)
{
    return ent_reshape(db, slot, ilen, vkind, ((*slot)->eflags & ENT_AUX) != 0);
}

idx_entry_t *st_ent_set_expire(st_db_t *db, idx_entry_t **slot, int64_t at)
{
    idx_entry_t *e = *slot;
    int64_t was = st_ent_expire(e);
    note_expiry(db, at);
    if (!was && at) {
        db->ctx->expires++;
        db->expires++;
    }
    if (was && !at) {
        db->ctx->expires--;
        db->expires--;
    }
    if (((e->eflags & ENT_AUX) != 0) != (at != 0))
        e = ent_reshape(db, slot, e->ilen, e->vkind, at != 0);
    if (at) st_ent_set_aux(e, at);
    return e;
}

/*
 * The slot of a key that is live at `now`, or NULL. With reap set, a key
 * found expired is removed (only on the apply path, where now is the apply
 * clock: Redis' lazy expiry, done where replay does it too).
 */
/* A read's lookup found the key live (hit) or not (miss): INFO's
 * keyspace_hits and keyspace_misses. */
static idx_entry_t **count_lookup(st_db_t *db, const rec_arg_t *key, idx_entry_t **slot)
{
    store_ctx_t *ctx = db->ctx;
    if (ctx->reading) {
        if (slot)
            ctx->stat_hits++;
        else
            ctx->stat_misses++;
        /* "keymiss" where Redis' lookupKey sends it: in the lookup, before
         * the reply; OBJECT, MEMORY USAGE and DEBUG look quietly (D51). */
        if (!slot && !ctx->lookup_quiet && ctx->on_miss) ctx->on_miss(ctx, db, key);
    }
    return slot;
}

idx_entry_t **st_find_peek(st_db_t *db, const rec_arg_t *key, int64_t now)
{
    idx_entry_t **slot = idx_find(&db->ix, key->ptr, key->len);
    if (!slot) return count_lookup(db, key, NULL);
    return count_lookup(db, key, st_ent_expired(*slot, now) ? NULL : slot);
}

idx_entry_t **st_find_quiet(st_db_t *db, const rec_arg_t *key, int64_t now)
{
    int outer = db->ctx->lookup_quiet;
    db->ctx->lookup_quiet = 1;
    idx_entry_t **slot = st_find_peek(db, key, now);
    db->ctx->lookup_quiet = outer;
    return slot;
}

idx_entry_t **st_find_live(st_db_t *db, const rec_arg_t *key, int64_t now, int reap)
{
    idx_entry_t **slot = idx_find(&db->ix, key->ptr, key->len);
    if (!slot) return count_lookup(db, key, NULL);
    if (st_ent_expired(*slot, now)) {
        if (reap) {
            if (db->ctx->on_expired) db->ctx->on_expired(db->ctx, db, *slot);
            idx_remove(&db->ix, slot);
            db->ctx->stat_expired++;
        }
        return count_lookup(db, key, NULL);
    }
    st_access_touch(&db->ctx->access, *slot, now);
    return count_lookup(db, key, slot);
}

idx_entry_t **st_find_read(st_db_t *db, const rec_arg_t *key, int64_t now, int reap)
{
    idx_entry_t **slot = st_find_live(db, key, now, reap);
    /* Inside a read, count_lookup told it already. */
    if (!slot && !db->ctx->reading && db->ctx->on_miss) db->ctx->on_miss(db->ctx, db, key);
    return slot;
}

void st_remove(st_db_t *db, idx_entry_t **slot)
{
    idx_remove(&db->ix, slot);
}
