/*
 * store.h - the store process: the state machine that applies the durable
 * log in LSN order and answers every command that needs state.
 */
#ifndef ATTIC_STORE_H
#define ATTIC_STORE_H

#include "config.h"
#include "shm.h"

/*
 * Body of the store process (the master forks, names the process, then calls
 * this). Waits for the logger to finish recovery, replays the log from disk
 * up to the ring's tail (the last LSN a previous store incarnation applied),
 * then applies durable records from the ring and serves the frontends'
 * request channels until shm->shutdown is set and everything is applied, or
 * the master dies. Returns the process exit status (0, or EXIT_FATAL).
 */
int store_main(shm_t *shm, const config_t *cfg);

#endif
