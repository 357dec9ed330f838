/*
 * probe.c - writes that a missing key makes no-ops, answered without the
 * log (D68), in a frontend process.
 *
 * A consumer polling an empty queue (LPOP, RPOP, SPOP, ZPOPMIN, ZPOPMAX,
 * LMOVE, RPOPLPUSH on a missing key), or a cache invalidation deleting a
 * key that is not there (DEL, UNLINK, SREM, HDEL, ZREM, LREM,
 * ZREMRANGEBY*, the EXPIRE family, PERSIST) changes nothing, and Redis
 * writes nothing to its AOF for it, so its reply costs no fsync there.
 * Here every one was a record, and its reply waited for the flush and the
 * store: each cost a flush's latency and some log bytes.
 *
 * So a connection remembers, per exact command (its words, database and
 * protocol: the tag), the reply the log gave when that command found its
 * key missing: an empty form ("$-1", "*-1", "*0", "_", "~0") for a pop,
 * ":0" for a removal. Only a missing key gives a pop an empty form (count
 * 0 aside, never probed); a removal may answer ":0" with its key there,
 * and then the probe below finds the key and the log decides. When the
 * same command comes again, the frontend first asks the store whether the
 * key is in the index (CMD_PROBE, a read: it sees every write acked before
 * it, as any read, D19). Absent: the remembered reply is sent, nothing is
 * written; that is the answer a read of the key would linearise with.
 * Present (or expired but not yet deleted, which the record must do):
 * the tag is forgotten and the command goes to the log as before. A write
 * that finds its key costs nothing extra; only a command seen to find
 * nothing is probed.
 *
 * Only a connection with nothing else in flight probes (no earlier reply
 * waiting, no more commands in its input, not in MULTI, no large value):
 * its command stays in its input while the probe is out (-EBUSY), so
 * nothing of it can overtake it. A pipelining client is left to the log:
 * a probe per command, one after another, cost it more than one flush.
 */
#include <errno.h>
#include <string.h>

#include "frontend/cmd/cmd.h"
#include "strutil.h"

/* When a command changes nothing, and what it then answers: with its key
 * missing, an empty form (a pop, SET XX) or ":0" (a removal); with its key
 * there and live, a nil or ":0" (SET NX, SETNX: a lock already held). */
enum { NOOP_NONE = 0, NOOP_EMPTY = 1, NOOP_ZERO = 2, NOOP_HELD = 3 };

/* SET's options: NOOP_HELD with NX, NOOP_EMPTY with XX, NOOP_NONE with GET
 * (its reply is the old value) or neither. A malformed SET is refused
 * before its key is looked at, so it is never remembered. */
static int set_kind(const fe_args_t *a)
{
    int kind = NOOP_NONE;
    for (int i = 3; i < a->argc; i++) {
        if (fe_word_eq(a->argv[i], a->lens[i], "get")) return NOOP_NONE;
        if (fe_word_eq(a->argv[i], a->lens[i], "nx")) kind = NOOP_HELD;
        if (fe_word_eq(a->argv[i], a->lens[i], "xx")) kind = NOOP_EMPTY;
    }
    return kind;
}

/* The commands that may change nothing, by their key (argv[1]): the pops
 * and SET XX when it is missing (their reply then an empty form, "$-1",
 * "*-1", "*0", "_" or "~0" by command and protocol), the removals when it
 * is missing (":0": DEL and UNLINK of one key, SREM, HDEL, ZREM, LREM,
 * ZREMRANGEBY*, the EXPIRE family, PERSIST), SET NX and SETNX when it is
 * there and live (nil, ":0"). NOOP_NONE for the rest. */
static int probed_command(const cmd_desc_t *d, const fe_args_t *a)
{
    switch (d->id) {
    case CMD_LPOP:
    case CMD_RPOP:
    case CMD_SPOP:
    case CMD_ZPOPMIN:
    case CMD_ZPOPMAX: {
        /* With a count of 0 an existing key answers "*0" where a missing
         * one answers otherwise: not probed. */
        long long count;
        if (a->argc == 3 && (str_to_ll(a->argv[2], a->lens[2], &count) || count <= 0))
            return NOOP_NONE;
        return a->argc == 2 || a->argc == 3 ? NOOP_EMPTY : NOOP_NONE;
    }
    case CMD_LMOVE:
    case CMD_RPOPLPUSH:
        return NOOP_EMPTY; /* a missing source: nil, whatever the destination */
    case CMD_SET:
        return set_kind(a);
    case CMD_SETNX:
        return NOOP_HELD;
    case CMD_DEL:
    case CMD_UNLINK:
        return a->argc == 2 ? NOOP_ZERO : NOOP_NONE;
    case CMD_SREM:
    case CMD_HDEL:
    case CMD_ZREM:
    case CMD_LREM:
    case CMD_ZREMRANGEBYRANK:
    case CMD_ZREMRANGEBYSCORE:
    case CMD_ZREMRANGEBYLEX:
    case CMD_EXPIRE:
    case CMD_PEXPIRE:
    case CMD_EXPIREAT:
    case CMD_PEXPIREAT:
    case CMD_PERSIST:
        return NOOP_ZERO;
    default:
        return NOOP_NONE;
    }
}

static int reply_is(const char *reply, size_t len, const char *form)
{
    return len == strlen(form) && memcmp(reply, form, len) == 0;
}

/* Whether reply is what a command of this kind answers when it changes
 * nothing. */
static int noop_reply(int kind, const char *reply, size_t len)
{
    switch (kind) {
    case NOOP_ZERO:
        return reply_is(reply, len, ":0\r\n");
    case NOOP_HELD:
        return reply_is(reply, len, ":0\r\n") || reply_is(reply, len, "$-1\r\n") ||
               reply_is(reply, len, "_\r\n");
    case NOOP_EMPTY:
        return reply_is(reply, len, "$-1\r\n") || reply_is(reply, len, "*-1\r\n") ||
               reply_is(reply, len, "*0\r\n") || reply_is(reply, len, "_\r\n") ||
               reply_is(reply, len, "~0\r\n");
    default:
        return 0;
    }
}

/* The command as the connection would run it: its words, database and
 * protocol (FNV-1a; never 0). */
static uint64_t command_tag(const fe_conn_t *c, const fe_args_t *a)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const uint32_t head[2] = {(uint32_t)c->db, (uint32_t)c->proto};
    const unsigned char *p = (const unsigned char *)head;
    for (size_t i = 0; i < sizeof(head); i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    for (int i = 0; i < a->argc; i++) {
        uint32_t n = a->lens[i];
        for (int k = 0; k < 4; k++)
            h = (h ^ ((n >> (8 * k)) & 0xff)) * 0x100000001b3ull;
        /* The command's name in any case is the same command. */
        for (uint32_t j = 0; j < n; j++) {
            unsigned char ch = (unsigned char)a->argv[i][j];
            if (i == 0 && ch >= 'a' && ch <= 'z') ch = (unsigned char)(ch - 'a' + 'A');
            h = (h ^ ch) * 0x100000001b3ull;
        }
    }
    return h ? h : 1;
}

static int learned(const fe_conn_t *c, uint64_t tag)
{
    for (int i = 0; i < FE_PROBE_TAGS; i++)
        if (c->probe.tags[i].tag == tag) return i;
    return -1;
}

static int eligible(const fe_conn_t *c)
{
    /* A client that pipelines gets its pops through the log: probes one
     * after another would hold its pipeline a store round trip each,
     * where its records share one flush. */
    return !c->input_more && !c->multi && !c->head && !c->reads_outstanding && !c->blocking &&
           !c->big.active && !c->stream.on && !c->stream.whole && !c->exec_wait_lsn;
}

int fe_probe_begin(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a)
{
    if (c->probe.state != FE_PROBE_IDLE || !eligible(c) || probed_command(d, a) == NOOP_NONE)
        return 0;
    uint64_t tag = command_tag(c, a);
    if (learned(c, tag) < 0) return 0;
    if (fe_probe_submit(c, (const unsigned char *)a->argv[1], a->lens[1])) return 0;
    c->probe.asked = tag;
    atomic_fetch_add_explicit(&c->fe->stats->write_probes, 1, memory_order_relaxed);
    return 1;
}

int fe_probe_answer(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a)
{
    if (c->probe.state == FE_PROBE_IDLE || c->probe.state == FE_PROBE_SENT) return 0;
    int state = c->probe.state;
    c->probe.state = FE_PROBE_IDLE;
    int kind = probed_command(d, a);
    if (kind == NOOP_NONE) return 0;
    uint64_t tag = command_tag(c, a);
    int i = learned(c, tag);
    if (tag != c->probe.asked || i < 0) return 0; /* another command now: the log decides */
    /* An expired key is neither missing nor there: only a record may
     * delete it. */
    if (state != (kind == NOOP_HELD ? FE_PROBE_LIVE : FE_PROBE_ABSENT)) {
        c->probe.tags[i].tag = 0; /* it would change something now */
        return 0;
    }
    buf_t b;
    buf_init(&b);
    buf_append(&b, c->probe.tags[i].reply, c->probe.tags[i].len);
    fe_reply_ready_buf(c, &b);
    buf_free(&b);
    atomic_fetch_add_explicit(&c->fe->stats->writes_unlogged, 1, memory_order_relaxed);
    return 1;
}

void fe_probe_note(fe_conn_t *c, const cmd_desc_t *d, const fe_args_t *a)
{
    int kind = probed_command(d, a);
    if (kind == NOOP_NONE || !c->tail || c->tail->state != FE_WAIT_STORE ||
        c->tail->kind != STORE_REPLY_WRITE)
        return;
    c->probe.learn_lsn = c->tail->id + 1; /* 0 = none: the log's first record is at 0 */
    c->probe.learn_tag = command_tag(c, a);
    c->probe.learn_kind = (uint8_t)kind;
}

void fe_probe_write_reply(fe_conn_t *c, uint64_t lsn, const char *reply, size_t len)
{
    if (lsn + 1 != c->probe.learn_lsn) return;
    c->probe.learn_lsn = 0;
    uint64_t tag = c->probe.learn_tag;
    int i = learned(c, tag);
    if (!noop_reply(c->probe.learn_kind, reply, len)) {
        if (i >= 0) c->probe.tags[i].tag = 0;
        return;
    }
    if (i < 0) {
        i = c->probe.next_slot;
        c->probe.next_slot = (uint8_t)((i + 1) % FE_PROBE_TAGS);
    }
    c->probe.tags[i].tag = tag;
    c->probe.tags[i].len = (uint8_t)len;
    memcpy(c->probe.tags[i].reply, reply, len);
}
