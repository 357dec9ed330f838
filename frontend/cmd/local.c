/*
 * local.c - the commands a frontend answers alone that need no
 * administration state (route LOCAL in common/commands.def): PING, ECHO,
 * QUIT, SELECT, TIME, SHUTDOWN (inside MULTI, multi.c runs SELECT itself).
 * The connection and administration commands (HELLO, AUTH, ACL, CLIENT,
 * RESET, COMMAND, INFO, CONFIG, SLOWLOG) are in frontend/admin/; the table
 * of every LOCAL handler, by command id, is frontend/frontend.c's, at the
 * top, since it names both. Run by the frontends; nothing here keeps state
 * beyond the connection's database and closing flag.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <signal.h>
#include <time.h>

#include "config.h"
#include "hll.h"
#include "frontend/cmd/cmd.h"
#include "log.h"
#include "strutil.h"

/* SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT], with Redis 7.0's parsing and
 * errors: the master stops the server in order (frontends finish their
 * replies, the logger syncs, the store applies). Every acknowledged write
 * is already in the log, so there is nothing to save; the options mean:
 *   SAVE    make sure everything accepted is durable before exiting: refused
 *           ("Errors trying to SHUTDOWN") while the log is stopped after an
 *           I/O error, since writes in flight then can't be made durable, as
 *           Redis refuses when its save fails;
 *   NOSAVE  (and no option) stop in any state;
 *   FORCE   ignore what would refuse the stop (the failed log under SAVE);
 *   NOW     no replicas to wait for: accepted, changes nothing;
 *   ABORT   an AtticDB shutdown, once begun, can't be called back, and none
 *           waits for replicas: "No shutdown in progress.".
 * As in Redis, a client whose SHUTDOWN goes ahead gets no reply: its
 * connection closes (docs/COMMANDS.md). */
void fe_cmd_shutdown(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    int save = 0, nosave = 0, force = 0, now = 0, abort_ = 0;
    for (int i = 1; i < argc; i++) {
        if (fe_word_eq(argv[i], lens[i], "nosave"))
            nosave = 1;
        else if (fe_word_eq(argv[i], lens[i], "save"))
            save = 1;
        else if (fe_word_eq(argv[i], lens[i], "now"))
            now = 1;
        else if (fe_word_eq(argv[i], lens[i], "force"))
            force = 1;
        else if (fe_word_eq(argv[i], lens[i], "abort"))
            abort_ = 1;
        else {
            resp_error(out, "ERR syntax error");
            return;
        }
    }
    if ((abort_ && (save || nosave || now || force)) || (save && nosave)) {
        resp_error(out, "ERR syntax error");
        return;
    }
    (void)now; /* no replicas to wait for */
    if (abort_) {
        resp_error(out, "ERR No shutdown in progress.");
        return;
    }
    log_info("User requested shutdown...");
    if (save && !force && atomic_load(&c->fe->shm->logger_state) == LOGGER_FAILED) {
        log_warn("Error trying to save the DB, can't exit: the log is stopped after an I/O "
                 "error, so writes in flight can't be made durable (SHUTDOWN NOSAVE or FORCE "
                 "stops anyway)");
        log_warn("Errors trying to shut down the server. Check the logs for more information.");
        resp_error(out, "ERR Errors trying to SHUTDOWN. Check logs.");
        return;
    }
    kill(c->fe->shm->master_pid, SIGTERM);
    c->closing = 1;
}

void fe_cmd_time(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char sec[24], usec[24];
    size_t ns = str_from_ll(sec, (long long)ts.tv_sec);
    size_t nu = str_from_ll(usec, (long long)(ts.tv_nsec / 1000));
    resp_array(out, 2);
    resp_bulk(out, sec, ns);
    resp_bulk(out, usec, nu);
}

/* PFSELFTEST: common/hll.c's self test, run here (seconds: this
 * frontend's other clients wait, as Redis' do). */
void fe_cmd_pfselftest(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    (void)argc, (void)argv, (void)lens;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char err[128];
    if (hll_selftest(c->fe->hll_sparse_max, (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 20, err,
                     sizeof(err)))
        resp_error(out, err);
    else
        resp_simple(out, "OK");
}

void fe_cmd_ping(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    if (argc > 2)
        resp_error(out, "ERR wrong number of arguments for 'ping' command");
    else if (c->subscriptions && c->proto < 3) {
        /* Subscribed mode (RESP2): ["pong", message], as Redis answers. */
        resp_array(out, 2);
        resp_bulk_cstr(out, "pong");
        resp_bulk(out, argc == 2 ? argv[1] : "", argc == 2 ? lens[1] : 0);
    } else if (argc == 2)
        resp_bulk(out, argv[1], lens[1]);
    else
        resp_simple(out, "PONG");
}

void fe_cmd_echo(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    resp_bulk(out, argv[1], lens[1]);
}

/* The connection closes once this reply (and those before it) are sent. */
void fe_cmd_quit(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    resp_simple(out, "OK");
    c->closing = 1;
}

int fe_select_db(const fe_conn_t *c, const char *arg, uint32_t len, buf_t *out)
{
    long long id;
    int ndb = c->fe->cfg->databases > 0 ? c->fe->cfg->databases : 16;
    if (str_to_ll(arg, len, &id) != 0) {
        resp_error(out, "ERR value is not an integer or out of range");
        return -1;
    }
    if (id < INT_MIN || id > INT_MAX) {
        resp_error(out, "ERR value is out of range, value must between -2147483648 and 2147483647");
        return -1;
    }
    if (c->fe->cluster && id != 0) {
        resp_error(out, "ERR SELECT is not allowed in cluster mode");
        return -1;
    }
    if (id < 0 || id >= ndb) {
        resp_error(out, "ERR DB index is out of range");
        return -1;
    }
    resp_simple(out, "OK");
    return (int)id;
}

/* Every later read request and write record carries the database. */
void fe_cmd_select(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    int db = fe_select_db(c, argv[1], lens[1], out);
    if (db >= 0) c->db = db;
}
