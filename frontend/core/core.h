/*
 * core.h - the frontend's connection core (frontend/core/): its types and
 * what it offers the layers above it.
 *
 * The core accepts connections, parses RESP, keeps each connection's
 * replies in request order, submits records to the ring and requests to
 * the store, and resolves replies when the log makes them durable or the
 * store answers (conn.c, reply.c, submit.c). It knows nothing of any
 * command: it hands each parsed request to the hook table (fe_hooks_t)
 * that frontend/frontend.c registers at start-up, and the layers above
 * (frontend/cmd/: routing, encoders, MULTI; frontend/admin/: ACL, CLIENT,
 * CONFIG, INFO, SLOWLOG, COMMAND) call down into it, never the other way.
 */
#ifndef ATTIC_FE_CORE_H
#define ATTIC_FE_CORE_H

#include <event2/event.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "command.h"
#include "config.h"
#include "frontend/fe-shm.h"
#include "resp.h"
#include "shm.h"

struct fe_conn;
struct fe_conn_admin;
struct fe_admin;
struct fe;
struct fe_hooks;
struct fe_cmd_hooks;
struct sockaddr;

enum fe_reply_state {
    FE_READY = 0,        /* data holds the reply */
    FE_WAIT_DURABLE = 1, /* fixed reply once durable_lsn >= lsn_end */
    FE_WAIT_STORE = 2,   /* the store sends the reply, matched by (kind, id) */
    FE_PAUSED = 3,       /* a large value's reply in parts: the next not asked for yet (D48) */
};

/* Commands a connection remembers as changing nothing (D68): a consumer
 * polling a few queues in turn keeps each. */
#define FE_PROBE_TAGS 8

/* A connection's probe (D68): none, asked, or answered. */
enum fe_probe_state {
    FE_PROBE_IDLE = 0,
    FE_PROBE_SENT = 1,
    FE_PROBE_ABSENT = 2,  /* the key is not in the index */
    FE_PROBE_LIVE = 3,    /* it is, and live */
    FE_PROBE_EXPIRED = 4, /* it is, expired: only a record may delete it */
    FE_PROBE_UNKNOWN = 5, /* the store answered something else (an error) */
};

/* One request's place in its connection's reply order. */
typedef struct fe_reply {
    struct fe_reply *next;      /* in the connection's FIFO */
    struct fe_reply *hash_next; /* in the pending map (FE_WAIT_STORE) */
    struct fe_conn *conn;       /* NULL once the client is gone */
    uint64_t id;                /* store reply id: LSN (write) or read id */
    uint64_t lsn_end;           /* writes: end of the record in the log */
    uint8_t state;
    uint8_t kind; /* STORE_REPLY_READ / STORE_REPLY_WRITE */
    uint8_t is_write;
    uint8_t owns_data; /* data was malloc'ed */
    uint32_t len;
    const char *data;
    buf_t *parts;    /* a store reply arriving in parts, so far */
    uint8_t discard; /* CLIENT REPLY OFF/SKIP: dropped, never sent */
    /* A large value's reply in parts (D48, bigreply.c): the store's token
     * for it (0 = not such a reply) and whether parts remain after data. */
    uint8_t big_more;
    uint64_t big_token;
    /* A probe's answer (fe_probe_submit): in no connection's FIFO; its
     * answer goes to conn->probe, never to the client. */
    uint8_t detached;
    /* The admin layer's per-request words (statistics, slow log:
     * frontend/admin/admin.h says what they hold), zeroed with the entry;
     * the core never reads them. */
    uint64_t note[3];
} fe_reply_t;

/* A bulk of a request taken as chunks while it arrived (D48, stream.c):
 * argument `arg`, whose empty bulk's data would start `at` bytes after
 * the request's first byte, is the group's bytes [off, off + len). */
typedef struct fe_streamed {
    int arg;
    size_t at;
    uint64_t off, len;
} fe_streamed_t;

/* One value of a large write's group (D58, submit.c): argument `arg` of
 * the request, or of the transaction's payload `cmd` (multi.c), stands
 * for the group's bytes [off, off + len). */
typedef struct fe_bigval {
    uint32_t cmd, arg;
    uint64_t off, len;
} fe_bigval_t;

typedef struct fe_conn {
    struct fe *fe;
    int fd;
    uint64_t id;
    struct event *ev_read;
    struct event *ev_write;
    buf_t in; /* unparsed bytes start at in_off */
    size_t in_off;
    size_t need; /* parser's known need: skip parsing below it */
    buf_t out;   /* reply bytes not yet written */
    size_t out_off;
    fe_reply_t *head, *tail; /* replies in request order */
    /* The oldest FE_WAIT_DURABLE entry, NULL = none. Writes become durable
     * in LSN order, which is their order here, so a wake-up resolves from
     * this entry on and stops at the first one still waiting, whatever
     * reads wait between them (no walk over a deep pipeline of reads). */
    fe_reply_t *wait_durable;
    uint32_t npending;
    uint64_t last_write_end; /* reads wait for durable_lsn to pass this (D19) */
    /* Reads sent to the store and not answered yet. A write that follows
     * them on this connection waits until they are answered: the store
     * applies every durable record before it looks at a read, so a write
     * submitted early could show up in the reply of a read sent before it. */
    uint32_t reads_outstanding;
    int blocked; /* input paused: ring or channel full */
    /* A blocking command (BLPOP ...) waits for its reply (blocking set),
     * the reply to its record at LSN block_id. Nothing more of this
     * connection's input runs meanwhile (its socket is still read, so a
     * close is seen). */
    uint8_t blocking;
    /* multi.c counts an EXEC's commands (the counted hook) with this set,
     * so the statistics know them for their failed_calls (hooks.c). */
    uint8_t exec_counting;
    uint64_t block_id;
    int64_t block_deadline_ms;  /* the wall clock it times out at, 0 = never */
    uint8_t block_timeout_sent; /* its CMD_UNBLOCK for the timeout is in the ring */
    int closing;                /* close once replies are flushed (QUIT, errors) */
    int reading_paused;
    int64_t last_active_ms;        /* last input, for `timeout` */
    int64_t obuf_soft_since_ms;    /* output over the soft limit since, 0 = not */
    struct fe_conn *prev, *next;   /* in the list of all connections */
    struct fe_conn *wprev, *wnext; /* in the list of conns with pending replies */
    int in_wlist;
    /* In the list of conns whose replies go out at the end of this pass
     * of the event loop (fe_t.flush_list, conn.c). */
    struct fe_conn *fprev, *fnext;
    int in_flush;
    resp_cmd_t cmd;

    /* Session state the core and the command layer read. */
    int db;    /* SELECTed database */
    int proto; /* 2 (RESP2, default) or 3 after HELLO 3 */
    int64_t created_ms;
    cmd_id_t last_cmd;
    char addr[64], laddr[64]; /* "ip:port" of the peer and of our end */
    uint8_t is_unix;          /* connected through the unix socket */
    /* Channels, patterns and shard channels it is subscribed to (kept by
     * frontend/admin/pubsub.c): non-zero puts a RESP2 connection in
     * subscribed mode (dispatch.c) and under the pubsub class of
     * client-output-buffer-limit. */
    uint32_t subscriptions;

    /* Transactions (multi.c). */
    struct fe_multi *multi; /* non-NULL between MULTI and EXEC/DISCARD */
    struct fe_watch *watch; /* WATCHed keys, NULL = none */
    /* An EXEC whose SELECT changes the database but which WATCHed keys, so
     * the store may abort it: commands after it wait for its reply. */
    uint64_t exec_wait_lsn; /* its record's LSN + 1, 0 = none */
    uint64_t exec_wait_end; /* its record's end */
    int exec_wait_db;       /* the database once it ran */
    /* Cluster mode (frontend/cmd/cluster.c): the slot of the transaction's
     * keys so far (-1 none), whether two of its commands named different
     * slots (EXEC answers CROSSSLOT), and READONLY. */
    int32_t cl_slot;
    uint8_t cl_cross;
    uint8_t cl_readonly;

    /* A value larger than one record being written (D31, submit.c): the
     * chunks committed so far, kept while the write waits for ring room
     * (it is retried from its bytes, which stay in `in`). */
    struct {
        uint8_t active;   /* chunks committed, no final yet */
        uint8_t at_final; /* every chunk committed */
        uint32_t seq;     /* chunks committed */
        uint64_t group;   /* the first chunk's LSN */
        uint64_t off;     /* value bytes they hold */
        /* Of those, the bytes of requests already run: a transaction's
         * queued values (D58). The request being run adds after them. */
        uint64_t kept;
    } big;
    /* Large bulks taken from the socket as they arrive (D48, D58,
     * stream.c): their bytes become chunks of c's group (c->big) at most
     * one chunk at a time, and the request is parsed with an empty
     * argument standing for each. The last of vals is the one arriving. */
    struct {
        uint8_t on;     /* a bulk of the current request is being taken */
        uint8_t whole;  /* the last one is all in chunks, its terminator skipped */
        uint64_t taken; /* the last one's bytes in committed chunks */
        fe_streamed_t *vals;
        int nvals, cap;
        const char *base; /* at dispatch: the request's first byte */
    } stream;

    /* Closing from above (fe_conn_kill) and dropping replies (CLIENT REPLY):
     * the core's mechanisms, which the admin layer sets. */
    uint8_t reply_suppress; /* drop the replies of the command being run */
    uint8_t dispatching;    /* inside the command hook: fe_conn_kill must not free it */
    /* A LOCAL handler submitted a record whose store reply is the
     * command's (CLIENT UNBLOCK), or found the ring full (run it again). */
    uint8_t local_submitted, local_again;
    uint8_t doomed;     /* killed: closed by the reaper, nothing more is read */
    uint8_t input_more; /* while a command runs: more of the input follows it */

    /* A write that may change nothing asks the store first (D68,
     * frontend/cmd/probe.c): the core sends the probe and files its answer
     * here, the command layer decides. While state is FE_PROBE_SENT the
     * command stays in `in` and nothing more of c runs (the probe counts
     * in reads_outstanding). */
    struct {
        uint8_t state;     /* FE_PROBE_* */
        uint8_t next_slot; /* the tag a new one replaces */
        struct {
            uint64_t tag; /* a command that changed nothing, 0 = none */
            uint8_t len;
            char reply[7]; /* what the log answered it: "$-1\r\n", ... */
        } tags[FE_PROBE_TAGS];
        uint64_t asked;     /* the tag the probe in flight (or answered) is for */
        uint64_t learn_lsn; /* a write in the log whose reply may teach: its LSN + 1, 0 = none */
        uint64_t learn_tag;
        uint8_t learn_kind;          /* which replies mean "it changed nothing" (probe.c) */
        fe_reply_t *wait;            /* the probe's entry, in no FIFO */
        struct fe_conn *resume_next; /* in fe->resume, answered probes */
        uint8_t resume_queued;
    } probe;

    /* The admin layer's per-connection state (frontend/admin/admin.h),
     * allocated with the connection (fe_hooks_t.conn_admin_size): the core
     * never dereferences it. */
    struct fe_conn_admin *admin;
} fe_conn_t;

/* The arguments of one command as pointers and lengths (argv[0] is the
 * command's name). */
typedef struct fe_args {
    int argc;
    const char **argv;
    uint32_t *lens;
} fe_args_t;

#define FE_MAP_BUCKETS 65536

#define FE_BIG_OWED_MAX 64

typedef struct fe {
    shm_t *shm;
    const config_t *cfg;
    int slot;
    struct event_base *base;
    struct event *ev_listen[CONFIG_MAX_BINDS + 1];
    int nlisten;
    struct event *ev_wake;
    struct event *ev_timer; /* retries blocked connections, watches the master */
    /* What the layers above do at the core's events (fe_hooks_t), and the
     * command layer's own table (frontend/cmd/cmd.h), never read here. */
    const struct fe_hooks *hooks;
    const struct fe_cmd_hooks *cmd_hooks;
    ring_t *ring;
    ring_claimer_t *claimer;
    chan_t *to_store, *from_store;
    resp_limits_t limits;
    uint64_t next_read_id;
    uint64_t next_conn_id;
    fe_conn_t *conns;       /* all connections */
    fe_conn_t *wlist;       /* conns with pending replies */
    fe_conn_t *flush_list;  /* conns whose input ran this pass: written at its end */
    struct event *ev_retry; /* one-shot: retry blocked connections */
    fe_conn_t *resume;      /* connections whose probe was answered (D68) */
    fe_reply_t *map[FE_MAP_BUCKETS];
    uint64_t nwaiting; /* replies not ready yet */
    uint64_t nheld;    /* of them, under FE_KIND_HELD (WAIT, WAITAOF) */
    /* What this frontend last put in its shm durable_want (D85). */
    uint64_t durable_want;
    int no_wake_net; /* 0 unknown, 1 the test hook is on, -1 off (conn.c) */
    fe_reply_t *free_replies;
    int nblocked;
    int draining;
    uint32_t nconns;
    uint32_t nblocked_clients; /* connections with blocking set */
    int64_t last_idle_scan_ms;
    /* The lowest LSN a read held by fe_read_waits waits to see durable,
     * 0 = none; fe_reads_release retries the connections then. */
    uint64_t read_wait_lsn;
    int claimer_adopted; /* the slot's ring claimer is ours (fe_submit_record) */
    /* A read whose request goes in parts (D58, request.c): its connection
     * (NULL: none), its header, the bytes sent; a STORE_REQ_PART_DROP owed
     * for that id (its client left, the channel was full). */
    struct {
        struct fe_conn *c;
        store_req_t hdr;
        uint64_t sent;
        uint8_t drop_owed;
    } rq;
    /* Large values' groups whose client left before their final and whose
     * CMD_BIGABORT found the ring full: written at the next tick (D31). */
    uint64_t big_owed[FE_BIG_OWED_MAX];
    unsigned nbig_owed;
    /* Large values' replies in parts (D48): STORE_REQ_DROPs that found the
     * request channel full (id, token; its kind), and a STORE_REQ_NEXT that did. */
    uint64_t bigreply_owed[FE_BIG_OWED_MAX][2];
    uint8_t bigreply_owed_kind[FE_BIG_OWED_MAX];
    unsigned nbigreply_owed;
    int bigreply_retry;

    /* Limits the core enforces, kept equal to the settings shared by all
     * frontends by the refresh hook (frontend/admin/config-cmd.c). */
    int64_t maxclients, timeout_s;
    uint64_t qbuf_limit, obuf_hard, obuf_soft;
    int64_t obuf_soft_seconds;
    /* The pubsub class, for a connection with a subscription (D37). */
    uint64_t obuf_pubsub_hard, obuf_pubsub_soft;
    int64_t obuf_pubsub_soft_seconds;
    /* hash-max-listpack-entries and -value, which hash writes carry. */
    int64_t hash_max_entries, hash_max_value;
    int64_t set_max_intset;                   /* set-max-intset-entries, which set writes carry */
    int64_t hll_sparse_max;                   /* hll-sparse-max-bytes, carried by PFADD, PFMERGE */
    int64_t zset_max_entries, zset_max_value; /* zset-max-listpack-*, carried by zset writes */
    uint64_t maxmemory;       /* denyoom writes refused while used_memory exceeds it; 0 = none */
    int maxmemory_evicts;     /* maxmemory-policy is not noeviction: the store evicts */
    int64_t last_obuf_sum_ms; /* shm fe[slot].client_bytes last computed (on_timer) */
    /* The static cluster topology (common/cluster.h, D35), NULL unless
     * cluster-enabled: the command layer redirects keys of other nodes. */
    struct cluster *cluster;
    /* This frontend's counters in shm (INFO stats, commandstats): the core
     * counts bytes, connections and commands; the admin layer the rest. */
    shm_fe_stats_t *stats;
    uint64_t stat_epoch;   /* the RESETSTAT epoch stats belong to */
    struct event *ev_reap; /* one-shot: close the connections fe_conn_kill doomed */

    struct fe_admin *admin; /* the admin layer's state (frontend/admin/), opaque here */
} fe_t;

/* True when the n bytes at s are `word`, in any case (options, subcommands). */
static inline int fe_word_eq(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && strncasecmp(s, word, n) == 0;
}

/*
 * The hook interface: how the core reaches the layers above it. One table,
 * filled by frontend/frontend.c at start-up (fe_core_new); the core calls
 * each member at the event its comment names, in the order the core's
 * comments give. Per command there is one call (command); the others run
 * per event (a read, a batch of completions, a tick).
 */
typedef struct fe_hooks {
    /* Bytes of the admin layer's state per connection (c->admin), zeroed
     * and allocated with it. */
    size_t conn_admin_size;
    /* Run one parsed request: fe_dispatch's contract (frontend/cmd/cmd.h):
     * 0 = handled, -EAGAIN = wait for ring or channel space, -EBUSY = a
     * write waits for the connection's earlier reads; nothing was consumed
     * or replied on -EAGAIN/-EBUSY. buf holds the request's bytes. */
    int (*command)(fe_conn_t *c, const char *buf, resp_cmd_t *cmd);
    /* After the requests of one input batch were run (at most one batch
     * runs at a time). */
    void (*input_done)(fe_conn_t *c);
    /* A reply that waited (durable, store) just became ready; *now is 0 or
     * the clock (shm_mono_ns) read once for this batch of completions. */
    void (*reply_ready)(fe_t *fe, fe_reply_t *r, uint64_t *now);
    /* The store answered a write of c: its record's LSN and reply. */
    void (*write_reply)(fe_conn_t *c, uint64_t lsn, const char *reply, size_t len);
    /* Settings shared by every frontend may have changed: re-read them
     * (fe_t's limits included: maxclients, timeout, buffer limits). */
    void (*refresh)(fe_t *fe);
    /* A new peer, before its connection exists: NULL to accept it, or the
     * text to send before closing it (protected mode). */
    const char *(*refuse)(fe_t *fe, const struct sockaddr *peer);
    /* A connection was set up (it is in fe->conns) / is being freed. */
    void (*on_connect)(fe_conn_t *c);
    void (*on_close)(fe_conn_t *c);
    /* Bytes arrived on c (after refresh). */
    void (*on_input)(fe_conn_t *c);
    /* This frontend's wake-up fd fired, before completions are looked at. */
    void (*on_wake)(fe_t *fe);
    /* Every tick of the periodic timer, before the idle scan. */
    void (*on_timer)(fe_t *fe);
    /* May argument `arg` of a request of `count` arguments named name[0,
     * n) be taken as chunks while it arrives (D48, D58)? 1 when it is the
     * value of a write that takes large values in chunks (or, inside
     * MULTI, any argument of a read) and c may send it, else 0 (then it
     * is read whole, as any bulk). */
    int (*stream_arg)(fe_conn_t *c, const char *name, size_t n, int count, int arg);
} fe_hooks_t;

/* ---- stream.c: a large bulk taken as chunks while it arrives (D48) ---- */
/* After resp_parse said RESP_NEED_MORE for c's request: if it waits in
 * the bytes of a bulk that stream_arg accepts and that is longer than a
 * chunk, start taking it (c->stream.on). Returns 1 when started. */
int fe_stream_begin(fe_conn_t *c);
/* Commit the streamed bulk's bytes that fill a chunk (or end it) and
 * drop them from the input. Returns 1 once all of it is committed and
 * the request parses with it empty (c->stream.whole), 0 when more input
 * is needed, -EAGAIN when the ring is full (retry), -EPIPE when writes
 * are refused (the log stopped, a replica): c is being closed. */
int fe_stream_pump(fe_conn_t *c);
/* Bytes the next read of c should have room for while it streams (0 when
 * it does not). */
size_t fe_stream_room(const fe_conn_t *c);
/* The streamed request was run (or refused): its parts are dropped unless
 * its final was committed or a transaction keeps them (c->multi: queued
 * commands' values wait in the group for EXEC, D58); c->stream is
 * cleared. */
void fe_stream_end(fe_conn_t *c);
/* At dispatch: the bulk taken as chunks whose empty argument is at p in
 * the request being run, or NULL when p is no such argument. */
const fe_streamed_t *fe_stream_find(const fe_conn_t *c, const void *p);

/* ---- bigreply.c: a large value's reply in parts, asked for one at a time (D48) ---- */
/* A part (h, body[0, len)) of r's reply, which fe_collect_store found
 * waiting: r is ready with it (the store is asked for the next once it is
 * written out). Returns 1 when it is the reply's first part (the caller
 * answers the read or write with it, as it would a whole reply: the
 * replica hold, a blocked client, MULTI's hook), 0 for a later one, -1 when the reply was cut short
 * (a store restarted mid-reply): the caller must close r's client, which has part of a bulk. */
int fe_bigreply_part(fe_t *fe, fe_reply_t *r, const store_reply_t *h, const char *body,
                     uint32_t len);
/* A paused part for no waiting entry (a respawned store answering a read
 * again): the store is told to drop that reply. */
void fe_bigreply_orphan(fe_t *fe, const store_reply_t *h, const char *body, uint32_t len);
/* If c's head is a paused reply and little of c's output is unsent, ask
 * the store for its next part (retried at the next tick when the channel
 * is full). */
void fe_bigreply_pull(fe_conn_t *c);
/* r, a paused reply whose client left, is given up (the store frees it). */
void fe_bigreply_drop(fe_t *fe, const fe_reply_t *r);
/* Each tick: the drops and pulls that found the request channel full. */
void fe_bigreply_tick(fe_t *fe);

/* ---- request.c: reads to the store ---- */
/* Send c's read `op` (argv/lens: the user's arguments after the name) to
 * the store and queue its reply: one message, or parts when it is longer
 * than one (D58). Returns 0; -EAGAIN when the channel is full or another
 * connection's read is going in parts (run it again: parts already sent
 * stay sent); -EMSGSIZE when it is longer than 4 GB (nothing sent). */
int fe_read_submit(fe_conn_t *c, uint16_t op, int argc, const unsigned char *const *argv,
                   const uint32_t *lens);
/* c is closing: its read in parts, if any, is given up. */
void fe_read_abandon(fe_conn_t *c);
/* Ask the store whether `key` is in c's database, and live, for a write
 * that would change nothing (D68): the answer lands in c->probe.state
 * (FE_PROBE_ABSENT, _LIVE, _EXPIRED or _UNKNOWN) and c's input runs
 * again. Returns 0 when sent; -EAGAIN (channel full) or -EMSGSIZE (the key
 * needs parts) when not, and then the caller just runs the write. */
int fe_probe_submit(fe_conn_t *c, const unsigned char *key, uint32_t klen);
/* Each tick: the STORE_REQ_PART_DROP fe_read_abandon found no room for. */
void fe_read_tick(fe_t *fe);

/* ---- reply.c: reply entries, in request order ---- */
fe_reply_t *fe_reply_push(fe_conn_t *c);     /* append a new entry to c's FIFO */
fe_reply_t *fe_reply_detached(fe_conn_t *c); /* an entry in no FIFO (a probe's, D68) */
void fe_reply_ready_static(fe_conn_t *c, const char *s, size_t n); /* immediate reply */
void fe_reply_ready_buf(fe_conn_t *c, buf_t *b); /* immediate reply from b (b reset) */
void fe_wait_store(fe_t *fe, fe_reply_t *r, uint8_t kind, uint64_t id);
void fe_wait_durable(fe_t *fe, fe_reply_t *r, uint64_t lsn_end); /* fixed +OK */
void fe_wake_logger(fe_t *fe);
void fe_wake_store(fe_t *fe);
/* Something now waits for a durable LSN (a fixed reply, a read behind a
 * write): every flush wakes this frontend until it next sleeps, when
 * fe_check_completions says from which LSN on (D85). */
void fe_want_durable(fe_t *fe);
/* Tell the logger from which durable LSN on a flush should wake this
 * frontend (shm fe[].durable_want; 0 = every flush, UINT64_MAX = none). */
void fe_durable_want_publish(fe_t *fe, uint64_t want);
/* An error reply built with printf, cleaned as Redis cleans its own
 * (resp_error_clean), so a client can't break the protocol through an
 * echoed argument. */
void fe_reply_errorf(fe_conn_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- submit.c: records into the ring, reads' wait for durability ---- */
#define FE_MAX_RECORD_ARGS 65535 /* a record's argument count is a u16 */
/* 1 (and the error replied) when writes are refused (the log stopped, the
 * disk full), else 0. */
int fe_write_refused(fe_conn_t *c);
/* 1 when min-replicas-to-write and min-replicas-max-lag are both set and
 * fewer replicas are good (common/repl-shm.h): writes get -NOREPLICAS. */
int fe_too_few_replicas(shm_t *shm);
/* Claim, encode and commit one record with payload op+db `opdb` and these
 * arguments, and queue its reply (the store's when needs_store_reply, else
 * +OK once durable). Returns 0; -EAGAIN when the ring is full; -EMSGSIZE
 * when no record may be that large (nothing done, nothing replied). */
int fe_submit_record(fe_conn_t *c, uint16_t opdb, int needs_store_reply, int argc,
                     const unsigned char *const *argv, const uint32_t *lens);
/* The largest payload one record may have (ring-size / 4). */
size_t fe_record_max_payload(const fe_t *fe);
/* Values larger than a record (D31, D58): their bytes go into c's group
 * as CMD_CHUNK records, then one CMD_BIGFINAL names each value's place
 * and nests the write (or the transaction) they belong to. */
/* Commit the bytes of the values v[0, n) that are not in c's group yet:
 * value k's bytes are src[k] (NULL: in the group already, streamed), its
 * off where they go. Values to commit come in the group's order and
 * c->big.off says how far it is (a retry goes on from there). Returns 0,
 * -EAGAIN (ring full: call again with the same values). */
int fe_big_put(fe_conn_t *c, const fe_bigval_t *v, const unsigned char *const *src, int n);
/* Bytes a final record's payload needs for a nested payload of
 * nested_len bytes and n values (compare with fe_record_max_payload). */
size_t fe_big_final_size(size_t nested_len, int n);
/* Commit the CMD_BIGFINAL of c's group, once every value is in it: the
 * layout v[0, n) (in the group's order) and the nested payload (op+db
 * opdb, its value arguments empty), and queue its reply (the store's).
 * c's group is then done. Returns 0, -EAGAIN (ring full, retry), or
 * -EMSGSIZE (too large a record: nothing committed by this call). */
int fe_big_final(fe_conn_t *c, uint16_t opdb, const unsigned char *nested, size_t nested_len,
                 const fe_bigval_t *v, int n);
/* Commit c's next CMD_CHUNK: n bytes at p of the value being written
 * (the group starts with the first). Returns 0, -EAGAIN (ring full). */
int fe_submit_chunk(fe_conn_t *c, const unsigned char *p, uint32_t n);
/* Value bytes per CMD_CHUNK (0 when a record cannot hold one). */
uint64_t fe_chunk_bytes(const fe_t *fe);
/* 1 when writes may be claimed now (no replica, log running, space). */
int fe_writes_open(fe_t *fe);
/* c's large value will not be finished (the client left, the write was
 * refused on a retry): its parts are dropped by a CMD_BIGABORT, now or,
 * when the ring is full, at a later tick (fe_submit_tick). */
void fe_big_abandon(fe_conn_t *c);
/* Write the aborts fe_big_abandon found no ring room for (each tick). */
void fe_big_flush_owed(fe_t *fe);
/* Write a CMD_TICK record (no reply; see command.h). */
void fe_submit_tick(fe_t *fe);
/* Claim, encode and commit a record nobody waits for (no origin, no
 * reply entry): CMD_TICK, the blocked clients' CMD_UNBLOCK/BLOCKDROP.
 * Returns 0, or -EAGAIN when the ring is full or writes are not possible
 * now (the caller tries again later). */
int fe_submit_bare(fe_t *fe, uint16_t opdb, int argc, const unsigned char *const *argv,
                   const uint32_t *lens);
/* 1 when a read of c must wait for c's writes to be durable (D19):
 * fe_reads_release retries c then; 0 when it may go to the store now. */
int fe_read_must_wait(fe_conn_t *c);
/* Retry the connections whose read waited for a write that is now durable
 * (or never will be: the log failed). Returns 1 when some were scheduled
 * (fe->ev_retry), 0 when none waits or none may go yet. */
int fe_reads_release(fe_t *fe);

/* Entries a layer above holds in FE_WAIT_STORE under this kind (WAIT,
 * frontend/admin/repl.c), with ids from fe->next_read_id; it resolves them
 * with fe_reply_complete. */
#define FE_KIND_HELD 3

/* ---- conn.c: connections, completions, the event loop ---- */
/* The LSN below which writes may be acknowledged: durable_lsn, and with
 * min-replicas-acked k, also acked by k replicas (D33). */
uint64_t fe_ack_lsn(fe_t *fe);
/* Resolve an entry held under FE_KIND_HELD with this reply (copied), and
 * send what is ready; an entry whose client left is freed. */
void fe_reply_complete(fe_t *fe, fe_reply_t *r, const char *data, size_t len);
/* c's blocking command, its record at lsn, waits for the store's reply
 * (deadline_ms: the wall clock of its timeout, 0 = none): c runs nothing
 * more until it arrives, then resumes its input. */
void fe_conn_block(fe_conn_t *c, uint64_t lsn, int64_t deadline_ms);
/* Close c at once (CLIENT KILL, deleted ACL user). Never frees it here: c
 * stops reading and is closed right after the current event. */
void fe_conn_kill(fe_conn_t *c);
/* Server-pushed bytes for c (Pub/Sub messages), whole RESP values: they go
 * out after what is already in c's output, ahead of replies still waiting
 * (a push never splits a reply). Past the output-buffer limit c is killed
 * (fe_conn_kill) instead. Never frees c. */
void fe_conn_push(fe_conn_t *c, const char *p, size_t n);
/* Zero this frontend's counters (fe->stats) if CONFIG RESETSTAT moved the
 * epoch since; runs before anything is counted, once per event. */
void fe_stats_sync_epoch(fe_t *fe);
/* A frontend for `slot` with these hooks (kept, not copied): its fields,
 * read ids and counters set up, nothing listening yet. NULL when out of
 * memory. */
fe_t *fe_core_new(shm_t *shm, const config_t *cfg, int slot, const fe_hooks_t *hooks,
                  const struct fe_cmd_hooks *cmd_hooks);
/* Listen on the master's sockets and run the event loop until shutdown
 * drained the connections or the master died. Returns the exit status. */
int fe_core_run(fe_t *fe, const int *listen_fds, int nlisten);

/* ---- core-internal: reply.c's primitives conn.c uses ---- */
void fe_reply_free(fe_t *fe, fe_reply_t *r);
void fe_wlist_del(fe_conn_t *c);
fe_reply_t *fe_map_take(fe_t *fe, uint8_t kind, uint64_t id);
fe_reply_t *fe_map_find(fe_t *fe, uint8_t kind, uint64_t id);
/* A part of a store reply (shm.h): 1 when r's reply is complete, with *p
 * and *n set to the whole of it. */
int fe_reply_part(fe_reply_t *r, const store_reply_t *h, const char **p, uint32_t *n);
/* Move the ready entries at the head of c's FIFO to its output buffer. */
void fe_conn_collect(fe_conn_t *c);

#endif
