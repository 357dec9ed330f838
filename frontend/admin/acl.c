/*
 * acl.c - ACL users applied to connections, in the frontends: the table
 * every frontend shares (shm_acl_t), AUTH's check, and fe_acl_check, which
 * dispatch.c calls before running any command. The rules themselves are in
 * acl-rules.c.
 *
 * Sharing: a writer (ACL SETUSER, DELUSER, CONFIG SET requirepass) takes
 * the lock, loads the current copy, changes it, saves it into the other
 * copy and bumps the version. Each frontend re-parses when it sees a new
 * version, so a change made through any frontend applies to every client's
 * next command, on every frontend.
 *
 * The check's fast path: a connection whose user may run every command on
 * every key (the default user, +@all ~*) is marked acl_fast; the check is
 * then two compares and one load of the shared version, nothing more.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/cmd/cmd.h"
#include "frontend/core/core.h"
#include "frontend/admin/admin.h"
#include "log.h"

/* ---- the frontend's side ---- */

/* Parse the shared table if it moved since we last did. */
void fe_acl_refresh(fe_t *fe)
{
    shm_acl_t *sa = &fe_shm(fe->shm)->acl;
    for (int tries = 0; tries < 100; tries++) {
        uint64_t v = atomic_load_explicit(&sa->version, memory_order_acquire);
        if (v == fe->admin->acl_version && fe->admin->acl) return;
        if (v == 0) {
            /* Never initialised (a test's bare segment): the default user. */
            if (!fe->admin->acl) fe->admin->acl = acl_table_new();
            fe->admin->acl_version = 0;
            fe->admin->acl_gen++;
            return;
        }
        uint32_t len = atomic_load_explicit(&sa->len[v & 1], memory_order_acquire);
        acl_table_t *t = len <= SHM_ACL_TEXT ? acl_table_load(sa->text[v & 1], len) : NULL;
        if (atomic_load_explicit(&sa->version, memory_order_acquire) != v) {
            acl_table_free(t); /* changed while we read: again */
            continue;
        }
        if (!t) {
            log_warn("The shared ACL table (version %llu) does not parse: keeping ours",
                     (unsigned long long)v);
            if (!fe->admin->acl) fe->admin->acl = acl_table_new();
            fe->admin->acl_version = v;
            fe->admin->acl_gen++;
            return;
        }
        acl_table_free(fe->admin->acl);
        fe->admin->acl = t;
        fe->admin->acl_version = v;
        fe->admin->acl_gen++;
        return;
    }
}

static int publish(shm_t *shm, acl_table_t *t, char *err, size_t errlen)
{
    shm_acl_t *sa = &fe_shm(shm)->acl;
    buf_t b;
    buf_init(&b);
    acl_table_save(t, &b);
    if (b.len > SHM_ACL_TEXT) {
        buf_free(&b);
        snprintf(err, errlen, "ERR the ACL table is full (AtticDB keeps at most %d bytes of users)",
                 SHM_ACL_TEXT);
        return -1;
    }
    uint64_t v = atomic_load(&sa->version);
    uint64_t next = v + 1;
    memcpy(sa->text[next & 1], b.data, b.len);
    atomic_store_explicit(&sa->len[next & 1], (uint32_t)b.len, memory_order_release);
    atomic_store_explicit(&sa->version, next, memory_order_release);
    buf_free(&b);
    return 0;
}

int fe_acl_update_shm(shm_t *shm, int (*fn)(acl_table_t *, void *, char *, size_t), void *arg,
                      char *err, size_t errlen)
{
    shm_acl_t *sa = &fe_shm(shm)->acl;
    fe_shm_lock(&sa->lock);
    uint64_t v = atomic_load(&sa->version);
    acl_table_t *t =
        v ? acl_table_load(sa->text[v & 1], atomic_load(&sa->len[v & 1])) : acl_table_new();
    if (!t) t = acl_table_new();
    int rc = fn(t, arg, err, errlen);
    if (rc == 0 && publish(shm, t, err, errlen) != 0) rc = -1;
    fe_shm_unlock(&sa->lock);
    acl_table_free(t);
    return rc;
}

int fe_acl_update(fe_t *fe, int (*fn)(acl_table_t *, void *, char *, size_t), void *arg, char *err,
                  size_t errlen)
{
    int rc = fe_acl_update_shm(fe->shm, fn, arg, err, errlen);
    fe_acl_refresh(fe);
    return rc;
}

acl_user_t *fe_acl_user(fe_conn_t *c)
{
    fe_t *fe = c->fe;
    if (!fe->admin->acl) fe_acl_refresh(fe);
    const char *name = c->admin->user ? c->admin->user : "default";
    return acl_find(fe->admin->acl, name, strlen(name));
}

int fe_acl_auth_required(fe_conn_t *c)
{
    if (c->admin->authenticated) return 0;
    acl_user_t *d = acl_find(c->fe->admin->acl, "default", 7);
    return !d || !acl_user_nopass(d) || !acl_user_enabled(d);
}

int fe_acl_default_nopass(fe_t *fe)
{
    fe_acl_refresh(fe);
    acl_user_t *d = acl_find(fe->admin->acl, "default", 7);
    return d && acl_user_nopass(d);
}

int fe_acl_default_auth(fe_t *fe)
{
    fe_acl_refresh(fe);
    acl_user_t *d = acl_find(fe->admin->acl, "default", 7);
    return d && acl_user_nopass(d) && acl_user_enabled(d);
}

int fe_acl_auth(fe_conn_t *c, const char *user, size_t ulen, const char *pass, size_t plen)
{
    fe_acl_refresh(c->fe);
    acl_user_t *u = acl_find(c->fe->admin->acl, user, ulen);
    if (!u || !acl_user_enabled(u) || !acl_user_password_ok(u, pass, plen)) return -1;
    free(c->admin->user);
    c->admin->user =
        (ulen == 7 && memcmp(user, "default", 7) == 0) ? NULL : acl_strndup(user, ulen);
    c->admin->authenticated = 1;
    c->admin->acl_gen = 0; /* recompute the fast path */
    fe_client_sync(c);
    return 0;
}

/* Close the clients whose user is gone (ACL DELUSER on any frontend),
 * and, as Redis 7.0 does, the subscribers whose user may no longer use
 * one of their channels or patterns (ACL SETUSER's channel rules). */
void fe_acl_sweep(fe_t *fe)
{
    fe_acl_refresh(fe);
    if (fe->admin->acl_swept_gen == fe->admin->acl_gen) return;
    fe->admin->acl_swept_gen = fe->admin->acl_gen;
    for (fe_conn_t *c = fe->conns, *next; c; c = next) {
        next = c->next;
        const char *name = c->admin->user ? c->admin->user : "default";
        acl_user_t *u = acl_find(fe->admin->acl, name, strlen(name));
        if ((c->admin->user && !u) || (u && !fe_pubsub_conn_allowed(c, u))) fe_conn_kill(c);
    }
}

static const char ERR_NOAUTH[] = "-NOAUTH Authentication required.\r\n";
static const char ERR_NOPERM_KEY[] =
    "-NOPERM this user has no permissions to access one of the keys used as arguments\r\n";
static const char ERR_NOPERM_CHANNEL[] =
    "-NOPERM this user has no permissions to access one of the channels used as arguments\r\n";

/* The error for a refused command (dispatch.c turns EXEC's into
 * EXECABORT, as Redis words it). */
static void reject(buf_t *err, const cmd_desc_t *d, const char *line)
{
    (void)d;
    buf_append(err, line, strlen(line));
}

int fe_acl_all_keys(fe_conn_t *c)
{
    acl_user_t *u = fe_acl_user(c);
    return !u || acl_user_all_keys(u);
}

int fe_acl_check(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, buf_t *err)
{
    fe_t *fe = c->fe;
    /* The index this call runs as (commandstats, CLIENT LIST cmd=). */
    c->admin->cur_desc = d;
    c->admin->cur_idx = (uint16_t)fe_cmd_index(d, a->argc, a->argv, a->lens);
    if (__builtin_expect(c->admin->acl_fast && c->admin->acl_gen == fe->admin->acl_gen, 1) &&
        atomic_load_explicit(&fe_shm(fe->shm)->acl.version, memory_order_acquire) ==
            fe->admin->acl_version)
        return 0;
    fe_acl_refresh(fe);
    acl_user_t *u = fe_acl_user(c);
    if (!u) {
        /* Deleted while connected: Redis closes such clients. */
        c->closing = 1;
        resp_error(err, "NOAUTH Authentication required.");
        return -1;
    }
    int auth_required = fe_acl_auth_required(c);
    c->admin->acl_fast = !auth_required && acl_user_unrestricted(u);
    c->admin->acl_gen = fe->admin->acl_gen;
    if (c->admin->acl_fast) return 0;
    /* AUTH, HELLO, QUIT, RESET: allowed to anyone, as in Redis. */
    if (d->flags & CMDF_NO_AUTH) return 0;
    if (auth_required) {
        fe_stat_rejected(fe, c->admin->cur_idx);
        reject(err, d, ERR_NOAUTH);
        return -1;
    }
    /* Redis checks a subcommand's arity before its permissions. */
    if (fe_subcmd_arity_check(d, a->argc, a->argv, a->lens, err) != 0) {
        fe_stat_rejected(fe, c->admin->cur_idx);
        return -1;
    }
    /* An unknown subcommand gets its handler's "unknown subcommand" error. */
    if (fe_has_subcmds(d->id) && c->admin->cur_idx < FE_SUB_BASE && a->argc >= 2) return 0;
    int rc = acl_check(u, d, c->admin->cur_idx, a->argc, a->argv, a->lens);
    if (rc == ACL_OK) return 0;
    fe_stat_rejected(fe, c->admin->cur_idx);
    if (rc == ACL_DENIED_CMD) {
        char msg[160];
        snprintf(msg, sizeof(msg),
                 "-NOPERM this user has no permissions to run the '%s' command\r\n",
                 fe_cmd_index_name(c->admin->cur_idx));
        reject(err, d, msg);
    } else {
        reject(err, d, rc == ACL_DENIED_KEY ? ERR_NOPERM_KEY : ERR_NOPERM_CHANNEL);
    }
    return -1;
}
