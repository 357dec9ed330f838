/*
 * test_stream_core.c - the stream type (store/core/stream.c) and its
 * commands in the store (store/types/t_stream.c), driven record by record
 * through the store harness (store_harness.h): "*" IDs from the record's
 * time (and from the last ID when that time goes backwards), explicit and
 * ms-* IDs, trimming, XDEL's counters, XSETID, WRONGTYPE, RAM accounting
 * back to zero, replay reaching the same digest and replies, and the
 * checkpoint hooks round-tripping a stream (a cut stream refused).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "store/core/entry.h"
#include "store/core/index.h"
#include "store/core/object.h"
#include "store/core/stream.h"
#include "store/store-internal.h"
#include "store_harness.h"

#define T0 1000000

#define wr(t, id, ...)   sh_wr((t), (id), __VA_ARGS__)
#define rd(now, id, ...) sh_rd((now), 0, (id), __VA_ARGS__)

#define WT "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"

static void setup(void)
{
    sh_setup("streams", 0, 42);
}

TestSuite(streams, .init = setup, .fini = sh_teardown, .timeout = 240);

static idx_entry_t *entry(const char *key)
{
    idx_entry_t **slot = idx_find(&ctx->dbs[0]->ix, key, (uint32_t)strlen(key));
    return slot ? *slot : NULL;
}

Test(streams, star_ids_come_from_the_record_time)
{
    cr_assert_str_eq(wr(T0, CMD_XADD, "s", "*", "f", "v", NULL), "$9\r\n1000000-0\r\n");
    cr_assert_str_eq(wr(T0, CMD_XADD, "s", "*", "f", "v", NULL), "$9\r\n1000000-1\r\n");
    cr_assert_str_eq(wr(T0 + 5, CMD_XADD, "s", "*", "f", "v", NULL), "$9\r\n1000005-0\r\n");
    /* The clock goes backwards: the last ID's ms, seq + 1, as Redis. */
    cr_assert_str_eq(wr(T0 - 50, CMD_XADD, "s", "*", "f", "v", NULL), "$9\r\n1000005-1\r\n");
    cr_assert_str_eq(wr(T0, CMD_XADD, "s", "2000000-*", "f", "v", NULL), "$9\r\n2000000-0\r\n");
    cr_assert_str_eq(wr(T0, CMD_XADD, "s", "2000000-*", "f", "v", NULL), "$9\r\n2000000-1\r\n");
    cr_assert_str_eq(wr(T0, CMD_XADD, "s", "1-*", "f", "v", NULL),
                     "-ERR The ID specified in XADD is equal or smaller than the target stream "
                     "top item\r\n");
    cr_assert_str_eq(rd(T0, CMD_XLEN, "s", NULL), ":6\r\n");
    cr_assert_str_eq(rd(T0, CMD_XRANGE, "s", "(1000005-0", "1000005", NULL),
                     "*1\r\n*2\r\n$9\r\n1000005-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n");
    cr_assert_str_eq(rd(T0, CMD_XREVRANGE, "s", "+", "-", "COUNT", "1", NULL),
                     "*1\r\n*2\r\n$9\r\n2000000-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n");
    sh_check_replay("streams");
}

Test(streams, trim_delete_setid_and_counters)
{
    char id[32];
    for (int i = 1; i <= 250; i++) {
        snprintf(id, sizeof(id), "%d-1", i);
        wr(T0, CMD_XADD, "s", id, "field", "value", NULL);
    }
    cr_assert_str_eq(wr(T0, CMD_XTRIM, "s", "MAXLEN", "~", "100", NULL), ":100\r\n",
                     "approximate: whole blocks of 100");
    cr_assert_str_eq(wr(T0, CMD_XTRIM, "s", "MAXLEN", "=", "100", NULL), ":50\r\n");
    cr_assert_str_eq(wr(T0, CMD_XTRIM, "s", "MINID", "160", NULL), ":9\r\n");
    cr_assert_str_eq(rd(T0, CMD_XLEN, "s", NULL), ":91\r\n");
    cr_assert_str_eq(wr(T0, CMD_XDEL, "s", "170-1", "170-1", "9999-0", NULL), ":1\r\n");
    cr_assert_str_eq(wr(T0, CMD_XDEL, "s", "x", NULL),
                     "-ERR Invalid stream ID specified as stream command argument\r\n");
    st_stream_t *s = st_ent_stream(entry("s"));
    const st_stream_meta_t *m = st_stream_meta_c(s);
    cr_assert_eq(m->entries_added, 250);
    cr_assert_eq(m->max_deleted.ms, 170);
    cr_assert_eq(m->last_id.ms, 250);
    cr_assert_eq(st_stream_len(s), 90);
    cr_assert_str_eq(wr(T0, CMD_XSETID, "s", "100", NULL),
                     "-ERR The ID specified in XSETID is smaller than the target stream top "
                     "item\r\n");
    cr_assert_str_eq(wr(T0, CMD_XSETID, "s", "300-0", "ENTRIESADDED", "10", NULL),
                     "-ERR The entries_added specified in XSETID is smaller than the target "
                     "stream length\r\n");
    cr_assert_str_eq(
        wr(T0, CMD_XSETID, "s", "300-0", "ENTRIESADDED", "1000", "MAXDELETEDID", "299", NULL),
        "+OK\r\n");
    cr_assert_eq(m->entries_added, 1000);
    cr_assert_eq(m->max_deleted.ms, 299);
    cr_assert_str_eq(wr(T0, CMD_XADD, "s", "300-*", "a", "b", NULL), "$5\r\n300-1\r\n");
    cr_assert_str_eq(wr(T0, CMD_XADD, "s", "NOMKSTREAM", "MAXLEN", "0", "*", "a", "b", NULL),
                     "$9\r\n1000000-0\r\n");
    cr_assert_eq(st_stream_len(s), 0, "MAXLEN 0 empties the stream, which stays");
    cr_assert_not_null(entry("s"));
    cr_assert_str_eq(wr(T0, CMD_XADD, "n", "NOMKSTREAM", "*", "a", "b", NULL), "$-1\r\n");
    cr_assert_null(entry("n"));
    sh_check_replay("streams");
}

Test(streams, wrongtype_and_accounting)
{
    wr(T0, CMD_SET, "str", "v", "#u32:0", "#i64:0", NULL);
    cr_assert_str_eq(wr(T0, CMD_XADD, "str", "*", "a", "b", NULL), WT);
    cr_assert_str_eq(wr(T0, CMD_XDEL, "str", "1", NULL), WT);
    cr_assert_str_eq(wr(T0, CMD_XTRIM, "str", "MAXLEN", "1", NULL), WT);
    cr_assert_str_eq(wr(T0, CMD_XSETID, "str", "1", NULL), WT);
    cr_assert_str_eq(rd(T0, CMD_XLEN, "str", NULL), WT);
    cr_assert_str_eq(rd(T0, CMD_XRANGE, "str", "-", "+", NULL), WT);
    wr(T0, CMD_DEL, "str", NULL);
    cr_assert_eq(ctx->entry_bytes, 0);
    wr(T0, CMD_XADD, "s", "1", "a", "b", "c", "d", NULL);
    wr(T0, CMD_XADD, "s", "2", "a", "b", NULL);
    cr_assert_gt(ctx->entry_bytes, 0);
    wr(T0, CMD_XDEL, "s", "1", NULL);
    wr(T0, CMD_DEL, "s", NULL);
    cr_assert_eq(ctx->entry_bytes, 0, "RAM accounting back to zero");
    cr_assert_str_eq(rd(T0, CMD_TYPE, "s", NULL), "+none\r\n");
    wr(T0, CMD_XADD, "s", "5", "a", "b", NULL);
    cr_assert_str_eq(rd(T0, CMD_TYPE, "s", NULL), "+stream\r\n");
    sh_check_replay("streams");
}

Test(streams, checkpoint_round_trip)
{
    char big[300];
    memset(big, 'q', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    wr(T0, CMD_XADD, "s", "1-1", "f", big, "", "", NULL);
    wr(T0, CMD_XADD, "s", "2-1", "g", "h", NULL);
    wr(T0, CMD_XDEL, "s", "2-1", NULL);
    wr(T0, CMD_XADD, "s", "3-1", "i", "j", NULL);
    idx_entry_t *e = entry("s");
    buf_t b;
    buf_init(&b);
    st_stream_ops.ckpt_write(st_ent_obj(e), &b);
    st_obj_t *o = NULL;
    cr_assert_eq(st_stream_ops.ckpt_read((const unsigned char *)b.data, b.len, &o), (long)b.len);
    uint64_t d0, d1;
    cr_assert_eq(st_stream_ops.digest(ctx, st_ent_obj(e), &d0), 0);
    cr_assert_eq(st_stream_ops.digest(ctx, o, &d1), 0);
    cr_assert_eq(d0, d1, "read back as written");
    cr_assert_eq(st_stream_ops.mem_usage(o), st_stream_ops.mem_usage(st_ent_obj(e)));
    const st_stream_meta_t *m = st_stream_meta_c((st_stream_t *)o);
    cr_assert_eq(m->max_deleted.ms, 2);
    cr_assert_eq(m->entries_added, 3);
    for (size_t cut = 0; cut < b.len; cut++) {
        st_obj_t *x = NULL;
        cr_assert_eq(st_stream_ops.ckpt_read((const unsigned char *)b.data, cut, &x), -1,
                     "a cut stream is refused (%zu)", cut);
    }
    st_obj_t *c = st_stream_ops.dup(o);
    cr_assert_eq(st_stream_ops.digest(ctx, c, &d1), 0);
    cr_assert_eq(d0, d1, "a copy digests the same");
    st_stream_ops.free(c);
    st_stream_ops.free(o);
    buf_free(&b);
    cr_assert_str_eq(st_stream_ops.encoding(st_ent_obj(e)), "stream");
    sh_check_replay("streams");
}
