/*
 * cluster.h - the Redis Cluster protocol over a static topology (D35): hash
 * slots of keys, and the table of nodes and slot owners read from
 * `cluster-config-file`. Used by the frontends (MOVED, CROSSSLOT) and by
 * the store (the CLUSTER command's replies); neither changes it at run time.
 *
 * The file is in the format of CLUSTER NODES and of Redis' own nodes.conf,
 * so a topology can be written by hand or taken from a Redis cluster:
 *
 *   <id> <ip>:<port>[@<cport>] <flags> <master-id|-> <ping> <pong> <epoch>
 *       <link-state> [<slot>|<first>-<last>] ...
 *
 * one node per line; blank lines, lines starting with '#' and nodes.conf's
 * "vars ..." line are skipped. Flags are a comma list of master, slave
 * (or replica) and myself (others Redis writes, such as fail or noaddr,
 * are accepted and ignored). The same file serves every node: a server is
 * the node flagged myself or, when none is, the node whose port is its
 * own and whose address is its cluster-announce-ip or one of its bind
 * addresses.
 */
#ifndef ATTIC_CLUSTER_H
#define ATTIC_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#define CLUSTER_SLOTS     16384
#define CLUSTER_MAX_NODES 256
#define CLUSTER_NO_OWNER  0xffff
#define CLUSTER_ID_LEN    40

typedef struct cluster_node {
    char id[CLUSTER_ID_LEN + 1];
    char ip[64];
    int port, cport;
    int replica; /* 1: a replica of node `master` */
    int master;  /* index of its master, or -1 */
    uint64_t epoch;
} cluster_node_t;

typedef struct cluster {
    int nnodes;
    int myself;         /* index of this server's node */
    uint32_t nassigned; /* slots with an owner */
    uint64_t max_epoch; /* cluster_current_epoch */
    cluster_node_t nodes[CLUSTER_MAX_NODES];
    uint16_t owner[CLUSTER_SLOTS]; /* node index, or CLUSTER_NO_OWNER */
} cluster_t;

/* The hash slot of a key: CRC16 (XMODEM) of the key, or of the part
 * between its first '{' and the next '}' when that part is not empty. */
unsigned cluster_key_slot(const void *key, size_t len);

/* The CRC16 itself (polynomial 0x1021, initial value 0). */
uint16_t cluster_crc16(const void *data, size_t len);

/*
 * Parse a topology (text, len) into c. my_ips (n_ips addresses) and
 * my_port pick this server's node when no line is flagged myself. Returns
 * 0, or -1 with a sentence in err naming the line and what is wrong.
 */
int cluster_parse(cluster_t *c, const char *text, size_t len, const char *const *my_ips, int n_ips,
                  int my_port, char *err, size_t errlen);

/* Read and parse the file at path (cluster_parse's other arguments).
 * Returns 0, or -1 with err set. */
int cluster_load(cluster_t *c, const char *path, const char *const *my_ips, int n_ips, int my_port,
                 char *err, size_t errlen);

/* cluster_load of the file the settings name (cluster-config-file,
 * relative to dir), this server being at cluster-announce-ip or a bind
 * address, and port. */
struct config;
int cluster_load_config(cluster_t *c, const struct config *cfg, char *err, size_t errlen);

/* The node serving reads and writes of slot, or NULL when none owns it. */
static inline const cluster_node_t *cluster_owner(const cluster_t *c, unsigned slot)
{
    return c->owner[slot] == CLUSTER_NO_OWNER ? NULL : &c->nodes[c->owner[slot]];
}

/* Whether every slot has an owner (cluster_state:ok). */
static inline int cluster_ok(const cluster_t *c)
{
    return c->nassigned == CLUSTER_SLOTS;
}

#endif
