/*
 * types.c - the table of collection types (object.h): st_type_ops(t) finds
 * a type's operations by its number, which is how a checkpoint being read
 * (it holds type numbers, not pointers) finds the reader of an entry.
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
