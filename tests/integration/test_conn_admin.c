/*
 * test_conn_admin.c - the administration side of a real atticdb-server
 * (split from test_conn.c; frontend/admin/client.c, config-cmd.c, info.c,
 * slowlog.c, command-cmd.c): CLIENT, RESET, TIME, COMMAND, CONFIG GET/SET,
 * INFO, SLOWLOG, protected mode, the default bind and the runtime limits,
 * and the same checks across two frontends (CLIENT LIST / KILL, CONFIG
 * SET, ACL SETUSER / DELUSER seen by a connection on the other frontend).
 *
 * Replies are compared as raw bytes with texts written out from
 * redis-server 7.0.15; these tests need AtticDB only.
 *
 * Environment: ATTICDB_SERVER (the server binary).
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "conn_helpers.h"

TestSuite(conn, .fini = srv_cleanup_all, .timeout = 90);

/* The value of `field:` in an INFO text. */
static long long info_field(const char *text, const char *field)
{
    return srv_info_text_num(text, field);
}

/* ------------------------------------------------------------------ */
/* CLIENT, RESET, TIME                                                 */

/* The field names of a CLIENT LIST / INFO line, space separated. */
static void field_names(const char *line, char *out, size_t n)
{
    out[0] = '\0';
    size_t len = 0;
    for (const char *p = line; *p && *p != '\n';) {
        const char *eq = strchr(p, '=');
        const char *sp = strchr(p, ' ');
        if (!eq) break;
        len += (size_t)snprintf(out + len, n - len, "%s%.*s", len ? " " : "", (int)(eq - p), p);
        if (!sp) break;
        p = sp + 1;
    }
}

Test(conn, client_commands, .fini = teardown)
{
    start("--frontends 1");
    raw_t *c = raw_open(S.port), *d = raw_open(S.port);
    long long id = int_reply(cmd(c, "CLIENT ID")), id2 = int_reply(cmd(d, "CLIENT ID"));
    cr_expect_gt(id2, id);
    cr_expect_str_eq(cmd(c, "CLIENT SETNAME worker-1"), "+OK\r\n");
    cr_expect_str_eq(cmd(c, "CLIENT GETNAME"), "$8\r\nworker-1\r\n");
    cr_expect_str_eq(cmd(c, "CLIENT SETINFO LIB-NAME mylib"), "+OK\r\n");
    cr_expect_str_eq(cmd(c, "CLIENT SETINFO lib-ver 1.2"), "+OK\r\n");
    cr_expect_str_eq(cmd(c, "CLIENT SETINFO foo x"), "-ERR Unrecognized option 'foo'\r\n");
    cr_expect_str_eq(cmd(c, "CLIENT SETINFO lib-name \"a b\""),
                     "-ERR lib-name cannot contain spaces, newlines or special characters.\r\n");
    cr_expect_str_eq(cmd(c, "CLIENT NO-EVICT on"), "+OK\r\n");
    const char *info = cmd(c, "CLIENT INFO");
    char names[1024];
    field_names(strchr(info, '\n') + 1, names, sizeof(names));
    /* Redis 7.0.15's fields, then 7.2's lib-name and lib-ver */
    cr_expect_str_eq(names,
                     "id addr laddr fd name age idle flags db sub psub ssub multi qbuf qbuf-free "
                     "argv-mem multi-mem rbs rbp obl oll omem tot-mem events cmd user redir resp "
                     "lib-name lib-ver");
    char want[128];
    snprintf(want, sizeof(want), "id=%lld addr=127.0.0.1:", id);
    cr_expect(strstr(info, want), "%s", info);
    cr_expect(strstr(info, " name=worker-1 ") && strstr(info, " flags=e ") &&
                  strstr(info, " db=0 ") && strstr(info, " multi=-1 ") &&
                  strstr(info, " cmd=client|info ") && strstr(info, " user=default ") &&
                  strstr(info, " resp=2 ") && strstr(info, " lib-name=mylib lib-ver=1.2\n\r\n"),
              "%s", info);
    /* Nothing waiting to be sent: Redis' obl=0 oll=0 omem=0 (Redis'
     * unit/introspection.tcl matches them exactly) */
    cr_expect(strstr(info, " obl=0 oll=0 omem=0 "), "%s", info);
    snprintf(want, sizeof(want), " laddr=127.0.0.1:%d ", S.port);
    cr_expect(strstr(info, want), "%s", info);
    /* CLIENT LIST: both clients, oldest first, one line each */
    const char *list = cmd(d, "CLIENT LIST");
    const char *p1 = strstr(list, "name=worker-1"), *p2 = strstr(list, " cmd=client|list ");
    cr_expect(p1 && p2 && p1 < p2, "%s", list);
    snprintf(want, sizeof(want), "CLIENT LIST ID %lld", id2);
    list = cmd(c, want);
    cr_expect(!strstr(list, "worker-1") && strstr(list, "cmd=client|list"), "%s", list);
    cr_expect_str_eq(cmd(c, "CLIENT LIST TYPE pubsub"), "$0\r\n\r\n");
    /* KILL: by id, by addr (old form), USER, SKIPME */
    cr_expect_str_eq(cmd(c, "CLIENT KILL USER default"), ":1\r\n");
    cr_expect(raw_closed(d));
    raw_close(d);
    d = raw_open(S.port);
    cmd(d, "PING");
    const char *dl = cmd(d, "CLIENT INFO");
    const char *a = strstr(dl, "addr=") + 5;
    char addr[64];
    snprintf(addr, sizeof(addr), "%.*s", (int)(strchr(a, ' ') - a), a);
    cr_expect_str_eq(cmd(c, "CLIENT KILL %s", addr), "+OK\r\n");
    cr_expect(raw_closed(d));
    raw_close(d);
    cr_expect_str_eq(cmd(c, "CLIENT KILL %s", addr), "-ERR No such client\r\n");
    snprintf(want, sizeof(want), "CLIENT KILL ID %lld", id);
    cr_expect_str_eq(cmd(c, want), ":0\r\n"); /* SKIPME yes */
    /* CLIENT REPLY */
    const char *pipeline =
        "CLIENT REPLY SKIP\r\nECHO one\r\nECHO two\r\nCLIENT REPLY OFF\r\nECHO three\r\n"
        "CLIENT REPLY ON\r\nECHO four\r\n";
    raw_send(c, pipeline, strlen(pipeline));
    char *r = raw_read(c, 3);
    cr_expect_str_eq(r, "$3\r\ntwo\r\n+OK\r\n$4\r\nfour\r\n");
    free(r);
    /* RESET */
    cmd(c, "HELLO 3");
    cr_expect_str_eq(cmd(c, "RESET"), "+RESET\r\n");
    info = cmd(c, "CLIENT INFO");
    cr_expect(info[0] == '$' && strstr(info, " name= ") && strstr(info, " resp=2 ") &&
                  strstr(info, " flags=N "),
              "%s", info);
    /* and killing itself, SKIPME no: the reply, then the connection closes */
    snprintf(want, sizeof(want), "CLIENT KILL ID %lld SKIPME no", id);
    cr_expect_str_eq(cmd(c, want), ":1\r\n");
    cr_expect(raw_closed(c));
    raw_close(c);
    /* TIME */
    c = raw_open(S.port);
    const char *t = cmd(c, "TIME");
    long long sec = 0, usec = -1;
    cr_expect_eq(sscanf(t, "*2\r\n$10\r\n%lld\r\n$%*d\r\n%lld\r\n", &sec, &usec), 2, "%s", t);
    cr_expect(llabs(sec - (long long)time(NULL)) <= 5 && usec >= 0 && usec < 1000000, "%s", t);
    raw_close(c);
}

/* ------------------------------------------------------------------ */
/* COMMAND, CONFIG, INFO                                               */

Test(conn, command_config_info, .fini = teardown)
{
    start("--frontends 1");
    raw_t *c = raw_open(S.port);
    long long n = int_reply(cmd(c, "COMMAND COUNT"));
    cr_expect_gt(n, 60);
    raw_send(c, "COMMAND\r\n", 9);
    char *all = raw_read(c, 1);
    char head[32];
    snprintf(head, sizeof(head), "*%lld\r\n*10\r\n", n);
    cr_expect(strncmp(all, head, strlen(head)) == 0, "%.60s", all);
    free(all);
    const char *docs = cmd(c, "COMMAND DOCS get");
    cr_expect(
        strstr(docs,
               "$7\r\nsummary\r\n$54\r\nRead a key's string value; nil when the key is missing\r\n"
               "$5\r\nsince\r\n$5\r\n1.0.0\r\n"
               "$5\r\ngroup\r\n$6\r\nstring\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n"),
        "%s", docs);
    const char *cl = cmd(c, "COMMAND LIST FILTERBY PATTERN config*");
    cr_expect_str_eq(
        cl, "*6\r\n$6\r\nconfig\r\n$10\r\nconfig|get\r\n$11\r\nconfig|help\r\n$10\r\nconfig|set\r\n"
            "$16\r\nconfig|resetstat\r\n$14\r\nconfig|rewrite\r\n");
    /* CONFIG GET: every setting under its name, patterns, several */
    const char *cg = cmd(c, "CONFIG GET *");
    const char *names[] = {"port",
                           "bind",
                           "dir",
                           "maxclients",
                           "timeout",
                           "proto-max-bulk-len",
                           "client-query-buffer-limit",
                           "client-output-buffer-limit",
                           "requirepass",
                           "protected-mode",
                           "slowlog-log-slower-than",
                           "slowlog-max-len",
                           "loglevel",
                           "databases",
                           "frontends",
                           "ring-size",
                           "segment-size",
                           NULL};
    for (int i = 0; names[i]; i++) {
        char k[64];
        snprintf(k, sizeof(k), "$%zu\r\n%s\r\n", strlen(names[i]), names[i]);
        cr_expect(strstr(cg, k), "CONFIG GET * lacks %s", names[i]);
    }
    cr_expect_str_eq(cmd(c, "CONFIG GET bind"), "*2\r\n$4\r\nbind\r\n$9\r\n127.0.0.1\r\n");
    cr_expect_str_eq(
        cmd(c, "CONFIG GET maxclients protected-mode"),
        "*4\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n$14\r\nprotected-mode\r\n$3\r\nyes\r\n");
    cr_expect_str_eq(cmd(c, "CONFIG GET slowlog-max-*"),
                     "*2\r\n$15\r\nslowlog-max-len\r\n$3\r\n128\r\n");
    cr_expect_str_eq(cmd(c, "CONFIG SET port 1"),
                     "-ERR CONFIG SET failed (possibly related to argument 'port') - can't set "
                     "immutable config\r\n");
    cr_expect_str_eq(cmd(c, "CONFIG SET ring-size 1mb"),
                     "-ERR CONFIG SET failed (possibly related to argument 'ring-size') - can't "
                     "set immutable config\r\n");
    /* INFO: sections, several, all, commandstats after a reset */
    cmd(c, "SET k v");
    cmd(c, "GET k");
    cmd(c, "GET k");
    cr_expect_str_eq(cmd(c, "CONFIG RESETSTAT"), "+OK\r\n");
    cmd(c, "GET k");
    cmd(c, "GET k");
    cmd(c, "CLIENT ID");
    cmd(c, "HELLO 4");
    cmd(c, "GET");         /* arity: rejected, as Redis counts it */
    cmd(c, "CLIENT ID x"); /* a subcommand's arity: the subcommand's */
    const char *is = cmd(c, "INFO commandstats");
    const char *get = strstr(is, "\r\ncmdstat_get:");
    cr_expect(get && strstr(get, ",rejected_calls=1,failed_calls=0\r\n") ==
                         strchr(get + 2, '\r') - strlen(",rejected_calls=1,failed_calls=0"),
              "%s", is);
    const char *cid = strstr(is, "\r\ncmdstat_client|id:");
    cr_expect(cid && strstr(cid, ",rejected_calls=1,failed_calls=0\r\n") ==
                         strchr(cid + 2, '\r') - strlen(",rejected_calls=1,failed_calls=0"),
              "%s", is);
    cr_expect(strstr(is, "\r\ncmdstat_get:calls=2,usec="), "%s", is);
    cr_expect(strstr(is, "\r\ncmdstat_client|id:calls=1,usec="), "%s", is);
    cr_expect(strstr(is, "\r\ncmdstat_hello:calls=1,") &&
                  strstr(is, ",rejected_calls=0,failed_calls=1"),
              "%s", is);
    cr_expect(!strstr(is, "cmdstat_set:"), "RESETSTAT kept set: %s", is);
    const char *ia = cmd(c, "INFO");
    const char *order[] = {"# Server\r\n",      "# Clients\r\n",  "# Memory\r\n",
                           "# Persistence\r\n", "# Stats\r\n",    "# Replication\r\n",
                           "# CPU\r\n",         "# Keyspace\r\n", NULL};
    const char *at = ia;
    for (int i = 0; order[i]; i++) {
        const char *p = strstr(at, order[i]);
        cr_expect_not_null(p, "INFO lacks (or misorders) %s", order[i]);
        if (p) at = p;
    }
    cr_expect(!strstr(ia, "# Commandstats"), "commandstats is not a default section");
    cr_expect(strstr(ia, "\r\nredis_version:7.0.15\r\n") && strstr(ia, "\r\nrole:master\r\n") &&
                  strstr(ia, "\r\nconnected_slaves:0\r\n") &&
                  strstr(ia, "\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n"),
              "%s", ia);
    cr_expect_gt(info_field(ia, "atticdb_fsyncs"), 0);
    /* the fsync latency histogram the logger fills */
    const char *p50 = strstr(ia, "\r\natticdb_fsync_p50_us:");
    cr_assert_not_null(p50);
    double lat50 = strtod(p50 + 23, NULL);
    double lat999 = strtod(strstr(ia, "\r\natticdb_fsync_p999_us:") + 24, NULL);
    cr_expect(lat50 > 0 && lat999 >= lat50, "p50 %f p999 %f", lat50, lat999);
    cr_expect(strstr(ia, "\r\natticdb_fsync_p99_us:") && strstr(ia, "\r\natticdb_fsync_p999_us:") &&
                  strstr(ia, "\r\natticdb_durable_lsn:") &&
                  strstr(ia, "\r\natticdb_applied_lsn:") &&
                  strstr(ia, "\r\natticdb_avg_batch_records:") &&
                  strstr(ia, "\r\natticdb_avg_batch_bytes:"),
              "%s", ia);
    const char *two = cmd(c, "INFO clients cpu");
    cr_expect(strstr(two, "# Clients\r\nconnected_clients:1\r\n") &&
                  strstr(two, "\r\n\r\n# CPU\r\n") && !strstr(two, "# Server"),
              "%s", two);
    cr_expect_str_eq(cmd(c, "INFO nosuch"), "$0\r\n\r\n");
    const char *ev = cmd(c, "INFO everything");
    cr_expect(strstr(ev, "# Commandstats\r\n") && strstr(ev, "# Keyspace\r\n"), "%.100s", ev);
    /* the text ends with its last field, no blank line */
    const char *ks = cmd(c, "INFO keyspace");
    cr_expect_str_eq(ks, "$44\r\n# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n\r\n");
    raw_close(c);
}

/* ------------------------------------------------------------------ */
/* SLOWLOG                                                             */

Test(conn, slowlog, .fini = teardown)
{
    start("--frontends 1");
    raw_t *c = raw_open(S.port);
    cr_expect_str_eq(cmd(c, "CONFIG SET slowlog-log-slower-than 0"), "+OK\r\n");
    cr_expect_str_eq(cmd(c, "SLOWLOG RESET"), "+OK\r\n");
    cmd(c, "CLIENT SETNAME me");
    cmd(c, "SET k v");
    cmd(c, "AUTH a b");
    char big[200];
    memset(big, 'a', 163);
    big[163] = '\0';
    cmd(c, "ECHO %s", big);
    cmd(c, "MGET 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 "
           "31 32 33 34 35");
    cmd(c, "CONFIG SET requirepass \"\"");
    cmd(c, "CONFIG SET slowlog-log-slower-than -1");
    /* SLOWLOG RESET itself, then six; not the CONFIG SET that disabled it */
    cr_expect_str_eq(cmd(c, "SLOWLOG LEN"), ":7\r\n");
    const char *g = cmd(c, "SLOWLOG GET 3");
    /* newest first, ids counting on from before the reset */
    cr_expect(strncmp(g, "*3\r\n*6\r\n:7\r\n:", 13) == 0, "%s", g);
    cr_expect(
        strstr(g, "*4\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n$11\r\nrequirepass\r\n$10\r\n(redacted)\r\n"),
        "%s", g);
    cr_expect(strstr(g, "$2\r\nme\r\n"), "%s", g);
    cr_expect(strstr(g, "$2\r\n30\r\n$22\r\n... (5 more arguments)\r\n$15\r\n127.0.0.1:"), "%s", g);
    g = cmd(c, "SLOWLOG GET -1");
    cr_expect(strncmp(g, "*7\r\n", 4) == 0, "%.20s", g);
    cr_expect(strstr(g, "... (35 more bytes)\r\n"), "%s", g);
    cr_expect(strstr(g, "*3\r\n$4\r\nAUTH\r\n$10\r\n(redacted)\r\n$10\r\n(redacted)\r\n"), "%s", g);
    /* a write is logged when its reply is ready: after its fdatasync */
    cr_expect(strstr(g, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"), "%s", g);
    cr_expect(strstr(g, "*2\r\n$7\r\nSLOWLOG\r\n$5\r\nRESET\r\n$15\r\n127.0.0.1:"), "%s", g);
    cmd(c, "CONFIG SET slowlog-max-len 2");
    cr_expect_str_eq(cmd(c, "SLOWLOG LEN"), ":2\r\n");
    cmd(c, "SLOWLOG RESET");
    cr_expect_str_eq(cmd(c, "SLOWLOG LEN"), ":0\r\n");
    cr_expect_str_eq(cmd(c, "SLOWLOG GET"), "*0\r\n");
    raw_close(c);
}

/* ------------------------------------------------------------------ */
/* protected mode, binds and limits                                    */

/* Tests talk to loopback addresses only. The server treats clients from
 * REMOTE_IP as remote (ATTICDB_TEST_REMOTE_ADDR, a test hook), and the test
 * connects from that address, so protected mode shows without a real
 * non-loopback address. */
#define REMOTE_IP "127.0.0.2"

static const char DENIED[] =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no "
    "password is set for the default user. In this mode connections are only accepted from the "
    "loopback interface. If you want to connect from external computers to Redis you may adopt "
    "one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG "
    "SET protected-mode no' from the loopback interface by connecting to Redis from the same host "
    "the server is running, however MAKE SURE Redis is not publicly accessible from internet if "
    "you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just "
    "disable the protected mode by editing the Redis configuration file, and setting the "
    "protected mode option to 'no', and then restarting the server. 3) If you started the server "
    "manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an "
    "authentication password for the default user. NOTE: You only need to do one of the above "
    "things in order for the server to start accepting connections from the outside.\r\n";

Test(conn, protected_mode, .fini = teardown)
{
    setenv("ATTICDB_TEST_REMOTE_ADDR", REMOTE_IP, 1);
    start("--frontends 2");
    unsetenv("ATTICDB_TEST_REMOTE_ADDR");
    /* several connections, so both frontends refuse */
    for (int i = 0; i < 4; i++) {
        raw_t *x = raw_open_from(REMOTE_IP, S.port);
        cr_assert_not_null(x, "connect from %s", REMOTE_IP);
        raw_send(x, "PING\r\n", 6);
        char *r = raw_read(x, 1);
        cr_expect_str_eq(r, DENIED);
        free(r);
        cr_expect(raw_closed(x));
        raw_close(x);
    }
    raw_t *lo = raw_open(S.port);
    cr_expect_str_eq(cmd(lo, "PING"), "+PONG\r\n");
    cr_expect_str_eq(cmd(lo, "CONFIG SET protected-mode no"), "+OK\r\n");
    for (int i = 0; i < 4; i++) {
        raw_t *x = raw_open_from(REMOTE_IP, S.port);
        cr_expect_str_eq(cmd(x, "PING"), "+PONG\r\n");
        raw_close(x);
    }
    /* with a password the non-loopback client is let in, to AUTH */
    cmd(lo, "CONFIG SET protected-mode yes");
    cmd(lo, "CONFIG SET requirepass pw");
    raw_t *x = raw_open_from(REMOTE_IP, S.port);
    cr_expect_str_eq(cmd(x, "PING"), "-NOAUTH Authentication required.\r\n");
    cr_expect_str_eq(cmd(x, "AUTH pw"), "+OK\r\n");
    raw_close(x);
    raw_close(lo);
}

Test(conn, default_bind_is_loopback_with_optional_ipv6, .fini = teardown)
{
    const char *args[] = {"--frontends", "1", NULL};
    cr_assert_eq(proc_start(&A, atticdb_path(), NULL, args, "+PONG"), 0);
    raw_t *c = raw_open(A.port);
    cr_expect_str_eq(cmd(c, "CONFIG GET bind"), "*2\r\n$4\r\nbind\r\n$14\r\n127.0.0.1 -::1\r\n");
    cr_expect_str_eq(cmd(c, "CONFIG GET protected-mode"),
                     "*2\r\n$14\r\nprotected-mode\r\n$3\r\nyes\r\n");
    raw_close(c);
    /* ::1 listens when the machine has IPv6 (else it was skipped) */
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)A.port)};
    sa.sin6_addr = in6addr_loopback;
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
        raw_t r6 = {.fd = fd};
        cr_expect_str_eq(cmd(&r6, "PING"), "+PONG\r\n");
        const char *info = cmd(&r6, "CLIENT INFO");
        cr_expect(strstr(info, " addr=[::1]:") && strstr(info, " laddr=[::1]:"), "%s", info);
        free(r6.buf);
    }
    if (fd >= 0) close(fd);
}

Test(conn, limits_change_live_on_every_frontend, .fini = teardown)
{
    start("--frontends 2");
    /* enough connections that both frontends hold several */
    enum { N = 20 };
    raw_t *c[N];
    int fe_of[N];
    int on1[N], n1 = 0, a_i = -1;
    for (int i = 0; i < N; i++) {
        c[i] = raw_open(S.port);
        cr_assert_not_null(c[i]);
        fe_of[i] = (int)info_field(cmd(c[i], "INFO server"), "frontend");
        if (fe_of[i] == 0 && a_i < 0) a_i = i;
        if (fe_of[i] == 1) on1[n1++] = i;
    }
    cr_assert(a_i >= 0 && n1 >= 4, "connections did not reach both frontends");
    raw_t *a = c[a_i], *b = c[on1[0]], *q = c[on1[1]], *idle = c[on1[2]];
    /* proto-max-bulk-len, set through one frontend, enforced by the other */
    cr_expect_str_eq(cmd(a, "CONFIG SET proto-max-bulk-len 1mb"), "+OK\r\n");
    raw_send(b, "*2\r\n$4\r\nECHO\r\n$2000000\r\n", 24);
    char *r = raw_read(b, 1);
    cr_expect_str_eq(r, "-ERR Protocol error: invalid bulk length\r\n");
    free(r);
    cr_expect(raw_closed(b));
    cr_expect_str_eq(cmd(a, "CONFIG SET proto-max-bulk-len 512mb"), "+OK\r\n");
    /* maxclients: at the number connected, the next connections are refused */
    long long clients = -1;
    for (int i = 0; i < 200 && clients != N - 1; i++) {
        if (i) usleep(10000);
        clients = info_field(cmd(a, "INFO clients"), "connected_clients");
    }
    cr_expect_eq(clients, N - 1);
    cr_expect_str_eq(cmd(a, "CONFIG SET maxclients %d", N - 1), "+OK\r\n");
    for (int i = 0; i < 4; i++) {
        raw_t *x = raw_open(S.port);
        r = raw_read(x, 1);
        cr_expect_str_eq(r, "-ERR max number of clients reached\r\n");
        free(r);
        raw_close(x);
    }
    cr_expect_geq(info_field(cmd(a, "INFO stats"), "rejected_connections"), 4);
    cr_expect_str_eq(cmd(a, "CONFIG SET maxclients 10000"), "+OK\r\n");
    /* client-query-buffer-limit: a request that grows past it closes */
    cr_expect_str_eq(cmd(a, "CONFIG SET client-query-buffer-limit 1mb"), "+OK\r\n");
    char *chunk = malloc(1 << 20);
    memset(chunk, 'x', 1 << 20);
    raw_send(q, "*2\r\n$4\r\nECHO\r\n$3000000\r\n", 24);
    raw_send(q, chunk, 1 << 20);
    raw_send(q, chunk, 1 << 20);
    free(chunk);
    cr_expect(raw_closed(q), "a client past client-query-buffer-limit was not closed");
    /* client-output-buffer-limit: a client of the other frontend that
     * never reads what it asked for is disconnected */
    cr_expect_str_eq(cmd(a, "CONFIG SET client-output-buffer-limit \"normal 256kb 0 0\""),
                     "+OK\r\n");
    char *val = malloc(100000);
    memset(val, 'v', 100000);
    const char *set_head = "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$100000\r\n";
    raw_send(a, set_head, strlen(set_head));
    raw_send(a, val, 100000);
    raw_send(a, "\r\n", 2);
    free(val);
    r = raw_read(a, 1);
    cr_expect_str_eq(r, "+OK\r\n");
    free(r);
    raw_t *slow = c[on1[3 % n1]];
    long long slow_id = int_reply(cmd(slow, "CLIENT ID"));
    for (int i = 0; i < 200; i++)
        raw_send(slow, "GET big\r\n", 9);
    /* Wait until the server dropped it (it leaves CLIENT LIST), and only
     * then read: reading earlier would drain what the limit counts. */
    int dropped = 0;
    for (int i = 0; i < 1000 && !dropped; i++) {
        if (i) usleep(10000);
        dropped = !strcmp(cmd(a, "CLIENT LIST ID %lld", slow_id), "$0\r\n\r\n");
    }
    cr_expect(dropped, "a client that never reads outlived client-output-buffer-limit");
    cr_expect(raw_closed(slow), "a client dropped for its output buffer is closed");
    /* timeout: an idle client of the other frontend is closed */
    cr_expect_str_eq(cmd(a, "CONFIG SET timeout 1"), "+OK\r\n");
    cr_expect(raw_closed(idle), "an idle client of the other frontend outlived timeout 1");
    cmd(a, "CONFIG SET timeout 0");
    for (int i = 0; i < N; i++)
        raw_close(c[i]);
}

/* ------------------------------------------------------------------ */
/* several frontends                                                   */

Test(conn, two_frontends_share_clients_acl_config_and_stats, .fini = teardown)
{
    start("--frontends 2");
    enum { N = 16 };
    raw_t *c[N];
    long long ids[N];
    int fe_of[N], on[2] = {-1, -1};
    for (int i = 0; i < N; i++) {
        c[i] = raw_open(S.port);
        cr_assert_not_null(c[i]);
        fe_of[i] = (int)info_field(cmd(c[i], "INFO server"), "frontend");
        ids[i] = int_reply(cmd(c[i], "CLIENT ID"));
        cmd(c[i], "CLIENT SETNAME conn-%d", i);
        if (fe_of[i] >= 0 && fe_of[i] < 2 && on[fe_of[i]] < 0) on[fe_of[i]] = i;
    }
    cr_assert(on[0] >= 0 && on[1] >= 0, "connections did not reach both frontends");
    for (int i = 0; i < N; i++)
        for (int j = 0; j < i; j++)
            cr_expect_neq(ids[i], ids[j], "client ids repeat across frontends");
    raw_t *a = c[on[0]], *b = c[on[1]];
    /* CLIENT LIST from one frontend sees every client, in id order */
    const char *list = cmd(a, "CLIENT LIST");
    long long prev = 0;
    int lines = 0;
    for (const char *p = strstr(list, "id="); p; p = strstr(p + 1, "\nid=")) {
        long long id = strtoll(p + (p[0] == '\n' ? 4 : 3), NULL, 10);
        cr_expect_gt(id, prev, "CLIENT LIST is not in id order");
        prev = id;
        lines++;
    }
    cr_expect_eq(lines, N, "%s", list);
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof(name), " name=conn-%d ", i);
        cr_expect(strstr(list, name), "CLIENT LIST lacks %s", name);
    }
    /* CLIENT KILL of a client of the other frontend */
    int victim = -1;
    for (int i = 0; i < N; i++)
        if (fe_of[i] == 1 && i != on[1]) victim = i;
    cr_assert_geq(victim, 0);
    cr_expect_str_eq(cmd(a, "CLIENT KILL ID %lld", ids[victim]), ":1\r\n");
    cr_expect(raw_closed(c[victim]), "the other frontend's client was not closed");
    list = cmd(a, "CLIENT LIST");
    char gone[32];
    snprintf(gone, sizeof(gone), "id=%lld ", ids[victim]);
    for (int i = 0; i < 100 && strstr(list, gone); i++) {
        usleep(10000);
        list = cmd(a, "CLIENT LIST");
    }
    cr_expect(!strstr(list, gone), "a killed client is still listed");
    /* CONFIG SET through one frontend, CONFIG GET through the other */
    cr_expect_str_eq(cmd(a, "CONFIG SET slowlog-max-len 77 timeout 123"), "+OK\r\n");
    cr_expect_str_eq(cmd(b, "CONFIG GET slowlog-max-len"),
                     "*2\r\n$15\r\nslowlog-max-len\r\n$2\r\n77\r\n");
    cr_expect_str_eq(cmd(b, "CONFIG GET timeout"), "*2\r\n$7\r\ntimeout\r\n$3\r\n123\r\n");
    cmd(a, "CONFIG SET timeout 0");
    /* ACL SETUSER through one, AUTH through the other; DELUSER closes it */
    cr_expect_str_eq(cmd(a, "ACL SETUSER carol on >pw ~c* +get"), "+OK\r\n");
    cr_expect_str_eq(cmd(b, "AUTH carol pw"), "+OK\r\n");
    cr_expect_str_eq(
        cmd(b, "GET nope"),
        "-NOPERM this user has no permissions to access one of the keys used as arguments\r\n");
    cr_expect_str_eq(cmd(a, "ACL SETUSER carol ~n*"), "+OK\r\n");
    cr_expect_str_eq(cmd(b, "GET nope"), "$-1\r\n");
    cr_expect_str_eq(cmd(a, "CLIENT KILL USER carol"), ":1\r\n");
    cr_expect(raw_closed(b));
    raw_close(b);
    c[on[1]] = NULL;
    b = raw_open(S.port);
    for (int i = 0; i < 40 && info_field(cmd(b, "INFO server"), "frontend") != 1; i++) {
        raw_close(b);
        b = raw_open(S.port);
    }
    cr_assert_eq(info_field(cmd(b, "INFO server"), "frontend"), 1);
    cr_expect_str_eq(cmd(b, "AUTH carol pw"), "+OK\r\n");
    cr_expect_str_eq(cmd(a, "ACL DELUSER carol"), ":1\r\n");
    cr_expect(raw_closed(b), "a deleted user's client on the other frontend stayed open");
    raw_close(b);
    b = raw_open(S.port);
    /* statistics add up over the frontends; RESETSTAT clears them all */
    cmd(a, "CONFIG RESETSTAT");
    for (int i = 0; i < N; i++)
        if (c[i] && i != victim) cmd(c[i], "ECHO x");
    const char *st = cmd(a, "INFO commandstats");
    cr_expect(strstr(st, "\r\ncmdstat_echo:calls=14,"), "%s", st);
    /* SLOWLOG: one log, whoever ran the command */
    cmd(a, "CONFIG SET slowlog-log-slower-than 0");
    cmd(a, "SLOWLOG RESET");
    for (int i = 0; i < N; i++)
        if (c[i] && i != victim) cmd(c[i], "PING marker-%d", i);
    cmd(a, "CONFIG SET slowlog-log-slower-than 10000");
    const char *sl = cmd(b, "SLOWLOG GET -1");
    for (int i = 0; i < N; i++) {
        if (!c[i] || i == victim) continue;
        char m[32];
        snprintf(m, sizeof(m), "marker-%d\r\n", i);
        cr_expect(strstr(sl, m), "SLOWLOG lacks %s", m);
    }
    raw_close(b);
    for (int i = 0; i < N; i++)
        raw_close(c[i]);
}
