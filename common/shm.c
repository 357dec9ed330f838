/*
 * shm.c - creation of the shared segment (shm.h) and the sleep/wake protocol
 * used by every process. The master creates the segment once, before any
 * fork; it is never resized or remapped, so its layout outlives every child.
 */
#include "shm.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Add a part of n bytes, rounded up to 64 (a cache line: no two parts
 * share one), to *total. -1 when the sum would overflow. */
static int add_size(size_t *total, uint64_t n)
{
    if (n > SIZE_MAX - 63) return -1;
    size_t aligned = ((size_t)n + 63) & ~(size_t)63;
    if (*total > SIZE_MAX - aligned) return -1;
    *total += aligned;
    return 0;
}

size_t shm_size(uint32_t nfrontends, uint64_t ring_size, uint64_t chan_size, uint64_t frontend_size)
{
    size_t total = 0;
    if (add_size(&total, sizeof(shm_t))) return 0;
    if (add_size(&total, ring_shm_size(ring_size))) return 0;
    for (uint32_t i = 0; i < 2 * nfrontends; i++)
        if (add_size(&total, chan_shm_size(chan_size))) return 0;
    if (add_size(&total, frontend_size)) return 0;
    if (add_size(&total, ps_shm_size())) return 0;
    return total;
}

static int waiter_init(shm_waiter_t *w)
{
    /* Close-on-exec: the master's exec after a full copy (D50) makes new
     * ones; the forked children keep theirs. */
    w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    atomic_store(&w->sleeping, 0);
    return w->efd < 0 ? -1 : 0;
}

void shm_prefault_ring(shm_t *s)
{
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t from = (uintptr_t)shm_ring(s) & ~(page - 1);
    uintptr_t to = (uintptr_t)shm_ring(s) + ring_shm_size(shm_ring(s)->size);
    (void)madvise((void *)from, to - from, MADV_POPULATE_WRITE);
}

shm_t *shm_create(uint32_t nfrontends, uint64_t ring_size, uint64_t chan_size,
                  uint64_t frontend_size)
{
    if (nfrontends == 0 || nfrontends > SHM_MAX_FRONTENDS) {
        errno = EINVAL;
        return NULL;
    }
    size_t total = shm_size(nfrontends, ring_size, chan_size, frontend_size);
    if (total == 0) {
        errno = EOVERFLOW;
        return NULL;
    }
    /* MAP_NORESERVE: the ring and channels are touched lazily; most of a
     * large ring is never resident until traffic fills it. */
    void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) return NULL;
    shm_t *s = p;
    s->magic = SHM_MAGIC;
    s->total_size = total;
    s->nfrontends = nfrontends;
    s->chan_size = chan_size;
    size_t off = 0;
    add_size(&off, sizeof(shm_t)); /* shm_size checked every sum */
    s->ring_off = off;
    /* The ring's head/tail are set by the logger once recovery knows where
     * the log ends; until then logger_state is LOGGER_STARTING. */
    ring_init(shm_ring(s), ring_size, 0);
    add_size(&off, ring_shm_size(ring_size));
    for (uint32_t i = 0; i < nfrontends; i++) {
        s->fe[i].to_store_off = off;
        chan_init(shm_to_store(s, (int)i), chan_size);
        add_size(&off, chan_shm_size(chan_size));
        s->fe[i].from_store_off = off;
        chan_init(shm_from_store(s, (int)i), chan_size);
        add_size(&off, chan_shm_size(chan_size));
        if (waiter_init(&s->fe[i].wake)) goto fail;
    }
    s->frontend_off = frontend_size ? off : 0;
    s->frontend_size = frontend_size;
    add_size(&off, frontend_size);
    s->pubsub_off = off;
    ps_shm_init(shm_pubsub(s));
    if (waiter_init(&s->logger_wake) || waiter_init(&s->store_wake) || waiter_init(&s->repl_wake))
        goto fail;
    s->repl_handoff_fd = s->repl_handoff_rfd = -1;
    atomic_store(&s->start_time_ms, shm_now_ms());
    atomic_store(&s->notify_lsn, UINT64_MAX);
    atomic_store(&s->backup_last_secs, -1);
    s->master_pid = (int32_t)getpid();
    return s;
fail:;
    int saved = errno;
    munmap(p, total);
    errno = saved;
    return NULL;
}

_Static_assert(PS_MAX_FRONTENDS >= SHM_MAX_FRONTENDS, "a Pub/Sub count per frontend slot");

void shm_wake_pubsub(shm_t *s, int except)
{
    for (uint32_t f = 0; f < s->nfrontends; f++) {
        if ((int)f == except) continue;
        if (atomic_exchange(&s->fe[f].pubsub_wake, 1)) continue; /* one is on its way */
        uint64_t one = 1;
        ssize_t r = write(s->fe[f].wake.efd, &one, sizeof(one));
        (void)r; /* EAGAIN: the counter is full, so it is readable anyway */
    }
}

void shm_waiter_arm(shm_waiter_t *w)
{
    /* seq_cst pairs with the seq_cst load in shm_wake(): either the waker
     * sees the flag, or the waiter's re-check sees the waker's data. */
    atomic_store(&w->sleeping, 1);
    atomic_thread_fence(memory_order_seq_cst);
}

void shm_waiter_disarm(shm_waiter_t *w)
{
    atomic_store_explicit(&w->sleeping, 0, memory_order_relaxed);
}

void shm_waiter_drain(shm_waiter_t *w)
{
    uint64_t v;
    ssize_t r = read(w->efd, &v, sizeof(v));
    (void)r; /* EAGAIN: nothing pending */
}

void shm_waiter_wait(shm_waiter_t *w, int timeout_ms)
{
    struct pollfd pfd = {.fd = w->efd, .events = POLLIN};
    int rc = poll(&pfd, 1, timeout_ms);
    if (rc > 0) shm_waiter_drain(w);
    atomic_store_explicit(&w->sleeping, 0, memory_order_relaxed);
}

void shm_wake(shm_waiter_t *w)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&w->sleeping, memory_order_relaxed) &&
        atomic_exchange(&w->sleeping, 0)) {
        uint64_t one = 1;
        ssize_t r = write(w->efd, &one, sizeof(one));
        (void)r; /* EAGAIN only if the counter is saturated: already woken */
    }
}

int shm_master_alive(const shm_t *s)
{
    /* Not getppid() == 1: the master may itself be pid 1 in a container. */
    return getppid() == s->master_pid;
}

int64_t shm_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t shm_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
