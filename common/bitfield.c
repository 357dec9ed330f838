/*
 * bitfield.c - BITFIELD's words (bitfield.h).
 */
#include "bitfield.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "command.h"
#include "strutil.h"

static int word_is(const char *w, uint32_t n, const char *s)
{
    return n == strlen(s) && strncasecmp(w, s, n) == 0;
}

/* A type, iN (1-64) or uN (1-63). */
static int parse_type(const char *w, uint32_t n, bf_op_t *op)
{
    long long bits;
    if (n < 2 || (w[0] != 'i' && w[0] != 'u')) return -1;
    op->sign = w[0] == 'i';
    if (str_to_ll(w + 1, n - 1, &bits) || bits < 1 || bits > (op->sign ? 64 : 63)) return -1;
    op->bits = (uint8_t)bits;
    return 0;
}

/* An offset in bits, or #n: n times the type's width. */
static int parse_offset(const char *w, uint32_t n, const bf_op_t *op, int64_t max_bulk)
{
    int hash = n > 0 && w[0] == '#';
    long long off;
    if (str_to_ll(w + hash, n - (uint32_t)hash, &off)) return -1;
    if (hash) off = (long long)((uint64_t)off * op->bits); /* wraps as Redis' does */
    if (off < 0 || (max_bulk > 0 && (off >> 3) >= max_bulk)) return -1;
    ((bf_op_t *)op)->offset = (uint64_t)off;
    return 0;
}

int bf_parse(int argc, const char *const *argv, const uint32_t *lens, int64_t max_bulk,
             bf_op_t **ops, int *writes, const char **err)
{
    bf_op_t *v = NULL;
    int n = 0;
    uint8_t owtype = BF_WRAP;
    *writes = 0;
    for (int j = 0; j < argc; j++) {
        int rest = argc - j - 1;
        bf_op_t op = {0};
        if (word_is(argv[j], lens[j], "get") && rest >= 2) {
            op.opcode = BF_GET;
        } else if (word_is(argv[j], lens[j], "set") && rest >= 3) {
            op.opcode = BF_SET;
        } else if (word_is(argv[j], lens[j], "incrby") && rest >= 3) {
            op.opcode = BF_INCRBY;
        } else if (word_is(argv[j], lens[j], "overflow") && rest >= 1) {
            j++;
            if (word_is(argv[j], lens[j], "wrap"))
                owtype = BF_WRAP;
            else if (word_is(argv[j], lens[j], "sat"))
                owtype = BF_SAT;
            else if (word_is(argv[j], lens[j], "fail"))
                owtype = BF_FAIL;
            else {
                *err = "ERR Invalid OVERFLOW type specified";
                goto fail;
            }
            continue;
        } else {
            *err = "ERR syntax error";
            goto fail;
        }
        if (parse_type(argv[j + 1], lens[j + 1], &op)) {
            *err = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not "
                   "supported but i64 is.";
            goto fail;
        }
        if (parse_offset(argv[j + 2], lens[j + 2], &op, max_bulk)) {
            *err = "ERR bit offset is not an integer or out of range";
            goto fail;
        }
        if (op.opcode != BF_GET) {
            long long val;
            *writes = 1;
            if (str_to_ll(argv[j + 3], lens[j + 3], &val)) {
                *err = "ERR value is not an integer or out of range";
                goto fail;
            }
            op.value = val;
        }
        op.owtype = owtype;
        bf_op_t *nv = realloc(v, ((size_t)n + 1) * sizeof(*v));
        if (!nv) {
            *err = "ERR out of memory";
            goto fail;
        }
        v = nv;
        v[n++] = op;
        j += op.opcode == BF_GET ? 2 : 3;
    }
    *ops = v;
    return n;
fail:
    free(v);
    *ops = NULL;
    return -1;
}

void bf_put(unsigned char *p, const bf_op_t *op)
{
    cmd_put_i64(p, (int64_t)op->offset);
    cmd_put_i64(p + 8, op->value);
    p[16] = op->opcode;
    p[17] = op->owtype;
    p[18] = op->sign;
    p[19] = op->bits;
}

void bf_get(const unsigned char *p, bf_op_t *op)
{
    op->offset = (uint64_t)cmd_get_i64(p);
    op->value = cmd_get_i64(p + 8);
    op->opcode = p[16];
    op->owtype = p[17];
    op->sign = p[18];
    op->bits = p[19];
}

int bf_line_writes(int argc, const char *const *argv, const uint32_t *lens)
{
    bf_op_t *ops;
    int writes;
    const char *err;
    /* argv[0] is BITFIELD, argv[1] its key. */
    if (argc < 2 || bf_parse(argc - 2, argv + 2, lens + 2, 0, &ops, &writes, &err) < 0) return 1;
    free(ops);
    return writes;
}
