/*
 * stream.c - a large bulk taken from the socket as it arrives, in a
 * frontend process (D48).
 *
 * A write whose value is larger than one record goes into the log as
 * CMD_CHUNK records and one CMD_BIGFINAL (D31, submit.c). Here the chunks
 * are written while the value is still arriving, so a connection holds at
 * most one chunk of it (big-value-buffer, or what a record holds if less)
 * whatever its size: once resp_parse has seen the bulk's header and the
 * command layer's stream_arg hook says it is the value of such a write,
 * the header is rewritten in the input buffer as an empty bulk
 * ("$0\r\n\r\n") and the bytes that follow it are committed chunk by
 * chunk and dropped. When the last one is committed and the bulk's
 * terminator skipped, the request parses on; a later bulk of it may be
 * taken the same way (MSET k1 <v1> k2 <v2>, D58), each after the last in
 * the group. Once it parses whole, dispatch.c's submit_big finds each
 * empty argument by its address (fe_stream_find), gives it back its length
 * and writes the final; inside MULTI the values stay in the transaction's
 * group for EXEC (multi.c). A full ring stops the reading (back-pressure,
 * as for any write).
 *
 * Nothing is visible before the final (D31): a request refused after its
 * value was taken (a bad option, NOPERM, wrong arity) drops the parts
 * with a CMD_BIGABORT (fe_stream_end); so does a client that leaves
 * (conn.c, conn_free). A frontend killed mid-value leaves a group whose
 * owner is dead, which the store drops itself.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/core/core.h"
#include "io_fault.h"

#define READ_ROOM (16 * 1024)

/* The bytes of one chunk while streaming. */
static uint64_t stream_chunk(const fe_t *fe)
{
    uint64_t per = fe_chunk_bytes(fe), lim = fe->cfg->big_value_buffer & ~(uint64_t)4095;
    return lim && lim < per ? lim : per;
}

/* The bulk arriving: the last of c->stream.vals. */
static fe_streamed_t *current(fe_conn_t *c)
{
    return &c->stream.vals[c->stream.nvals - 1];
}

int fe_stream_begin(fe_conn_t *c)
{
    fe_t *fe = c->fe;
    const resp_cmd_t *cmd = &c->cmd;
    /* A second bulk of the same request may follow one taken whole (D58:
     * MSET k1 <v1> k2 <v2>, ...). */
    if ((c->stream.on && !c->stream.whole) || cmd->partial_arg < 1 || !fe->hooks->stream_arg)
        return 0;
    uint64_t per = stream_chunk(fe);
    if (!per || cmd->partial_len <= per || !fe_writes_open(fe)) return 0;
    char *base = c->in.data + c->in_off;
    if (!fe->hooks->stream_arg(c, base + cmd->args[0].off, cmd->args[0].len, cmd->partial_count,
                               cmd->partial_arg))
        return 0;
    if (c->stream.nvals == c->stream.cap) {
        int cap = c->stream.cap ? 2 * c->stream.cap : 4;
        fe_streamed_t *v = realloc(c->stream.vals, (size_t)cap * sizeof(*v));
        if (!v) abort();
        c->stream.vals = v;
        c->stream.cap = cap;
    }
    static const char empty[] = "$0\r\n\r\n";
    size_t hdr = cmd->partial_hdr, data = cmd->partial_data;
    size_t have = c->in.len - c->in_off - data;
    /* "$<len>\r\n" has at least 7 digits here: room for the empty bulk. */
    memcpy(base + hdr, empty, 6);
    memmove(base + hdr + 6, base + data, have);
    c->in.len -= data - hdr - 6;
    /* Its bytes follow the group's so far: a transaction's earlier
     * values, this request's earlier bulks. */
    c->stream.vals[c->stream.nvals++] = (fe_streamed_t){
        cmd->partial_arg, hdr + 6, c->big.active ? c->big.off : 0, cmd->partial_len};
    c->stream.on = 1;
    c->stream.whole = 0;
    c->stream.taken = 0;
    c->need = 0;
    return 1;
}

int fe_stream_pump(fe_conn_t *c)
{
    fe_t *fe = c->fe;
    if (c->stream.whole) return 1;
    uint64_t per = stream_chunk(fe);
    fe_streamed_t *v = current(c);
    unsigned char *p = (unsigned char *)c->in.data + c->in_off + v->at;
    while (c->stream.taken < v->len) {
        if (!fe_writes_open(fe)) return -EPIPE;
        size_t have = c->in.len - c->in_off - v->at;
        uint64_t left = v->len - c->stream.taken;
        uint64_t n = left < per ? left : per;
        if (have < n) return 0;
        int rc = fe_submit_chunk(c, p, (uint32_t)n);
        if (rc) return rc == -EAGAIN ? -EAGAIN : -EPIPE;
        c->stream.taken += n;
        memmove(p, p + n, have - n);
        c->in.len -= n;
    }
    size_t have = c->in.len - c->in_off - v->at;
    if (have < 2) return 0;
    /* Its "\r\n", skipped unread as Redis does (common/resp.c). */
    memmove(p, p + 2, have - 2);
    c->in.len -= 2;
    c->stream.whole = 1;
    /* Test hook: the value is all in chunks, the request not run yet (its
     * later arguments may still be on their way). */
    if (io_fault_point(IO_FAULT_STREAM_WHOLE) == IO_FAULT_KILL) raise(SIGKILL);
    return 1;
}

size_t fe_stream_room(const fe_conn_t *c)
{
    if (!c->stream.on || c->stream.whole) return 0;
    const fe_streamed_t *v = &c->stream.vals[c->stream.nvals - 1];
    uint64_t per = stream_chunk(c->fe), left = v->len - c->stream.taken + 2;
    size_t have = c->in.len - c->in_off - v->at;
    uint64_t want = (left < per ? left : per) + READ_ROOM;
    return want > have + READ_ROOM ? (size_t)(want - have) : READ_ROOM;
}

const fe_streamed_t *fe_stream_find(const fe_conn_t *c, const void *p)
{
    if (!c->stream.whole || !c->stream.base) return NULL;
    for (int k = 0; k < c->stream.nvals; k++)
        if ((const char *)p == c->stream.base + c->stream.vals[k].at - 2) return &c->stream.vals[k];
    return NULL;
}

void fe_stream_end(fe_conn_t *c)
{
    /* Nothing when the final was committed; a transaction's queued values
     * stay for its EXEC (multi.c drops them with the transaction), and
     * so do the bytes of a request it refused, unnamed by any value. */
    if (c->multi)
        c->big.kept = c->big.off;
    else
        fe_big_abandon(c);
    c->stream.on = c->stream.whole = 0;
    c->stream.nvals = 0;
    c->stream.taken = 0;
    c->stream.base = NULL;
}
