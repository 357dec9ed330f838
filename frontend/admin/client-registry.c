/*
 * client-registry.c - the registry that makes every frontend's clients
 * visible to the others (CLIENT LIST, CLIENT KILL in client.c). Run by the
 * frontends; a frontend that dies leaves its entries, which its successor
 * frees at start (fe_clients_reclaim) and other frontends skip meanwhile
 * (their incarnation is stale).
 *
 * The registry (shm_client_t, SHM_CLIENT_SLOTS entries) holds one entry per
 * connection: its owner frontend writes it when the connection opens and
 * when its name, user, database or flags change, and stores the time and
 * command of each request in two words. CLIENT LIST reads the other
 * frontends' entries (its own clients it lists from their live state), so
 * it sees every client of the server. CLIENT KILL of another frontend's
 * client sets the entry's kill_id and wakes its owner, which closes the
 * connection when it handles the wake-up (at once if idle, within 10 ms
 * at worst): CLIENT KILL's count is of clients asked to close, and they
 * are gone a moment later rather than before the reply. Ids come from one
 * counter in shm, so they are unique across frontends. A connection opened
 * while every entry is taken works normally but only its own frontend
 * lists it.
 */
#include <stdio.h>
#include <string.h>

#include "frontend/admin/admin.h"
#include "frontend/cmd/cmd.h"
#include "frontend/core/core.h"

static void copy_field(char *dst, size_t cap, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= cap) n = cap - 1;
    if (n) memcpy(dst, src, n);
    dst[n] = '\0';
}

uint32_t fe_client_flags(const fe_conn_t *c)
{
    return (c->is_unix ? SHM_CLIENT_F_UNIX : 0) | (c->admin->no_evict ? SHM_CLIENT_F_NO_EVICT : 0) |
           (c->blocking ? SHM_CLIENT_F_BLOCKED : 0) |
           (c->admin->monitor ? SHM_CLIENT_F_MONITOR : 0);
}

void fe_client_flags_sync(fe_conn_t *c)
{
    shm_client_t *e = c->admin->reg;
    if (e && atomic_load_explicit(&e->flags, memory_order_relaxed) != fe_client_flags(c))
        fe_client_sync(c);
}

void fe_client_sync(fe_conn_t *c)
{
    shm_client_t *e = c->admin->reg;
    if (!e) return;
    atomic_fetch_add_explicit(&e->seq, 1, memory_order_acq_rel); /* odd: writing */
    copy_field(e->user, sizeof(e->user), c->admin->user ? c->admin->user : "default");
    copy_field(e->name, sizeof(e->name), c->admin->name);
    copy_field(e->lib_name, sizeof(e->lib_name), c->admin->lib_name);
    copy_field(e->lib_ver, sizeof(e->lib_ver), c->admin->lib_ver);
    atomic_store_explicit(&e->db, c->db, memory_order_relaxed);
    atomic_store_explicit(&e->resp, c->proto, memory_order_relaxed);
    atomic_store_explicit(&e->flags, fe_client_flags(c), memory_order_relaxed);
    atomic_fetch_add_explicit(&e->seq, 1, memory_order_release);
    c->admin->reg_db = c->db;
}

void fe_client_register(fe_conn_t *c)
{
    fe_t *fe = c->fe;
    shm_admin_t *a = fe_shm(fe->shm);
    uint32_t me = (uint32_t)fe->slot + 1;
    uint32_t inc = atomic_load(&fe->shm->fe[fe->slot].incarnation);
    c->admin->reg = NULL;
    c->admin->reg_multi = -1;
    for (uint32_t n = 0; n < SHM_CLIENT_SLOTS; n++) {
        uint32_t i = (fe->admin->client_hint + n) % SHM_CLIENT_SLOTS;
        shm_client_t *e = &a->clients[i];
        uint32_t expect = 0;
        if (atomic_load_explicit(&e->owner, memory_order_relaxed) != 0) continue;
        atomic_store(&e->incarnation, inc); /* before owning: readers check it */
        if (!atomic_compare_exchange_strong(&e->owner, &expect, me)) continue;
        fe->admin->client_hint = i + 1;
        c->admin->reg = e;
        atomic_store(&e->kill_id, 0);
        atomic_store(&e->id, c->id);
        atomic_store(&e->created_ms, c->created_ms);
        atomic_store(&e->last_active_ms, c->last_active_ms);
        atomic_store(&e->fd, c->fd);
        atomic_store(&e->multi, -1);
        atomic_store(&e->last_cmd, CMD_NONE);
        atomic_fetch_add_explicit(&e->seq, 1, memory_order_acq_rel);
        copy_field(e->addr, sizeof(e->addr), c->addr);
        copy_field(e->laddr, sizeof(e->laddr), c->laddr);
        atomic_fetch_add_explicit(&e->seq, 1, memory_order_release);
        fe_client_sync(c);
        return;
    }
}

void fe_client_unregister(fe_conn_t *c)
{
    if (!c->admin->reg) return;
    atomic_store(&c->admin->reg->id, 0);
    atomic_store_explicit(&c->admin->reg->owner, 0, memory_order_release);
    c->admin->reg = NULL;
}

void fe_clients_reclaim(fe_t *fe)
{
    uint32_t me = (uint32_t)fe->slot + 1;
    shm_admin_t *a = fe_shm(fe->shm);
    for (uint32_t i = 0; i < SHM_CLIENT_SLOTS; i++)
        if (atomic_load_explicit(&a->clients[i].owner, memory_order_relaxed) == me)
            atomic_store(&a->clients[i].owner, 0);
    atomic_store(&a->kill_pending[fe->slot], 0);
    /* Spread the frontends' searches over the table. */
    fe->admin->client_hint = (uint32_t)((uint64_t)fe->slot * SHM_CLIENT_SLOTS / SHM_MAX_FRONTENDS);
}

void fe_clients_kill_pending(fe_t *fe)
{
    shm_admin_t *a = fe_shm(fe->shm);
    if (!atomic_load_explicit(&a->kill_pending[fe->slot], memory_order_relaxed)) return;
    if (!atomic_exchange(&a->kill_pending[fe->slot], 0)) return;
    for (fe_conn_t *c = fe->conns; c; c = c->next) {
        if (!c->admin->reg) continue;
        uint64_t k = atomic_load(&c->admin->reg->kill_id);
        if (k && k == c->id) {
            atomic_store(&c->admin->reg->kill_id, 0);
            fe_conn_kill(c);
        }
    }
}
