/*
 * shm-lock.c - the lock the writers of the frontends' shared administration
 * state (shm_admin_t: ACL table, settings, slow log) take. Run by the
 * frontends (and the master at start-up, before it forks).
 *
 * It is common/pidlock.h's lock (a dead holder's lock is taken over). What
 * a dead writer left half written is safe by design of each table: the ACL
 * table is double-buffered (the torn copy was not published), runtime
 * settings are single words, a slow log entry is text whose lengths
 * readers bound.
 */
#include "frontend/admin/admin.h"
#include "pidlock.h"

void fe_shm_lock(shm_lock_t *l)
{
    pidlock_take(&l->pid);
}

void fe_shm_unlock(shm_lock_t *l)
{
    pidlock_release(&l->pid);
}
