/*
 * shm-lock.c - the lock the writers of the frontends' shared administration
 * state (shm_admin_t: ACL table, settings, slow log) take. Run by the
 * frontends (and the master at start-up, before it forks).
 *
 * The lock holds the pid of its holder. A frontend can be killed at any
 * instruction (contract 5), holding the lock included: a waiter that finds
 * the holder gone (kill(pid, 0) fails with ESRCH once the master reaped it)
 * takes the lock over. What the dead writer left half written is safe by
 * design of each table: the ACL table is double-buffered (the torn copy was
 * not published), runtime settings are single words, a slow log entry is
 * text whose lengths readers bound.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "frontend/admin/admin.h"
#include "log.h"

void fe_shm_lock(shm_lock_t *l)
{
    int32_t me = (int32_t)getpid();
    for (unsigned spins = 0;; spins++) {
        int32_t expect = 0;
        if (atomic_compare_exchange_weak_explicit(&l->pid, &expect, me, memory_order_acquire,
                                                  memory_order_relaxed))
            return;
        if (expect == me) return; /* a crash of ours can't leave it: ours from before a fork */
        if (spins % 64 == 63 && expect != 0 && kill(expect, 0) != 0 && errno == ESRCH) {
            /* The holder died: take it over (see the banner). */
            if (atomic_compare_exchange_strong(&l->pid, &expect, me)) {
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

void fe_shm_unlock(shm_lock_t *l)
{
    atomic_store_explicit(&l->pid, 0, memory_order_release);
}
