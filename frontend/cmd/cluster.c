/*
 * cluster.c - the cluster protocol in the frontend (D35): a command whose
 * keys belong to another node's slots is redirected (-MOVED), one whose
 * keys span slots is refused (-CROSSSLOT), and the commands Redis forbids
 * in cluster mode are refused as it does. Run by fe_dispatch after the ACL
 * check and before the memory bound, where Redis' processCommand does it.
 * The topology is static (fe->cluster, read at start), so a decision needs
 * no state but the connection's transaction slot and READONLY flag.
 */
#include <stdio.h>

#include "cluster.h"
#include "frontend/cmd/cmd.h"

#define CROSSSLOT "-CROSSSLOT Keys in request don't hash to the same slot\r\n"

/* The slot all of the command's keys hash to; -1 when it names none;
 * -2 when they hash to different slots. */
static int keys_slot(const cmd_desc_t *d, const fe_args_t *a)
{
    if (cmd_key_count(d, a->argc, a->argv, a->lens) <= 0) return -1;
    int slot = -1;
    for (int p = cmd_key_next(d, a->argc, a->argv, a->lens, 0); p;
         p = cmd_key_next(d, a->argc, a->argv, a->lens, p)) {
        int s = (int)cluster_key_slot(a->argv[p], a->lens[p]);
        if (slot >= 0 && s != slot) return -2;
        slot = s;
    }
    return slot;
}

int fe_cluster_route(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a, buf_t *err)
{
    const cluster_t *cl = c->fe->cluster;
    if (!c->multi) {
        c->cl_slot = -1;
        c->cl_cross = 0;
    }
    if (d->id == CMD_EXEC) {
        if (!c->multi || !c->cl_cross) return 0;
        buf_append(err, CROSSSLOT, sizeof(CROSSSLOT) - 1);
        return -2;
    }
    int slot = keys_slot(d, a);
    if (slot == -1) return 0;
    if (slot == -2) {
        buf_append(err, CROSSSLOT, sizeof(CROSSSLOT) - 1);
        return -1;
    }
    if (!cluster_ok(cl)) {
        buf_appendf(err, "-CLUSTERDOWN The cluster is down\r\n");
        return -1;
    }
    const cluster_node_t *owner = cluster_owner(cl, (unsigned)slot);
    const cluster_node_t *me = &cl->nodes[cl->myself];
    int here = owner == me || (c->cl_readonly && me->replica && &cl->nodes[me->master] == owner &&
                               !(d->flags & CMDF_WRITE));
    if (!here) {
        buf_appendf(err, "-MOVED %d %s:%d\r\n", slot, owner->ip, owner->port);
        return -1;
    }
    if (c->multi) {
        if (c->cl_slot < 0)
            c->cl_slot = slot;
        else if (c->cl_slot != slot)
            c->cl_cross = 1;
    }
    return 0;
}

/* READONLY (on = 1), READWRITE (0), ASKING (-1: no slot ever migrates). */
static void conn_mode(fe_conn_t *c, int on, buf_t *out)
{
    if (!c->fe->cluster) {
        buf_appendf(out, "-ERR This instance has cluster support disabled\r\n");
        return;
    }
    if (on >= 0) c->cl_readonly = (uint8_t)on;
    buf_appendf(out, "+OK\r\n");
}

void fe_cmd_readonly(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    (void)argc, (void)argv, (void)lens;
    conn_mode(c, 1, out);
}

void fe_cmd_readwrite(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    (void)argc, (void)argv, (void)lens;
    conn_mode(c, 0, out);
}

void fe_cmd_asking(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    (void)argc, (void)argv, (void)lens;
    conn_mode(c, -1, out);
}
