/*
 * cluster.c - hash slots and the static cluster topology (cluster.h).
 * Run by the master (to check the file before anything starts), the
 * frontends and the store, each with its own copy.
 */
#include "cluster.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

/* A topology of 256 nodes with every slot listed alone is about 100 KB. */
#define CLUSTER_FILE_MAX (16u << 20)

uint16_t cluster_crc16(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint16_t crc = 0;
    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)(p[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

unsigned cluster_key_slot(const void *key, size_t len)
{
    const char *k = key;
    const char *open = memchr(k, '{', len);
    if (open) {
        size_t from = (size_t)(open - k) + 1;
        const char *close = memchr(k + from, '}', len - from);
        if (close && close > k + from)
            return cluster_crc16(k + from, (size_t)(close - k) - from) & (CLUSTER_SLOTS - 1);
    }
    return cluster_crc16(k, len) & (CLUSTER_SLOTS - 1);
}

static int fail(char *err, size_t errlen, int line, const char *fmt, ...)
{
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    if (line)
        snprintf(err, errlen, "cluster-config-file line %d: %s", line, what);
    else
        snprintf(err, errlen, "cluster-config-file: %s", what);
    return -1;
}

/* A decimal in [lo, hi], the whole of s[0, n). */
static int parse_num(const char *s, size_t n, long long lo, long long hi, long long *out)
{
    if (!n || n > 19) return -1;
    long long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static int has_flag(const char *flags, size_t n, const char *want)
{
    size_t w = strlen(want);
    const char *p = flags, *end = flags + n;
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        size_t len = comma ? (size_t)(comma - p) : (size_t)(end - p);
        if (len == w && !memcmp(p, want, w)) return 1;
        p += len + 1;
    }
    return 0;
}

/* Split a line into words at spaces and tabs. */
static int split(const char *s, size_t n, const char **w, size_t *wl, int max)
{
    int k = 0;
    size_t i = 0;
    while (i < n) {
        while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
            i++;
        if (i == n) break;
        size_t b = i;
        while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            i++;
        if (k == max) return -1;
        w[k] = s + b;
        wl[k++] = i - b;
    }
    return k;
}

/* "<ip>:<port>[@<cport>][,<hostname>]" into the node. */
static int parse_addr(cluster_node_t *nd, const char *s, size_t n)
{
    const char *comma = memchr(s, ',', n);
    if (comma) n = (size_t)(comma - s);
    const char *at = memchr(s, '@', n);
    size_t hp = at ? (size_t)(at - s) : n;
    const char *colon = NULL;
    for (size_t i = hp; i > 0; i--)
        if (s[i - 1] == ':') {
            colon = s + i - 1;
            break;
        }
    if (!colon) return -1;
    size_t iplen = (size_t)(colon - s);
    if (!iplen || iplen >= sizeof(nd->ip)) return -1;
    memcpy(nd->ip, s, iplen);
    nd->ip[iplen] = 0;
    unsigned char bin[16];
    if (inet_pton(AF_INET, nd->ip, bin) != 1 && inet_pton(AF_INET6, nd->ip, bin) != 1) return -1;
    long long port, cport;
    if (parse_num(colon + 1, hp - iplen - 1, 1, 65535, &port) != 0) return -1;
    nd->port = (int)port;
    nd->cport = nd->port + 10000 <= 65535 ? nd->port + 10000 : 0;
    if (at) {
        if (parse_num(at + 1, n - hp - 1, 0, 65535, &cport) != 0) return -1;
        nd->cport = (int)cport;
    }
    return 0;
}

static int is_hex_id(const char *s, size_t n)
{
    if (n != CLUSTER_ID_LEN) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return 1;
}

int cluster_parse(cluster_t *c, const char *text, size_t len, const char *const *my_ips, int n_ips,
                  int my_port, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    c->myself = -1;
    for (int s = 0; s < CLUSTER_SLOTS; s++)
        c->owner[s] = CLUSTER_NO_OWNER;
    /* Masters are named before or after their replicas: resolved after. */
    char master_of[CLUSTER_MAX_NODES][CLUSTER_ID_LEN + 1];
    int line_of[CLUSTER_MAX_NODES];
    int flagged_myself = -1;
    size_t pos = 0;
    for (int line = 1; pos < len; line++) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
        const char *s = text + pos;
        pos += n + (nl ? 1 : 0);
        enum { MAXW = 8 + CLUSTER_SLOTS };
        static const char *w[MAXW];
        static size_t wl[MAXW];
        int k = split(s, n, w, wl, MAXW);
        if (k < 0) return fail(err, errlen, line, "too many words");
        if (k == 0 || w[0][0] == '#') continue;
        if (wl[0] == 4 && !memcmp(w[0], "vars", 4)) continue;
        if (k < 8) return fail(err, errlen, line, "a node needs at least 8 words, it has %d", k);
        if (c->nnodes == CLUSTER_MAX_NODES)
            return fail(err, errlen, line, "more than %d nodes", CLUSTER_MAX_NODES);
        int me = c->nnodes;
        cluster_node_t *nd = &c->nodes[me];
        if (!is_hex_id(w[0], wl[0]))
            return fail(err, errlen, line, "the node id must be 40 lower-case hex digits");
        memcpy(nd->id, w[0], CLUSTER_ID_LEN);
        for (int j = 0; j < me; j++)
            if (!memcmp(c->nodes[j].id, nd->id, CLUSTER_ID_LEN))
                return fail(err, errlen, line, "node %s is named twice", nd->id);
        if (parse_addr(nd, w[1], wl[1]) != 0)
            return fail(err, errlen, line, "'%.*s' is not <ip>:<port>[@<cport>]",
                        (int)(wl[1] > 80 ? 80 : wl[1]), w[1]);
        int is_master = has_flag(w[2], wl[2], "master");
        nd->replica = has_flag(w[2], wl[2], "slave") || has_flag(w[2], wl[2], "replica");
        if (is_master == nd->replica)
            return fail(err, errlen, line, "flags must say master or slave (one of them)");
        if (has_flag(w[2], wl[2], "myself")) {
            if (flagged_myself >= 0) return fail(err, errlen, line, "a second node flagged myself");
            flagged_myself = me;
        }
        nd->master = -1;
        master_of[me][0] = 0;
        if (nd->replica) {
            if (!is_hex_id(w[3], wl[3]))
                return fail(err, errlen, line, "a replica names its master's 40-digit id");
            memcpy(master_of[me], w[3], CLUSTER_ID_LEN);
            master_of[me][CLUSTER_ID_LEN] = 0;
        } else if (!(wl[3] == 1 && w[3][0] == '-')) {
            return fail(err, errlen, line, "a master's master field is '-'");
        }
        long long epoch;
        if (parse_num(w[6], wl[6], 0, (long long)1 << 62, &epoch) != 0)
            return fail(err, errlen, line, "the config epoch is not a number");
        nd->epoch = (uint64_t)epoch;
        if (nd->epoch > c->max_epoch) c->max_epoch = nd->epoch;
        for (int j = 8; j < k; j++) {
            if (w[j][0] == '[')
                return fail(
                    err, errlen, line,
                    "slots being migrated ('%.*s') are not supported: the topology is static",
                    (int)(wl[j] > 40 ? 40 : wl[j]), w[j]);
            if (nd->replica) return fail(err, errlen, line, "a replica owns no slots");
            const char *dash = memchr(w[j], '-', wl[j]);
            long long a, b;
            size_t alen = dash ? (size_t)(dash - w[j]) : wl[j];
            if (parse_num(w[j], alen, 0, CLUSTER_SLOTS - 1, &a) != 0 ||
                (dash ? parse_num(dash + 1, wl[j] - alen - 1, 0, CLUSTER_SLOTS - 1, &b)
                      : (b = a, 0)) != 0 ||
                b < a)
                return fail(err, errlen, line, "'%.*s' is not a slot or a range of slots (0-16383)",
                            (int)(wl[j] > 40 ? 40 : wl[j]), w[j]);
            for (long long sl = a; sl <= b; sl++) {
                if (c->owner[sl] != CLUSTER_NO_OWNER)
                    return fail(err, errlen, line, "slot %lld is owned by %s already", sl,
                                c->nodes[c->owner[sl]].id);
                c->owner[sl] = (uint16_t)me;
                c->nassigned++;
            }
        }
        line_of[me] = line;
        c->nnodes++;
    }
    if (!c->nnodes) return fail(err, errlen, 0, "no nodes");
    for (int i = 0; i < c->nnodes; i++) {
        if (!c->nodes[i].replica) continue;
        for (int j = 0; j < c->nnodes; j++)
            if (!c->nodes[j].replica && !memcmp(c->nodes[j].id, master_of[i], CLUSTER_ID_LEN))
                c->nodes[i].master = j;
        if (c->nodes[i].master < 0)
            return fail(err, errlen, line_of[i], "its master %s is not a master of the file",
                        master_of[i]);
    }
    c->myself = flagged_myself;
    for (int i = 0; i < c->nnodes && c->myself < 0; i++) {
        if (c->nodes[i].port != my_port) continue;
        for (int a = 0; a < n_ips; a++)
            if (my_ips[a] && !strcmp(my_ips[a], c->nodes[i].ip)) {
                c->myself = i;
                break;
            }
    }
    if (c->myself < 0)
        return fail(err, errlen, 0,
                    "no node is flagged myself, and none is at this server's address and port %d",
                    my_port);
    return 0;
}

/* The file's bytes (NUL-terminated, *n of them), or NULL with err set. */
static char *read_file(const char *path, size_t *n, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot open cluster-config-file %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *text = NULL;
    for (;;) {
        char *t = realloc(text, cap + 1);
        if (!t) {
            snprintf(err, errlen, "out of memory reading %s", path);
            break;
        }
        text = t;
        len += fread(text + len, 1, cap - len, f);
        if (len < cap) {
            if (!ferror(f)) {
                fclose(f);
                text[len] = 0;
                *n = len;
                return text;
            }
            snprintf(err, errlen, "cannot read cluster-config-file %s", path);
            break;
        }
        if (cap >= CLUSTER_FILE_MAX) {
            snprintf(err, errlen, "cluster-config-file %s is larger than %u MB", path,
                     CLUSTER_FILE_MAX >> 20);
            break;
        }
        cap *= 2;
    }
    free(text);
    fclose(f);
    return NULL;
}

int cluster_load(cluster_t *c, const char *path, const char *const *my_ips, int n_ips, int my_port,
                 char *err, size_t errlen)
{
    size_t n;
    char *text = read_file(path, &n, err, errlen);
    if (!text) return -1;
    int rc = cluster_parse(c, text, n, my_ips, n_ips, my_port, err, errlen);
    free(text);
    return rc;
}

int cluster_load_config(cluster_t *c, const config_t *cfg, char *err, size_t errlen)
{
    const char *file = cfg->cluster_config_file ? cfg->cluster_config_file : "nodes.conf";
    char path[4096];
    if (file[0] == '/' || !cfg->dir)
        snprintf(path, sizeof(path), "%s", file);
    else
        snprintf(path, sizeof(path), "%s/%s", cfg->dir, file);
    const char *ips[CONFIG_MAX_BINDS + 1];
    int n = 0;
    if (cfg->cluster_announce_ip && cfg->cluster_announce_ip[0])
        ips[n++] = cfg->cluster_announce_ip;
    for (int i = 0; i < cfg->nbind; i++)
        ips[n++] = cfg->bind[i][0] == '-' ? cfg->bind[i] + 1 : cfg->bind[i];
    return cluster_load(c, path, ips, n, cfg->port, err, errlen);
}
