/*
 * local.c - commands a frontend answers alone, without the store: PING,
 * ECHO, QUIT, SELECT, TIME here; the connection and administration
 * commands (HELLO, AUTH, ACL, CLIENT, RESET, COMMAND, INFO, CONFIG,
 * SLOWLOG) in the files of admin.h. They read the command table, the
 * configuration and shared memory, so any frontend gives the same answer.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "config.h"
#include "fe-internal.h"
#include "frontend/admin.h"
#include "strutil.h"

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
    case CMD_SELECT: {
        long long id;
        if (str_to_ll(argv[1], lens[1], &id) != 0 || id < INT32_MIN || id > INT32_MAX)
            resp_error(out, "ERR value is not an integer or out of range");
        else if (id != 0) resp_error(out, "ERR DB index is out of range");
        else resp_simple(out, "OK");
        break;
    }
    case CMD_TIME:
        cmd_time(out);
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
