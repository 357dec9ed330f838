/*
 * master.c - the master process of atticdb-server.
 *
 * Reads the configuration, locks the data directory, creates the shared
 * memory and the listening sockets, then forks the logger (and waits for its
 * recovery), the store and N frontends, and keeps them alive: a child that
 * dies is logged (which, pid, how) and respawned into the same slot. Signals
 * are blocked except inside sigsuspend(); handlers only set flags (nginx's
 * ngx_master_process_cycle does the same), and all work happens in the loop.
 *
 * Shutdown (SIGTERM/SIGINT) goes in order, so nothing in flight is lost:
 *   1. frontends stop accepting, wait for their clients' pending replies, exit;
 *   2. the logger writes and syncs what is left in the ring, exits;
 *   3. the store applies the rest of the durable log, exits; the master exits 0.
 *
 * The respawn policy (respawn_policy() below; docs/OPERATIONS.md): a child
 * killed by a signal, or dying after it was ready (its role sets a flag in
 * shm once it serves), is always respawned; deaths in a row soon after a
 * start back off exponentially, up to a second, on a timer (SIGALRM), so the
 * loop never sleeps and the other children keep serving. Only a child that
 * fails by itself before it is ready stops the server: at once for
 * EXIT_FATAL (2), after respawn-limit failures in a row for other statuses.
 * The logger's EXIT_IOFAIL (3) is never respawned and leaves a read-only
 * server (docs/DECISIONS.md, D12).
 *
 * A crash of the master: children get SIGKILL (PR_SET_PDEATHSIG), nothing is
 * orphaned, and the next start recovers from the log.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster.h"
#include "config.h"
#include "datadir.h"
#include "fullcopy.h"
#include "frontend/frontend.h"
#include "io.h"
#include "io_fault.h"
#include "log.h"
#include "logger/logger.h"
#include "master/master.h"
#include "rcache.h"
#include "shm.h"
#include "repl/repl.h"
#include "store/store.h"

/* Deaths sooner than this after a start are "in a row": the second waits
 * BACKOFF_FIRST_MS before its respawn, each further one twice as long, up to
 * BACKOFF_MAX_MS. A child that lived longer is respawned at once: it was not
 * spinning, and the others may need it (every write's reply comes from the
 * store). With 1 s, a chaos run killing a child every 0.3 s left a frontend
 * down for 1.8 s; a crash loop of its own dies within milliseconds. */
#define QUICK_DEATH_NS   (500ull * 1000 * 1000)
#define BACKOFF_FIRST_MS 25
#define BACKOFF_MAX_MS   1000

enum role { ROLE_LOGGER, ROLE_STORE, ROLE_FRONTEND, ROLE_REPL };

typedef struct child {
    enum role role;
    int slot;   /* frontend number */
    pid_t pid;  /* 0 = not running */
    int spawns; /* how many times this slot was started */
    uint64_t started_ns;
    uint64_t respawn_at_ns; /* dead, to be respawned then (back-off); 0 = not */
    int quick_deaths;       /* deaths in a row soon after a start: the back-off */
    int failed_starts;      /* exits in a row before ready: respawn-limit */
} child_t;

typedef struct master {
    config_t cfg;
    shm_t *shm;
    int lock_fd;
    /* Each frontend has its own TCP socket per bind address, all bound to the
     * same port with SO_REUSEPORT, so the kernel spreads connections evenly
     * across frontends (one shared socket lets whichever frontend wakes
     * first take them all). A respawned frontend takes over its
     * predecessor's sockets, with the connections waiting in their backlog.
     * The unix socket, if any, is shared by all. */
    int tcp_fds[CONFIG_MAX_BINDS][SHM_MAX_FRONTENDS];
    int ntcp;
    int unix_fd;
    int port_lock_fd;
    child_t logger, store, repl;
    child_t fe[SHM_MAX_FRONTENDS];
    int stopping;
    int exit_status;
    int restart_on_copy; /* the receiver wrote a full copy: exec again (D50) */
    int argc;
    char **argv;
    int notified_ready;           /* READY=1 sent (all_ready) */
    uint64_t extended_ns;         /* last EXTEND_TIMEOUT_USEC sent (announce_ready) */
    uint64_t extended_replay_lsn; /* the store's replay position then */
} master_t;

static volatile sig_atomic_t sig_child, sig_term, sig_alarm, sig_hup;

static void on_signal(int sig)
{
    if (sig == SIGCHLD)
        sig_child = 1;
    else if (sig == SIGALRM)
        sig_alarm = 1; /* a back-off ended, or the readiness poll: see the loop */
    else if (sig == SIGHUP)
        sig_hup = 1; /* reopen the log file (logrotate) */
    else
        sig_term = 1;
}

static int lock_dir(master_t *m)
{
    char err[4608];
    int fd = datadir_lock(m->cfg.dir, DATADIR_CREATE, err, sizeof(err));
    if (fd < 0) {
        log_warn("%s%s", errno == EWOULDBLOCK ? "FATAL: " : "", err);
        return -1;
    }
    m->lock_fd = fd; /* held (and inherited, close-on-exec) until exit */
    return 0;
}

/* SO_REUSEPORT would let a second server of the same user bind our port
 * too. An abstract unix socket named after the port is held for the
 * master's lifetime instead, so a second atticdb-server fails cleanly. */
static int lock_port(master_t *m)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int n = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "atticdb-port-%d", m->cfg.port);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (bind(fd, (struct sockaddr *)&sa,
             (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) != 0) {
        log_warn("Could not create server TCP listening socket *:%d: port in use by another "
                 "atticdb-server",
                 m->cfg.port);
        close(fd);
        return -1;
    }
    m->port_lock_fd = fd;
    return 0;
}

/* One bind address: a socket per frontend. An address written "-addr"
 * (Redis 7's "bind 127.0.0.1 -::1") is optional: if the machine has no
 * such address or protocol, it is skipped with a warning instead of
 * stopping the server. "*" is every IPv4 address, "::*" every IPv6 one. */
static int listen_tcp(master_t *m, const char *spec)
{
    int optional = spec[0] == '-';
    const char *addr = optional ? spec + 1 : spec;
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICHOST};
    struct addrinfo *res;
    char port[16];
    snprintf(port, sizeof(port), "%d", m->cfg.port);
    const char *host = addr;
    if (!strcmp(addr, "*")) {
        host = NULL;
        hints.ai_family = AF_INET;
    } else if (!strcmp(addr, "::*")) {
        host = "::";
    }
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        if (optional) {
            log_warn("Skipping optional bind address %s: %s", addr, gai_strerror(rc));
            return 0;
        }
        log_warn("Invalid bind address '%s': %s", addr, gai_strerror(rc));
        return -1;
    }
    int opened = 0, err = 0;
    for (int i = 0; i < m->cfg.frontends; i++) {
        int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            err = errno;
            goto fail;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
        if (res->ai_family == AF_INET6)
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
        if (bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, m->cfg.tcp_backlog) != 0) {
            err = errno;
            close(fd);
            goto fail;
        }
        m->tcp_fds[m->ntcp][i] = fd;
        opened++;
    }
    m->ntcp++;
    freeaddrinfo(res);
    log_info("Listening on %s:%d", addr, m->cfg.port);
    return 0;
fail:
    for (int i = 0; i < opened; i++)
        close(m->tcp_fds[m->ntcp][i]);
    freeaddrinfo(res);
    if (optional && (err == EADDRNOTAVAIL || err == EAFNOSUPPORT || err == EPROTONOSUPPORT ||
                     err == ESOCKTNOSUPPORT || err == EPFNOSUPPORT || err == ENOPROTOOPT)) {
        log_warn("Skipping optional bind address %s:%d: %s", addr, m->cfg.port, strerror(err));
        return 0;
    }
    log_warn("Could not create server TCP listening socket %s:%d: %s", addr, m->cfg.port,
             strerror(err));
    return -1;
}

static int listen_unix(master_t *m)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(m->cfg.unixsocket) >= sizeof(sa.sun_path)) {
        log_warn("unixsocket path too long: %s", m->cfg.unixsocket);
        return -1;
    }
    strcpy(sa.sun_path, m->cfg.unixsocket);
    unlink(m->cfg.unixsocket);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(fd, m->cfg.tcp_backlog) != 0) {
        log_warn("Could not create unix socket %s: %s", m->cfg.unixsocket, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    if (m->cfg.unixsocketperm) chmod(m->cfg.unixsocket, (mode_t)m->cfg.unixsocketperm);
    m->unix_fd = fd;
    log_info("Listening on unix socket %s", m->cfg.unixsocket);
    return 0;
}

/* Replication's shared state (D33): a run id, the socketpair over which
 * frontends hand replica connections to the replication process, and the
 * leader to follow when the config file names one (`replicaof`). */
static int repl_setup(master_t *m)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) != 0) {
        log_warn("Can't create the replication socketpair: %s", strerror(errno));
        return -1;
    }
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
    m->shm->repl_handoff_fd = sv[0];
    m->shm->repl_handoff_rfd = sv[1];
    repl_shm_t *r = &m->shm->repl;
    unsigned char rnd[20];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, rnd, sizeof(rnd)) != (ssize_t)sizeof(rnd)) {
        uint64_t t = shm_mono_ns() ^ ((uint64_t)getpid() << 32);
        for (size_t i = 0; i < sizeof(rnd); i++)
            rnd[i] = (unsigned char)(t >> ((i % 8) * 8)) ^ (unsigned char)i;
    }
    if (fd >= 0) close(fd);
    for (size_t i = 0; i < sizeof(rnd); i++)
        snprintf(r->run_id + 2 * i, 3, "%02x", rnd[i]);
    if (m->cfg.replicaof_host) {
        snprintf(r->master_host, sizeof(r->master_host), "%s", m->cfg.replicaof_host);
        atomic_store(&r->master_port, (uint32_t)m->cfg.replicaof_port);
        atomic_store(&r->is_replica, 1);
        atomic_store(&r->gen, 1);
    }
    return 0;
}

static const char *role_name(const child_t *c, char *buf, size_t n)
{
    if (c->role == ROLE_LOGGER) return "logger";
    if (c->role == ROLE_STORE) return "store";
    if (c->role == ROLE_REPL) return "replication";
    snprintf(buf, n, "frontend %d", c->slot);
    return buf;
}

/* In the child: become the role's process and never return. */
static void child_run(master_t *m, child_t *c, pid_t master_pid)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != master_pid) _exit(1); /* the master died before prctl */
    signal(SIGCHLD, SIG_DFL);
    signal(SIGALRM, SIG_DFL);
    signal(SIGTERM, SIG_IGN); /* children stop on shm->shutdown, in order */
    signal(SIGINT, SIG_IGN);  /* Ctrl-C in a terminal reaches the master only */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGHUP, SIG_IGN); /* the master reopens the log and tells us (log.c) */
    log_follow_generation(&m->shm->log_generation);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    char title[64], name[32];
    snprintf(title, sizeof(title), "atticdb-server: %s", role_name(c, name, sizeof(name)));
    master_set_proctitle(title);
    /* Injected faults hit a slot's first process only (unless marked '*'),
     * so a fault that kills does not turn into a crash loop by accident. */
    const char *faults = getenv("ATTICDB_TEST_FAULTS");
    if (faults) {
        static const char *const roles[] = {"logger", "store", "frontend", "repl"};
        if (io_fault_install(faults, roles[c->role], c->spawns == 1) < 0) {
            log_warn("FATAL: malformed ATTICDB_TEST_FAULTS: %s", faults);
            _exit(EXIT_FATAL);
        }
        int start_fault = io_fault_point(IO_FAULT_START);
        if (start_fault == IO_FAULT_KILL) raise(SIGKILL);
        if (start_fault) _exit(start_fault);
    }
    shm_prefault_ring(m->shm); /* every role uses the ring (a replica's receiver claims in it) */
    int rc;
    switch (c->role) {
    case ROLE_LOGGER:
        log_set_role('L');
        rc = logger_main(m->shm, &m->cfg);
        break;
    case ROLE_STORE:
        log_set_role('S');
        rc = store_main(m->shm, &m->cfg);
        break;
    case ROLE_REPL:
        log_set_role('R');
        rc = repl_main(m->shm, &m->cfg);
        break;
    default: {
        log_set_role('F');
        int fds[CONFIG_MAX_BINDS + 1], n = 0;
        for (int b = 0; b < m->ntcp; b++)
            fds[n++] = m->tcp_fds[b][c->slot];
        if (m->unix_fd >= 0) fds[n++] = m->unix_fd;
        rc = frontend_main(m->shm, &m->cfg, c->slot, fds, n);
        break;
    }
    }
    _exit(rc);
}

/* The flag c's role sets once it serves (shm.h): the logger after taking
 * over the log, the store after its replay, a frontend when it listens. */
static _Atomic uint32_t *ready_flag(master_t *m, const child_t *c)
{
    if (c->role == ROLE_LOGGER) return &m->shm->logger_ready;
    if (c->role == ROLE_STORE) return &m->shm->store_ready;
    if (c->role == ROLE_REPL) return &m->shm->repl_ready;
    return &m->shm->fe[c->slot].ready;
}

static int spawn(master_t *m, child_t *c)
{
    if (c->role == ROLE_FRONTEND) {
        shm_frontend_t *f = &m->shm->fe[c->slot];
        atomic_fetch_add(&f->incarnation, 1);
    }
    atomic_store(ready_flag(m, c), 0);
    if (c->role == ROLE_STORE) atomic_store(&m->shm->store_replay_lsn, UINT64_MAX);
    c->respawn_at_ns = 0;
    c->spawns++;
    pid_t master_pid = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        log_warn("fork failed: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) child_run(m, c, master_pid);
    c->pid = pid;
    c->started_ns = shm_mono_ns();
    if (c->role == ROLE_FRONTEND) atomic_store(&m->shm->fe[c->slot].pid, pid);
    return 0;
}

/* Every child slot, by index: the logger, the store, the replication
 * process, then the frontends. */
static int nchildren(const master_t *m)
{
    return 3 + m->cfg.frontends;
}

static child_t *child_at(master_t *m, int i)
{
    return i == 0 ? &m->logger : i == 1 ? &m->store : i == 2 ? &m->repl : &m->fe[i - 3];
}

static child_t *find_child(master_t *m, pid_t pid)
{
    for (int i = 0; i < nchildren(m); i++)
        if (child_at(m, i)->pid == pid) return child_at(m, i);
    return NULL;
}

static void describe_status(int status, char *buf, size_t n)
{
    if (WIFEXITED(status))
        snprintf(buf, n, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, n, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(buf, n, "stopped (status %d)", status);
}

static void begin_stop(master_t *m, int status);

static void respawn_now(master_t *m, child_t *c)
{
    char namebuf[32];
    const char *name = role_name(c, namebuf, sizeof(namebuf));
    if (spawn(m, c) == 0) {
        log_warn("respawned %s as pid %d", name, (int)c->pid);
        return;
    }
    /* Out of processes or memory for now: try again later, not never. */
    c->respawn_at_ns = shm_mono_ns() + BACKOFF_MAX_MS * 1000000ull;
}

/* Respawn c after its death, at once or after the back-off its deaths in
 * a row have earned. */
static void respawn(master_t *m, child_t *c, uint64_t now)
{
    if (now - c->started_ns < QUICK_DEATH_NS)
        c->quick_deaths++;
    else
        c->quick_deaths = 1;
    if (c->quick_deaths == 1) {
        respawn_now(m, c);
        return;
    }
    int shift = c->quick_deaths - 2;
    uint64_t ms = shift >= 10 ? BACKOFF_MAX_MS : (uint64_t)BACKOFF_FIRST_MS << shift;
    if (ms > BACKOFF_MAX_MS) ms = BACKOFF_MAX_MS;
    char namebuf[32];
    log_warn("%s died %d times in a row within %llu ms of starting: respawning it in %llu ms",
             role_name(c, namebuf, sizeof(namebuf)), c->quick_deaths,
             (unsigned long long)(QUICK_DEATH_NS / 1000000ull), (unsigned long long)ms);
    c->respawn_at_ns = now + ms * 1000000ull;
}

/* Respawn the children whose back-off is over. */
static void respawn_due(master_t *m)
{
    uint64_t now = shm_mono_ns();
    for (int i = 0; i < nchildren(m); i++) {
        child_t *c = child_at(m, i);
        if (c->respawn_at_ns && c->respawn_at_ns <= now) respawn_now(m, c);
    }
}

/* A slot neither running nor waiting for its respawn (the logger after an
 * I/O failure): the server will not become ready, stop looking. */
static int child_gone_for_good(master_t *m)
{
    for (int i = 0; i < nchildren(m); i++)
        if (!child_at(m, i)->pid && !child_at(m, i)->respawn_at_ns) return 1;
    return 0;
}

/* How often the loop looks at the ready flags until every child serves:
 * the children set them in shared memory and send no signal. */
#define READY_POLL_NS (2ull * 1000 * 1000)

/* SIGALRM at the end of the nearest back-off, or soon while the server is
 * not ready yet (neither: disarmed), so the loop's sigsuspend wakes for it. */
static void arm_respawn_timer(master_t *m)
{
    uint64_t next = 0;
    for (int i = 0; i < nchildren(m); i++) {
        uint64_t at = child_at(m, i)->respawn_at_ns;
        if (at && (!next || at < next)) next = at;
    }
    if (!m->notified_ready && !child_gone_for_good(m)) {
        uint64_t poll = shm_mono_ns() + READY_POLL_NS;
        if (!next || poll < next) next = poll;
    }
    struct itimerval t = {0};
    if (next) {
        uint64_t now = shm_mono_ns();
        uint64_t us = next > now ? (next - now + 999) / 1000 : 1;
        t.it_value.tv_sec = (time_t)(us / 1000000);
        t.it_value.tv_usec = (suseconds_t)(us % 1000000);
    }
    setitimer(ITIMER_REAL, &t, NULL);
}

static const char *exit_meaning(int status)
{
    if (!WIFEXITED(status)) return "";
    if (WEXITSTATUS(status) == EXIT_FATAL) return " (fatal)";
    if (WEXITSTATUS(status) == EXIT_IOFAIL) return " (I/O failure)";
    return "";
}

/*
 * Decide what c's death means (the banner; docs/OPERATIONS.md). A signal
 * says nothing about the config or the data (an operator, the OOM killer,
 * a chaos test: respawn), nor does a death after the child was ready (it
 * has shown that both work; if its data is bad, its next start fails
 * before ready and is judged then). An exit before ready is the child's
 * own verdict on its config or data.
 */
static void respawn_policy(master_t *m, child_t *c, pid_t pid, int status)
{
    char namebuf[32], how[96], where[64] = "";
    const char *name = role_name(c, namebuf, sizeof(namebuf));
    describe_status(status, how, sizeof(how));
    int ready = atomic_load(ready_flag(m, c)) != 0;
    uint64_t lsn = atomic_load(&m->shm->store_replay_lsn);
    if (!ready && c->role == ROLE_STORE && lsn != UINT64_MAX)
        snprintf(where, sizeof(where), ", while replaying the record at LSN %llu",
                 (unsigned long long)lsn);
    log_warn("%s (pid %d) %s%s%s", name, (int)pid, how, ready ? "" : " before it was ready", where);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (c->role == ROLE_LOGGER && code == EXIT_IOFAIL) {
        /* Never retried: a new logger could not know what the failed
         * write left on disk. Reads go on; writes are refused until an
         * operator restarts the server, which recovers from the log. */
        log_warn("The log is stopped after an I/O error: writes are refused, reads are "
                 "served; restart the server to recover from what is on disk");
        m->exit_status = 1;
        return;
    }
    if (ready || code < 0) {
        if (ready) c->failed_starts = 0;
        respawn(m, c, shm_mono_ns());
        return;
    }
    if (code == EXIT_FATAL || code == EXIT_IOFAIL) {
        log_warn("%s exited with status %d%s before it was ready%s: shutting the server down "
                 "(its own messages above say why)",
                 name, code, exit_meaning(status), where);
        begin_stop(m, 1);
        return;
    }
    if (++c->failed_starts >= m->cfg.respawn_limit) {
        log_warn("%s failed %d times in a row before it was ready (exited with status %d)%s: "
                 "giving up, shutting down",
                 name, c->failed_starts, code, where);
        begin_stop(m, 1);
        return;
    }
    respawn(m, c, shm_mono_ns());
}

/* Reap every dead child; apply the respawn policy unless stopping. */
static void reap(master_t *m)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        child_t *c = find_child(m, pid);
        if (!c) continue;
        c->pid = 0;
        if (c->role == ROLE_FRONTEND) {
            /* Its ring claim, if any, is abandoned: let the logger pad it. */
            atomic_store(&m->shm->fe[c->slot].pid, 0);
            atomic_store(&m->shm->claimers[c->slot].owner_dead, 1);
            shm_wake(&m->shm->logger_wake);
        }
        if (c->role == ROLE_STORE) {
            /* The store claims too (relocation records, D27). */
            atomic_store(&shm_store_claimer(m->shm)->owner_dead, 1);
            shm_wake(&m->shm->logger_wake);
        }
        if (c->role == ROLE_REPL) {
            /* And a replica's receiver (the leader's records, D33). */
            atomic_store(&shm_repl_claimer(m->shm)->owner_dead, 1);
            shm_wake(&m->shm->logger_wake);
        }
        if (c->role == ROLE_REPL && !m->stopping && WIFEXITED(status) &&
            WEXITSTATUS(status) == EXIT_FULLCOPY) {
            log_info("The replication process wrote a full copy of the leader: restarting the "
                     "server on it");
            m->restart_on_copy = 1;
            begin_stop(m, 0);
            continue;
        }
        if (m->stopping) {
            if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
                char namebuf[32], how[96];
                describe_status(status, how, sizeof(how));
                log_warn("%s (pid %d) %s during shutdown", role_name(c, namebuf, sizeof(namebuf)),
                         (int)pid, how);
            }
            continue;
        }
        respawn_policy(m, c, pid, status);
    }
}

static void signal_children(master_t *m, int sig)
{
    for (int i = 0; i < nchildren(m); i++)
        if (child_at(m, i)->pid) kill(child_at(m, i)->pid, sig);
}

static void begin_stop(master_t *m, int status)
{
    if (!m->stopping && status) m->exit_status = status;
    m->stopping = 1;
}

static int frontends_alive(master_t *m)
{
    for (int i = 0; i < m->cfg.frontends; i++)
        if (m->fe[i].pid) return 1;
    return 0;
}

/* Wait (reaping) until pred() is false or timeout; then SIGKILL the rest. */
static void wait_phase(master_t *m, int (*alive)(master_t *), int timeout_ms, const char *what)
{
    for (int waited = 0; alive(m); waited += 10) {
        if (waited >= timeout_ms) {
            log_warn("%s did not stop in %d ms: killing", what, timeout_ms);
            signal_children(m, SIGKILL);
        }
        usleep(10000);
        reap(m);
    }
}

static int logger_alive(master_t *m)
{
    return m->logger.pid != 0;
}

static int store_alive(master_t *m)
{
    return m->store.pid != 0;
}

static int repl_alive(master_t *m)
{
    return m->repl.pid != 0;
}

/* Every child serves: the logger committed, the store replayed, every
 * frontend listens (their ready flags, shm.h). */
static int all_ready(master_t *m)
{
    for (int i = 0; i < nchildren(m); i++) {
        child_t *c = child_at(m, i);
        if (!c->pid || !atomic_load(ready_flag(m, c))) return 0;
    }
    return 1;
}

/* Once, when the server first serves: the log line and the service
 * manager's READY=1 (notify.c), so `systemctl start` returns only then. */
static void announce_ready(master_t *m)
{
    if (m->notified_ready) return;
    if (!all_ready(m)) {
        /* A long replay must not hit the unit's start timeout: while the
         * store moves through the log, ask for more time every few seconds
         * (nothing is asked for a start that makes no progress). */
        uint64_t now = shm_mono_ns(), lsn = atomic_load(&m->shm->store_replay_lsn);
        if (now - m->extended_ns >= 5000000000ull && lsn != UINT64_MAX &&
            lsn != m->extended_replay_lsn) {
            char msg[128];
            snprintf(msg, sizeof(msg),
                     "EXTEND_TIMEOUT_USEC=30000000\nSTATUS=Replaying the log (LSN %llu)",
                     (unsigned long long)lsn);
            master_notify(msg);
            m->extended_ns = now;
            m->extended_replay_lsn = lsn;
        }
        return;
    }
    m->notified_ready = 1;
    log_info("Ready to accept connections");
    master_notify("READY=1\nSTATUS=Ready to accept connections");
}

/* logrotate renamed the file: reopen it here, then tell every child
 * through the shared generation (common/log.c). */
static void reopen_log(master_t *m)
{
    if (!m->cfg.logfile || !*m->cfg.logfile) return;
    if (log_reopen() != 0) {
        log_warn("Can't reopen the log file %s: %s (still writing to the old one)", m->cfg.logfile,
                 strerror(errno));
        return;
    }
    atomic_fetch_add_explicit(&m->shm->log_generation, 1, memory_order_release);
    log_info("Received SIGHUP: reopened the log file %s", m->cfg.logfile);
}

static void shutdown_all(master_t *m)
{
    shm_t *shm = m->shm;
    master_notify("STOPPING=1\nSTATUS=Shutting down");
    /* The drain needs a logger and a store: one waiting out its back-off
     * starts now. A frontend that waits is not needed any more. */
    if (m->logger.respawn_at_ns) respawn_now(m, &m->logger);
    if (m->store.respawn_at_ns) respawn_now(m, &m->store);
    for (int i = 0; i < m->cfg.frontends; i++)
        m->fe[i].respawn_at_ns = 0;
    struct itimerval off = {0};
    setitimer(ITIMER_REAL, &off, NULL);
    log_info("Shutting down: draining frontends");
    atomic_store(&shm->shutdown, 1);
    for (int i = 0; i < m->cfg.frontends; i++)
        shm_wake(&shm->fe[i].wake);
    wait_phase(m, frontends_alive, 10000, "frontends");
    atomic_store(&shm->shutdown, 2);
    /* The replication process stops before the logger: a receiver that
     * claims no more lets the logger's last sync cover everything. */
    shm_wake(&shm->repl_wake);
    wait_phase(m, repl_alive, 10000, "replication");
    shm_wake(&shm->logger_wake);
    wait_phase(m, logger_alive, 10000, "logger");
    atomic_store(&shm->shutdown, 3);
    shm_wake(&shm->store_wake);
    wait_phase(m, store_alive, 10000, "store");
    for (int b = 0; b < m->ntcp; b++)
        for (int i = 0; i < m->cfg.frontends; i++)
            close(m->tcp_fds[b][i]);
    if (m->unix_fd >= 0) close(m->unix_fd);
    if (m->cfg.unixsocket) unlink(m->cfg.unixsocket);
    log_info("AtticDB is now ready to exit, bye bye...");
}

/*
 * After a full copy (D50): the server starts again in this process (the
 * same pid, so a supervisor sees no exit), by exec, on the same arguments
 * and the leader it followed: the swap and the recovery are then those of
 * any start (swap_copy below), and every shared-memory word begins afresh
 * at the copy's LSNs. Returns only when the exec failed.
 */
static void exec_again(master_t *m)
{
    repl_shm_t *r = &m->shm->repl;
    char **argv = calloc((size_t)m->argc + 4, sizeof(*argv));
    char host[REPL_HOST_MAX], port[16];
    if (!argv) return;
    for (int i = 0; i < m->argc; i++)
        argv[i] = m->argv[i];
    int n = m->argc;
    if (atomic_load(&r->is_replica)) {
        memcpy(host, r->master_host, sizeof(host));
        host[sizeof(host) - 1] = 0;
        snprintf(port, sizeof(port), "%u", atomic_load(&r->master_port));
        argv[n++] = "--replicaof";
        argv[n++] = host;
        argv[n++] = port;
    }
    /* What the new image opens again: the lock, the port's lock and the
     * replication socketpair (the listening sockets are closed already). */
    if (m->lock_fd >= 0) close(m->lock_fd);
    if (m->port_lock_fd >= 0) close(m->port_lock_fd);
    close(m->shm->repl_handoff_fd);
    close(m->shm->repl_handoff_rfd);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    log_info("Starting again on the full copy");
    execv("/proc/self/exe", argv);
    log_warn("Can't start again on the full copy (exec: %s): the next start swaps it in",
             strerror(errno));
    free(argv);
}

/* At the start, before the logger recovers: finish a full copy (D50). */
static int swap_copy(master_t *m)
{
    char err[4608];
    uint64_t lsn;
    int rc = fullcopy_swap(m->cfg.dir, m->cfg.segment_size, &lsn, err, sizeof(err));
    if (rc < 0) {
        log_warn("FATAL: can't finish the full copy in %s: %s", m->cfg.dir, err);
        return -1;
    }
    if (rc == 1) atomic_store(&m->shm->repl.full_syncs, 1);
    return 0;
}

int master_run(int argc, char **argv)
{
    master_t m;
    memset(&m, 0, sizeof(m));
    m.lock_fd = -1;
    m.unix_fd = -1;
    m.port_lock_fd = -1;
    m.argc = argc;
    m.argv = argv;
    if (argc == 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-v"))) {
        printf("AtticDB server v=%s\n", PACKAGE_VERSION);
        return 0;
    }
    config_defaults(&m.cfg);
    char err[512];
    if (config_from_args(&m.cfg, argc, argv, err, sizeof(err)) != 0 ||
        config_validate(&m.cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "\n*** FATAL CONFIG ERROR ***\n%s\n", err);
        return 1;
    }
    if (m.cfg.cluster_enabled) {
        /* Checked once here, so that a bad topology stops the start with
         * its reason; the frontends and the store read it again. */
        cluster_t *topo = malloc(sizeof(*topo));
        if (!topo) snprintf(err, sizeof(err), "out of memory");
        int bad = !topo || cluster_load_config(topo, &m.cfg, err, sizeof(err)) != 0;
        free(topo);
        if (bad) {
            fprintf(stderr, "\n*** FATAL CONFIG ERROR ***\n%s\n", err);
            return 1;
        }
    }
    log_set_role('M');
    log_set_level(m.cfg.loglevel);
    if (log_set_file(m.cfg.logfile) != 0) {
        fprintf(stderr, "Can't open the log file %s: %s\n", m.cfg.logfile, strerror(errno));
        return 1;
    }
    /* The master's own faults (role "master": its data-dir lock); every
     * child installs its role's part again at its start (child_run). */
    const char *faults = getenv("ATTICDB_TEST_FAULTS");
    if (faults) {
        log_warn("ATTICDB_TEST_FAULTS is set (%s): I/O faults will be injected; this is for tests",
                 faults);
        if (io_fault_install(faults, "master", 1) < 0) {
            log_warn("FATAL: malformed ATTICDB_TEST_FAULTS: %s", faults);
            return 1;
        }
    }
    if (lock_dir(&m) != 0) return 1;

    /* Each role's part is sized by its module; shm_create adds them up. */
    size_t fe_bytes = fe_shm_size(&m.cfg);
    m.shm = fe_bytes
                ? shm_create((uint32_t)m.cfg.frontends, m.cfg.ring_size, m.cfg.chan_size, fe_bytes)
                : NULL;
    if (!fe_bytes) errno = EOVERFLOW;
    if (!m.shm) {
        log_warn("Can't create shared memory: %s", strerror(errno));
        return 1;
    }
    /* GET's replies for the frontends (D70): mapped before the forks, so
     * the store and every frontend share it. Without it reads still work,
     * through the store. */
    rcache_shared = rcache_create(m.cfg.read_cache_size);
    if (!rcache_shared && m.cfg.read_cache_size >= RCACHE_MIN_BYTES)
        log_warn("Can't map the read cache (%s): every read goes to the store", strerror(errno));
    /* Settings the frontends change at run time and the ACL users
     * (requirepass, `user` lines): shared by all frontends from here on. */
    if (fe_shm_init(m.shm, &m.cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "\n*** FATAL CONFIG ERROR ***\n%s\n", err);
        return 1;
    }
    if (m.cfg.port) {
        if (lock_port(&m) != 0) return 1;
        for (int i = 0; i < m.cfg.nbind; i++)
            if (listen_tcp(&m, m.cfg.bind[i]) != 0) return 1;
    }
    if (m.cfg.unixsocket && listen_unix(&m) != 0) return 1;
    if (repl_setup(&m) != 0) return 1;
    if (swap_copy(&m) != 0) return 1;

    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGCHLD);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGALRM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, &old);
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGALRM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    log_info("AtticDB %s starting: pid %d, data in %s, %d frontends", PACKAGE_VERSION,
             (int)getpid(), m.cfg.dir, m.cfg.frontends);
    m.logger.role = ROLE_LOGGER;
    m.store.role = ROLE_STORE;
    if (spawn(&m, &m.logger) != 0) return 1;
    /* Nothing may claim ring space before recovery has placed the ring. */
    while (atomic_load(&m.shm->logger_state) == LOGGER_STARTING) {
        usleep(1000);
        reap(&m);
        respawn_due(&m);
        if (m.stopping || sig_term || (!m.logger.pid && !m.logger.respawn_at_ns)) {
            signal_children(&m, SIGKILL);
            while (wait(NULL) > 0) {
            }
            log_warn("The logger could not recover the log: not starting");
            return 1;
        }
    }
    if (spawn(&m, &m.store) != 0) return 1;
    m.repl.role = ROLE_REPL;
    if (spawn(&m, &m.repl) != 0) return 1;
    for (int i = 0; i < m.cfg.frontends; i++) {
        m.fe[i].role = ROLE_FRONTEND;
        m.fe[i].slot = i;
        if (spawn(&m, &m.fe[i]) != 0) return 1;
    }

    while (!m.stopping) {
        sigset_t wait_mask = old;
        sigdelset(&wait_mask, SIGCHLD);
        sigdelset(&wait_mask, SIGTERM);
        sigdelset(&wait_mask, SIGINT);
        sigdelset(&wait_mask, SIGALRM);
        sigdelset(&wait_mask, SIGHUP);
        announce_ready(&m);
        arm_respawn_timer(&m);
        if (!sig_child && !sig_term && !sig_alarm && !sig_hup) sigsuspend(&wait_mask);
        sig_alarm = 0;
        if (sig_hup) {
            sig_hup = 0;
            reopen_log(&m);
        }
        if (sig_child) {
            sig_child = 0;
            reap(&m);
        }
        if (sig_term) {
            log_info("Received a stop signal: shutting down");
            begin_stop(&m, 0);
        } else {
            respawn_due(&m);
        }
    }
    shutdown_all(&m);
    /* However the logger's failure and the stop signal were ordered. */
    if (atomic_load(&m.shm->logger_state) == LOGGER_FAILED) m.exit_status = 1;
    if (m.restart_on_copy && !sig_term && !m.exit_status) {
        exec_again(&m);
        m.exit_status = 1;
    }
    config_free(&m.cfg);
    return m.exit_status;
}
