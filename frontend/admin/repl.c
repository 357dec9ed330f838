/*
 * repl.c - the replication commands a frontend answers itself: ROLE and
 * WAIT (D33), in Redis 7.0's reply shapes, so that tools written for
 * Redis (Sentinel's probes, client libraries' WAIT) read them unchanged.
 *
 * Offsets are LSNs: a leader's replication offset is its durable LSN, the
 * end of the part of its log that it has made durable and would ship.
 * This server is always a leader without replicas so far (log shipping is
 * D33's next step), so ROLE lists none and WAIT counts none: every
 * acknowledged write is durable here, on no replica.
 */
#include <stdint.h>
#include <strings.h>

#include "frontend/admin/admin.h"
#include "frontend/core/core.h"
#include "resp.h"
#include "strutil.h"

/* The leader's replication offset: everything below it is durable. */
static uint64_t repl_offset(const fe_conn_t *c)
{
    return atomic_load_explicit(&c->fe->shm->durable_lsn, memory_order_acquire);
}

void fe_cmd_role(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    (void)argc, (void)argv, (void)lens;
    resp_array(out, 3);
    resp_bulk_cstr(out, "master");
    resp_integer(out, (long long)repl_offset(c));
    resp_array(out, 0); /* replicas: [ip, port, offset] each */
}

/* WAIT numreplicas timeout: Redis parses the count first, then the
 * timeout (milliseconds, 0 = no limit). */
void fe_cmd_wait(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    (void)c, (void)argc;
    long long numreplicas, timeout;
    if (str_to_ll(argv[1], lens[1], &numreplicas) != 0) {
        resp_error(out, "ERR value is not an integer or out of range");
        return;
    }
    if (str_to_ll(argv[2], lens[2], &timeout) != 0) {
        resp_error(out, "ERR timeout is not an integer or out of range");
        return;
    }
    if (timeout < 0) {
        resp_error(out, "ERR timeout is negative");
        return;
    }
    /* No replica is connected, so none has this connection's writes: the
     * count is 0 whatever numreplicas asks for. Redis would hold the reply
     * until the timeout when numreplicas > 0; with no replica to wait for
     * the answer cannot change, so it comes at once (docs/OPERATIONS.md). */
    resp_integer(out, 0);
}

/* REPLICAOF host port | NO ONE (and SLAVEOF). NO ONE on a leader is a
 * no-op, as in Redis. A port is checked as Redis does (0-65535, one error
 * for both a non-number and out of range); following a leader is not
 * there yet (D33), so it is refused with a clear error and nothing changes. */
void fe_cmd_replicaof(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    (void)c, (void)argc;
    if (lens[1] == 2 && !strncasecmp(argv[1], "no", 2) && lens[2] == 3 &&
        !strncasecmp(argv[2], "one", 3)) {
        resp_simple(out, "OK");
        return;
    }
    long long port;
    if (str_to_ll(argv[2], lens[2], &port) != 0 || port < 0 || port > 65535) {
        resp_error(out, "ERR Invalid master port");
        return;
    }
    resp_error(out, "ERR AtticDB can't replicate yet: this server stays a leader "
                    "(docs/DECISIONS.md D33)");
}
