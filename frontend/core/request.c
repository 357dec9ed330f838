/*
 * request.c - a read's request to the store, in a frontend process: one
 * message on this frontend's request channel, or, when its arguments make
 * it longer than one message (a SISMEMBER of a member past channel-size /
 * 2, D58), several parts that the store puts back together (shm.h,
 * STORE_REQ_PART).
 *
 * One read goes in parts at a time per frontend: another connection's
 * read that needs parts waits (-EAGAIN, retried) until the last part is
 * sent; single-message requests go on meanwhile (the store assembles only
 * parts, and the connection whose parts are in flight runs nothing else).
 * The reply entry is queued with the last part, so a read whose parts
 * wait for channel room is run again from where they stopped. A client
 * that leaves part-way gets its request dropped (STORE_REQ_PART_DROP, owed
 * to the next tick when the channel is full); a frontend that dies
 * part-way leaves the store to drop it (the slot's pid changed).
 *
 * The request's bytes are the connection's input, where they stay until
 * the last part is sent: the arguments are held once, as for any command.
 */
#include <errno.h>
#include <signal.h>

#include "frontend/core/core.h"
#include "io_fault.h"
#include "record.h"

/* The request header of c's read: answered once the store has applied
 * min_lsn (D19: its connection's writes are durable by now). */
static store_req_t read_header(fe_conn_t *c, uint64_t id)
{
    fe_t *fe = c->fe;
    uint64_t durable = atomic_load_explicit(&fe->shm->durable_lsn, memory_order_acquire);
    uint64_t min_lsn = durable > c->last_write_end ? durable : c->last_write_end;
    /* After the log failed, this connection's last write will never be
     * durable (it got an error): read what is. */
    if (atomic_load(&fe->shm->logger_state) == LOGGER_FAILED) min_lsn = durable;
    return (store_req_t){
        .id = id, .min_lsn = min_lsn, .db = (uint32_t)c->db, .proto = (uint32_t)c->proto};
}

/* c's read `id` is in the channel: r (its entry, in c's FIFO or, for a
 * probe, in none) waits for the store's answer, and a write of c waits
 * behind it. */
static void read_sent(fe_conn_t *c, fe_reply_t *r, uint64_t id)
{
    fe_wake_store(c->fe);
    fe_wait_store(c->fe, r, STORE_REPLY_READ, id);
    c->reads_outstanding++;
}

/* c's read `op` as one message of payload bytes; its id in *id. Returns 0,
 * or -EAGAIN when the channel is full (the store woken). */
static int send_one(fe_conn_t *c, uint16_t op, int argc, const unsigned char *const *argv,
                    const uint32_t *lens, size_t payload, uint64_t *id)
{
    fe_t *fe = c->fe;
    unsigned char *dst = chan_reserve(fe->to_store, (uint32_t)(sizeof(store_req_t) + payload));
    if (!dst) {
        fe_wake_store(fe);
        return -EAGAIN;
    }
    store_req_t req = read_header(c, fe->next_read_id++);
    req.payload_len = (uint32_t)payload;
    memcpy(dst, &req, sizeof(req));
    rec_encode_payload(dst + sizeof(req), op, (uint16_t)argc, argv, lens);
    chan_publish(fe->to_store);
    *id = req.id;
    return 0;
}

/* The request of fe->rq, from byte fe->rq.sent on, as parts. Returns 0
 * once the last is sent, -EAGAIN when the channel is full. */
static int send_parts(fe_t *fe, uint16_t op, int argc, const unsigned char *const *argv,
                      const uint32_t *lens, uint64_t total)
{
    uint32_t max = chan_max_msg(fe->to_store);
    while (fe->rq.sent < total) {
        int first = fe->rq.sent == 0;
        size_t head = sizeof(store_req_t) + (first ? 8 : 0);
        uint64_t n = total - fe->rq.sent;
        if (n > max - head) n = max - head;
        unsigned char *dst = chan_reserve(fe->to_store, (uint32_t)(head + n));
        if (!dst) {
            fe_wake_store(fe);
            return -EAGAIN;
        }
        store_req_t req = fe->rq.hdr;
        req.payload_len = (uint32_t)(head - sizeof(req) + n);
        req.reserved = STORE_REQ_PART | (first ? 0 : STORE_REQ_CONT) |
                       (fe->rq.sent + n < total ? STORE_REQ_MORE : 0);
        memcpy(dst, &req, sizeof(req));
        if (first) memcpy(dst + sizeof(req), &total, 8);
        rec_encode_payload_range(dst + head, (size_t)fe->rq.sent, (size_t)n, op, (uint16_t)argc,
                                 argv, lens);
        chan_publish(fe->to_store);
        fe->rq.sent += n;
        /* Test hook: the frontend dies with part of the request sent. */
        if (fe->rq.sent < total && io_fault_point(IO_FAULT_REQ_PART_SENT) == IO_FAULT_KILL)
            raise(SIGKILL);
    }
    return 0;
}

int fe_read_submit(fe_conn_t *c, uint16_t op, int argc, const unsigned char *const *argv,
                   const uint32_t *lens)
{
    fe_t *fe = c->fe;
    size_t payload = rec_cmd_payload_size((uint16_t)argc, lens);
    if (sizeof(store_req_t) + payload <= chan_max_msg(fe->to_store)) {
        uint64_t id;
        int rc = send_one(c, op, argc, argv, lens, payload, &id);
        if (rc) return rc;
        read_sent(c, fe_reply_push(c), id);
        return 0;
    }
    if (payload > UINT32_MAX) return -EMSGSIZE;
    /* One read in parts at a time; a drop owed goes first. */
    if (fe->rq.drop_owed) fe_read_tick(fe);
    if (fe->rq.drop_owed || (fe->rq.c && fe->rq.c != c)) return -EAGAIN;
    if (!fe->rq.c) {
        fe->rq.c = c;
        fe->rq.hdr = read_header(c, fe->next_read_id++);
        fe->rq.sent = 0;
    }
    int rc = send_parts(fe, op, argc, argv, lens, payload);
    if (rc) return rc;
    fe->rq.c = NULL;
    read_sent(c, fe_reply_push(c), fe->rq.hdr.id);
    return 0;
}

/* The probe of a write that may change nothing (D68): a one-message
 * read whose entry is in no FIFO. It counts in reads_outstanding, so c's
 * command, kept in its input, waits for the answer as a write waits
 * behind reads. */
int fe_probe_submit(fe_conn_t *c, const unsigned char *key, uint32_t klen)
{
    const unsigned char *argv[1] = {key};
    uint32_t lens[1] = {klen};
    size_t payload = rec_cmd_payload_size(1, lens);
    if (sizeof(store_req_t) + payload > chan_max_msg(c->fe->to_store)) return -EMSGSIZE;
    uint64_t id;
    int rc = send_one(c, CMD_PROBE, 1, argv, lens, payload, &id);
    if (rc) return rc;
    c->probe.wait = fe_reply_detached(c);
    read_sent(c, c->probe.wait, id);
    c->probe.state = FE_PROBE_SENT;
    return 0;
}

void fe_read_tick(fe_t *fe)
{
    if (!fe->rq.drop_owed) return;
    unsigned char *dst = chan_reserve(fe->to_store, sizeof(store_req_t));
    if (!dst) return;
    store_req_t req = {.id = fe->rq.hdr.id, .reserved = STORE_REQ_PART_DROP};
    memcpy(dst, &req, sizeof(req));
    chan_publish(fe->to_store);
    fe_wake_store(fe);
    fe->rq.drop_owed = 0;
}

void fe_read_abandon(fe_conn_t *c)
{
    fe_t *fe = c->fe;
    if (fe->rq.c != c) return;
    fe->rq.c = NULL;
    if (fe->rq.sent) {
        fe->rq.drop_owed = 1;
        fe_read_tick(fe);
    }
}
