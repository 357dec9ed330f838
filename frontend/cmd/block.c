/*
 * block.c - the frontend's side of the blocking pops (BLPOP BRPOP BLMOVE
 * BRPOPLPUSH BLMPOP; docs/DECISIONS.md, D36), in a frontend process.
 *
 * The store holds the waiter queues, as log state (store/core/block.c).
 * A frontend writes the records that change them and keeps only what
 * belongs to its connections: which one waits for which record's reply
 * (c->blocking and c->block_id, the core's) and when it times out. The records nobody
 * waits for are written from here:
 *   - CMD_UNBLOCK client TIMEOUT when a blocked connection's deadline
 *     passes (this frontend's clock, every timer tick), and client DROP
 *     when it closes while blocked;
 *   - CMD_BLOCKDROP slot, once per incarnation, before its first blocking
 *     record, when a predecessor of this slot may have left waiters (it
 *     blocked clients and died, or the store's state has some: a restart
 *     of the whole server).
 * Whether a waiter was served before its UNBLOCK is the log's order, the
 * same live and on replay; the store's reply to the blocking record says
 * which happened. A record the ring has no room for now waits in a short
 * queue here, retried at each tick (a full ring is momentary).
 */
#include <errno.h>
#include <stdlib.h>

#include "frontend/cmd/cmd.h"
#include "log.h"
#include "record.h"

/* A frontend is one process with one fe_t: its pending records here. */
typedef struct pending_unblock {
    uint64_t client_id;
    uint32_t mode;
} pending_unblock_t;
static pending_unblock_t *pending;
static uint32_t npending, pending_cap;
static int drop_done; /* this incarnation's BLOCKDROP question is settled */

/* enum st_unblock_mode (store/core/block.h): the record's words. */
enum { UNBLOCK_DROP = 0, UNBLOCK_TIMEOUT = 1, UNBLOCK_ERROR = 2 };

static int submit_unblock(fe_t *fe, uint64_t client_id, uint32_t mode)
{
    unsigned char id[8], m[4];
    cmd_put_i64(id, (int64_t)client_id);
    cmd_put_u32(m, mode);
    const unsigned char *argv[2] = {id, m};
    uint32_t lens[2] = {8, 4};
    return fe_submit_bare(fe, REC_OP_DB(CMD_UNBLOCK, 0), 2, argv, lens);
}

static void queue_unblock(fe_t *fe, uint64_t client_id, uint32_t mode)
{
    if (npending == 0 && submit_unblock(fe, client_id, mode) == 0) return;
    if (npending == pending_cap) {
        uint32_t cap = pending_cap ? pending_cap * 2 : 16;
        pending_unblock_t *p = realloc(pending, cap * sizeof(*p));
        if (!p) {
            log_warn("out of memory");
            abort();
        }
        pending = p;
        pending_cap = cap;
    }
    pending[npending++] = (pending_unblock_t){client_id, mode};
}

int fe_block_ready(fe_t *fe)
{
    if (drop_done) return 1;
    shm_frontend_t *me = &fe->shm->fe[fe->slot];
    int need = atomic_load(&me->block_used) != 0;
    if (!need) {
        /* The store's count is of the state it has applied, published
         * before it says it is ready. */
        if (!atomic_load(&fe->shm->store_ready)) return 0;
        need = atomic_load(&me->store_waiters) != 0;
    }
    if (need) {
        unsigned char slot[4];
        cmd_put_u32(slot, (uint32_t)fe->slot + 1);
        const unsigned char *argv[1] = {slot};
        uint32_t lens[1] = {4};
        if (fe_submit_bare(fe, REC_OP_DB(CMD_BLOCKDROP, 0), 1, argv, lens)) return 0;
        atomic_store(&me->block_used, 0);
    }
    drop_done = 1;
    return 1;
}

void fe_block_begin(fe_conn_t *c, int64_t block_ms)
{
    fe_reply_t *r = c->tail; /* the blocking record's, just queued */
    int64_t deadline = block_ms > 0 ? shm_now_ms() + block_ms : 0;
    fe_conn_block(c, r->id, deadline);
}

void fe_block_note_use(fe_t *fe)
{
    atomic_store(&fe->shm->fe[fe->slot].block_used, 1);
}

void fe_block_closed(fe_conn_t *c)
{
    if (c->blocking) queue_unblock(c->fe, c->id, UNBLOCK_DROP);
}

int fe_block_unblock(fe_conn_t *c, uint64_t client_id, int error)
{
    unsigned char id[8], m[4];
    cmd_put_i64(id, (int64_t)client_id);
    cmd_put_u32(m, error ? UNBLOCK_ERROR : UNBLOCK_TIMEOUT);
    const unsigned char *argv[2] = {id, m};
    uint32_t lens[2] = {8, 4};
    return fe_submit_record(c, REC_OP_DB(CMD_UNBLOCK, c->db), 1, 2, argv, lens);
}

void fe_block_tick(fe_t *fe)
{
    if (!drop_done) fe_block_ready(fe);
    uint32_t done = 0;
    while (done < npending && submit_unblock(fe, pending[done].client_id, pending[done].mode) == 0)
        done++;
    if (done) {
        for (uint32_t i = done; i < npending; i++)
            pending[i - done] = pending[i];
        npending -= done;
    }
    if (!fe->nblocked_clients) return;
    int64_t now = shm_now_ms();
    for (fe_conn_t *c = fe->conns; c; c = c->next) {
        if (!c->blocking || !c->block_deadline_ms || c->block_timeout_sent) continue;
        if (now < c->block_deadline_ms) continue;
        if (submit_unblock(fe, c->id, UNBLOCK_TIMEOUT) == 0) c->block_timeout_sent = 1;
    }
}
