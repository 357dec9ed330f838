/*
 * request-parts.h - a read request that a frontend sent in parts (D58,
 * common/shm.h's STORE_REQ_PART), put back together in the store process
 * (request-parts.c). One per frontend: a frontend sends one such request
 * at a time.
 */
#ifndef ATTIC_STORE_REQUEST_PARTS_H
#define ATTIC_STORE_REQUEST_PARTS_H

#include <stdint.h>

#include "shm.h"

typedef struct store_req_parts {
    uint64_t id;    /* the read's id */
    int32_t fe_pid; /* the frontend that sends it: dropped when it is gone */
    uint8_t active; /* parts of id are coming */
    uint8_t broken; /* a part is missing: the request is answered an error */
    unsigned char *buf;
    uint64_t total, have;
} store_req_parts_t;

/* Take part (req, body[0, n)) of a request of the frontend whose pid is
 * pid. Returns 0 while more are to come (and for a drop); 1 when the
 * request is whole: *payload and *len are it, valid until
 * store_req_parts_clear; -1 when it ended with parts missing (a store
 * respawned part-way, a first part absent or cut): the read gets an error
 * (req->id), p is cleared. */
int store_req_parts_add(store_req_parts_t *p, const store_req_t *req, const unsigned char *body,
                        uint32_t n, int32_t pid, const unsigned char **payload, uint64_t *len);
/* Forget what p holds (its memory too). */
void store_req_parts_clear(store_req_parts_t *p);
/* Clear p when its frontend is no longer pid (killed part-way). */
void store_req_parts_sweep(store_req_parts_t *p, int32_t pid);

#endif
