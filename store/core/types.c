/*
 * types.c - the table of collection types (object.h): st_type_ops(t) finds
 * a type's operations by its number, which is how a checkpoint being read
 * (it holds type numbers, not pointers) finds the reader of an entry;
 * and what is common to the types: their names, whether one is empty.
 * Store process only; holds no state.
 */
#include <stddef.h>

#include "hash.h"
#include "list.h"
#include "object.h"
#include "stream.h"
#include "zset.h"

static const st_type_ops_t *const types[ST__NTYPES] = {
    [ST_HASH] = &st_hash_ops, [ST_LIST] = &st_list_ops,     [ST_SET] = &st_set_ops,
    [ST_ZSET] = &st_zset_ops, [ST_STREAM] = &st_stream_ops,
};

const st_type_ops_t *st_type_ops(unsigned t)
{
    return t < ST__NTYPES ? types[t] : NULL;
}

int st_ent_emptied(idx_entry_t *e)
{
    switch (st_ent_type(e)) {
    case ST_HASH:
    case ST_SET:
        return st_hash_len(st_ent_hash(e)) == 0;
    case ST_LIST:
        return st_list_len(st_ent_list(e)) == 0;
    case ST_ZSET:
        return st_zset_len(st_ent_zset(e)) == 0;
    default:
        return 0;
    }
}

const char *st_type_name_of(unsigned t)
{
    static const char *const names[ST__NTYPES] = {"string", "hash", "list",
                                                  "set",    "zset", "stream"};
    return t < ST__NTYPES ? names[t] : "none";
}

const char *st_type_name(const idx_entry_t *e)
{
    return st_type_name_of(st_ent_type(e));
}
