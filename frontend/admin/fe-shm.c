/*
 * fe-shm.c - the frontends' shared administration state (shm_admin_t):
 * its initialisation by the master before any frontend runs (the lock its
 * writers take is in shm-lock.c). Run by the master; a failure here (a bad
 * `user` line) stops the server before it starts.
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
#include "log.h"

/* ---- the master's initialisation ---- */

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

int fe_admin_shm_init(shm_t *shm, const config_t *cfg, char *err, size_t errlen)
{
    shm_admin_t *a = &shm->admin;
    shm_config_t *c = &a->config;
    /* requirepass fits: the settings table refuses longer ones. */
    fe_config_store_live(cfg, c);
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
