/*
 * access.c - access data per key (access.h), in Redis' layouts (its
 * evict.c is the model; this is our code).
 *
 * Store process only; single-threaded; nothing here changes the state
 * machine. Under an LRU (or any non-LFU) policy the entry's 24 spare bits
 * are the access time in seconds, modulo 2^24 (194 days, as Redis' LRU
 * clock); under an LFU policy the low 8 bits are a logarithmic counter
 * (incremented with probability 1 / ((counter - 5) * lfu-log-factor + 1),
 * starting at 5) and the high 16 the minute of the last decrement (modulo
 * 2^16), the counter losing one per lfu-decay-time minutes since.
 * Switching the policy at run time reinterprets the bits, as in Redis (its
 * error texts say the data "will take some time to adjust"). Per key this
 * costs no byte: the index gave up its cached hash for them (index.h).
 */
#include "access.h"

#include <stdlib.h>
#include <string.h>

#define LRU_MAX IDX_ACCESS_MAX
#define LFU_MAX 255u

void st_access_init(st_access_t *a, uint64_t seed)
{
    memset(a, 0, sizeof(*a));
    a->policy = CONFIG_POLICY_NOEVICTION;
    a->samples = 5;
    a->lfu_log_factor = 10;
    a->lfu_decay_time = 1;
    a->rng = seed ^ 0x5DEECE66Dull;
    for (unsigned i = 0; i < ST_EVPOOL_SIZE; i++)
        a->pool[i].db = -1;
}

void st_access_free(st_access_t *a)
{
    for (unsigned i = 0; i < ST_EVPOOL_SIZE; i++)
        free(a->pool[i].key);
    free(a->cursor);
    memset(a->pool, 0, sizeof(a->pool));
    a->cursor = NULL;
}

/* ---- access data -------------------------------------------------------- */

static uint32_t lru_clock(int64_t now_ms)
{
    return (uint32_t)((uint64_t)(now_ms < 0 ? 0 : now_ms) / 1000u) & LRU_MAX;
}

static uint32_t lfu_minutes(int64_t now_ms)
{
    return (uint32_t)((uint64_t)(now_ms < 0 ? 0 : now_ms) / 60000u) & 0xffffu;
}

static unsigned lfu_decayed(const st_access_t *a, uint32_t v, int64_t now_ms)
{
    uint32_t ldt = v >> 8, now = lfu_minutes(now_ms);
    unsigned counter = v & 0xffu;
    uint32_t elapsed = now >= ldt ? now - ldt : 65535u - ldt + now;
    uint32_t periods = a->lfu_decay_time > 0 ? elapsed / (uint32_t)a->lfu_decay_time : 0;
    return periods >= counter ? 0 : counter - periods;
}

void st_access_new(st_access_t *a, idx_entry_t *e, int64_t now_ms)
{
    if (st_policy_lfu(a->policy))
        idx_set_access(e, (lfu_minutes(now_ms) << 8) | ST_LFU_INIT);
    else
        idx_set_access(e, lru_clock(now_ms));
}

void st_access_touch(st_access_t *a, idx_entry_t *e, int64_t now_ms)
{
    if (!st_policy_lfu(a->policy)) {
        idx_set_access(e, lru_clock(now_ms));
        return;
    }
    unsigned counter = lfu_decayed(a, idx_access(e), now_ms);
    if (counter < LFU_MAX) {
        double r = (double)(idx_rand_next(&a->rng) >> 11) / 9007199254740992.0; /* [0, 1) */
        double base = counter > ST_LFU_INIT ? counter - ST_LFU_INIT : 0;
        if (r < 1.0 / (base * a->lfu_log_factor + 1)) counter++;
    }
    idx_set_access(e, (lfu_minutes(now_ms) << 8) | counter);
}

uint64_t st_access_idle_ms(const idx_entry_t *e, int64_t now_ms)
{
    uint32_t clock = lru_clock(now_ms), at = idx_access(e);
    uint64_t s = clock >= at ? clock - at : clock + (LRU_MAX - at);
    return s * 1000u;
}

unsigned st_access_freq(const st_access_t *a, const idx_entry_t *e, int64_t now_ms)
{
    return lfu_decayed(a, idx_access(e), now_ms);
}

int st_access_restore(const st_access_t *a, idx_entry_t *e, int64_t freq, int64_t idle_s,
                      int64_t now_ms)
{
    if (st_policy_lfu(a->policy)) {
        if (freq < 0) return 0;
        idx_set_access(e, (lfu_minutes(now_ms) << 8) | ((uint32_t)freq & LFU_MAX));
        return 1;
    }
    if (idle_s < 0) return 0;
    /* Redis' arithmetic, so that any IDLETIME reads back as Redis' does:
     * the seconds scaled to its clock's milliseconds and back in 64 bits
     * (wrapping for an IDLETIME over 2^63 / 1000, as its multiply does),
     * the clock less them, LRU_CLOCK_MAX added once when below zero, then
     * kept to 24 bits (its lru field). */
    int64_t idle = (int64_t)((uint64_t)idle_s * 1000u) / 1000;
    int64_t at = (int64_t)lru_clock(now_ms) - idle;
    if (at < 0) at += LRU_MAX;
    idx_set_access(e, (uint32_t)((uint64_t)at & LRU_MAX));
    return 1;
}
