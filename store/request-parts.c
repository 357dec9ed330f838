/*
 * request-parts.c - a read request that came in parts (request-parts.h,
 * D58), in the store process.
 *
 * A read whose arguments are longer than one message of the request
 * channel (channel-size / 2) comes as parts, in order, with one id; the
 * first says the payload's length. They are copied into one buffer of
 * that length, and the read is answered as any once the last is in. A
 * request is consumed from its channel only after its reply is sent (so a
 * respawned store answers it again, store.c), but parts before the last
 * are consumed as they are copied: a store killed part-way leaves its
 * successor the later parts only, which it answers with an error at the
 * last (the client may send it again), never with a read of half the
 * bytes. Memory: the request once, while it arrives; the frontend holds
 * it once in its input.
 */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store/core/alloc.h"
#include "store/request-parts.h"

void store_req_parts_clear(store_req_parts_t *p)
{
    free(p->buf);
    memset(p, 0, sizeof(*p));
}

void store_req_parts_sweep(store_req_parts_t *p, int32_t pid)
{
    if (!p->active || p->fe_pid == pid) return;
    log_info("store: dropped a read request in parts of frontend pid %d, which is gone",
             (int)p->fe_pid);
    store_req_parts_clear(p);
}

int store_req_parts_add(store_req_parts_t *p, const store_req_t *req, const unsigned char *body,
                        uint32_t n, int32_t pid, const unsigned char **payload, uint64_t *len)
{
    uint32_t what = STORE_REQ_WHAT(req->reserved);
    if (what == STORE_REQ_PART_DROP) {
        if (p->active && p->id == req->id) store_req_parts_clear(p);
        return 0;
    }
    if (!(req->reserved & STORE_REQ_CONT)) {
        /* A first part starts the request over. */
        store_req_parts_clear(p);
        p->active = 1;
        p->id = req->id;
        p->fe_pid = pid;
        uint64_t total = 0;
        if (n >= 8) memcpy(&total, body, 8);
        if (n < 8 || total > UINT32_MAX) {
            p->broken = 1;
        } else {
            p->total = total;
            p->buf = st_xmalloc(total ? (size_t)total : 1);
            body += 8;
            n -= 8;
        }
    } else if (!p->active || p->id != req->id) {
        /* Its first parts went to a predecessor of this store. */
        store_req_parts_clear(p);
        p->active = 1;
        p->id = req->id;
        p->fe_pid = pid;
        p->broken = 1;
    }
    if (!p->broken && n > p->total - p->have) p->broken = 1;
    if (!p->broken) {
        memcpy(p->buf + p->have, body, n);
        p->have += n;
    }
    if (req->reserved & STORE_REQ_MORE) return 0;
    if (p->broken || p->have != p->total) {
        log_warn("store: a read request in parts from frontend pid %d lacks parts; answered "
                 "with an error",
                 (int)pid);
        store_req_parts_clear(p);
        return -1;
    }
    *payload = p->buf;
    *len = p->total;
    return 1;
}
