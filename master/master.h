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

/* Send msg ("READY=1", "STOPPING=1") to the service manager's
 * $NOTIFY_SOCKET (notify.c); nothing without it. 0, or -1 (logged). */
int master_notify(const char *msg);

#endif
