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
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "frontend/core/core.h"
#include "io_fault.h"
#include "record.h"

int fe_write_refused(fe_conn_t *c)
{
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

int fe_submit_record(fe_conn_t *c, uint16_t opdb, int needs_store_reply, int argc,
                     const unsigned char *const *argv, const uint32_t *lens)
{
    fe_t *fe = c->fe;
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
    uint16_t origin = needs_store_reply ? (uint16_t)(fe->slot + 1) : 0;
    uint64_t durable = atomic_load_explicit(&fe->shm->durable_lsn, memory_order_acquire);
    rec_encode_cmd_durable(ring_ptr(fe->ring, pos), pos, durable, origin, shm_now_ms(), opdb,
                           (uint16_t)argc, argv, lens);
    ring_commit(fe->ring, fe->claimer, pos);
    fe_wake_logger(fe);

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

/* A CMD_TICK record, asked for by the store (shm tick_wanted): it carries
 * only the time, which moves the apply clock so expired keys are reclaimed
 * at a point of the log replay will meet too. Nobody waits for it; when the
 * ring is full, records are flowing anyway and the store asks again. */
void fe_submit_tick(fe_t *fe)
{
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
