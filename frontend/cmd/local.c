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
#include "frontend/cmd/cmd.h"
#include "log.h"
#include "strutil.h"

/* SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]: the master stops the server
 * in order (frontends finish their replies, the logger syncs, the store
 * applies). Every acknowledged write is already in the log, so SAVE and
 * NOSAVE mean the same here. As in Redis, a client that asked gets no reply:
 * its connection closes. */
void fe_cmd_shutdown(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    int save = 0, nosave = 0, abort_ = 0;
    for (int i = 1; i < argc; i++) {
        if (fe_word_eq(argv[i], lens[i], "save"))
            save = 1;
        else if (fe_word_eq(argv[i], lens[i], "nosave"))
            nosave = 1;
        else if (fe_word_eq(argv[i], lens[i], "abort"))
            abort_ = 1;
        else if (!fe_word_eq(argv[i], lens[i], "now") && !fe_word_eq(argv[i], lens[i], "force")) {
            resp_error(out, "ERR syntax error");
            return;
        }
    }
    if ((save && nosave) || (abort_ && argc > 2)) {
        resp_error(out, "ERR syntax error");
        return;
    }
    if (abort_) {
        resp_error(out, "ERR No shutdown in progress.");
        return;
    }
    log_info("User requested shutdown...");
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

void fe_cmd_ping(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens, buf_t *out)
{
    if (argc > 2)
        resp_error(out, "ERR wrong number of arguments for 'ping' command");
    else if (argc == 2)
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
