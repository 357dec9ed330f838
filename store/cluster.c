/*
 * cluster.c - the CLUSTER command (D35), answered by the store from the
 * static topology it read at start (ctx->cluster) and, for the key counts
 * of a slot, from its index. Run by the store process (a read: it waits
 * for the connection's writes like any other).
 *
 * Replies are Redis 7.0's shapes (CLUSTER SLOTS, SHARDS, NODES, INFO), so
 * cluster clients (redis-cli -c, redis-py RedisCluster, ioredis Cluster)
 * learn the topology as they would from Redis. There is no cluster bus:
 * no node is ever seen failing, every link is "connected", the message
 * counters are 0, and the subcommands that change the topology are refused
 * with the reason.
 */
#include <stdio.h>
#include <string.h>

#include "cluster.h"
#include "resp.h"
#include "store/store-internal.h"
#include "store/types/handlers.h"
#include "strutil.h"

static int arg_ll(const rec_arg_t *a, long long *v, buf_t *r)
{
    if (str_to_ll((const char *)a->ptr, a->len, v) == 0) return 0;
    resp_error(r, "ERR value is not an integer or out of range");
    return -1;
}

/* The node's index, or -1. */
static int node_by_id(const cluster_t *cl, const rec_arg_t *id)
{
    if (id->len != CLUSTER_ID_LEN) return -1;
    for (int i = 0; i < cl->nnodes; i++)
        if (!memcmp(cl->nodes[i].id, id->ptr, CLUSTER_ID_LEN)) return i;
    return -1;
}

/* The next run of slots from *from on owned by node `who` (ANY_OWNER: by
 * any one node): 1 with it in [*first, *last] and *from past it, or 0. */
#define ANY_OWNER (-1)
static int next_range(const cluster_t *cl, int who, int *from, int *first, int *last)
{
    int s = *from;
    while (s < CLUSTER_SLOTS &&
           (who == ANY_OWNER ? cl->owner[s] == CLUSTER_NO_OWNER : cl->owner[s] != who))
        s++;
    if (s == CLUSTER_SLOTS) return 0;
    int e = s;
    while (e + 1 < CLUSTER_SLOTS && cl->owner[e + 1] == cl->owner[s])
        e++;
    *first = s;
    *last = e;
    *from = e + 1;
    return 1;
}

static int count_ranges(const cluster_t *cl, int who)
{
    int n = 0, from = 0, a, b;
    while (next_range(cl, who, &from, &a, &b))
        n++;
    return n;
}

/* One CLUSTER NODES line. */
static void node_line(const cluster_t *cl, int i, buf_t *b)
{
    const cluster_node_t *n = &cl->nodes[i];
    buf_appendf(b, "%s %s:%d@%d %s%s %s 0 0 %llu connected", n->id, n->ip, n->port, n->cport,
                i == cl->myself ? "myself," : "", n->replica ? "slave" : "master",
                n->replica ? cl->nodes[n->master].id : "-", (unsigned long long)n->epoch);
    for (int from = 0, a, e; next_range(cl, i, &from, &a, &e);) {
        if (e == a)
            buf_appendf(b, " %d", a);
        else
            buf_appendf(b, " %d-%d", a, e);
    }
    buf_append(b, "\n", 1);
}

/* [ip, port, id, {}]: a node in CLUSTER SLOTS. */
static void slots_node(const cluster_node_t *n, int proto, buf_t *r)
{
    resp_array(r, 4);
    resp_bulk_cstr(r, n->ip);
    resp_integer(r, n->port);
    resp_bulk(r, n->id, CLUSTER_ID_LEN);
    resp_map(r, proto, 0);
}

static int nreplicas(const cluster_t *cl, int master)
{
    int k = 0;
    for (int i = 0; i < cl->nnodes; i++)
        k += cl->nodes[i].replica && cl->nodes[i].master == master;
    return k;
}

static void cluster_slots(const cluster_t *cl, int proto, buf_t *r)
{
    resp_array(r, count_ranges(cl, ANY_OWNER));
    for (int from = 0, a, e; next_range(cl, ANY_OWNER, &from, &a, &e);) {
        int o = cl->owner[a];
        resp_array(r, 3 + nreplicas(cl, o));
        resp_integer(r, a);
        resp_integer(r, e);
        slots_node(&cl->nodes[o], proto, r);
        for (int i = 0; i < cl->nnodes; i++)
            if (cl->nodes[i].replica && cl->nodes[i].master == o)
                slots_node(&cl->nodes[i], proto, r);
    }
}

/* A node of CLUSTER SHARDS: id, port, ip, endpoint, role,
 * replication-offset, health. */
static void shards_node(const store_ctx_t *ctx, const cluster_t *cl, int i, int proto, buf_t *r)
{
    const cluster_node_t *n = &cl->nodes[i];
    resp_map(r, proto, 7);
    resp_bulk_cstr(r, "id");
    resp_bulk(r, n->id, CLUSTER_ID_LEN);
    resp_bulk_cstr(r, "port");
    resp_integer(r, n->port);
    resp_bulk_cstr(r, "ip");
    resp_bulk_cstr(r, n->ip);
    resp_bulk_cstr(r, "endpoint");
    resp_bulk_cstr(r, n->ip);
    resp_bulk_cstr(r, "role");
    resp_bulk_cstr(r, n->replica ? "replica" : "master");
    resp_bulk_cstr(r, "replication-offset");
    resp_integer(r, i == cl->myself ? (long long)ctx->applied : 0);
    resp_bulk_cstr(r, "health");
    resp_bulk_cstr(r, "online");
}

static void cluster_shards(const store_ctx_t *ctx, const cluster_t *cl, int proto, buf_t *r)
{
    int nmasters = 0;
    for (int i = 0; i < cl->nnodes; i++)
        nmasters += !cl->nodes[i].replica;
    resp_array(r, nmasters);
    for (int m = 0; m < cl->nnodes; m++) {
        if (cl->nodes[m].replica) continue;
        resp_map(r, proto, 2);
        resp_bulk_cstr(r, "slots");
        resp_array(r, 2 * count_ranges(cl, m));
        for (int from = 0, a, e; next_range(cl, m, &from, &a, &e);) {
            resp_integer(r, a);
            resp_integer(r, e);
        }
        resp_bulk_cstr(r, "nodes");
        resp_array(r, 1 + nreplicas(cl, m));
        shards_node(ctx, cl, m, proto, r);
        for (int i = 0; i < cl->nnodes; i++)
            if (cl->nodes[i].replica && cl->nodes[i].master == m) shards_node(ctx, cl, i, proto, r);
    }
}

static void cluster_info(const cluster_t *cl, int proto, buf_t *r)
{
    /* cluster_size: the masters that own a slot (replicas own none). */
    unsigned char owns[CLUSTER_MAX_NODES] = {0};
    int size = 0;
    for (int s = 0; s < CLUSTER_SLOTS; s++)
        if (cl->owner[s] != CLUSTER_NO_OWNER && !owns[cl->owner[s]]) {
            owns[cl->owner[s]] = 1;
            size++;
        }
    const cluster_node_t *me = &cl->nodes[cl->myself];
    uint64_t my_epoch = me->replica ? cl->nodes[me->master].epoch : me->epoch;
    buf_t t;
    buf_init(&t);
    buf_appendf(&t,
                "cluster_state:%s\r\ncluster_slots_assigned:%u\r\ncluster_slots_ok:%u\r\n"
                "cluster_slots_pfail:0\r\ncluster_slots_fail:0\r\ncluster_known_nodes:%d\r\n"
                "cluster_size:%d\r\ncluster_current_epoch:%llu\r\ncluster_my_epoch:%llu\r\n"
                "cluster_stats_messages_sent:0\r\ncluster_stats_messages_received:0\r\n"
                "total_cluster_links_buffer_limit_exceeded:0\r\n",
                cluster_ok(cl) ? "ok" : "fail", cl->nassigned, cl->nassigned, cl->nnodes, size,
                (unsigned long long)cl->max_epoch, (unsigned long long)my_epoch);
    resp_verbatim(r, proto, "txt", t.data, t.len);
    buf_free(&t);
}

typedef struct slot_walk {
    const read_args_t *a;
    unsigned slot;
    long long max; /* keys to collect (GETKEYSINSLOT); -1 = count only */
    long long n;
    buf_t body;
} slot_walk_t;

static int slot_visit(void *arg, idx_entry_t *e)
{
    slot_walk_t *w = arg;
    if (st_ent_expired(e, w->a->now)) return 0;
    if (cluster_key_slot(e->data, e->klen) != w->slot) return 0;
    if (w->max >= 0) {
        if (w->n == w->max) return 1;
        resp_bulk(&w->body, e->data, e->klen);
    }
    w->n++;
    return 0;
}

static const char *const help_lines[] = {
    "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "COUNTKEYSINSLOT <slot>",
    "    Return the number of keys in <slot>.",
    "GETKEYSINSLOT <slot> <count>",
    "    Return key names stored by current node in a slot.",
    "INFO",
    "    Return information about the cluster.",
    "KEYSLOT <key>",
    "    Return the hash slot for <key>.",
    "LINKS",
    "    Return the links to other nodes: none, there is no cluster bus.",
    "MYID",
    "    Return the node id.",
    "NODES",
    "    Return the cluster configuration, in the format of cluster-config-file:",
    "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
    "REPLICAS <node-id>",
    "    Return <node-id> replicas.",
    "SHARDS",
    "    Return the slot ranges and the nodes of each shard.",
    "SLOTS",
    "    Return the slot ranges: start, end, master and replicas addresses, ports and ids.",
    "The topology is static (cluster-config-file): it is changed by editing that file on",
    "every node and restarting them, not by ADDSLOTS, MEET, SETSLOT or FAILOVER.",
    "HELP",
    "    Prints this help.",
};

/* Redis' subcommands that change a topology this server reads from a file. */
static const char *const static_only[] = {"addslots",   "addslotsrange",
                                          "bumpepoch",  "count-failure-reports",
                                          "delslots",   "delslotsrange",
                                          "failover",   "flushslots",
                                          "forget",     "meet",
                                          "replicate",  "reset",
                                          "saveconfig", "set-config-epoch",
                                          "setslot"};

void st_read_cluster(store_ctx_t *ctx, const read_args_t *a, buf_t *r)
{
    const cluster_t *cl = ctx->cluster;
    if (!cl) {
        resp_error(r, "ERR This instance has cluster support disabled");
        return;
    }
    const rec_arg_t *sub = &a->argv[0];
    if (st_arg_is(sub, "slots")) {
        cluster_slots(cl, a->proto, r);
    } else if (st_arg_is(sub, "shards")) {
        cluster_shards(ctx, cl, a->proto, r);
    } else if (st_arg_is(sub, "nodes")) {
        buf_t t;
        buf_init(&t);
        for (int i = 0; i < cl->nnodes; i++)
            node_line(cl, i, &t);
        resp_verbatim(r, a->proto, "txt", t.data, t.len);
        buf_free(&t);
    } else if (st_arg_is(sub, "info")) {
        cluster_info(cl, a->proto, r);
    } else if (st_arg_is(sub, "myid")) {
        resp_bulk(r, cl->nodes[cl->myself].id, CLUSTER_ID_LEN);
    } else if (st_arg_is(sub, "keyslot")) {
        resp_integer(r, cluster_key_slot(a->argv[1].ptr, a->argv[1].len));
    } else if (st_arg_is(sub, "links")) {
        resp_array(r, 0);
    } else if (st_arg_is(sub, "replicas") || st_arg_is(sub, "slaves")) {
        int m = node_by_id(cl, &a->argv[1]);
        if (m < 0) {
            char msg[128];
            int n = a->argv[1].len > 64 ? 64 : (int)a->argv[1].len;
            snprintf(msg, sizeof(msg), "ERR Unknown node %.*s", n, (const char *)a->argv[1].ptr);
            for (char *p = msg; *p; p++)
                if (*p == '\r' || *p == '\n') *p = ' ';
            resp_error(r, msg);
            return;
        }
        if (cl->nodes[m].replica) {
            resp_error(r, "ERR The specified node is not a master");
            return;
        }
        resp_array(r, nreplicas(cl, m));
        for (int i = 0; i < cl->nnodes; i++) {
            if (!cl->nodes[i].replica || cl->nodes[i].master != m) continue;
            buf_t t;
            buf_init(&t);
            node_line(cl, i, &t);
            resp_bulk(r, t.data, t.len);
            buf_free(&t);
        }
    } else if (st_arg_is(sub, "countkeysinslot") || st_arg_is(sub, "getkeysinslot")) {
        int get = st_arg_is(sub, "getkeysinslot");
        long long slot, max = -1;
        if (arg_ll(&a->argv[1], &slot, r) != 0) return;
        if (get && arg_ll(&a->argv[2], &max, r) != 0) return;
        if (slot < 0 || slot >= CLUSTER_SLOTS || (get && max < 0)) {
            resp_error(r, get ? "ERR Invalid slot or number of keys" : "ERR Invalid slot");
            return;
        }
        slot_walk_t w = {.a = a, .slot = (unsigned)slot, .max = max};
        buf_init(&w.body);
        idx_foreach(&a->db->ix, slot_visit, &w);
        if (get) {
            st_reply_array_of(ctx, r, (uint64_t)w.n, &w.body);
        } else {
            resp_integer(r, w.n);
        }
        buf_free(&w.body);
    } else if (st_arg_is(sub, "help")) {
        size_t n = sizeof(help_lines) / sizeof(help_lines[0]);
        resp_array(r, (long long)n);
        for (size_t i = 0; i < n; i++)
            resp_simple(r, help_lines[i]);
    } else {
        for (size_t i = 0; i < sizeof(static_only) / sizeof(static_only[0]); i++)
            if (st_arg_is(sub, static_only[i])) {
                char msg[160];
                snprintf(msg, sizeof(msg),
                         "ERR CLUSTER %s is not supported: the topology is static "
                         "(cluster-config-file)",
                         static_only[i]);
                resp_error(r, msg);
                return;
            }
        char msg[200];
        int n = sub->len > 128 ? 128 : (int)sub->len;
        snprintf(msg, sizeof(msg), "ERR unknown subcommand '%.*s'. Try CLUSTER HELP.", n,
                 (const char *)sub->ptr);
        for (char *p = msg; *p; p++)
            if (*p == '\r' || *p == '\n') *p = ' ';
        resp_error(r, msg);
    }
}
