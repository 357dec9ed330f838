/*
 * pubsub.c - Pub/Sub's shared tables (pubsub.h, D37): the subscription
 * counts per frontend and the broadcast ring. Run by the frontends (both)
 * and the store (the ring only, for keyspace notifications).
 *
 * Invariants: only the table lock's holder adds, frees or renames an entry
 * or changes a count; only the ring lock's holder moves `reserved` and
 * `head`. A process killed holding either lock leaves it to be taken over
 * (pidlock_take): a half-written entry has an odd seq and no count, a half-
 * copied message lies past head, where no reader looks.
 */
#include "pubsub.h"

#include <stdlib.h>
#include <string.h>

#include "glob.h"

size_t ps_shm_size(void)
{
    return sizeof(ps_shm_t);
}

void ps_shm_init(ps_shm_t *ps)
{
    /* The segment is fresh anonymous memory: already zero. Only what is
     * not zero at rest would be set here. */
    atomic_store(&ps->head, 0);
    atomic_store(&ps->reserved, 0);
}

/* FNV-1a over kind and name. */
static uint64_t name_hash(int kind, const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)kind;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

static ps_entry_t *table_of(ps_shm_t *ps, int kind, uint32_t *nslots)
{
    if (kind == PS_PATTERN) {
        *nslots = PS_PAT_SLOTS;
        return ps->patterns;
    }
    *nslots = PS_SLOTS;
    return ps->entries;
}

/* The entry in use holding (kind, name), or NULL; *free_slot (when not
 * NULL) gets the first reusable entry on the way. Under the table lock. */
static ps_entry_t *find_locked(ps_shm_t *ps, int kind, const char *name, size_t len, uint64_t h,
                               ps_entry_t **free_slot)
{
    uint32_t n;
    ps_entry_t *t = table_of(ps, kind, &n);
    if (free_slot) *free_slot = NULL;
    for (uint32_t i = 0; i < n; i++) {
        ps_entry_t *e = &t[(h + i) & (n - 1)];
        uint32_t st = atomic_load_explicit(&e->state, memory_order_relaxed);
        if (st == 0) {
            if (free_slot && !*free_slot) *free_slot = e;
            return NULL;
        }
        if (st == 2) {
            if (free_slot && !*free_slot) *free_slot = e;
            continue;
        }
        if (e->hash == h && e->kind == (uint32_t)kind && e->len == len &&
            !memcmp(e->name, name, len))
            return e;
    }
    return NULL;
}

/* The subscribers of e on frontends 0..nfrontends-1 but `except`. */
static uint64_t entry_total(ps_entry_t *e, int nfrontends, int except)
{
    uint64_t sum = 0;
    for (int f = 0; f < nfrontends; f++)
        if (f != except) sum += atomic_load_explicit(&e->count[f], memory_order_relaxed);
    return sum;
}

static int entry_unused(ps_entry_t *e)
{
    return entry_total(e, PS_MAX_FRONTENDS, -1) == 0;
}

/* Free e. A free entry right before a never-used one ends no probe
 * sequence that reaches past it, so it (and the free ones before it)
 * become never-used again: lookups of absent names stay short after many
 * subscribe/unsubscribe cycles. */
static void entry_free(ps_shm_t *ps, ps_entry_t *e)
{
    uint32_t n;
    ps_entry_t *t = table_of(ps, (int)e->kind, &n);
    if (e->kind == PS_PATTERN) atomic_fetch_sub(&ps->npatterns, 1);
    atomic_store_explicit(&e->state, 2, memory_order_release);
    uint32_t i = (uint32_t)(e - t);
    for (uint32_t k = 0; k < n; k++, i = (i - 1) & (n - 1)) {
        if (atomic_load_explicit(&t[i].state, memory_order_relaxed) != 2 ||
            atomic_load_explicit(&t[(i + 1) & (n - 1)].state, memory_order_relaxed) != 0)
            break;
        atomic_store_explicit(&t[i].state, 0, memory_order_release);
    }
}

int ps_set_count(ps_shm_t *ps, int kind, const char *name, size_t len, int slot, uint32_t n)
{
    if (len > PS_NAME_MAX || slot < 0 || slot >= PS_MAX_FRONTENDS) return -1;
    uint64_t h = name_hash(kind, name, len);
    pidlock_take(&ps->table_lock);
    ps_entry_t *spare, *e = find_locked(ps, kind, name, len, h, &spare);
    int rc = 0;
    if (!e && n) {
        if (!spare) {
            rc = -1;
            goto out;
        }
        e = spare;
        atomic_fetch_add_explicit(&e->seq, 1, memory_order_acq_rel); /* odd */
        e->kind = (uint32_t)kind;
        e->len = (uint32_t)len;
        e->hash = h;
        memcpy(e->name, name, len);
        for (int f = 0; f < PS_MAX_FRONTENDS; f++)
            atomic_store_explicit(&e->count[f], 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&e->seq, 1, memory_order_release);
        if (kind == PS_PATTERN) atomic_fetch_add(&ps->npatterns, 1);
        atomic_store_explicit(&e->state, 1, memory_order_release);
    }
    if (e) {
        atomic_store_explicit(&e->count[slot], n, memory_order_release);
        if (!n && entry_unused(e)) entry_free(ps, e);
    }
out:
    pidlock_release(&ps->table_lock);
    return rc;
}

/* A reader's copy of an entry in use: 1 with its name and total, 0 when
 * it was free or changed while being read. */
static int entry_read(ps_entry_t *e, int nfrontends, int except, char *name, uint32_t *len,
                      uint32_t *kind, uint64_t *hash, uint64_t *total)
{
    uint32_t s1 = atomic_load_explicit(&e->seq, memory_order_acquire);
    if ((s1 & 1) || atomic_load_explicit(&e->state, memory_order_acquire) != 1) return 0;
    *len = e->len > PS_NAME_MAX ? PS_NAME_MAX : e->len;
    *kind = e->kind;
    *hash = e->hash;
    if (name) memcpy(name, e->name, *len);
    *total = entry_total(e, nfrontends, except);
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&e->seq, memory_order_relaxed) == s1;
}

uint64_t ps_channel_subscribers(ps_shm_t *ps, int kind, const char *name, size_t len,
                                int nfrontends, int except)
{
    if (len > PS_NAME_MAX) return 0;
    uint64_t h = name_hash(kind, name, len);
    uint32_t n;
    ps_entry_t *t = table_of(ps, kind, &n);
    char copy[PS_NAME_MAX];
    for (uint32_t i = 0; i < n; i++) {
        ps_entry_t *e = &t[(h + i) & (n - 1)];
        uint32_t st = atomic_load_explicit(&e->state, memory_order_acquire);
        if (st == 0) return 0;
        if (st != 1 || e->hash != h) continue;
        uint32_t elen, ekind;
        uint64_t eh, total;
        if (!entry_read(e, nfrontends, except, copy, &elen, &ekind, &eh, &total)) continue;
        if (eh == h && ekind == (uint32_t)kind && elen == len && !memcmp(copy, name, len))
            return total;
    }
    return 0;
}

uint64_t ps_pattern_matches(ps_shm_t *ps, const char *chan, size_t len, int nfrontends, int except)
{
    if (!atomic_load_explicit(&ps->npatterns, memory_order_acquire)) return 0;
    uint64_t sum = 0;
    char pat[PS_NAME_MAX];
    for (uint32_t i = 0; i < PS_PAT_SLOTS; i++) {
        ps_entry_t *e = &ps->patterns[i];
        if (atomic_load_explicit(&e->state, memory_order_relaxed) != 1) continue;
        uint32_t plen, kind;
        uint64_t h, total;
        if (!entry_read(e, nfrontends, except, pat, &plen, &kind, &h, &total) || !total) continue;
        if (glob_match(pat, plen, chan, len, 0)) sum += total;
    }
    return sum;
}

void ps_each(ps_shm_t *ps, int kind, int nfrontends, ps_visit_fn *fn, void *arg)
{
    uint32_t n;
    ps_entry_t *t = table_of(ps, kind, &n);
    char name[PS_NAME_MAX];
    for (uint32_t i = 0; i < n; i++) {
        ps_entry_t *e = &t[i];
        if (atomic_load_explicit(&e->state, memory_order_relaxed) != 1) continue;
        uint32_t len, ekind;
        uint64_t h, total;
        if (!entry_read(e, nfrontends, -1, name, &len, &ekind, &h, &total)) continue;
        if (ekind == (uint32_t)kind && total) fn(arg, name, len, total);
    }
}

static void slot_reset_table(ps_shm_t *ps, ps_entry_t *t, uint32_t n, int slot)
{
    for (uint32_t i = 0; i < n; i++) {
        ps_entry_t *e = &t[i];
        if (atomic_load_explicit(&e->state, memory_order_relaxed) != 1) continue;
        atomic_store(&e->count[slot], 0);
        if (entry_unused(e)) entry_free(ps, e);
    }
}

void ps_slot_reset(ps_shm_t *ps, int slot)
{
    pidlock_take(&ps->table_lock);
    slot_reset_table(ps, ps->entries, PS_SLOTS, slot);
    slot_reset_table(ps, ps->patterns, PS_PAT_SLOTS, slot);
    pidlock_release(&ps->table_lock);
    uint32_t gone = atomic_exchange(&ps->monitors[slot], 0);
    if (gone) atomic_fetch_sub(&ps->monitors_total, gone);
}

void ps_monitors_add(ps_shm_t *ps, int slot, int delta)
{
    /* Each slot's count changes only in its own frontend: no lock. */
    atomic_fetch_add(&ps->monitors[slot], (uint32_t)delta);
    atomic_fetch_add(&ps->monitors_total, (uint32_t)delta);
}

int ps_slot_empty(ps_shm_t *ps, int slot)
{
    for (uint32_t i = 0; i < PS_SLOTS; i++)
        if (atomic_load(&ps->entries[i].state) == 1 && atomic_load(&ps->entries[i].count[slot]))
            return 0;
    for (uint32_t i = 0; i < PS_PAT_SLOTS; i++)
        if (atomic_load(&ps->patterns[i].state) == 1 && atomic_load(&ps->patterns[i].count[slot]))
            return 0;
    return 1;
}

/* ---- the broadcast ring ---- */

static void ring_put(ps_shm_t *ps, uint64_t pos, const void *src, size_t n)
{
    size_t off = (size_t)(pos % PS_RING_SIZE), first = PS_RING_SIZE - off;
    if (first > n) first = n;
    memcpy(ps->ring + off, src, first);
    if (n > first) memcpy(ps->ring, (const char *)src + first, n - first);
}

static void ring_get(ps_shm_t *ps, uint64_t pos, void *dst, size_t n)
{
    size_t off = (size_t)(pos % PS_RING_SIZE), first = PS_RING_SIZE - off;
    if (first > n) first = n;
    memcpy(dst, ps->ring + off, first);
    if (n > first) memcpy((char *)dst + first, ps->ring, n - first);
}

uint64_t ps_publish(ps_shm_t *ps, int kind, unsigned origin, const char *chan, size_t chan_len,
                    const char *msg, size_t msg_len)
{
    if (chan_len > PS_MSG_MAX || msg_len > PS_MSG_MAX - chan_len - sizeof(ps_msg_t)) return 0;
    size_t total = (sizeof(ps_msg_t) + chan_len + msg_len + 7) & ~(size_t)7;
    ps_msg_t h = {(uint32_t)total, (uint16_t)kind, (uint16_t)origin, (uint32_t)chan_len,
                  (uint32_t)msg_len};
    pidlock_take(&ps->ring_lock);
    uint64_t pos = atomic_load_explicit(&ps->head, memory_order_relaxed);
    /* Raise `reserved` first: a reader still copying what these bytes
     * overwrite will see it and drop its copy. */
    atomic_store_explicit(&ps->reserved, pos + total, memory_order_seq_cst);
    ring_put(ps, pos, &h, sizeof(h));
    ring_put(ps, pos + sizeof(h), chan, chan_len);
    ring_put(ps, pos + sizeof(h) + chan_len, msg, msg_len);
    atomic_store_explicit(&ps->head, pos + total, memory_order_release);
    pidlock_release(&ps->ring_lock);
    return pos + total;
}

/* 1 while the bytes at [from, ...) were not overwritten since: what was
 * claimed stays within one ring's length of from. */
static int still_there(ps_shm_t *ps, uint64_t from)
{
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&ps->reserved, memory_order_acquire) <= from + PS_RING_SIZE;
}

int ps_read(ps_shm_t *ps, uint64_t *cursor, char **buf, size_t *cap)
{
    uint64_t head = atomic_load_explicit(&ps->head, memory_order_acquire);
    if (*cursor >= head) return 0;
    ps_msg_t h;
    ring_get(ps, *cursor, &h, sizeof(h));
    if (!still_there(ps, *cursor) || h.total < sizeof(h) || h.total > PS_MSG_MAX ||
        (uint64_t)h.chan_len + h.msg_len > h.total - sizeof(h))
        goto lost;
    if (*cap < h.total) {
        char *nb = realloc(*buf, h.total);
        if (!nb) return 0; /* tried again later */
        *buf = nb;
        *cap = h.total;
    }
    ring_get(ps, *cursor, *buf, h.total);
    if (!still_there(ps, *cursor)) goto lost;
    *cursor += h.total;
    return 1;
lost:
    *cursor = atomic_load_explicit(&ps->head, memory_order_acquire);
    return -1;
}
