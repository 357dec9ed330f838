/*
 * chan.h - a single-producer, single-consumer channel of variable-length
 * messages in shared memory. Each frontend has two: requests to the store,
 * and replies from it.
 *
 * A message is reserved, written, then published with a release store of
 * `head`; the consumer peeks (acquire), uses, then consumes (release store of
 * `tail`). A producer that dies before publishing leaves nothing behind; a
 * consumer that dies before consuming makes its successor see the message
 * again, so consumers must tolerate duplicates.
 */
#ifndef ATTIC_CHAN_H
#define ATTIC_CHAN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct chan {
    uint64_t size; /* data bytes, a power of two */
    uint64_t mask;
    _Alignas(64) _Atomic uint64_t head; /* producer position */
    uint64_t reserved_end;              /* private to the producer: head after publish */
    _Alignas(64) _Atomic uint64_t tail; /* consumer position */
    _Alignas(64) unsigned char data[];
} chan_t;

/* Bytes of shared memory for a channel of `size` data bytes; SIZE_MAX when
 * that does not fit in a size_t (shm_size then refuses the segment). */
size_t chan_shm_size(uint64_t size);

/* Initialise a channel in zeroed memory. */
void chan_init(chan_t *c, uint64_t size);

/* Largest message a channel can carry. */
uint32_t chan_max_msg(const chan_t *c);

/*
 * Producer: reserve room for a message of len bytes. Returns where to write
 * it, or NULL when the channel is full right now or len > chan_max_msg().
 * At most one reservation is outstanding; chan_publish() ends it.
 */
void *chan_reserve(chan_t *c, uint32_t len);

/* Producer: make the reserved message visible to the consumer. */
void chan_publish(chan_t *c);

/* Consumer: the oldest unconsumed message and its length, or NULL if none. */
const void *chan_peek(chan_t *c, uint32_t *len);

/* Consumer: drop the message chan_peek() returned. */
void chan_consume(chan_t *c);

/*
 * Consumer: look past the oldest message without consuming anything, so
 * that several can be in use at once and consumed later, oldest first
 * (the store answers reads whose values are still being read, D59).
 * chan_cursor() is the position of the oldest message; chan_peek_at()
 * returns the message at or after *pos (NULL when none) and moves *pos
 * past it. A cursor stays valid while it is not behind the oldest
 * message: chan_consume() drops the oldest one whatever the cursor says.
 */
uint64_t chan_cursor(const chan_t *c);
const void *chan_peek_at(const chan_t *c, uint64_t *pos, uint32_t *len);

/* True when no message is waiting. */
int chan_empty(const chan_t *c);

#endif
