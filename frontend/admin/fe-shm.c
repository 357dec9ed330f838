/*
 * fe-shm.c - the frontends' part of the shared segment (frontend/fe-shm.h,
 * shm_admin_t): its size and its initialisation, which the master runs
 * before any frontend (frontend.h: fe_shm_size, fe_shm_init); the lock its
 * writers take is in shm-lock.c. A failure here (a bad `user` line) stops
 * the server before it starts.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "frontend/cmd/cmd.h"
#include "frontend/core/core.h"
#include "frontend/admin/admin.h"
#include "frontend/fe-shm.h"
#include "frontend/frontend.h"
#include "log.h"

/* ---- the master's reservation and initialisation ---- */

size_t fe_shm_size(const config_t *cfg)
{
    /* The fixed tables, then one statistics table per frontend. The client
     * registry and the slow log keep fixed capacities (SHM_CLIENT_SLOTS,
     * SHM_SLOWLOG_SLOTS): maxclients and slowlog-max-len change at run
     * time (CONFIG SET), and the segment never grows. */
    if (cfg->frontends < 1 || cfg->frontends > SHM_MAX_FRONTENDS) return 0;
    size_t per = sizeof(shm_fe_stats_t), n = (size_t)cfg->frontends;
    if (per > (SIZE_MAX - sizeof(shm_admin_t)) / n) return 0;
    return sizeof(shm_admin_t) + per * n;
}

typedef struct init_arg {
    const config_t *cfg;
} init_arg_t;

/* Split a `user` line's rules at spaces (the config file's quoting was
 * handled when the line was read: each entry holds the words after "user"). */
static int init_users(acl_table_t *t, void *argp, char *err, size_t errlen)
{
    const config_t *cfg = ((init_arg_t *)argp)->cfg;
    for (int i = 0; i < cfg->nusers; i++) {
        char *const *w = cfg->users[i].words;
        int n = cfg->users[i].nwords;
        if (n < 1) continue;
        uint32_t lens[CONFIG_MAX_USER_WORDS];
        for (int j = 0; j < n; j++)
            lens[j] = (uint32_t)strlen(w[j]);
        char msg[512];
        if (acl_setuser(t, w[0], lens[0], n - 1, (const char *const *)w + 1, lens + 1, msg,
                        sizeof(msg)) != 0) {
            /* "ERR Error in ACL SETUSER modifier 'x': why" -> the config's words */
            const char *why = strstr(msg, "': ");
            snprintf(err, errlen, "Error in user declaration '%s': %s", w[0],
                     why ? why + 3 : msg + 4);
            return -1;
        }
    }
    if (cfg->requirepass) {
        /* requirepass is the default user's password, as in Redis. */
        const char *rules[2] = {"resetpass", NULL};
        uint32_t lens[2] = {9, 0};
        char pass[SHM_REQUIREPASS_MAX + 2];
        int np = 1;
        if (cfg->requirepass[0]) {
            snprintf(pass, sizeof(pass), ">%s", cfg->requirepass);
            rules[1] = pass;
            lens[1] = (uint32_t)strlen(pass);
            np = 2;
        } else {
            rules[1] = "nopass";
            lens[1] = 6;
            np = 2;
        }
        if (acl_setuser(t, "default", 7, np, rules, lens, err, errlen) != 0) return -1;
    }
    return 0;
}

int fe_shm_init(shm_t *shm, const config_t *cfg, char *err, size_t errlen)
{
    if (!shm->frontend_off || shm->frontend_size < fe_shm_size(cfg) ||
        shm->nfrontends != (uint32_t)cfg->frontends) {
        snprintf(err, errlen, "the shared segment has no room for %d frontends' tables",
                 cfg->frontends);
        return -1;
    }
    shm_admin_t *a = fe_shm(shm);
    shm_config_t *c = &a->config;
    /* requirepass fits: the settings table refuses longer ones. */
    fe_config_store_live(cfg, c);
    atomic_store(&shm->notify_flags, cfg->notify_keyspace_events); /* the store's copy (D37) */
    fe_config_store_memory(cfg, shm);
    snprintf(c->requirepass, sizeof(c->requirepass), "%s",
             cfg->requirepass ? cfg->requirepass : "");
    atomic_store(&c->version, 1);
    atomic_store(&a->next_client_id, 0);
    atomic_store(&a->stat_epoch, 1);
    init_arg_t arg = {cfg};
    char msg[512];
    if (fe_acl_update_shm(shm, init_users, &arg, msg, sizeof(msg)) != 0) {
        snprintf(err, errlen, "%s", msg);
        return -1;
    }
    return 0;
}
