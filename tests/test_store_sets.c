/*
 * test_store_sets.c - the store's set type (store/types/t_set.c on
 * core/hash.c's structure) through the store harness: encodings (intset,
 * hashtable), SPOP's members chosen from the record's LSN so that replay
 * removes the same ones (same digest, same replies), the STORE forms, and
 * the checkpoint hooks for sets.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "command.h"
#include "store/core/entry.h"
#include "store/core/hash.h"
#include "store/core/index.h"
#include "store/core/object.h"
#include "store/store-internal.h"
#include "store_harness.h"

#define T0 1000000

#define wr(t, id, ...)   sh_wr((t), (id), __VA_ARGS__)
#define rd(now, id, ...) sh_rd((now), 0, (id), __VA_ARGS__)
#define MAX              "#i64:512"

static void setup(void)
{
    sh_setup("sets", 0, 42);
    sh_canonical_only = 1;
}

TestSuite(sets, .init = setup, .fini = sh_teardown, .timeout = 120);

static const char *encoding(const char *key)
{
    return rd(T0, CMD_OBJECT, "encoding", key, NULL);
}

Test(sets, encodings_and_order)
{
    cr_assert_str_eq(wr(T0, CMD_SADD, "i", MAX, "3", "-1", "2", "3", NULL), ":3\r\n");
    cr_assert_str_eq(encoding("i"), "$6\r\nintset\r\n");
    cr_assert_str_eq(rd(T0, CMD_SMEMBERS, "i", NULL), "*3\r\n$2\r\n-1\r\n$1\r\n2\r\n$1\r\n3\r\n",
                     "an intset lists in integer order");
    wr(T0, CMD_SADD, "i", MAX, "x", NULL);
    cr_assert_str_eq(encoding("i"), "$9\r\nhashtable\r\n");
    wr(T0, CMD_SADD, "w", MAX, "01", "1", NULL);
    cr_assert_str_eq(encoding("w"), "$9\r\nhashtable\r\n", "01 is no integer: a table at once");
    wr(T0, CMD_SADD, "few", "#i64:2", "1", "2", NULL);
    cr_assert_str_eq(encoding("few"), "$6\r\nintset\r\n");
    wr(T0, CMD_SADD, "few", "#i64:2", "3", NULL);
    cr_assert_str_eq(encoding("few"), "$9\r\nhashtable\r\n");
    cr_assert_str_eq(rd(T0, CMD_TYPE, "few", NULL), "+set\r\n");
    cr_assert_str_eq(wr(T0, CMD_SREM, "few", "1", "2", "3", "4", NULL), ":3\r\n");
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "few", NULL), ":0\r\n");
    sh_check_replay("sets");
}

/* Random writes over four small sets, SPOP in the form `spop` (CMD_SPOP,
 * the older records', or CMD_SPOP_AT), then a replay into contexts of other
 * seeds (other table layouts): the same state and the same replies. */
static void random_sequence(uint16_t spop)
{
    uint64_t s = 99;
    for (int i = 0; i < 3000; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        unsigned r = (unsigned)(s >> 33);
        char key[8], key2[8], m[16], cnt[32];
        snprintf(key, sizeof(key), "s%u", r % 4);
        snprintf(key2, sizeof(key2), "s%u", (r >> 3) % 4);
        if ((r >> 6) % 5)
            snprintf(m, sizeof(m), "%u", (r >> 9) % 50);
        else
            snprintf(m, sizeof(m), "m%u", (r >> 9) % 50);
        snprintf(cnt, sizeof(cnt), "#i64:%d", (int)((r >> 16) % 6) - 1);
        switch ((r >> 20) % 8) {
        case 0:
        case 1:
        case 2:
            wr(T0 + i, CMD_SADD, key, "#i64:20", m, NULL);
            break;
        case 3:
            wr(T0 + i, spop, key, cnt, "#u32:0", NULL);
            break;
        case 4:
            if ((r >> 30) & 1)
                wr(T0 + i, CMD_SREM, key, m, NULL);
            else
                wr(T0 + i, CMD_SMOVE, key, key2, m, MAX, NULL);
            break;
        case 5:
            wr(T0 + i, CMD_SINTERSTORE, "dst", MAX, key, key2, NULL);
            break;
        case 6:
            wr(T0 + i, CMD_SUNIONSTORE, key2, MAX, key, key2, NULL);
            break;
        default:
            wr(T0 + i, CMD_SDIFFSTORE, "dst", MAX, key, key2, NULL);
            break;
        }
    }
    sh_check_replay("sets");
}

Test(sets, random_sequence_with_spop_replays_alike)
{
    random_sequence(CMD_SPOP_AT);
}

Test(sets, random_sequence_with_the_older_spop_replays_alike)
{
    random_sequence(CMD_SPOP);
}

/* The set at key in database 0. */
static st_hash_t *set_at(const char *key)
{
    idx_entry_t **slot = idx_find(&ctx->dbs[0]->ix, key, (uint32_t)strlen(key));
    cr_assert_not_null(slot, "set %s", key);
    return st_ent_hash(*slot);
}

/* SPOP picks by position in the members' order (D62): that order must come
 * back from a checkpoint and from COPY, after removals have moved members
 * around, or a replay from a checkpoint would pop other members. */
Test(sets, a_hashtables_order_survives_checkpoints_and_copies)
{
    char m[16];
    for (int i = 0; i < 300; i++) {
        snprintf(m, sizeof(m), "m%d", i);
        wr(T0, CMD_SADD, "h", MAX, m, NULL);
    }
    for (int i = 0; i < 300; i += 7) { /* each moves the last member into its place */
        snprintf(m, sizeof(m), "m%d", i);
        wr(T0, CMD_SREM, "h", m, NULL);
    }
    wr(T0, CMD_SPOP_AT, "h", "#i64:20", "#u32:0", NULL);
    st_hash_t *h = set_at("h");
    cr_assert(st_hash_is_table(h));
    const st_type_ops_t *ops = st_type_ops(ST_SET);
    buf_t b;
    buf_init(&b);
    ops->ckpt_write((st_obj_t *)h, &b);
    st_obj_t *back = NULL;
    cr_assert_eq(ops->ckpt_read((const unsigned char *)b.data, b.len, &back), (long)b.len);
    st_obj_t *copy = ops->dup((st_obj_t *)h);
    uint32_t n = st_hash_len(h);
    cr_assert_eq(n, 300 - 43 - 20);
    cr_assert_eq(st_hash_len((st_hash_t *)back), n);
    for (uint32_t i = 0; i < n; i++) {
        idx_entry_t *a = st_hash_at(h, i), *c = st_hash_at((st_hash_t *)back, i),
                    *d = st_hash_at((st_hash_t *)copy, i);
        cr_assert(a && c && d);
        cr_assert(a->klen == c->klen && memcmp(a->data, c->data, a->klen) == 0,
                  "member %u after a checkpoint", i);
        cr_assert(a->klen == d->klen && memcmp(a->data, d->data, a->klen) == 0,
                  "member %u of a copy", i);
        cr_assert_not_null(st_hash_find(h, a->data, a->klen));
    }
    ops->free(back);
    ops->free(copy);
    buf_free(&b);
}

/* SPOP without a count, from sets of four members at 400 LSNs: every
 * member is taken about as often (a pick fixed to one place would not). */
Test(sets, spop_picks_every_member)
{
    const char *names[] = {"a", "b", "c", "d"};
    int seen[4] = {0};
    for (int i = 0; i < 400; i++) {
        wr(T0, CMD_SADD, "p", MAX, "a", "b", "c", "d", NULL);
        const char *got = wr(T0, CMD_SPOP_AT, "p", "#i64:-1", "#u32:0", NULL);
        for (int k = 0; k < 4; k++) {
            char want[16];
            snprintf(want, sizeof(want), "$1\r\n%s\r\n", names[k]);
            if (strcmp(got, want) == 0) seen[k]++;
        }
        wr(T0, CMD_DEL, "p", NULL);
    }
    for (int k = 0; k < 4; k++)
        cr_assert(seen[k] > 60, "member %s popped %d times of 400", names[k], seen[k]);
    cr_assert_eq(seen[0] + seen[1] + seen[2] + seen[3], 400);
    /* A count of the size or more: every member, and the key goes. */
    wr(T0, CMD_SADD, "p", MAX, "x", "y", NULL);
    cr_assert_str_eq(wr(T0, CMD_SPOP_AT, "p", "#i64:5", "#u32:0", NULL),
                     "*2\r\n$1\r\nx\r\n$1\r\ny\r\n");
    cr_assert_str_eq(rd(T0, CMD_EXISTS, "p", NULL), ":0\r\n");
    sh_check_replay("sets");
}

Test(sets, checkpoint_round_trip)
{
    wr(T0, CMD_SADD, "i", MAX, "5", "1", "9", NULL);
    wr(T0, CMD_SADD, "h", MAX, "a", "b", "1", NULL);
    const char *keys[] = {"i", "h"};
    for (int k = 0; k < 2; k++) {
        idx_entry_t **slot = idx_find(&ctx->dbs[0]->ix, keys[k], 1);
        cr_assert_not_null(slot);
        st_obj_t *o = st_ent_obj(*slot);
        const st_type_ops_t *ops = st_type_ops(ST_SET);
        cr_assert_eq(o->ops, ops);
        buf_t b1, b2;
        buf_init(&b1);
        buf_init(&b2);
        ops->ckpt_write(o, &b1);
        st_obj_t *copy = NULL;
        cr_assert_eq(ops->ckpt_read((const unsigned char *)b1.data, b1.len, &copy), (long)b1.len);
        ops->ckpt_write(copy, &b2);
        cr_assert(b1.len == b2.len && memcmp(b1.data, b2.data, b1.len) == 0);
        cr_assert_str_eq(ops->encoding(o), ops->encoding(copy));
        uint64_t d1, d2;
        ops->digest(ctx, o, &d1);
        ops->digest(ctx, copy, &d2);
        cr_assert_eq(d1, d2);
        ops->free(copy);
        buf_free(&b1);
        buf_free(&b2);
    }
}

/* SINTERCARD numkeys key... [LIMIT n]: the count, stopped at LIMIT (0 =
 * none), 0 when a key is missing; numkeys, option and type errors in
 * Redis' order and words. */
Test(sets, sintercard)
{
    wr(T0, CMD_SADD, "a", MAX, "1", "2", "3", "4", NULL);
    wr(T0, CMD_SADD, "b", MAX, "2", "3", "4", "5", "x", NULL);
    wr(T0, CMD_SET, "s", "v", "#u32:0", "#i64:0", NULL);
    cr_expect_str_eq(rd(T0, CMD_SINTERCARD, "2", "a", "b", NULL), ":3\r\n");
    cr_expect_str_eq(rd(T0, CMD_SINTERCARD, "1", "b", NULL), ":5\r\n");
    cr_expect_str_eq(rd(T0, CMD_SINTERCARD, "2", "a", "b", "LIMIT", "2", NULL), ":2\r\n");
    cr_expect_str_eq(rd(T0, CMD_SINTERCARD, "2", "a", "b", "limit", "0", NULL), ":3\r\n");
    cr_expect_str_eq(rd(T0, CMD_SINTERCARD, "1", "a", "LIMIT", "1", "LIMIT", "9", NULL), ":4\r\n",
                     "the last LIMIT counts");
    cr_expect_str_eq(rd(T0, CMD_SINTERCARD, "2", "a", "nokey", NULL), ":0\r\n");
    cr_expect_str_eq(rd(T0, CMD_SINTERCARD, "2", "nokey", "s", NULL),
                     "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
                     "every key's type is checked, a missing one before it or not");
    cr_expect_str_eq(rd(T0, CMD_SINTERCARD, "0", "a", NULL),
                     "-ERR numkeys should be greater than 0\r\n");
    cr_expect_str_eq(rd(T0, CMD_SINTERCARD, "x", "a", NULL),
                     "-ERR numkeys should be greater than 0\r\n");
    cr_expect_str_eq(rd(T0, CMD_SINTERCARD, "3", "a", "b", NULL),
                     "-ERR Number of keys can't be greater than number of args\r\n");
    cr_expect_str_eq(rd(T0, CMD_SINTERCARD, "2", "a", "b", "LIMIT", NULL), "-ERR syntax error\r\n");
    cr_expect_str_eq(rd(T0, CMD_SINTERCARD, "2", "a", "b", "foo", "1", NULL),
                     "-ERR syntax error\r\n");
    cr_expect_str_eq(rd(T0, CMD_SINTERCARD, "2", "a", "b", "LIMIT", "-1", NULL),
                     "-ERR LIMIT can't be negative\r\n");
    cr_expect_str_eq(rd(T0, CMD_SINTERCARD, "1", "s", "LIMIT", "x", NULL),
                     "-ERR LIMIT can't be negative\r\n", "options before types");
}
