/*
 * pidlock.c - the lock of pidlock.h, run by every process that writes a
 * shared table (the frontends' admin tables, Pub/Sub's tables and ring).
 * A holder that died is detected by its pid and its lock taken over.
 */
#include "pidlock.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

void pidlock_take(_Atomic int32_t *pid)
{
    int32_t me = (int32_t)getpid();
    for (unsigned spins = 0;; spins++) {
        int32_t expect = 0;
        if (atomic_compare_exchange_weak_explicit(pid, &expect, me, memory_order_acquire,
                                                  memory_order_relaxed))
            return;
        if (expect == me) return; /* a crash of ours can't leave it: ours from before a fork */
        if (spins % 64 == 63 && expect != 0 && kill(expect, 0) != 0 && errno == ESRCH) {
            /* The holder died: take it over (see the banner). */
            if (atomic_compare_exchange_strong(pid, &expect, me)) {
                log_warn("Took over a shared lock held by pid %d, which died", (int)expect);
                return;
            }
        }
        if (spins < 100)
            sched_yield();
        else
            nanosleep(&(struct timespec){0, 50000}, NULL);
    }
}

void pidlock_release(_Atomic int32_t *pid)
{
    atomic_store_explicit(pid, 0, memory_order_release);
}
