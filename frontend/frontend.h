/*
 * frontend.h - a frontend process: accepts clients, parses RESP, routes
 * commands (writes into the ring, reads to the store) and sends replies in
 * request order once they are allowed (durable, computed).
 */
#ifndef ATTIC_FRONTEND_H
#define ATTIC_FRONTEND_H

#include <stddef.h>

#include "config.h"
#include "shm.h"

/*
 * Body of frontend `slot`. listen_fds are the master's listening sockets
 * (TCP and unix), shared by every frontend. Runs until shm->shutdown asks it
 * to drain (stop accepting, finish in-flight writes, close) or the master
 * dies. Returns the exit status.
 */
int frontend_main(shm_t *shm, const config_t *cfg, int slot, const int *listen_fds, int nlisten);

/*
 * The frontends' part of the shared segment (frontend/fe-shm.h), for the
 * master. fe_shm_size: its size for cfg (cfg->frontends frontends), to pass
 * to shm_create; 0 when cfg->frontends is out of range or the size
 * overflows. fe_shm_init: before any fork, fill it from the configuration
 * (the live settings, requirepass and the `user` lines into the ACL table).
 * Returns 0, or -1 with a message in err (a bad `user` line, or a segment
 * created without room for this part).
 */
size_t fe_shm_size(const config_t *cfg);
int fe_shm_init(shm_t *shm, const config_t *cfg, char *err, size_t errlen);

#endif
