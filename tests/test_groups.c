/*
 * test_groups.c - the pending value groups table (store/core/groups.c,
 * D31): chunks in order make one piece list of LOG pieces, out-of-order or
 * reopened chunks are refused, groups interleave, and the live-bytes table
 * counts exactly the pending parts (nothing once taken or dropped).
 */
#include <criterion/criterion.h>

#include "store/core/groups.h"

#define SEG (UINT64_C(1) << 20)
#define OWN st_group_owner(1, 4242)

static st_live_t live;
static st_groups_t t;

static void setup(void)
{
    st_live_init(&live, SEG);
    st_groups_init(&t, &live);
}

static void teardown(void)
{
    st_groups_free(&t);
    st_live_free(&live);
}

TestSuite(groups, .init = setup, .fini = teardown);

Test(groups, parts_then_take_is_the_value)
{
    uint64_t id = 960;
    cr_assert_eq(st_groups_chunk(&t, id, OWN, 0, 1000, 100), 0);
    cr_assert_eq(st_groups_chunk(&t, id, OWN, 1, 5000, 50), 0);
    cr_assert_eq(st_groups_chunk(&t, id, OWN, 2, SEG + 10, 30), 0);
    cr_assert_eq(st_groups_len(&t, id), 180);
    cr_assert_eq(live.total, 180);
    st_pieces_t *l = st_groups_take(&t, id);
    cr_assert_not_null(l);
    cr_assert_eq(st_pieces_len(l), 180);
    cr_assert_eq(l->n, 3);
    cr_assert_eq(l->p[0].where, 1000);
    cr_assert_eq(l->p[1].where, 5000);
    cr_assert_eq(l->p[2].where, SEG + 10);
    for (uint32_t i = 0; i < l->n; i++)
        cr_assert_eq(st_piece_kind(&l->p[i]), PIECE_LOG);
    cr_assert_eq(l->ram_bytes, 0, "no byte copied to RAM");
    cr_assert_eq(live.total, 0, "taken: the caller counts it now");
    cr_assert_null(st_groups_take(&t, id), "taken once");
    st_pieces_free(l);
}

Test(groups, parts_without_final_are_dropped)
{
    uint64_t id = 64;
    cr_assert_eq(st_groups_chunk(&t, id, OWN, 0, 64, 10), 0);
    cr_assert_eq(st_groups_chunk(&t, id, OWN, 1, 128, 10), 0);
    cr_assert_eq(st_live_get(&live, 0), 20);
    st_groups_drop(&t, id);
    cr_assert_eq(live.total, 0);
    cr_assert_eq(st_live_lowest(&live), UINT64_MAX, "no segment pinned");
    cr_assert_eq(st_groups_len(&t, id), 0);
    cr_assert_null(st_groups_take(&t, id));
}

Test(groups, refused_chunks_change_nothing)
{
    uint64_t id = 32;
    cr_assert_eq(st_groups_chunk(&t, id, OWN, 1, 64, 10), -1, "no seq 0 yet");
    cr_assert_eq(st_groups_chunk(&t, id, OWN, 0, 64, 0), -1, "empty part");
    cr_assert_eq(live.total, 0);
    cr_assert_eq(st_groups_chunk(&t, id, OWN, 0, 64, 10), 0);
    cr_assert_eq(st_groups_chunk(&t, id, OWN, 0, 96, 10), -1, "reopened");
    cr_assert_eq(st_groups_chunk(&t, id, OWN, 2, 96, 10), -1, "a seq skipped");
    cr_assert_eq(st_groups_len(&t, id), 10);
    cr_assert_eq(live.total, 10);
}

Test(groups, interleaved_groups_stay_apart)
{
    uint64_t a = 1000, b = 1064;
    for (uint32_t s = 0; s < 50; s++) {
        cr_assert_eq(st_groups_chunk(&t, a, OWN, s, 1000 + 64 * (2 * s), 8), 0);
        cr_assert_eq(st_groups_chunk(&t, b, OWN, s, 1000 + 64 * (2 * s + 1), 16), 0);
    }
    cr_assert_eq(st_groups_len(&t, a), 400);
    cr_assert_eq(st_groups_len(&t, b), 800);
    st_pieces_t *l = st_groups_take(&t, b);
    cr_assert_eq(l->n, 50);
    for (uint32_t s = 0; s < 50; s++)
        cr_assert_eq(l->p[s].where, 1000 + 64 * (2 * s + 1));
    st_pieces_free(l);
    cr_assert_eq(live.total, 400, "a still pending");
}

Test(groups, another_writers_chunk_is_refused)
{
    /* Ids are LSNs, unique; a chunk naming a group it did not open (a
     * bug, or a damaged record) must not splice into another's value. */
    cr_assert_eq(st_groups_chunk(&t, 64, OWN, 0, 64, 10), 0);
    cr_assert_eq(st_groups_chunk(&t, 64, st_group_owner(2, 4242), 1, 128, 10), -1);
    cr_assert_eq(st_groups_chunk(&t, 64, st_group_owner(1, 4243), 1, 128, 10), -1);
    cr_assert_eq(st_groups_len(&t, 64), 10);
    cr_assert_eq(t.g[0].owner, OWN);
    cr_assert_eq(st_groups_chunk(&t, 64, OWN, 1, 128, 10), 0);
    cr_assert_eq(live.total, 20);
}

Test(groups, replay_reaches_the_same_table)
{
    /* The same chunks applied twice (live, then replay) give equal lists
     * and equal live-bytes tables. */
    st_live_t live2;
    st_groups_t t2;
    st_live_init(&live2, SEG);
    st_groups_init(&t2, &live2);
    uint64_t id = 0;
    for (uint32_t s = 0; s < 20; s++) {
        cr_assert_eq(st_groups_chunk(&t, id, OWN, s, s * (SEG / 4), 4096), 0);
        cr_assert_eq(st_groups_chunk(&t2, id, OWN, s, s * (SEG / 4), 4096), 0);
    }
    cr_assert(st_live_equal(&live, &live2));
    st_pieces_t *x = st_groups_take(&t, id), *y = st_groups_take(&t2, id);
    cr_assert_eq(x->n, y->n);
    cr_assert_arr_eq(x->p, y->p, x->n * sizeof(st_piece_t));
    st_pieces_free(x);
    st_pieces_free(y);
    st_groups_free(&t2);
    st_live_free(&live2);
}
