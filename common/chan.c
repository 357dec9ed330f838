/*
 * chan.c - single-producer, single-consumer channel of variable-length
 * messages in shared memory (chan.h).
 *
 * Who runs it: each frontend produces into its request channel and consumes
 * its reply channel; the store does the opposite. One process on each side
 * at a time; either side may be killed and respawned.
 *
 * Layout: head and tail are 64-bit byte positions that only grow. A message
 * at position p is an 8-byte header (u32 length, u32 zero) followed by the
 * payload, padded to 8 bytes so every payload is 8-byte aligned and can hold
 * a struct. A message never wraps: when it would cross the end of the data
 * area, a header with length CHAN_SKIP goes first and the message starts at
 * the next lap. The skip and its message are published together.
 *
 * Invariants: tail <= head <= tail + size; [tail, head) holds whole,
 * published messages (and skips); only the producer writes head and the
 * bytes in [head, tail + size); only the consumer writes tail.
 *
 * What a crash means: all state is head and tail. A producer that dies
 * before chan_publish() leaves nothing visible (its reservation is private);
 * a consumer that dies before chan_consume() leaves the message in place for
 * its successor, which sees it again (consumers tolerate duplicates).
 *
 * Memory orders: head is stored with release by the producer and loaded with
 * acquire by the consumer, so a message's bytes are visible once head covers
 * them; tail is stored with release by the consumer and loaded with acquire
 * by the producer, so the consumer's reads of a message finish before the
 * producer reuses its bytes. Each side also loads its own word with acquire:
 * after a restart the value was written by a predecessor process.
 */
#include "chan.h"

#include <stdint.h>
#include <string.h>

#define CHAN_HDR  8u
#define CHAN_SKIP UINT32_MAX

static uint64_t pad8(uint64_t n)
{
    return (n + 7) & ~(uint64_t)7;
}

size_t chan_shm_size(uint64_t size)
{
    if (size > SIZE_MAX - sizeof(chan_t)) return SIZE_MAX;
    return sizeof(chan_t) + (size_t)size;
}

void chan_init(chan_t *c, uint64_t size)
{
    c->size = size;
    c->mask = size - 1;
    c->reserved_end = 0;
    atomic_store_explicit(&c->tail, 0, memory_order_relaxed);
    atomic_store_explicit(&c->head, 0, memory_order_release);
}

/*
 * Half the data area less a header, so a message (header included) takes at
 * most size / 2 and always fits an empty channel wherever head is: either it
 * fits before the end of the lap, or room < need <= size / 2 and the skip
 * plus the message take room + need < size. A larger limit could leave the
 * producer waiting for space no consumer will ever free.
 */
uint32_t chan_max_msg(const chan_t *c)
{
    uint64_t half = c->size / 2;
    if (half <= CHAN_HDR) return 0;
    uint64_t m = half - CHAN_HDR;
    return m > UINT32_MAX - 8 ? UINT32_MAX - 8 : (uint32_t)m;
}

static void put_hdr(chan_t *c, uint64_t pos, uint32_t len)
{
    uint32_t h[2] = {len, 0};
    memcpy(c->data + (pos & c->mask), h, sizeof(h));
}

static uint32_t get_len(const chan_t *c, uint64_t pos)
{
    uint32_t len;
    memcpy(&len, c->data + (pos & c->mask), sizeof(len));
    return len;
}

void *chan_reserve(chan_t *c, uint32_t len)
{
    if (len > chan_max_msg(c)) return NULL;
    uint64_t need = CHAN_HDR + pad8(len);
    uint64_t head = atomic_load_explicit(&c->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&c->tail, memory_order_acquire);
    uint64_t room = c->size - (head & c->mask);
    uint64_t msg = need > room ? head + room : head;
    uint64_t end = msg + need;
    if (end - tail > c->size) return NULL; /* full: the consumer is behind */
    /* Both headers are written now and become visible together at publish:
     * the consumer never sees a skip without the message after it. */
    if (msg != head) put_hdr(c, head, CHAN_SKIP);
    put_hdr(c, msg, len);
    c->reserved_end = end;
    return c->data + (msg & c->mask) + CHAN_HDR;
}

void chan_publish(chan_t *c)
{
    uint64_t head = atomic_load_explicit(&c->head, memory_order_relaxed);
    if (c->reserved_end <= head) return; /* nothing reserved */
    /* Release: the message bytes are written before the consumer can see
     * head cover them. */
    atomic_store_explicit(&c->head, c->reserved_end, memory_order_release);
}

/*
 * The message at position pos (a message's or a skip's): its position and
 * length. Returns 0 when there is none (or, defensively, when the header is
 * impossible: the producer is our own code, so that means memory
 * corruption, and reading on would overrun).
 */
static int chan_at(const chan_t *c, uint64_t pos, uint64_t *msg, uint32_t *len)
{
    uint64_t head = atomic_load_explicit(&c->head, memory_order_acquire);
    if (pos >= head) return 0;
    uint32_t n = get_len(c, pos);
    if (n == CHAN_SKIP) {
        pos = (pos | c->mask) + 1;
        if (pos >= head) return 0;
        n = get_len(c, pos);
    }
    if (n > chan_max_msg(c) || pos + CHAN_HDR + pad8(n) > head) return 0;
    *msg = pos;
    *len = n;
    return 1;
}

/* The oldest message (chan_at from tail). */
static int chan_front(const chan_t *c, uint64_t *msg, uint32_t *len)
{
    return chan_at(c, atomic_load_explicit(&c->tail, memory_order_acquire), msg, len);
}

const void *chan_peek(chan_t *c, uint32_t *len)
{
    uint64_t msg;
    if (!chan_front(c, &msg, len)) return NULL;
    return c->data + (msg & c->mask) + CHAN_HDR;
}

void chan_consume(chan_t *c)
{
    uint64_t msg;
    uint32_t len;
    /* Found again from tail rather than remembered from chan_peek(): the
     * consumer keeps no state outside the channel, so a successor process
     * picks up exactly where tail says. */
    if (!chan_front(c, &msg, &len)) return;
    /* Release: our reads of the message finish before the producer reuses
     * the space. */
    atomic_store_explicit(&c->tail, msg + CHAN_HDR + pad8(len), memory_order_release);
}

uint64_t chan_cursor(const chan_t *c)
{
    return atomic_load_explicit(&c->tail, memory_order_acquire);
}

const void *chan_peek_at(const chan_t *c, uint64_t *pos, uint32_t *len)
{
    uint64_t msg;
    if (!chan_at(c, *pos, &msg, len)) return NULL;
    *pos = msg + CHAN_HDR + pad8(*len);
    return c->data + (msg & c->mask) + CHAN_HDR;
}

int chan_empty(const chan_t *c)
{
    return atomic_load_explicit(&c->head, memory_order_acquire) ==
           atomic_load_explicit(&c->tail, memory_order_acquire);
}
