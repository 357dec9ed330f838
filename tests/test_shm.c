/*
 * test_shm.c - the shared segment's layout (common/shm.c): each module's
 * part sized by its own function (ring_shm_size, chan_shm_size,
 * fe_shm_size), the sum refused when it overflows, every part at a 64-byte
 * aligned offset inside the segment, and the frontends' part last.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#include "config.h"
#include "frontend/fe-shm.h"
#include "frontend/frontend.h"
#include "shm.h"

Test(shm, sizes_that_overflow_are_refused)
{
    cr_assert_eq(shm_size(1, UINT64_MAX, 64 * 1024, 0), 0);
    cr_assert_eq(shm_size(1, 64 * 1024, UINT64_MAX - 8, 0), 0);
    cr_assert_eq(shm_size(1, 64 * 1024, 64 * 1024, UINT64_MAX), 0);
    cr_assert_eq(shm_size(64, SIZE_MAX / 2, SIZE_MAX / 256, 0), 0, "the sum overflows");
    cr_assert_eq(ring_shm_size(UINT64_MAX), SIZE_MAX);
    cr_assert_eq(chan_shm_size(UINT64_MAX), SIZE_MAX);
    errno = 0;
    cr_assert_null(shm_create(1, UINT64_MAX, 64 * 1024, 0));
    cr_assert_eq(errno, EOVERFLOW);
}

Test(shm, frontends_part_is_sized_from_the_config)
{
    config_t cfg;
    config_defaults(&cfg);
    cfg.frontends = 0;
    cr_assert_eq(fe_shm_size(&cfg), 0);
    cfg.frontends = SHM_MAX_FRONTENDS + 1;
    cr_assert_eq(fe_shm_size(&cfg), 0);
    cfg.frontends = 1;
    size_t one = fe_shm_size(&cfg);
    cfg.frontends = 3;
    cr_assert_eq(fe_shm_size(&cfg), one + 2 * sizeof(shm_fe_stats_t),
                 "one statistics table per frontend");
    cr_assert_eq(sizeof(shm_fe_stats_t) % 64, 0, "tables do not share cache lines");
    config_free(&cfg);
}

Test(shm, parts_are_aligned_and_inside_the_segment)
{
    config_t cfg;
    config_defaults(&cfg);
    cfg.frontends = 2;
    size_t fe_bytes = fe_shm_size(&cfg);
    uint64_t ring = 256 * 1024, chan = 64 * 1024;
    shm_t *s = shm_create(2, ring, chan, fe_bytes);
    cr_assert_not_null(s);
    cr_assert_eq(s->total_size, shm_size(2, ring, chan, fe_bytes));
    uint64_t offs[] = {s->ring_off,           s->fe[0].to_store_off,   s->fe[0].from_store_off,
                       s->fe[1].to_store_off, s->fe[1].from_store_off, s->frontend_off};
    for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
        cr_assert_eq(offs[i] % 64, 0, "part %zu at %llu", i, (unsigned long long)offs[i]);
        cr_assert_geq(offs[i], sizeof(shm_t));
        if (i) cr_assert_gt(offs[i], offs[i - 1], "part %zu overlaps", i);
    }
    cr_assert_geq(s->fe[1].from_store_off, s->fe[1].to_store_off + chan_shm_size(chan));
    cr_assert_eq(s->frontend_size, fe_bytes);
    cr_assert_leq(s->frontend_off + s->frontend_size, s->total_size);
    char err[256];
    cr_assert_eq(fe_shm_init(s, &cfg, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(atomic_load(&fe_shm(s)->stat_epoch), 1);
    /* A segment without the frontends' part is refused, not overrun. */
    shm_t *bare = shm_create(2, ring, chan, 0);
    cr_assert_not_null(bare);
    cr_assert_eq(bare->frontend_off, 0);
    cr_assert_eq(fe_shm_init(bare, &cfg, err, sizeof(err)), -1);
    munmap(bare, bare->total_size);
    munmap(s, s->total_size);
    config_free(&cfg);
}
