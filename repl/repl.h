/*
 * repl.h - the replication process (docs/DECISIONS.md D33): one child of
 * the master that is the sender on a leader (it ships the durable log to
 * the replicas the frontends hand it) and the receiver on a replica (it
 * follows a leader and pushes the leader's records into this server's
 * ring at their own LSNs, for the logger to make durable).
 */
#ifndef ATTIC_REPL_H
#define ATTIC_REPL_H

#include <stdint.h>

#include "config.h"
#include "shm.h"

/*
 * The wire, after the handshake (a frontend reads `REPLCONF ATTIC-SYNC
 * <run-id> <lsn> <crc> <segment-size> <ring-size> <port>` and hands the
 * socket to this process; it answers `+CONTINUE <lsn>` or `-ERR ...`):
 * the leader sends frames, each a repl_frame_t header and `len` bytes;
 * the replica sends `REPLCONF ACK <lsn>` commands (RESP arrays).
 */
enum repl_frame_kind {
    REPL_FRAME_DATA = 1, /* len bytes of the log from LSN lsn (records may
                            be cut between frames; the stream is contiguous) */
    REPL_FRAME_PING = 2, /* nothing to ship: the leader is alive (len 0) */
    /* A full copy (D50), after `+FULLCOPY` instead of `+CONTINUE`: pings
     * while the leader's store writes it, then its MANIFEST (common/backup.h;
     * lsn = its LSN), then every file it names in its order, each in FILE
     * frames (lsn = the offset in the file). The replica then restarts on
     * the copy and asks to continue from its LSN. */
    REPL_FRAME_MANIFEST = 3,
    REPL_FRAME_FILE = 4,
};

typedef struct repl_frame {
    uint32_t kind;
    uint32_t len;
    uint64_t lsn;            /* DATA: LSN of the first byte */
    uint64_t leader_durable; /* the leader's durable LSN when sent */
} repl_frame_t;

_Static_assert(sizeof(repl_frame_t) == 24, "frame header is 24 bytes");

#define REPL_FRAME_MAX (256u * 1024) /* bytes of log in one DATA frame */

/* Run the replication process until shutdown or the master's death.
 * Returns the exit status (0). */
int repl_main(shm_t *shm, const config_t *cfg);

/*
 * The CRC of the record that ends exactly at `lsn` in the log in dir (0
 * for lsn 0, the empty log). Returns 0 and *crc, or -1 when no record
 * ends there (the log is gone below it, or its records straddle lsn: the
 * two logs differ).
 */
int repl_tail_crc(const char *dir, uint64_t segment_size, uint64_t lsn, uint32_t *crc);

#endif
