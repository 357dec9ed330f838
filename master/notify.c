/*
 * notify.c - the service manager's readiness protocol (sd_notify), in the
 * master, without libsystemd.
 *
 * systemd (Type=notify) starts the server with NOTIFY_SOCKET naming a unix
 * datagram socket, a path or, when it starts with '@', an abstract name. The
 * master sends "READY=1" once every child serves (the logger took over the
 * log, the store replayed it, every frontend listens), and "STOPPING=1"
 * when its ordered shutdown begins. Without NOTIFY_SOCKET nothing is sent.
 * A message that cannot be sent is logged and forgotten: a supervisor that
 * does not listen must not stop the server.
 *
 * The variable stays in the environment: the children never send anything
 * (NotifyAccess=main), and the master is the unit's main process.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "master/master.h"

int master_notify(const char *msg)
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (!path || !*path) return 0;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    if ((path[0] != '/' && path[0] != '@') || n >= sizeof(sa.sun_path)) {
        log_warn("NOTIFY_SOCKET=%s is not a socket path: not notifying the service manager", path);
        return -1;
    }
    memcpy(sa.sun_path, path, n);
    if (path[0] == '@') sa.sun_path[0] = '\0'; /* abstract: no NUL at the end counted */
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    int first = (int)strcspn(msg, "\n"); /* what a log line names */
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        log_warn("Can't notify the service manager (%.*s): %s", first, msg, strerror(errno));
        return -1;
    }
    ssize_t w = sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
    int saved = errno;
    close(fd);
    if (w < 0) {
        log_warn("Can't notify the service manager (%.*s) at %s: %s", first, msg, path,
                 strerror(saved));
        return -1;
    }
    return 0;
}
