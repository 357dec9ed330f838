/*
 * groups.c - the pending value groups table (groups.h, D31): chunk records
 * of a large value are kept as PIECE_LOG pieces keyed by group until a
 * final record takes them (made visible as a whole) or they are abandoned
 * (the client left, or the writing frontend died: an explicit CMD_BIGABORT
 * record, so replay drops it at the same point).
 *
 * Store process only (and tests); single-threaded. Pending groups are few
 * (one per client streaming a large value), so the table is an unordered
 * array searched linearly. Invariant: every log byte a pending group refers
 * to is counted once in t->live, and uncounted when the group is taken or
 * dropped. A crash loses nothing: the table is rebuilt by replay.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "groups.h"

void st_groups_init(st_groups_t *t, st_live_t *live)
{
    memset(t, 0, sizeof(*t));
    t->live = live;
}

static void count(st_live_t *live, const st_pieces_t *l, int sign)
{
    if (!live) return;
    for (uint32_t i = 0; i < l->n; i++)
        st_live_add(live, l->p[i].where, st_piece_end(&l->p[i]) - st_piece_start(l, i), sign);
}

static void uncount(st_groups_t *t, const st_pieces_t *l)
{
    count(t->live, l, -1);
}

void st_groups_count(const st_groups_t *t, st_live_t *live)
{
    for (uint32_t i = 0; i < t->n; i++)
        count(live, t->g[i].l, +1);
}

static int find(const st_groups_t *t, uint64_t id)
{
    for (uint32_t i = 0; i < t->n; i++)
        if (t->g[i].id == id) return (int)i;
    return -1;
}

static void remove_at(st_groups_t *t, uint32_t i)
{
    t->g[i] = t->g[--t->n];
}

void st_groups_free(st_groups_t *t)
{
    for (uint32_t i = 0; i < t->n; i++) {
        uncount(t, t->g[i].l);
        st_pieces_free(t->g[i].l);
    }
    free(t->g);
    memset(t, 0, sizeof(*t));
}

static st_group_t *add(st_groups_t *t, uint64_t id, uint64_t owner, uint32_t next_seq,
                       st_pieces_t *l)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 4;
        t->g = st_xrealloc(t->g, (size_t)t->cap * sizeof(*t->g));
    }
    st_group_t *g = &t->g[t->n++];
    *g = (st_group_t){id, owner, next_seq, 0, l};
    return g;
}

int st_groups_restore(st_groups_t *t, uint64_t id, uint64_t owner, uint32_t next_seq,
                      st_pieces_t *l)
{
    if (find(t, id) >= 0) {
        st_pieces_free(l);
        return -1;
    }
    count(t->live, add(t, id, owner, next_seq, l)->l, +1);
    return 0;
}

int st_groups_chunk(st_groups_t *t, uint64_t id, uint64_t owner, uint32_t seq, uint64_t lsn,
                    uint32_t len)
{
    if (!len) return -1;
    int i = find(t, id);
    if (seq == 0) {
        if (i >= 0) return -1;
        add(t, id, owner, 0, st_pieces_new(4));
        i = (int)t->n - 1;
    } else if (i < 0 || t->g[i].next_seq != seq || t->g[i].owner != owner) {
        return -1;
    }
    st_group_t *g = &t->g[i];
    uint64_t end = st_pieces_len(g->l);
    g->l = st_pieces_splice(g->l, end, end, PIECE_LOG, lsn, len);
    g->next_seq = seq + 1;
    if (t->live) st_live_add(t->live, lsn, len, +1);
    return 0;
}

st_pieces_t *st_groups_take(st_groups_t *t, uint64_t id)
{
    int i = find(t, id);
    if (i < 0) return NULL;
    st_pieces_t *l = t->g[i].l;
    uncount(t, l);
    remove_at(t, (uint32_t)i);
    return l;
}

void st_groups_drop(st_groups_t *t, uint64_t id)
{
    st_pieces_t *l = st_groups_take(t, id);
    if (l) st_pieces_free(l);
}

uint64_t st_groups_len(const st_groups_t *t, uint64_t id)
{
    int i = find(t, id);
    return i < 0 ? 0 : st_pieces_len(t->g[i].l);
}

void st_groups_split(st_pieces_t *l, st_bigval_t *v, uint32_t n)
{
    uint64_t total = st_pieces_len(l);
    if (n == 1 && v[0].off == 0 && v[0].len == total) {
        v[0].l = l;
        return;
    }
    /* Group lists hold only log pieces: a value's part of a piece is the
     * same log bytes from a later LSN. */
    for (uint32_t k = 0; k < n; k++) {
        uint64_t lo = v[k].off, hi = lo + v[k].len;
        uint32_t i = st_pieces_find(l, lo), j = st_pieces_find(l, hi - 1);
        st_pieces_t *out = st_pieces_new(j - i + 1);
        for (uint32_t t = i; t <= j; t++) {
            uint64_t s = st_piece_start(l, t), e = st_piece_end(&l->p[t]);
            uint64_t from = s > lo ? s : lo, to = e < hi ? e : hi;
            out = st_pieces_splice(out, from - lo, from - lo, PIECE_LOG, l->p[t].where + (from - s),
                                   to - from);
        }
        v[k].l = out;
    }
    st_pieces_free(l);
}
