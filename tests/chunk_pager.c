/*
 * chunk_pager.c - the store's pager played by a unit test for a chunked
 * collection (chunk_pager.h): the records a turn builds are copied and
 * kept in flight, then applied through the store harness in an order the
 * test's generator picks.
 */
#include "chunk_pager.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "store/core/index.h"
#include "store/core/object.h"
#include "store_harness.h"

#define T0      1000000
#define MAXPEND 6

typedef struct pending {
    uint16_t op;
    unsigned char *blob[3 + ST_CPAGE_MAX_IMAGES];
    uint32_t lens[3 + ST_CPAGE_MAX_IMAGES];
    uint16_t argc;
} pending_t;

static pending_t pend[MAXPEND];
static int npend;
uint64_t cp_applied;

static unsigned char *copy_of(const void *p, size_t n)
{
    unsigned char *c = malloc(n ? n : 1);
    cr_assert(c);
    memcpy(c, p, n);
    return c;
}

static void apply_pending(int i)
{
    pending_t *pd = &pend[i];
    sh_put(T0, pd->op, pd->argc, (const unsigned char *const *)pd->blob, pd->lens);
    for (int a = 0; a < pd->argc; a++)
        free(pd->blob[a]);
    pend[i] = pend[--npend];
    cp_applied++;
}

void cp_turn(uint16_t op, const char *key, void *obj, int wanted, cp_build_fn build,
             const st_pgpolicy_t *pol, uint64_t (*rnd)(void))
{
    if (!obj) return;
    static st_cpbuilt_t b;
    static int init;
    if (!init) st_cpbuilt_init(&b);
    init = 1;
    if (wanted)
        while (npend < MAXPEND && build(ctx, obj, pol, &b) == ST_PAGE_BUILT) {
            pending_t *pd = &pend[npend++];
            pd->op = op;
            pd->blob[0] = copy_of(key, strlen(key));
            pd->lens[0] = (uint32_t)strlen(key);
            pd->blob[1] = copy_of(b.stamps.data, b.stamps.len);
            pd->lens[1] = (uint32_t)b.stamps.len;
            pd->blob[2] = copy_of(b.layout.data, b.layout.len);
            pd->lens[2] = (uint32_t)b.layout.len;
            for (uint32_t j = 0; j < b.nimg; j++) {
                pd->blob[3 + j] = copy_of(b.img[j].data, b.img[j].len);
                pd->lens[3 + j] = (uint32_t)b.img[j].len;
            }
            pd->argc = (uint16_t)(3 + b.nimg);
            if (rnd() % 3 == 0) break;
        }
    /* Apply some now, keep others in flight across more writes. */
    for (int i = npend - 1; i >= 0; i--)
        if (rnd() % 2) apply_pending(i);
}

void cp_drain(void)
{
    while (npend)
        apply_pending(npend - 1);
}

st_obj_t *cp_ckpt_round_trip(const char *key, void (*stats)(void *obj, long long v[7]),
                             const char *(*check)(void *obj))
{
    idx_entry_t **slot = idx_find(&ctx->dbs[0]->ix, key, (uint32_t)strlen(key));
    cr_assert(slot);
    st_obj_t *o = st_ent_obj(*slot);
    long long s1[7], s2[7];
    stats(o, s1);
    cr_assert_gt(s1[2], 2, "pages to write (%lld)", s1[2]);
    buf_t b;
    buf_init(&b);
    o->ops->ckpt_write(o, &b);
    st_obj_t *back;
    cr_assert_eq(o->ops->ckpt_read((const unsigned char *)b.data, b.len, &back), (long)b.len);
    back->ops->bind(back, ctx);
    const char *bad = check(back);
    cr_assert(!bad, "read back: %s", bad);
    uint64_t d1, d2;
    cr_assert_eq(o->ops->digest(ctx, o, &d1), 0);
    cr_assert_eq(back->ops->digest(ctx, back, &d2), 0);
    cr_assert_eq(d1, d2, "the same elements in the same order");
    stats(back, s2);
    cr_assert(memcmp(s1, s2, sizeof(s1)) == 0, "the same chunks and pages");
    /* Every cut of the stream is refused, never half read. */
    for (size_t cut = 0; cut < b.len; cut += 1 + cut / 7) {
        st_obj_t *x;
        long used = o->ops->ckpt_read((const unsigned char *)b.data, cut, &x);
        if (used >= 0) x->ops->free(x);
        cr_assert(used < 0, "a stream cut at %zu of %zu was read", cut, b.len);
    }
    buf_free(&b);
    return back;
}
