/*
 * submit.c - what a frontend puts in the ring and how its reads wait, in a
 * frontend process: claiming, encoding and committing one record
 * (fe_submit_record, for dispatch.c's writes and multi.c's EXEC), the
 * store's CMD_TICK records, the refusal of writes once the log stopped or
 * the disk is full, and the rule that a read goes to the store only once
 * its connection's writes are durable (D19).
 *
 * A frontend killed between a claim and its commit leaves an abandoned
 * claim the logger pads (contract 5); its successor adopts the slot's
 * claimer once the logger is past it (claimer_adopted).
 *
 * A write whose values make its record too large (D31, D58) goes as
 * CMD_CHUNK records of one group holding all those values, one after the
 * other, then one CMD_BIGFINAL that says where each value is and nests
 * the write (or a whole transaction, multi.c): the reply waits for the
 * final, whose durability implies the chunks' (they precede it in the
 * log). A value not streamed (core/stream.c) is read from the
 * connection's input buffer, where it stays until its chunks are
 * committed: a full ring returns -EAGAIN and the write is retried from
 * where c->big says. A client that leaves before the final gets a
 * CMD_BIGABORT; a frontend that dies leaves that to the store (it sees
 * the owner pid gone).
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontend/core/core.h"
#include "command.h"
#include "io_fault.h"
#include "record.h"

int fe_too_few_replicas(shm_t *shm)
{
    shm_config_t *sc = &fe_shm(shm)->config;
    int64_t want = atomic_load_explicit(&sc->min_replicas_to_write, memory_order_relaxed);
    int64_t lag = atomic_load_explicit(&sc->min_replicas_max_lag, memory_order_relaxed);
    /* Redis: the guard is on only when both are set. */
    return want > 0 && lag > 0 && repl_good_replicas(&shm->repl, lag, shm_now_ms()) < want;
}

int fe_writes_open(fe_t *fe)
{
    return !atomic_load(&fe->shm->repl.is_replica) &&
           atomic_load(&fe->shm->logger_state) != LOGGER_FAILED &&
           !atomic_load(&fe->shm->log_no_space);
}

int fe_write_refused(fe_conn_t *c)
{
    if (atomic_load(&c->fe->shm->repl.is_replica)) {
        /* A replica's log is its leader's (D33): nothing else may claim. */
        static const char msg[] = "-READONLY You can't write against a read only replica.\r\n";
        fe_reply_ready_static(c, msg, sizeof(msg) - 1);
        return 1;
    }
    if (fe_too_few_replicas(c->fe->shm)) {
        static const char msg[] = "-NOREPLICAS Not enough good replicas to write.\r\n";
        fe_reply_ready_static(c, msg, sizeof(msg) - 1);
        return 1;
    }
    if (atomic_load(&c->fe->shm->logger_state) == LOGGER_FAILED) {
        fe_reply_errorf(c,
                        "ERR AtticDB's log is stopped after an I/O error (%s): writes are "
                        "refused until the server restarts",
                        strerror(atomic_load(&c->fe->shm->logger_errno)));
        return 1;
    }
    if (atomic_load(&c->fe->shm->log_no_space)) {
        static const char msg[] =
            "-ERR disk full: AtticDB can't create its next log segment; writes are "
            "refused until space is freed (reads still work)\r\n";
        fe_reply_ready_static(c, msg, sizeof(msg) - 1);
        return 1;
    }
    return 0;
}

size_t fe_record_max_payload(const fe_t *fe)
{
    uint64_t max = ring_max_record(fe->ring);
    if (max > UINT32_MAX) max = UINT32_MAX;
    return max > REC_HDR_SIZE ? (size_t)(max - REC_HDR_SIZE) : 0;
}

/* A predecessor of this frontend may have died holding a ring claim: the
 * slot's claimer is ours once the logger is past that claim. Checked at
 * each claim rather than waited for at start: a frontend started while
 * the log is failed or out of space (writes refused, the claim never
 * passed) must still accept and serve reads (D12). */
static int claimer_adopted(fe_t *fe)
{
    if (!fe->claimer_adopted)
        fe->claimer_adopted = ring_claimer_adopt(fe->claimer, atomic_load(&fe->shm->durable_lsn));
    return fe->claimer_adopted;
}

/* Claim, encode and commit one record for a client; *pos_out and
 * *space_out say where it went. When own_lsn is not NULL, the record's LSN
 * is written there (8 bytes, an argument's buffer) once claimed, before it
 * is encoded: a record that names itself. Returns 0, -EAGAIN (the ring is
 * full: the logger and the store are woken) or -EMSGSIZE. */
static int put_record(fe_t *fe, uint16_t opdb, uint16_t origin, int argc,
                      const unsigned char *const *argv, const uint32_t *lens,
                      unsigned char *own_lsn, uint64_t *pos_out, uint32_t *space_out)
{
    if (argc > FE_MAX_RECORD_ARGS) return -EMSGSIZE;
    if (!claimer_adopted(fe)) return -EAGAIN; /* retried soon, like a full ring */
    /* After a restart of the server, the store first drops the blocked
     * clients of the previous run (D36): a push before that would serve a
     * client that is gone. */
    if (!atomic_load_explicit(&fe->shm->block_reset, memory_order_acquire)) return -EAGAIN;
    size_t payload = rec_cmd_payload_size((uint16_t)argc, lens);
    if (payload > UINT32_MAX - 2 * REC_ALIGN) return -EMSGSIZE;
    uint32_t space = rec_space((uint32_t)payload);
    uint64_t pos;
    int rc = ring_claim(fe->ring, fe->claimer, space, &pos);
    if (rc == -EAGAIN) {
        fe_wake_logger(fe);
        fe_wake_store(fe);
        return -EAGAIN;
    }
    if (rc == -EMSGSIZE) return -EMSGSIZE;
    /* Test hook: die holding the claim, as a SIGKILL at this instruction
     * would (contract 5; the logger must pad the claim). */
    if (io_fault_point(IO_FAULT_CLAIM)) raise(SIGKILL);
    if (own_lsn) cmd_put_i64(own_lsn, (int64_t)pos);
    uint64_t durable = atomic_load_explicit(&fe->shm->durable_lsn, memory_order_acquire);
    rec_encode_cmd_durable(ring_ptr(fe->ring, pos), pos, durable, origin, shm_now_ms(), opdb,
                           (uint16_t)argc, argv, lens);
    ring_commit(fe->ring, fe->claimer, pos);
    fe_wake_logger(fe);
    *pos_out = pos;
    *space_out = space;
    return 0;
}

int fe_submit_record(fe_conn_t *c, uint16_t opdb, int needs_store_reply, int argc,
                     const unsigned char *const *argv, const uint32_t *lens)
{
    fe_t *fe = c->fe;
    uint16_t origin = needs_store_reply ? (uint16_t)(fe->slot + 1) : 0;
    uint64_t pos;
    uint32_t space;
    int rc = put_record(fe, opdb, origin, argc, argv, lens, NULL, &pos, &space);
    if (rc) return rc;
    fe_reply_t *r = fe_reply_push(c);
    r->is_write = 1;
    r->lsn_end = pos + space;
    if (needs_store_reply)
        fe_wait_store(fe, r, STORE_REPLY_WRITE, pos);
    else
        fe_wait_durable(fe, r, pos + space);
    c->last_write_end = pos + space;
    return 0;
}

int fe_submit_bare(fe_t *fe, uint16_t opdb, int argc, const unsigned char *const *argv,
                   const uint32_t *lens)
{
    if (atomic_load(&fe->shm->logger_state) != LOGGER_RUNNING || !claimer_adopted(fe))
        return -EAGAIN;
    uint32_t space = rec_space((uint32_t)rec_cmd_payload_size((uint16_t)argc, lens));
    uint64_t pos;
    if (ring_claim(fe->ring, fe->claimer, space, &pos) != 0) return -EAGAIN;
    uint64_t durable = atomic_load_explicit(&fe->shm->durable_lsn, memory_order_acquire);
    rec_encode_cmd_durable(ring_ptr(fe->ring, pos), pos, durable, 0, shm_now_ms(), opdb,
                           (uint16_t)argc, argv, lens);
    ring_commit(fe->ring, fe->claimer, pos);
    fe_wake_logger(fe);
    return 0;
}

/* ---- values larger than one record (D31) ---- */

/* Value bytes per CMD_CHUNK: what a record holds besides the chunk's
 * other arguments, in whole pages. */
uint64_t fe_chunk_bytes(const fe_t *fe)
{
    size_t max = fe_record_max_payload(fe);
    return max > 8192 ? (max - 4096) & ~(size_t)4095 : 0;
}

static int put_abort(fe_t *fe, uint64_t group)
{
    unsigned char id[8];
    cmd_put_i64(id, (int64_t)group);
    const unsigned char *argv[1] = {id};
    uint32_t lens[1] = {8}, space;
    uint64_t pos;
    return put_record(fe, REC_OP_DB(CMD_BIGABORT, 0), 0, 1, argv, lens, NULL, &pos, &space);
}

void fe_big_abandon(fe_conn_t *c)
{
    fe_t *fe = c->fe;
    if (!c->big.active) return;
    if (put_abort(fe, c->big.group) != 0) {
        if (fe->nbig_owed < FE_BIG_OWED_MAX) fe->big_owed[fe->nbig_owed++] = c->big.group;
        /* Else the store drops it when this frontend is gone. */
    }
    memset(&c->big, 0, sizeof(c->big));
}

void fe_big_flush_owed(fe_t *fe)
{
    while (fe->nbig_owed && put_abort(fe, fe->big_owed[fe->nbig_owed - 1]) == 0)
        fe->nbig_owed--;
}

int fe_submit_chunk(fe_conn_t *c, const unsigned char *p, uint32_t n)
{
    fe_t *fe = c->fe;
    unsigned char group[8], seq[4], owner[8];
    uint64_t pos;
    uint32_t space;
    cmd_put_i64(group, (int64_t)c->big.group);
    cmd_put_u32(seq, c->big.seq);
    /* The store drops the group if this process is gone (compact.c). */
    cmd_put_i64(owner, (int64_t)((uint64_t)(uint32_t)fe->slot << 32 | (uint32_t)getpid()));
    const unsigned char *argv[4] = {group, seq, owner, p};
    uint32_t lens[4] = {8, 4, 8, n};
    /* The first chunk names the group: its own LSN, unique for ever. */
    int rc = put_record(fe, REC_OP_DB(CMD_CHUNK, 0), 0, 4, argv, lens, c->big.active ? NULL : group,
                        &pos, &space);
    if (rc) return rc;
    if (!c->big.active) {
        c->big.active = 1;
        c->big.group = pos;
    }
    c->big.seq++;
    c->big.off += n;
    c->last_write_end = pos + space;
    if (io_fault_point(IO_FAULT_BIG_CHUNK) == IO_FAULT_KILL) raise(SIGKILL);
    return 0;
}

int fe_big_put(fe_conn_t *c, const fe_bigval_t *v, const unsigned char *const *src, int n)
{
    uint64_t per = fe_chunk_bytes(c->fe);
    for (int k = 0; k < n; k++) {
        if (!src[k]) continue;
        uint64_t end = v[k].off + v[k].len;
        /* A chunk never holds two values' bytes: the group's pieces then
         * end where values do (the store cuts anywhere, D58, but needs
         * not). */
        while (c->big.off < end) {
            uint64_t from = c->big.off - v[k].off, left = end - c->big.off;
            int rc = fe_submit_chunk(c, src[k] + from, (uint32_t)(left < per ? left : per));
            if (rc) return rc;
        }
    }
    return 0;
}

#define LAYOUT_ITEM 24 /* u32 cmd, u32 arg, u64 off, u64 len (command.h) */

size_t fe_big_final_size(size_t nested_len, int n)
{
    const uint32_t lens[3] = {8, (uint32_t)n * LAYOUT_ITEM, (uint32_t)nested_len};
    return rec_cmd_payload_size(3, lens);
}

int fe_big_final(fe_conn_t *c, uint16_t opdb, const unsigned char *nested, size_t nested_len,
                 const fe_bigval_t *v, int n)
{
    if (fe_big_final_size(nested_len, n) > fe_record_max_payload(c->fe)) return -EMSGSIZE;
    if (!c->big.at_final) {
        c->big.at_final = 1; /* every chunk is committed */
        if (io_fault_point(IO_FAULT_BIG_FINAL) == IO_FAULT_KILL) raise(SIGKILL);
    }
    unsigned char *layout = malloc((size_t)n * LAYOUT_ITEM), group[8];
    if (!layout) abort();
    for (int k = 0; k < n; k++) {
        unsigned char *p = layout + (size_t)k * LAYOUT_ITEM;
        cmd_put_u32(p, v[k].cmd);
        cmd_put_u32(p + 4, v[k].arg);
        cmd_put_i64(p + 8, (int64_t)v[k].off);
        cmd_put_i64(p + 16, (int64_t)v[k].len);
    }
    cmd_put_i64(group, (int64_t)c->big.group);
    const unsigned char *fargv[3] = {group, layout, nested};
    uint32_t flens[3] = {8, (uint32_t)n * LAYOUT_ITEM, (uint32_t)nested_len};
    /* The store's reply, always: it is the write's (and says so if the
     * parts were dropped). Its durability implies every chunk's. */
    int rc = fe_submit_record(c, REC_OP_DB(CMD_BIGFINAL, REC_DB(opdb)), 1, 3, fargv, flens);
    free(layout);
    if (rc == 0) memset(&c->big, 0, sizeof(c->big));
    return rc;
}

/* A CMD_TICK record, asked for by the store (shm tick_wanted): it carries
 * only the time, which moves the apply clock so expired keys are reclaimed
 * at a point of the log replay will meet too. Nobody waits for it; when the
 * ring is full, records are flowing anyway and the store asks again. */
void fe_submit_tick(fe_t *fe)
{
    /* On a replica the apply clock moves with the leader's records (D33). */
    if (atomic_load(&fe->shm->repl.is_replica)) return;
    (void)fe_submit_bare(fe, REC_OP_DB(CMD_TICK, 0), 0, NULL, NULL);
}

/* A read goes to the store only once its connection's writes are durable
 * (D19): then its min_lsn is durable_lsn, the store reaches it by applying
 * what is durable already, and no read waits inside the store for the
 * logger, where a store's death would lose it. Returns 1 when c's read
 * must wait (fe_reads_release retries c), 0 when it may go. */
int fe_read_must_wait(fe_conn_t *c)
{
    fe_t *fe = c->fe;
    if (c->last_write_end <= atomic_load_explicit(&fe->shm->durable_lsn, memory_order_acquire))
        return 0;
    /* After the log failed, the write never will be durable (it got an
     * error): the read sees what is. */
    if (atomic_load(&fe->shm->logger_state) == LOGGER_FAILED) return 0;
    if (!fe->read_wait_lsn || c->last_write_end < fe->read_wait_lsn)
        fe->read_wait_lsn = c->last_write_end;
    fe_want_durable(fe);
    return 1;
}

int fe_reads_release(fe_t *fe)
{
    if (!fe->read_wait_lsn) return 0;
    if (atomic_load_explicit(&fe->shm->durable_lsn, memory_order_acquire) < fe->read_wait_lsn &&
        atomic_load(&fe->shm->logger_state) != LOGGER_FAILED)
        return 0;
    /* Those still waiting set it again when retried. */
    fe->read_wait_lsn = 0;
    event_active(fe->ev_retry, EV_TIMEOUT, 0);
    return 1;
}
