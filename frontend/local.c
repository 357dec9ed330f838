/*
 * local.c - commands a frontend answers alone, without the store: PING,
 * ECHO, QUIT, TIME here (SELECT is dispatch.c's: it changes the connection
 * and, inside MULTI, multi.c's); the connection and administration
 * commands (HELLO, AUTH, ACL, CLIENT, RESET, COMMAND, INFO, CONFIG,
 * SLOWLOG) in the files of admin.h. They read the command table, the
 * configuration and shared memory, so any frontend gives the same answer.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <signal.h>
#include <time.h>

#include "config.h"
#include "fe-internal.h"
#include "log.h"
#include "frontend/admin.h"
#include "strutil.h"

/* SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]: the master stops the server
 * in order (frontends finish their replies, the logger syncs, the store
 * applies). Every acknowledged write is already in the log, so SAVE and
 * NOSAVE mean the same here. As in Redis, a client that asked gets no reply:
 * its connection closes. */
static void cmd_shutdown(fe_conn_t *c, int argc, const char **argv, const uint32_t *lens,
                         buf_t *out)
{
    int save = 0, nosave = 0, abort_ = 0;
    for (int i = 1; i < argc; i++) {
        if (fe_word_eq(argv[i], lens[i], "save")) save = 1;
        else if (fe_word_eq(argv[i], lens[i], "nosave")) nosave = 1;
        else if (fe_word_eq(argv[i], lens[i], "abort")) abort_ = 1;
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

static void cmd_time(buf_t *out)
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

void fe_local(fe_conn_t *c, const cmd_desc_t *d, int argc, const char **argv, const uint32_t *lens,
              buf_t *out)
{
    switch (d->id) {
    case CMD_PING:
        if (argc > 2) resp_error(out, "ERR wrong number of arguments for 'ping' command");
        else if (argc == 2) resp_bulk(out, argv[1], lens[1]);
        else resp_simple(out, "PONG");
        break;
    case CMD_ECHO:
        resp_bulk(out, argv[1], lens[1]);
        break;
    case CMD_QUIT:
        resp_simple(out, "OK");
        break;
    case CMD_TIME:
        cmd_time(out);
        break;
    case CMD_SHUTDOWN:
        cmd_shutdown(c, argc, argv, lens, out);
        break;
    case CMD_COMMAND:
        fe_command(c, argc, argv, lens, out);
        break;
    case CMD_INFO:
        fe_cmd_info(c, argc, argv, lens, out);
        break;
    case CMD_CONFIG:
        fe_cmd_config(c, argc, argv, lens, out);
        break;
    case CMD_HELLO:
        fe_cmd_hello(c, argc, argv, lens, out);
        break;
    case CMD_AUTH:
        fe_cmd_auth(c, argc, argv, lens, out);
        break;
    case CMD_ACL:
        fe_cmd_acl(c, argc, argv, lens, out);
        break;
    case CMD_CLIENT:
        fe_cmd_client(c, argc, argv, lens, out);
        break;
    case CMD_RESET:
        fe_cmd_reset(c, out);
        break;
    case CMD_SLOWLOG:
        fe_cmd_slowlog(c, argc, argv, lens, out);
        break;
    default:
        resp_error(out, "ERR internal: not a local command");
        break;
    }
}
