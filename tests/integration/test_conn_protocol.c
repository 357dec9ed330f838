/*
 * test_conn_protocol.c - the protocol side of a real atticdb-server's
 * connection layer (split from test_conn.c; frontend/admin/client.c, acl*.c,
 * command-cmd.c): RESP3 through HELLO 3 and the replies of each type in
 * RESP2 and RESP3; the byte-for-byte comparisons with a real Redis (HELLO,
 * AUTH, ACL, CLIENT, CONFIG and COMMAND replies, errors included, with and
 * without requirepass); COMMAND DOCS in Redis' structure; AUTH and ACL
 * users from the configuration (a bad user line stops the server).
 *
 * Replies are compared as raw bytes. Where a redis-server is installed
 * (PATH or REDIS_SERVER), the same byte sequences go to a private Redis
 * and to AtticDB and the replies must be identical (ids masked); without
 * one those tests are skipped with a message. The expected texts written
 * out here come from redis-server 7.0.15.
 *
 * Environment: ATTICDB_SERVER (the server binary), REDIS_SERVER.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conn_helpers.h"
#include "redis_diff.h"

TestSuite(conn, .fini = srv_cleanup_all, .timeout = 90);

/* ------------------------------------------------------------------ */
/* the reference Redis                                                 */

static void redis_or_skip(const char *const *extra)
{
    const char *path = wire_redis_path();
    if (!path)
        cr_skip_test(
            "redis-server not found (PATH or REDIS_SERVER): differential checks need Redis 7");
    const char *args[16] = {"--bind", "127.0.0.1", "--save", "", "--appendonly", "no"};
    int n = 6;
    for (int i = 0; extra && extra[i] && n < 15; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    cr_assert_eq(proc_start(&R, path, NULL, args, extra ? "" : "+PONG"), 0,
                 "redis-server did not start");
}

/* Replace the number after "id" in HELLO replies (client ids differ). */
static void mask_ids(char *s)
{
    for (char *p = s; (p = strstr(p, "$2\r\nid\r\n:")) != NULL;) {
        p += 9;
        char *e = strstr(p, "\r\n");
        if (!e) return;
        memset(p, 'N', (size_t)(e - p));
    }
}

/* Send `bytes` (holding `count` commands) on a fresh connection to Redis
 * and to AtticDB; the replies must be the same bytes. */
static void same(int count, const char *bytes)
{
    raw_t *a = raw_open(R.port), *b = raw_open(S.port);
    cr_assert(a && b);
    raw_send(a, bytes, strlen(bytes));
    raw_send(b, bytes, strlen(bytes));
    char *ra = raw_read(a, count), *rb = raw_read(b, count);
    mask_ids(ra);
    mask_ids(rb);
    cr_expect(strcmp(ra, rb) == 0, "for %s\nredis:   %s\natticdb: %s", bytes, ra, rb);
    free(ra);
    free(rb);
    raw_close(a);
    raw_close(b);
}

/* ------------------------------------------------------------------ */
/* RESP3 and HELLO                                                     */

Test(conn, hello_and_resp3_replies, .fini = teardown)
{
    start("--frontends 1");
    raw_t *c = raw_open(S.port);
    cr_assert_not_null(c);
    long long id = int_reply(cmd(c, "CLIENT ID"));
    char want[512];
    snprintf(
        want, sizeof(want),
        "%%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:"
        "3\r\n"
        "$2\r\nid\r\n:%lld\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n"
        "$7\r\nmodules\r\n*0\r\n",
        id);
    cr_expect_str_eq(cmd(c, "HELLO 3"), want);
    /* the store's replies, converted: null bulk and null array elements */
    cr_expect_str_eq(cmd(c, "GET missing"), "_\r\n");
    cr_expect_str_eq(cmd(c, "SET a 1"), "+OK\r\n");
    cr_expect_str_eq(cmd(c, "MGET a missing"), "*2\r\n$1\r\n1\r\n_\r\n");
    cr_expect_str_eq(cmd(c, "CLIENT GETNAME"), "_\r\n");
    cr_expect_str_eq(cmd(c, "CONFIG GET maxclients"), "%1\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n");
    const char *info = cmd(c, "INFO server");
    cr_expect(strncmp(info, "=", 1) == 0 && strstr(info, "\r\ntxt:# Server\r\n"), "%.80s", info);
    const char *ci = cmd(c, "CLIENT INFO");
    cr_expect(ci[0] == '=' && strstr(ci, "txt:id=") && strstr(ci, " resp=3 "), "%s", ci);
    cr_expect_str_eq(cmd(c, "ACL GETUSER nobody"), "_\r\n");
    /* back to RESP2 */
    snprintf(
        want, sizeof(want),
        "*14\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:"
        "2\r\n"
        "$2\r\nid\r\n:%lld\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n"
        "$7\r\nmodules\r\n*0\r\n",
        id);
    cr_expect_str_eq(cmd(c, "HELLO 2"), want);
    cr_expect_str_eq(cmd(c, "GET missing"), "$-1\r\n");
    cr_expect_str_eq(cmd(c, "MGET a missing"), "*2\r\n$1\r\n1\r\n$-1\r\n");
    /* HELLO's errors, Redis' texts */
    cr_expect_str_eq(cmd(c, "HELLO 4"), "-NOPROTO unsupported protocol version\r\n");
    cr_expect_str_eq(cmd(c, "HELLO 1"), "-NOPROTO unsupported protocol version\r\n");
    cr_expect_str_eq(cmd(c, "HELLO abc"),
                     "-ERR Protocol version is not an integer or out of range\r\n");
    cr_expect_str_eq(cmd(c, "HELLO 3 FOO"), "-ERR Syntax error in HELLO option 'FOO'\r\n");
    cr_expect_str_eq(cmd(c, "HELLO 3 AUTH default"),
                     "-ERR Syntax error in HELLO option 'AUTH'\r\n");
    cr_expect_str_eq(cmd(c, "HELLO 3 SETNAME"), "-ERR Syntax error in HELLO option 'SETNAME'\r\n");
    const char *bad = "*4\r\n$5\r\nHELLO\r\n$1\r\n2\r\n$7\r\nSETNAME\r\n$3\r\na b\r\n";
    raw_send(c, bad, strlen(bad));
    char *r = raw_read(c, 1);
    cr_expect_str_eq(
        r, "-ERR Client names cannot contain spaces, newlines or special characters.\r\n");
    free(r);
    /* the failed HELLOs changed nothing: still RESP2, no name */
    cr_expect_str_eq(cmd(c, "CLIENT GETNAME"), "$-1\r\n");
    cmd(c, "HELLO 2 SETNAME hello-name");
    cr_expect_str_eq(cmd(c, "CLIENT GETNAME"), "$10\r\nhello-name\r\n");
    raw_close(c);
}

Test(conn, differential_replies, .fini = teardown)
{
    redis_or_skip(NULL);
    start("--frontends 1");
    same(10, "HELLO 4\r\nHELLO abc\r\nHELLO 3 FOO\r\nHELLO 1\r\nHELLO 3 SETNAME\r\n"
             "HELLO 3 AUTH default\r\nHELLO 3 SETNAME a b\r\nHELLO 3\r\nHELLO 2 SETNAME x\r\n"
             "CLIENT GETNAME\r\n");
    same(4, "AUTH x\r\nAUTH a b c\r\nAUTH nouser x\r\nAUTH default x\r\n");
    same(3, "ACL WHOAMI\r\nACL USERS\r\nACL LIST\r\n");
    same(22,
         "CLIENT ID x\r\nCLIENT GETNAME x\r\nCLIENT SETNAME\r\nCLIENT SETNAME \"\"\r\n"
         "CLIENT GETNAME\r\nCLIENT KILL 1.2.3.4:5\r\nCLIENT KILL ID 99999\r\nCLIENT KILL ID x\r\n"
         "CLIENT KILL FOO bar\r\nCLIENT KILL ADDR 1.2.3.4:5 SKIPME maybe\r\nCLIENT KILL ID\r\n"
         "CLIENT KILL USER nosuch\r\nCLIENT KILL TYPE normal SKIPME yes\r\nCLIENT REPLY foo\r\n"
         "CLIENT NO-EVICT maybe\r\nCLIENT NO-EVICT on\r\nCLIENT FOO\r\nCLIENT\r\nCLIENT INFO x\r\n"
         "CLIENT LIST ID 1 x\r\nCLIENT LIST ID\r\nCLIENT LIST TYPE foo\r\n");
    /* CLIENT REPLY: OFF and SKIP drop replies, ON says OK */
    same(5,
         "CLIENT SETNAME foo\r\nCLIENT GETNAME\r\nCLIENT REPLY OFF\r\nPING\r\nCLIENT REPLY SKIP\r\n"
         "PING\r\nCLIENT REPLY ON\r\nPING\r\nCLIENT REPLY SKIP\r\nPING\r\nPING\r\n");
    same(18,
         "CONFIG SET maxclients 100 timeout 5\r\nCONFIG GET maxclients\r\nCONFIG SET maxclients "
         "abc\r\n"
         "CONFIG SET nosuch 1\r\nCONFIG SET maxclients 10 maxclients 20\r\n"
         "CONFIG SET timeout 1 nosuch 2\r\nCONFIG SET timeout\r\nCONFIG SET timeout 1 2\r\n"
         "CONFIG GET\r\nCONFIG GET nosuch\r\nCONFIG SET timeout -1\r\nCONFIG SET maxclients 0\r\n"
         "CONFIG SET proto-max-bulk-len 10\r\nCONFIG SET loglevel foo\r\n"
         "CONFIG SET protected-mode maybe\r\nCONFIG SET slowlog-max-len -1\r\n"
         "CONFIG SET client-output-buffer-limit \"normal 1 2\"\r\nCONFIG SET "
         "client-query-buffer-limit 1\r\n");
    same(13,
         "CONFIG SET daemonize yes\r\nCONFIG SET daemonize yes timeout 1\r\n"
         "CONFIG SET timeout 1 daemonize yes\r\nCONFIG SET databases 3\r\n"
         "CONFIG SET timeout abc daemonize yes\r\nCONFIG SET Timeout 7\r\nCONFIG GET TIMEOUT\r\n"
         "CONFIG SET client-output-buffer-limit \"normal 1mb 2mb 3\"\r\n"
         "CONFIG GET client-output-buffer-limit\r\nCONFIG GET slowlog-max-len\r\nCONFIG GET "
         "loglevel\r\n"
         "CONFIG GET proto-max-bulk-len\r\nCONFIG GET client-query-buffer-limit\r\n");
    same(11,
         "CONFIG SET proto-max-bulk-len abc\r\nCONFIG SET proto-max-bulk-len 2mb\r\n"
         "CONFIG GET proto-max-bulk-len\r\nCONFIG SET timeout 1.5\r\nCONFIG SET maxclients 10k\r\n"
         "CONFIG SET slowlog-log-slower-than -5\r\nCONFIG SET client-output-buffer-limit \"foo 1 2 "
         "3\"\r\n"
         "CONFIG SET client-output-buffer-limit \"normal x 2 3\"\r\nCONFIG SET daemonize yes "
         "nosuch 1\r\n"
         "CONFIG SET timeout 5 maxclients 0\r\nCONFIG GET timeout\r\n");
    same(7,
         "HELLO 3\r\nCONFIG GET maxclients\r\nCONFIG RESETSTAT\r\nCONFIG RESETSTAT x\r\nCONFIG\r\n"
         "CONFIG FOO\r\nCONFIG SET proto-max-bulk-len 512mb client-query-buffer-limit 1gb\r\n");
    same(17, "COMMAND COUNT x\r\nCOMMAND GETKEYS get a\r\nCOMMAND GETKEYS mset a 1 b 2\r\n"
             "COMMAND GETKEYS ping\r\nCOMMAND GETKEYS nosuch a\r\nCOMMAND GETKEYS get\r\n"
             "COMMAND GETKEYS get a b\r\nCOMMAND GETKEYS ping x\r\nCOMMAND FOO\r\nCOMMAND LIST "
             "FILTERBY\r\n"
             "COMMAND LIST foo\r\nCOMMAND DOCS nosuch\r\nCOMMAND INFO nosuch\r\nCOMMAND GETKEYS "
             "mset a\r\n"
             "COMMAND GETKEYS object encoding k\r\nCOMMAND LIST FILTERBY MODULE x\r\n"
             "COMMAND LIST FILTERBY ACLCAT nosuch\r\n");
    /* Redis' own command entries (redis-cli's hints); COMMAND DOCS has our
     * own summaries, so its structure is compared in command_docs_structure */
    same(2, "COMMAND INFO get set mget mset expire\r\nCOMMAND INFO ping echo\r\n");
    same(2, "HELLO 3\r\nCOMMAND INFO get set incr\r\n");
    same(8, "SLOWLOG GET -2\r\nSLOWLOG GET x\r\nSLOWLOG GET 1 2\r\nSLOWLOG LEN 1\r\nSLOWLOG FOO\r\n"
            "SLOWLOG HELP\r\nSLOWLOG\r\nSLOWLOG RESET\r\n");
    same(3, "RESET\r\nTIME x\r\nCLIENT GETNAME\r\n");
    same(15,
         "ACL SETUSER u2 on >p1 ~k* +@string -set +get\r\nACL GETUSER nouser\r\nACL SETUSER u2 "
         "+@foo\r\n"
         "ACL SETUSER u2 foo\r\nACL SETUSER u2 #abc\r\nACL SETUSER \"a b\"\r\nACL DELUSER "
         "default\r\n"
         "ACL DELUSER u2 nosuch\r\nACL CAT\r\nACL CAT nosuch\r\nACL FOO\r\nACL\r\nACL WHOAMI x\r\n"
         "ACL LOG x\r\nACL SAVE\r\n");
    same(12, "ACL SETUSER d1 on nopass ~a* +get +mset\r\nACL DRYRUN d1 get zz\r\n"
             "ACL DRYRUN d1 mset a 1 zz 2\r\nACL DRYRUN d1 get a\r\nACL DRYRUN nosuch get a\r\n"
             "ACL DRYRUN d1 nocmd\r\nACL DRYRUN d1 get\r\nACL DRYRUN d1 del a\r\nACL GENPASS 0\r\n"
             "ACL GENPASS x\r\nACL DELUSER d1\r\nACL DRYRUN d1 get a\r\n");
    /* descriptions (Redis 7.0 orders several single commands by its hash
     * table, so one each here) */
    same(7, "ACL SETUSER d2 on >pw ~b* &c +get\r\nACL SETUSER d3 off nopass allkeys +@all "
            "-@dangerous\r\n"
            "ACL SETUSER d4 reset\r\nACL GETUSER d2\r\nACL GETUSER d3\r\nACL LIST\r\nACL DELUSER "
            "d2 d3 d4\r\n");
    /* permissions, NOPERM texts, AUTH as another user */
    same(15, "ACL SETUSER t on nopass ~k* +get +config|get +client +set\r\nAUTH t x\r\nGET k1\r\n"
             "GET z\r\nSET z 1\r\nDEL k\r\nCONFIG GET maxclients\r\nCONFIG SET maxclients 10\r\n"
             "CONFIG FOO\r\nACL WHOAMI\r\nMGET k1 z\r\nPING\r\nCLIENT SETNAME x\r\nCONFIG GET\r\n"
             "RESET\r\n");
    same(6, "ACL SETUSER n1 on nopass -@all\r\nAUTH n1 x\r\nHELLO 2\r\nRESET\r\nPING\r\nACL "
            "DELUSER n1 t\r\n");
}

/* ---- COMMAND DOCS: Redis' structure, our own wording ---- */

/* A parsed reply: a leaf (t, s, len) or an aggregate of n kids (a map's
 * kids alternate key, value). */
typedef struct rnode {
    char t;
    const char *s;
    size_t len;
    size_t n;
    struct rnode *kid;
} rnode_t;

static size_t rparse(const char *p, rnode_t *out)
{
    const char *cr = strstr(p, "\r\n");
    long long v = strtoll(p + 1, NULL, 10);
    size_t head = (size_t)(cr + 2 - p);
    memset(out, 0, sizeof(*out));
    out->t = p[0];
    switch (p[0]) {
    case '$':
    case '=':
        if (v < 0) return head;
        out->s = p + head;
        out->len = (size_t)v;
        return head + (size_t)v + 2;
    case '*':
    case '~':
    case '%': {
        out->n = v < 0 ? 0 : (size_t)(p[0] == '%' ? 2 * v : v);
        out->kid = calloc(out->n ? out->n : 1, sizeof(rnode_t));
        size_t off = head;
        for (size_t i = 0; i < out->n; i++)
            off += rparse(p + off, &out->kid[i]);
        return off;
    }
    default:
        out->s = p + 1;
        out->len = head - 3;
        return head;
    }
}

static void rfree(rnode_t *r)
{
    for (size_t i = 0; i < r->n; i++)
        rfree(&r->kid[i]);
    free(r->kid);
}

static int leaf_is(const rnode_t *r, const char *s)
{
    return r->s && r->len == strlen(s) && memcmp(r->s, s, r->len) == 0;
}

/* The value under `key` of a map (RESP3 %) or flat key/value array (RESP2). */
static const rnode_t *field(const rnode_t *m, const char *key)
{
    for (size_t i = 0; m && i + 1 < m->n; i += 2)
        if (leaf_is(&m->kid[i], key)) return &m->kid[i + 1];
    return NULL;
}

/* The structure of a COMMAND DOCS entry as text: every field and value,
 * arguments included, except our own wording (summary, complexity), what we
 * leave out (history, replaced_by), an argument's display_text, and the
 * subcommands (compared one by one). */
static void shape(FILE *f, const rnode_t *r)
{
    if (r->t == '*' || r->t == '~' || r->t == '%') {
        fprintf(f, "%c[", r->t);
        for (size_t i = 0; i < r->n; i++) {
            if ((r->t == '%' || (r->t == '*' && r->n % 2 == 0)) && i % 2 == 0 &&
                (leaf_is(&r->kid[i], "summary") || leaf_is(&r->kid[i], "complexity") ||
                 leaf_is(&r->kid[i], "history") || leaf_is(&r->kid[i], "replaced_by") ||
                 leaf_is(&r->kid[i], "display_text") || leaf_is(&r->kid[i], "subcommands"))) {
                i++;
                continue;
            }
            shape(f, &r->kid[i]);
            fputc(' ', f);
        }
        fputc(']', f);
    } else {
        fprintf(f, "%c%.*s", r->t, (int)r->len, r->s ? r->s : "");
    }
}

static char *shape_of(const rnode_t *r)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    shape(f, r);
    fclose(f);
    return s;
}

/* One entry (name `name`) of AtticDB's COMMAND DOCS against Redis'. */
static void docs_entry_like_redis(const char *name, const rnode_t *a, const rnode_t *r)
{
    const char *need[] = {"summary", "since", "group", "complexity"};
    for (int k = 0; k < 4; k++) {
        const rnode_t *v = field(a, need[k]);
        cr_expect(v && v->s && v->len > 0, "%s: no %s", name, need[k]);
    }
    cr_expect(!field(a, "history") && !field(a, "replaced_by"), "%s: Redis' prose left", name);
    if (!r) return;
    const rnode_t *sa = field(a, "summary"), *sr = field(r, "summary");
    cr_expect(!(sa && sr && sa->len == sr->len && !memcmp(sa->s, sr->s, sa->len)),
              "%s: the summary is Redis' own text", name);
    char *ta = shape_of(a), *tr = shape_of(r);
    cr_expect_str_eq(ta, tr, "%s: structure differs from Redis'", name);
    free(ta);
    free(tr);
    /* subcommands: AtticDB's (a subset of Redis') one by one */
    const rnode_t *subs = field(a, "subcommands"), *rsubs = field(r, "subcommands");
    cr_expect(!subs == !rsubs, "%s: subcommands on one side only", name);
    for (size_t i = 0; subs && i + 1 < subs->n; i += 2) {
        char sub[64];
        snprintf(sub, sizeof(sub), "%.*s", (int)subs->kid[i].len, subs->kid[i].s);
        const rnode_t *rs = field(rsubs, sub);
        /* CLIENT SETINFO is Redis 7.2's, absent from 7.0.15 */
        cr_expect(rs || !strcmp(sub, "client|setinfo"), "%s: not a Redis subcommand", sub);
        docs_entry_like_redis(sub, &subs->kid[i + 1], rs);
    }
}

/* Commands AtticDB has from Redis releases after the 7.0.15 these tests run
 * against (WAITAOF is 7.2's): test_repl checks its COMMAND INFO. */
static int newer_than_redis_7_0(const rnode_t *name)
{
    return name->len == 7 && !strncasecmp(name->s, "waitaof", 7);
}

/* COMMAND DOCS keeps Redis' structure (since, group, doc_flags, arguments
 * with their names, types, tokens and flags, subcommands) but not its prose:
 * every entry has our own summary and complexity, and no history. Compared
 * with a redis-server in RESP2 and RESP3. */
Test(conn, command_docs_structure, .fini = teardown)
{
    redis_or_skip(NULL);
    start("--frontends 1");
    for (int proto = 2; proto <= 3; proto++) {
        raw_t *a = raw_open(S.port), *r = raw_open(R.port);
        cr_assert(a && r);
        if (proto == 3) {
            cmd(a, "HELLO 3");
            cmd(r, "HELLO 3");
        }
        rnode_t ad, rd;
        char *abytes = strdup(cmd(a, "COMMAND DOCS")); /* cmd()'s reply lives until its next call */
        rparse(abytes, &ad);
        /* the same names asked of Redis */
        char line[4096] = "COMMAND DOCS";
        size_t ln = strlen(line);
        size_t newer = 0; /* entries of commands after Redis 7.0 */
        for (size_t i = 0; i + 1 < ad.n; i += 2) {
            if (newer_than_redis_7_0(&ad.kid[i])) {
                newer += 2;
                continue;
            }
            ln += (size_t)snprintf(line + ln, sizeof(line) - ln, " %.*s", (int)ad.kid[i].len,
                                   ad.kid[i].s);
        }
        cr_assert_lt(ln, sizeof(line) - 1);
        char *rbytes = strdup(cmd(r, "%s", line));
        rparse(rbytes, &rd);
        cr_expect_gt(ad.n / 2, 60, "COMMAND DOCS has %zu entries", ad.n / 2);
        cr_expect_eq(ad.n - newer, rd.n, "Redis has docs for every command AtticDB has");
        for (size_t i = 0; i + 1 < ad.n; i += 2) {
            if (newer_than_redis_7_0(&ad.kid[i])) continue;
            char name[64];
            snprintf(name, sizeof(name), "%.*s", (int)ad.kid[i].len, ad.kid[i].s);
            const rnode_t *re = field(&rd, name);
            cr_expect_not_null(re, "%s: no Redis docs", name);
            docs_entry_like_redis(name, &ad.kid[i + 1], re);
        }
        rfree(&ad);
        rfree(&rd);
        free(abytes);
        free(rbytes);
        raw_close(a);
        raw_close(r);
    }
}

Test(conn, differential_requirepass, .fini = teardown)
{
    const char *extra[] = {"--requirepass", "secret", NULL};
    redis_or_skip(extra);
    const char *args[] = {"--bind",        "127.0.0.1", "--frontends", "2",
                          "--requirepass", "secret",    NULL};
    cr_assert_eq(proc_start(&A, atticdb_path(), NULL, args, "-NOAUTH"), 0);
    S.port = A.port;
    same(1, "GET a\r\n");
    same(1, "PING\r\n");
    same(1, "HELLO 3\r\n");
    same(1, "HELLO\r\n");
    same(1, "HELLO 3 AUTH default x\r\n");
    same(4, "AUTH x\r\nAUTH default x\r\nAUTH nouser x\r\nAUTH a b c\r\n");
    same(2, "AUTH secret\r\nGET a\r\n");
    same(2, "CLIENT ID\r\nQUIT\r\n");
    same(3, "AUTH secret\r\nRESET\r\nGET a\r\n");
    same(2, "HELLO 2 AUTH default secret\r\nGET a\r\n");
    same(1, "EXEC\r\n");
    same(5, "AUTH default secret\r\nCONFIG SET requirepass \"\"\r\nCONFIG GET requirepass\r\n"
            "CONFIG SET requirepass secret\r\nCONFIG GET requirepass\r\n");
}

/* ------------------------------------------------------------------ */
/* AUTH, ACL users from the configuration                              */

Test(conn, requirepass_and_user_lines, .fini = teardown)
{
    char dir[] = "/tmp/attic-conf-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof(path), "%s/atticdb.conf", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "user alice on >wonderland ~a* +get +set +client|id\n"
               "user bob off nopass allkeys +@all\n"
               "requirepass \"s3cret\"\n");
    fclose(f);
    const char *args[] = {"--bind", "127.0.0.1", "--frontends", "1", NULL};
    /* the config file goes first, as with redis-server */
    cr_assert_eq(proc_start(&A, atticdb_path(), path, args, "-NOAUTH"), 0);
    raw_t *c = raw_open(A.port);
    cr_assert_not_null(c);
    const char *r;
    cr_expect_str_eq(cmd(c, "GET a"), "-NOAUTH Authentication required.\r\n");
    cr_expect_str_eq(
        cmd(c, "HELLO 3"),
        "-NOAUTH HELLO must be called with the client already authenticated, otherwise the "
        "HELLO AUTH <user> <pass> option can be used to authenticate the client and select "
        "the RESP protocol version at the same time\r\n");
    cr_expect_str_eq(cmd(c, "AUTH wrong"),
                     "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    cr_expect_str_eq(cmd(c, "AUTH bob x"),
                     "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    cr_expect_str_eq(cmd(c, "AUTH alice wonderland"), "+OK\r\n");
    cr_expect_str_eq(cmd(c, "ACL WHOAMI"),
                     "-NOPERM this user has no permissions to run the 'acl|whoami' command\r\n");
    cr_expect_str_eq(cmd(c, "SET apple 1"), "+OK\r\n");
    cr_expect_str_eq(
        cmd(c, "SET banana 1"),
        "-NOPERM this user has no permissions to access one of the keys used as arguments\r\n");
    cr_expect_str_eq(cmd(c, "DEL apple"),
                     "-NOPERM this user has no permissions to run the 'del' command\r\n");
    cr_expect(cmd(c, "CLIENT ID")[0] == ':');
    cr_expect_str_eq(cmd(c, "CLIENT LIST"),
                     "-NOPERM this user has no permissions to run the 'client|list' command\r\n");
    /* EXEC refused is an EXECABORT, as Redis words it */
    cr_expect_str_eq(
        cmd(c, "EXEC"),
        "-EXECABORT Transaction discarded because of: NOPERM this user has no permissions "
        "to run the 'exec' command\r\n");
    cr_expect_str_eq(cmd(c, "AUTH s3cret"), "+OK\r\n");
    cr_expect_str_eq(cmd(c, "ACL WHOAMI"), "$7\r\ndefault\r\n");
    r = cmd(c, "ACL LIST");
    cr_expect(strstr(r, "\r\nuser alice on #") &&
                  strstr(r, " ~a* resetchannels -@all +get +set +client|id\r\n"),
              "%s", r);
    cr_expect(strstr(r, "\r\nuser bob off nopass ~* resetchannels +@all\r\n"), "%s", r);
    cr_expect(strstr(r, "user default on #") && strstr(r, " ~* &* +@all\r\n"), "%s", r);
    /* RESET: back to the default user, unauthenticated (it has a password) */
    cr_expect_str_eq(cmd(c, "RESET"), "+RESET\r\n");
    cr_expect_str_eq(cmd(c, "GET a"), "-NOAUTH Authentication required.\r\n");
    char hello[512];
    snprintf(hello, sizeof(hello), "%s", cmd(c, "HELLO 3 AUTH default s3cret SETNAME n1"));
    mask_ids(hello);
    cr_expect_str_eq(
        hello, "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\n"
               "proto\r\n:3\r\n$2\r\nid\r\n:N\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n"
               "$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n");
    cr_expect_str_eq(cmd(c, "CLIENT GETNAME"), "$2\r\nn1\r\n");
    /* requirepass removed at run time: new clients need no AUTH */
    cr_expect_str_eq(cmd(c, "CONFIG SET requirepass \"\""), "+OK\r\n");
    raw_t *d = raw_open(A.port);
    cr_expect_str_eq(cmd(d, "PING"), "+PONG\r\n");
    cr_expect_str_eq(
        cmd(d, "AUTH x"),
        "-ERR AUTH <password> called without any password configured for the default user. "
        "Are you sure your configuration is correct?\r\n");
    /* and set again: an existing client stays authenticated, a new one
     * must AUTH (as in Redis) */
    cr_expect_str_eq(cmd(c, "CONFIG SET requirepass again"), "+OK\r\n");
    cr_expect_str_eq(cmd(d, "PING"), "+PONG\r\n");
    raw_t *e = raw_open(A.port);
    cr_expect_str_eq(cmd(e, "PING"), "-NOAUTH Authentication required.\r\n");
    raw_close(c);
    raw_close(d);
    raw_close(e);
    proc_stop(&A);
    char rm[300];
    snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
    if (system(rm)) {
    }
}

Test(conn, bad_user_line_stops_the_server)
{
    char out[4096];
    int rc = srv_run_tool("atticdb-server",
                          "--port 0 --unixsocket /tmp/attic-conn-nope.sock "
                          "--dir /tmp/attic-conn-nodir --user alice on +nocmd",
                          out, sizeof(out));
    cr_expect_neq(rc, 0);
    cr_expect(strstr(out, "FATAL CONFIG ERROR") &&
                  strstr(out, "Error in user declaration 'alice': "
                              "Unknown command or category name in ACL"),
              "%s", out);
    if (system("rm -rf /tmp/attic-conn-nodir")) {
    }
}
