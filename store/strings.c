/*
 * strings.c - the store's string commands: SET, MSET, INCRBY, APPEND,
 * GETDEL, GET, MGET, STRLEN (state-internal.h). Store process only; apply
 * handlers follow the determinism rules of state.c.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "resp.h"
#include "state-internal.h"
#include "strutil.h"

void st_apply_set(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *key = &a->argv[0];
    uint32_t flags = cmd_get_u32(a->argv[2].ptr);
    int64_t expire_at = cmd_get_i64(a->argv[3].ptr);
    idx_entry_t **slot = st_find_live(a->db, key, ctx->now, 1);
    /* Redis replies GET's old value first, whether or not NX/XX let the
     * SET happen. */
    if ((flags & SETF_GET) && r) {
        if (slot)
            st_reply_value(ctx, *slot, r);
        else
            resp_null(r);
    }
    if (((flags & SETF_NX) && slot) || ((flags & SETF_XX) && !slot)) {
        if (!(flags & SETF_GET) && r) resp_null(r);
        return;
    }
    if (!expire_at && (flags & SETF_KEEPTTL) && slot) expire_at = (*slot)->expire_at_ms;
    st_ent_store(a->db, slot, st_ent_new(key, &a->argv[1], st_arg_lsn(a, 1), expire_at));
    st_key_changed(ctx, a, a->dbnum, key);
    if (!(flags & SETF_GET) && r) resp_simple(r, "OK");
}

void st_apply_mset(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    for (uint16_t i = 0; i + 1 < a->argc; i += 2) {
        idx_entry_t **slot = st_find_live(a->db, &a->argv[i], ctx->now, 1);
        st_ent_store(a->db, slot, st_ent_new(&a->argv[i], &a->argv[i + 1], st_arg_lsn(a, i + 1), 0));
        st_key_changed(ctx, a, a->dbnum, &a->argv[i]);
    }
    if (r) resp_simple(r, "OK");
}

void st_apply_incrby(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *key = &a->argv[0];
    long long delta = cmd_get_i64(a->argv[1].ptr), value = 0;
    idx_entry_t **slot = st_find_live(a->db, key, ctx->now, 1);
    if (slot) {
        idx_entry_t *e = *slot;
        /* A value longer than 24 bytes cannot be an integer (20 at most). */
        if (e->vkind != VK_INLINE || str_to_ll((const char *)st_ent_inline(e), e->ilen, &value)) {
            if (r) resp_error(r, "ERR value is not an integer or out of range");
            return;
        }
    }
    if ((delta < 0 && value < 0 && delta < LLONG_MIN - value) ||
        (delta > 0 && value > 0 && delta > LLONG_MAX - value)) {
        if (r) resp_error(r, "ERR increment or decrement would overflow");
        return;
    }
    value += delta;
    char num[32];
    rec_arg_t val = {(const unsigned char *)num, (uint32_t)str_from_ll(num, value)};
    /* INCR keeps the key's TTL, as Redis' dbOverwrite does. */
    st_ent_store(a->db, slot, st_ent_new(key, &val, 0, slot ? (*slot)->expire_at_ms : 0));
    st_key_changed(ctx, a, a->dbnum, key);
    if (r) resp_integer(r, value);
}

void st_apply_append(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    const rec_arg_t *key = &a->argv[0], *val = &a->argv[1];
    uint64_t val_lsn = st_arg_lsn(a, 1);
    idx_entry_t **slot = st_find_live(a->db, key, ctx->now, 1);
    if (!slot) {
        st_ent_store(a->db, NULL, st_ent_new(key, val, val_lsn, 0));
        st_key_changed(ctx, a, a->dbnum, key);
        if (r) resp_integer(r, val->len);
        return;
    }
    idx_entry_t *e = *slot;
    uint64_t old_len = st_ent_vlen(e), total = old_len + val->len;
    /* Redis' checkStringLength. The limit is part of the state machine:
     * replay must run with the same proto-max-bulk-len to refuse the same
     * APPENDs. */
    if (ctx->max_bulk > 0 && total > (uint64_t)ctx->max_bulk) {
        if (r) resp_error(r, "ERR string exceeds maximum allowed size (proto-max-bulk-len)");
        return;
    }
    st_key_changed(ctx, a, a->dbnum, key); /* even an empty APPEND, as Redis */
    if (val->len == 0) {
        if (r) resp_integer(r, (long long)total);
        return;
    }
    if (e->vkind == VK_INLINE && total <= STORE_INLINE_MAX) {
        uint8_t old = e->ilen;
        e = st_ent_resize(a->db, slot, (uint8_t)total, VK_INLINE);
        memcpy(st_ent_inline(e) + old, val->ptr, val->len);
    } else if (e->vkind == VK_INLINE) {
        /* The inline bytes stay as the prefix; the new bytes stay in the log. */
        e = st_ent_resize(a->db, slot, e->ilen, VK_EXTENT);
        st_ent_set_ext1(e, val_lsn, val->len);
    } else if (e->vkind == VK_EXTENT) {
        uint64_t lsn;
        uint32_t len;
        st_ent_get_ext1(e, &lsn, &len);
        ext_list_t *l = st_xmalloc(sizeof(*l) + 4 * sizeof(store_extent_t));
        l->cap = 4;
        l->n = 2;
        l->ext[0] = (store_extent_t){lsn, len};
        l->ext[1] = (store_extent_t){val_lsn, val->len};
        l->ext_bytes = (uint64_t)len + val->len;
        e = st_ent_resize(a->db, slot, e->ilen, VK_LIST);
        st_ent_set_list(e, l);
        ctx->entry_bytes += sizeof(*l) + l->cap * sizeof(store_extent_t);
    } else {
        ext_list_t *l = st_ent_list(e);
        if (l->n == l->cap) {
            ctx->entry_bytes += l->cap * sizeof(store_extent_t);
            l = st_xrealloc(l, sizeof(*l) + 2 * (size_t)l->cap * sizeof(store_extent_t));
            l->cap *= 2;
            st_ent_set_list(e, l);
        }
        l->ext[l->n++] = (store_extent_t){val_lsn, val->len};
        l->ext_bytes += val->len;
    }
    if (r) resp_integer(r, (long long)total);
}

void st_apply_getdel(store_ctx_t *ctx, const apply_args_t *a, buf_t *r)
{
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], ctx->now, 1);
    if (!slot) {
        if (r) resp_null(r);
        return;
    }
    if (r) st_reply_value(ctx, *slot, r);
    st_remove(a->db, slot);
    st_key_changed(ctx, a, a->dbnum, &a->argv[0]);
}

/* ---- reads ---------------------------------------------------------- */

void st_read_get(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], a->now, 0);
    if (slot)
        st_reply_value(ctx, *slot, r);
    else
        resp_null(r);
}

void st_read_mget(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    size_t mark = r->len;
    resp_array(r, a->argc);
    for (uint16_t i = 0; i < a->argc; i++) {
        idx_entry_t **slot = st_find_live(a->db, &a->argv[i], a->now, 0);
        if (slot)
            st_reply_value(ctx, *slot, r);
        else
            resp_null(r);
        if (ctx->max_reply && r->len - mark > ctx->max_reply) {
            r->len = mark;
            resp_error(r, STORE_ERR_TOO_LARGE);
            break;
        }
    }
}

void st_read_strlen(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    (void)ctx;
    idx_entry_t **slot = st_find_live(a->db, &a->argv[0], a->now, 0);
    resp_integer(r, slot ? (long long)st_ent_vlen(*slot) : 0);
}
