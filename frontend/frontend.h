/*
 * frontend.h - a frontend process: accepts clients, parses RESP, routes
 * commands (writes into the ring, reads to the store) and sends replies in
 * request order once they are allowed (durable, computed).
 */
#ifndef ATTIC_FRONTEND_H
#define ATTIC_FRONTEND_H

#include "config.h"
#include "shm.h"

/*
 * Body of frontend `slot`. listen_fds are the master's listening sockets
 * (TCP and unix), shared by every frontend. Runs until shm->shutdown asks it
 * to drain (stop accepting, finish in-flight writes, close) or the master
 * dies. Returns the exit status.
 */
int frontend_main(shm_t *shm, const config_t *cfg, int slot, const int *listen_fds, int nlisten);

#endif
