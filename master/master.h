/*
 * master.h - the master process: configuration, data directory lock, shared
 * memory, listening sockets, and the lives of the children.
 */
#ifndef ATTIC_MASTER_H
#define ATTIC_MASTER_H

/* Run the server with redis-server style arguments. Returns the exit status. */
int master_run(int argc, char **argv);

/* Rename this process in ps output ("atticdb-server: logger"). */
void master_proctitle_init(int argc, char **argv);
void master_set_proctitle(const char *title);

#endif
