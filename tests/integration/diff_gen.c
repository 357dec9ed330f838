/*
 * diff_gen.c - the differential test's seeded command generator (see
 * diff_gen.h). Runs in the test process only.
 *
 * What it avoids on purpose, because Redis' own replies would then depend
 * on timing rather than on the commands:
 *  - relative TTLs that could pass during a run: every relative time is
 *    100,000 s or more in the future (or 0/negative: immediate deletion);
 *  - SET ... EXAT/PXAT in the past: Redis stores the key and leaves it to
 *    lazy/active expiry, so DBSIZE just after depends on the expiry cycle;
 *    past times go only to EXPIREAT/PEXPIREAT/GETEX, which delete at once;
 *  - SETRANGE/SETBIT offsets that would really allocate hundreds of MB
 *    (offsets past the 512 MB limit are used: they are errors);
 *  - SCAN cursors other than 0 and invalid ones (a cursor is an
 *    implementation's position), OBJECT IDLETIME/REFCOUNT/HELP, TIME, INFO.
 *  - SORT orders that depend on ties or on a set's table (D47's list):
 *    ALPHA by a BY pattern, BY nosort without STORE, and ALPHA without
 *    STORE compared in order (see g_sort).
 * Equal relative times chosen twice for one key with GT/LT could compare
 * differently if both commands fall in the same millisecond on one server:
 * times are drawn from 100,000 values (ms times from 10^8), so that is rare.
 */
#include "diff_gen.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------ */
/* randomness                                                          */

static uint64_t rnd(dgen_t *g)
{
    /* splitmix64 */
    uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static unsigned rn(dgen_t *g, unsigned n)
{
    return (unsigned)(rnd(g) % n);
}

static const char *pick(dgen_t *g, const char *const *list, unsigned n)
{
    return list[rn(g, n)];
}
#define PICK(g, arr) pick((g), (arr), (unsigned)(sizeof(arr) / sizeof((arr)[0])))

/* ------------------------------------------------------------------ */
/* arguments                                                           */

void dgen_arg(dgen_cmd_t *c, const char *p, size_t n)
{
    if (c->argc >= DGEN_MAX_ARGS) return;
    char *a = malloc(n + 1);
    if (!a) abort();
    if (n) memcpy(a, p, n);
    a[n] = '\0';
    c->argv[c->argc] = a;
    c->lens[c->argc] = n;
    c->argc++;
}

void dgen_args(dgen_cmd_t *c, const char *s)
{
    dgen_arg(c, s, strlen(s));
}

static void argf(dgen_cmd_t *c, const char *fmt, long long v)
{
    char buf[64];
    snprintf(buf, sizeof(buf), fmt, v);
    dgen_args(c, buf);
}

void dgen_cmd_free(dgen_cmd_t *c)
{
    for (int i = 0; i < c->argc; i++)
        free(c->argv[i]);
    memset(c, 0, sizeof(*c));
}

static void put(char **out, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 1 > *cap) {
        while (*len + n + 1 > *cap)
            *cap *= 2;
        *out = realloc(*out, *cap);
        if (!*out) abort();
    }
    memcpy(*out + *len, s, n);
    *len += n;
    (*out)[*len] = '\0';
}

/* Arguments separated by spaces; a space, backslash or unprintable byte
 * inside an argument is escaped, an empty argument shows as "". */
char *dgen_cmd_text(const dgen_cmd_t *c)
{
    size_t cap = 256, len = 0, max = 80;
    char *out = malloc(cap);
    if (!out) abort();
    out[0] = '\0';
    for (int i = 0; i < c->argc; i++) {
        if (i) put(&out, &len, &cap, " ", 1);
        if (c->lens[i] == 0) put(&out, &len, &cap, "\"\"", 2);
        for (size_t j = 0; j < c->lens[i] && j < max; j++) {
            unsigned char ch = (unsigned char)c->argv[i][j];
            char tmp[8];
            if (ch == '\r')
                put(&out, &len, &cap, "\\r", 2);
            else if (ch == '\n')
                put(&out, &len, &cap, "\\n", 2);
            else if (ch == '\\')
                put(&out, &len, &cap, "\\\\", 2);
            else if (ch <= 32 || ch >= 127) {
                snprintf(tmp, sizeof(tmp), "\\x%02x", ch);
                put(&out, &len, &cap, tmp, 4);
            } else {
                put(&out, &len, &cap, (const char *)&ch, 1);
            }
        }
        if (c->lens[i] > max) {
            char note[48];
            int n = snprintf(note, sizeof(note), "...(%zu bytes)", c->lens[i]);
            put(&out, &len, &cap, note, (size_t)n);
        }
    }
    return out;
}

/* The key space: mostly five short keys so that commands collide, and
 * the empty key, a binary key and a key longer than 24 bytes. */
static void rkey(dgen_t *g, dgen_cmd_t *c)
{
    static const struct {
        const char *p;
        size_t n;
    } keys[] = {
        {"", 0},
        {"bin\0\r\nkey", 10},
        {"a-key-longer-than-24-bytes-for-the-index", 40},
    };
    if (rn(g, 10) < 8) {
        argf(c, "k%lld", rn(g, 5));
    } else {
        unsigned i = rn(g, 3);
        dgen_arg(c, keys[i].p, keys[i].n);
    }
}

static void letters(dgen_t *g, dgen_cmd_t *c, size_t n)
{
    char *buf = malloc(n + 1);
    if (!buf) abort();
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)('a' + rn(g, 26));
    dgen_arg(c, buf, n);
    free(buf);
}

static void rval(dgen_t *g, dgen_cmd_t *c)
{
    static const char *numeric[] = {"1.5",
                                    "-0.25",
                                    "1e3",
                                    "3.0e-5",
                                    " 12",
                                    "012",
                                    "+7",
                                    "-0",
                                    "0x10",
                                    "inf",
                                    "nan",
                                    "10.5",
                                    "0.1",
                                    "1.7976931348623157e308",
                                    "9223372036854775807",
                                    "-9223372036854775808",
                                    "9223372036854775808",
                                    "18446744073709551615"};
    unsigned r = rn(g, 100);
    if (r < 4) { /* thousands of bytes: a value AtticDB keeps in the log */
        letters(g, c, 1000 + rn(g, 5000));
    } else if (r < 10) {
        dgen_args(c, "");
    } else if (r < 25) {
        argf(c, "%lld", (long long)rn(g, 2001) - 1000);
    } else if (r < 35) {
        dgen_args(c, PICK(g, numeric));
    } else if (r < 45) {
        letters(g, c, 25 + rn(g, 300));
    } else if (r < 50) {
        dgen_arg(c, "b\0i\r\nn", 6);
    } else if (r < 58) {
        size_t n = rn(g, 24);
        char buf[24];
        for (size_t i = 0; i < n; i++)
            buf[i] = (char)rn(g, 256);
        dgen_arg(c, buf, n);
    } else if (r < 64) { /* the 24/25 and 44/45 byte boundaries */
        static const unsigned sizes[] = {24, 25, 44, 45};
        letters(g, c, sizes[rn(g, 4)]);
    } else {
        argf(c, "v%lld", rn(g, 100));
    }
}

static void rint_arg(dgen_t *g, dgen_cmd_t *c)
{
    static const char *odd[] = {"9223372036854775807",
                                "-9223372036854775808",
                                "x",
                                "",
                                "1.5",
                                "99999999999999999999",
                                " 5",
                                "+5",
                                "007",
                                "-0"};
    if (rn(g, 5) == 0)
        dgen_args(c, PICK(g, odd));
    else
        argf(c, "%lld", (long long)rn(g, 201) - 100);
}

static void rfloat_arg(dgen_t *g, dgen_cmd_t *c)
{
    static const char *f[] = {"1.5",   "-0.1",  "1e3",  "3.0e-5", "0",
                              "-0",    "inf",   "-inf", "nan",    "x",
                              "",      "1e308", "0.1",  "10.5",   "5.0e3",
                              "-1.25", "100",   "0x10", " 1",     "1.0000000000000000001"};
    dgen_args(c, PICK(g, f));
}

/* relative seconds / milliseconds: far enough never to pass in a run */
static void rel_s(dgen_t *g, dgen_cmd_t *c)
{
    static const char *odd[] = {
        "0", "-1", "-100", "x", "", "9223372036854775807", "1.5", "9223372036854775"};
    if (rn(g, 8) == 0)
        dgen_args(c, PICK(g, odd));
    else
        argf(c, "%lld", 100000 + (long long)rn(g, 100000));
}

static void rel_ms(dgen_t *g, dgen_cmd_t *c)
{
    static const char *odd[] = {"0", "-5", "x", "9223372036854775807", "1e5"};
    if (rn(g, 8) == 0)
        dgen_args(c, PICK(g, odd));
    else
        argf(c, "%lld", (100000 + (long long)rn(g, 100000)) * 1000 + (long long)rn(g, 1000));
}

/* absolute: past (deletes) allowed only where Redis deletes at once */
static void abs_s(dgen_t *g, dgen_cmd_t *c, int past_ok)
{
    static const char *past[] = {"1", "1000000000", "0", "-1"};
    static const char *odd[] = {"x", "9223372036854775807"};
    unsigned r = rn(g, 10);
    if (r == 0 && past_ok)
        dgen_args(c, PICK(g, past));
    else if (r == 1)
        dgen_args(c, PICK(g, odd));
    else
        argf(c, "%lld", DGEN_ABS_EPOCH_S + (long long)rn(g, 10000000));
}

static void abs_ms(dgen_t *g, dgen_cmd_t *c, int past_ok)
{
    static const char *past[] = {"1", "1000000000000", "0", "-1"};
    static const char *odd[] = {"x", "9223372036854775807"};
    unsigned r = rn(g, 10);
    if (r == 0 && past_ok)
        dgen_args(c, PICK(g, past));
    else if (r == 1)
        dgen_args(c, PICK(g, odd));
    else
        argf(c, "%lld",
             (DGEN_ABS_EPOCH_S + (long long)rn(g, 10000000)) * 1000 + (long long)rn(g, 1000));
}

static void rdb(dgen_t *g, dgen_cmd_t *c)
{
    static const char *odd[] = {"16", "-1", "x", "99999999999", ""};
    unsigned r = rn(g, 100);
    if (r < 40)
        dgen_args(c, "0");
    else if (r < 85)
        argf(c, "%lld", 1 + (long long)rn(g, 3));
    else if (r < 95)
        argf(c, "%lld", 4 + (long long)rn(g, 12));
    else
        dgen_args(c, PICK(g, odd));
}

/* string offsets for GETRANGE and friends */
static void roff(dgen_t *g, dgen_cmd_t *c)
{
    static const char *odd[] = {"9223372036854775807", "-9223372036854775808", "x", "",
                                "4294967296"};
    unsigned r = rn(g, 20);
    if (r == 0)
        dgen_args(c, PICK(g, odd));
    else if (r < 3)
        argf(c, "%lld", (long long)rn(g, 6000));
    else
        argf(c, "%lld", (long long)rn(g, 61) - 20);
}

/* ------------------------------------------------------------------ */
/* one generator per command                                           */

static void g_set(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "SET"), rkey(g, c), rval(g, c);
    int n = (int)rn(g, 4);
    for (int i = 0; i < n; i++) {
        switch (rn(g, 24)) {
        case 0:
        case 1:
            dgen_args(c, rn(g, 4) ? "NX" : "nx");
            break;
        case 2:
        case 3:
            dgen_args(c, "XX");
            break;
        case 4:
        case 5:
        case 6:
        case 7:
            dgen_args(c, "GET");
            break;
        case 8:
        case 9:
            dgen_args(c, "KEEPTTL");
            break;
        case 10:
        case 11:
        case 12:
        case 13:
            dgen_args(c, rn(g, 4) ? "EX" : "ex"), rel_s(g, c);
            break;
        case 14:
        case 15:
            dgen_args(c, "PX"), rel_ms(g, c);
            break;
        case 16:
        case 17:
            dgen_args(c, "EXAT"), abs_s(g, c, 0);
            break;
        case 18:
        case 19:
            dgen_args(c, "PXAT"), abs_ms(g, c, 0);
            break;
        case 20:
            dgen_args(c, "EX");
            break; /* missing its value */
        default:
            dgen_args(c, "FOO");
            break;
        }
    }
}

static void g_setnx(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "SETNX"), rkey(g, c), rval(g, c);
}
static void g_setex(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "SETEX"), rkey(g, c), rel_s(g, c), rval(g, c);
}
static void g_psetex(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "PSETEX"), rkey(g, c), rel_ms(g, c), rval(g, c);
}
static void g_getset(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "GETSET"), rkey(g, c), rval(g, c);
}
static void g_get(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "GET"), rkey(g, c);
}
static void g_getdel(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "GETDEL"), rkey(g, c);
}
static void g_strlen(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "STRLEN"), rkey(g, c);
}
static void g_append(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "APPEND"), rkey(g, c), rval(g, c);
}
static void g_incr(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "INCR"), rkey(g, c);
}
static void g_decr(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "DECR"), rkey(g, c);
}
static void g_incrby(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "INCRBY"), rkey(g, c), rint_arg(g, c);
}
static void g_decrby(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "DECRBY"), rkey(g, c), rint_arg(g, c);
}
static void g_incrbyfloat(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "INCRBYFLOAT"), rkey(g, c), rfloat_arg(g, c);
}

static void g_getex(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "GETEX"), rkey(g, c);
    int n = rn(g, 3) == 0 ? 0 : 1 + (rn(g, 6) == 0);
    for (int i = 0; i < n; i++) {
        switch (rn(g, 7)) {
        case 0:
            dgen_args(c, "EX"), rel_s(g, c);
            break;
        case 1:
            dgen_args(c, "PX"), rel_ms(g, c);
            break;
        case 2:
            dgen_args(c, "EXAT"), abs_s(g, c, 1);
            break;
        case 3:
            dgen_args(c, "PXAT"), abs_ms(g, c, 1);
            break;
        case 4:
        case 5:
            dgen_args(c, rn(g, 3) ? "PERSIST" : "persist");
            break;
        default:
            dgen_args(c, "FOO");
            break;
        }
    }
}

static void g_mset_like(dgen_t *g, dgen_cmd_t *c, const char *name)
{
    dgen_args(c, name);
    int n = 1 + (int)rn(g, 4);
    for (int i = 0; i < n; i++)
        rkey(g, c), rval(g, c);
}
static void g_mset(dgen_t *g, dgen_cmd_t *c)
{
    g_mset_like(g, c, "MSET");
}
static void g_msetnx(dgen_t *g, dgen_cmd_t *c)
{
    g_mset_like(g, c, "MSETNX");
}

static void g_keys_n(dgen_t *g, dgen_cmd_t *c, const char *name, int max)
{
    dgen_args(c, name);
    int n = 1 + (int)rn(g, (unsigned)max);
    for (int i = 0; i < n; i++)
        rkey(g, c);
}
static void g_mget(dgen_t *g, dgen_cmd_t *c)
{
    g_keys_n(g, c, "MGET", 5);
}
static void g_del(dgen_t *g, dgen_cmd_t *c)
{
    g_keys_n(g, c, "DEL", 3);
}
static void g_unlink(dgen_t *g, dgen_cmd_t *c)
{
    g_keys_n(g, c, "UNLINK", 3);
}
static void g_exists(dgen_t *g, dgen_cmd_t *c)
{
    g_keys_n(g, c, "EXISTS", 4);
}
static void g_touch(dgen_t *g, dgen_cmd_t *c)
{
    g_keys_n(g, c, "TOUCH", 3);
}
static void g_type(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "TYPE"), rkey(g, c);
}

static void g_getrange(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "GETRANGE"), rkey(g, c), roff(g, c), roff(g, c);
}
static void g_substr(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "SUBSTR"), rkey(g, c), roff(g, c), roff(g, c);
}

static void g_setrange(dgen_t *g, dgen_cmd_t *c)
{
    static const char *huge[] = {"536870912", "536870913", "9223372036854775807", "4294967296"};
    static const char *bad[] = {"-1", "x", "", "-9223372036854775808"};
    dgen_args(c, "SETRANGE"), rkey(g, c);
    unsigned r = rn(g, 100);
    if (r < 70)
        argf(c, "%lld", (long long)rn(g, 101));
    else if (r < 85)
        argf(c, "%lld", 1000 + (long long)rn(g, 3001));
    else if (r < 93)
        dgen_args(c, PICK(g, huge)); /* errors, or 0/len with "" */
    else
        dgen_args(c, PICK(g, bad));
    if (rn(g, 8) == 0)
        dgen_args(c, "");
    else
        rval(g, c);
}

static void g_setbit(dgen_t *g, dgen_cmd_t *c)
{
    static const char *bad[] = {"4294967296", "-1", "x", "", "9223372036854775807"};
    static const char *badbit[] = {"2", "-1", "x", "", "01"};
    dgen_args(c, "SETBIT"), rkey(g, c);
    unsigned r = rn(g, 100);
    if (r < 65)
        argf(c, "%lld", (long long)rn(g, 201));
    else if (r < 90)
        argf(c, "%lld", (long long)rn(g, 80001));
    else
        dgen_args(c, PICK(g, bad));
    if (rn(g, 12) == 0)
        dgen_args(c, PICK(g, badbit));
    else
        dgen_args(c, rn(g, 2) ? "1" : "0");
}

static void g_getbit(dgen_t *g, dgen_cmd_t *c)
{
    static const char *odd[] = {"4294967295", "4294967296", "-1", "x", "100000"};
    dgen_args(c, "GETBIT"), rkey(g, c);
    if (rn(g, 8) == 0)
        dgen_args(c, PICK(g, odd));
    else
        argf(c, "%lld", (long long)rn(g, 300));
}

static void range_mode(dgen_t *g, dgen_cmd_t *c)
{
    static const char *modes[] = {"BYTE", "BIT", "bit", "byte", "FOO"};
    dgen_args(c, PICK(g, modes));
}

static void g_bitcount(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "BITCOUNT"), rkey(g, c);
    switch (rn(g, 6)) {
    case 0:
        break;
    case 1:
        roff(g, c);
        break; /* start only: a syntax error */
    case 2:
    case 3:
        roff(g, c), roff(g, c);
        break;
    default:
        roff(g, c), roff(g, c), range_mode(g, c);
        break;
    }
}

static void g_bitpos(dgen_t *g, dgen_cmd_t *c)
{
    static const char *badbit[] = {"2", "-1", "x"};
    dgen_args(c, "BITPOS"), rkey(g, c);
    if (rn(g, 12) == 0)
        dgen_args(c, PICK(g, badbit));
    else
        dgen_args(c, rn(g, 2) ? "1" : "0");
    switch (rn(g, 5)) {
    case 0:
        break;
    case 1:
        roff(g, c);
        break;
    case 2:
        roff(g, c), roff(g, c);
        break;
    default:
        roff(g, c), roff(g, c), range_mode(g, c);
        break;
    }
}

static void g_rename(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "RENAME"), rkey(g, c), rkey(g, c);
}
static void g_renamenx(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "RENAMENX"), rkey(g, c), rkey(g, c);
}

static void g_copy(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "COPY"), rkey(g, c), rkey(g, c);
    if (rn(g, 2)) dgen_args(c, rn(g, 4) ? "DB" : "db"), rdb(g, c);
    if (rn(g, 2)) dgen_args(c, "REPLACE");
    if (rn(g, 15) == 0) dgen_args(c, rn(g, 2) ? "FOO" : "DB");
}

static void g_move(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "MOVE"), rkey(g, c), rdb(g, c);
}
static void g_swapdb(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "SWAPDB"), rdb(g, c), rdb(g, c);
}
static void g_select(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "SELECT"), rdb(g, c);
}
static void g_dbsize(dgen_t *g, dgen_cmd_t *c)
{
    (void)g, dgen_args(c, "DBSIZE");
}

static void g_flushdb(dgen_t *g, dgen_cmd_t *c)
{
    static const char *opt[] = {"ASYNC", "SYNC", "async", "FOO"};
    dgen_args(c, "FLUSHDB");
    if (rn(g, 3) == 0) dgen_args(c, PICK(g, opt));
}

static void g_flushall(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "FLUSHALL");
    if (rn(g, 3) == 0) dgen_args(c, rn(g, 2) ? "ASYNC" : "SYNC");
}

static void expire_opts(dgen_t *g, dgen_cmd_t *c)
{
    static const char *opts[] = {"NX", "XX", "GT", "LT", "nx", "gt", "FOO"};
    unsigned r = rn(g, 10);
    int n = r < 4 ? 0 : r < 9 ? 1 : 2;
    for (int i = 0; i < n; i++)
        dgen_args(c, PICK(g, opts));
}

static void g_expire(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "EXPIRE"), rkey(g, c), rel_s(g, c), expire_opts(g, c);
}
static void g_pexpire(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "PEXPIRE"), rkey(g, c), rel_ms(g, c), expire_opts(g, c);
}
static void g_expireat(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "EXPIREAT"), rkey(g, c), abs_s(g, c, 1), expire_opts(g, c);
}
static void g_pexpireat(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "PEXPIREAT"), rkey(g, c), abs_ms(g, c, 1), expire_opts(g, c);
}
static void g_persist(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "PERSIST"), rkey(g, c);
}

static void g_time_read(dgen_t *g, dgen_cmd_t *c, const char *name, long long tol)
{
    dgen_args(c, name), rkey(g, c);
    c->check = DGEN_TIME;
    c->tolerance = tol;
}
static void g_ttl(dgen_t *g, dgen_cmd_t *c)
{
    g_time_read(g, c, "TTL", 5);
}
static void g_pttl(dgen_t *g, dgen_cmd_t *c)
{
    g_time_read(g, c, "PTTL", 5000);
}
static void g_expiretime(dgen_t *g, dgen_cmd_t *c)
{
    g_time_read(g, c, "EXPIRETIME", 5);
}
static void g_pexpiretime(dgen_t *g, dgen_cmd_t *c)
{
    g_time_read(g, c, "PEXPIRETIME", 5000);
}

static const char *const patterns[] = {
    "*",    "k*",  "k?",     "k[0-2]", "k[^0-2]",   "k[2-0]", "*k*",    "?",    "",
    "\\k0", "k[",  "[",      "*[",     "k[1-]",     "k[-1]",  "a-key*", "bin*", "*\r\n*",
    "b?n*", "k**", "*****0", "K*",     "k[a-z0-9]", "[!k]*",  "k\\*",   "\\*",
};

static void pattern(dgen_t *g, dgen_cmd_t *c)
{
    if (rn(g, 20) == 0)
        dgen_arg(c, "bin\0*", 5);
    else
        dgen_args(c, PICK(g, patterns));
}

static void g_keys(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "KEYS"), pattern(g, c);
    c->check = DGEN_KEYS;
}

static void g_scan(dgen_t *g, dgen_cmd_t *c)
{
    static const char *types[] = {"string", "STRING", "list", "none", "foo"};
    static const char *counts[] = {"0", "-1", "x"};
    /* not "-1": Redis reads it as ULONG_MAX, a real position */
    static const char *cursors[] = {"x", "18446744073709551616", "1.5"};
    dgen_args(c, "SCAN");
    dgen_args(c, rn(g, 25) == 0 ? PICK(g, cursors) : "0");
    if (rn(g, 2)) dgen_args(c, "MATCH"), pattern(g, c);
    if (rn(g, 2)) {
        dgen_args(c, "COUNT");
        if (rn(g, 15) == 0)
            dgen_args(c, PICK(g, counts));
        else
            argf(c, "%lld", 1 + (long long)rn(g, 20));
    }
    if (rn(g, 4) == 0) dgen_args(c, "TYPE"), dgen_args(c, PICK(g, types));
    if (rn(g, 30) == 0) dgen_args(c, "FOO");
    c->check = DGEN_SCAN;
}

static void g_randomkey(dgen_t *g, dgen_cmd_t *c)
{
    (void)g;
    dgen_args(c, "RANDOMKEY");
    c->check = DGEN_RANDOMKEY;
}

static void g_object(dgen_t *g, dgen_cmd_t *c)
{
    if (g->sorted) c->check = DGEN_ENCODING;
    dgen_args(c, "OBJECT");
    switch (rn(g, 10)) {
    case 0:
        dgen_args(c, "FREQ"), rkey(g, c);
        break; /* an error without an LFU policy */
    case 1:
        dgen_args(c, "FOO"), rkey(g, c);
        break;
    case 2:
        dgen_args(c, "ENCODING");
        break;
    default:
        dgen_args(c, rn(g, 4) ? "ENCODING" : "encoding"), rkey(g, c);
        break;
    }
}

/* ---- hashes ---- */

/* Field names: a few short ones so that commands collide, now and then
 * the empty name, a binary one or one past hash-max-listpack-value. */
static void rfield(dgen_t *g, dgen_cmd_t *c)
{
    unsigned r = rn(g, 20);
    if (r < 16)
        argf(c, "f%lld", rn(g, 6));
    else if (r == 16)
        dgen_args(c, "");
    else if (r == 17)
        dgen_arg(c, "f\0\r\nx", 5);
    else
        letters(g, c, 60 + rn(g, 10)); /* 60-69: either side of 64 */
}

static void g_hset_like(dgen_t *g, dgen_cmd_t *c, const char *name)
{
    dgen_args(c, name), rkey(g, c);
    int n = 1 + (int)rn(g, 4);
    for (int i = 0; i < n; i++)
        rfield(g, c), rval(g, c);
    if (rn(g, 25) == 0) rfield(g, c); /* a field without its value */
}
static void g_hset(dgen_t *g, dgen_cmd_t *c)
{
    g_hset_like(g, c, "HSET");
}
static void g_hmset(dgen_t *g, dgen_cmd_t *c)
{
    g_hset_like(g, c, "HMSET");
}
static void g_hsetnx(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "HSETNX"), rkey(g, c), rfield(g, c), rval(g, c);
}
static void g_hget(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "HGET"), rkey(g, c), rfield(g, c);
}
static void g_hexists(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "HEXISTS"), rkey(g, c), rfield(g, c);
}
static void g_hstrlen(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "HSTRLEN"), rkey(g, c), rfield(g, c);
}
static void g_hlen(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "HLEN"), rkey(g, c);
}

static void g_fields_n(dgen_t *g, dgen_cmd_t *c, const char *name, int max)
{
    dgen_args(c, name), rkey(g, c);
    int n = 1 + (int)rn(g, (unsigned)max);
    for (int i = 0; i < n; i++)
        rfield(g, c);
}
static void g_hmget(dgen_t *g, dgen_cmd_t *c)
{
    g_fields_n(g, c, "HMGET", 4);
}
static void g_hdel(dgen_t *g, dgen_cmd_t *c)
{
    g_fields_n(g, c, "HDEL", 3);
}

static void g_hincrby(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "HINCRBY"), rkey(g, c), rfield(g, c), rint_arg(g, c);
}
static void g_hincrbyfloat(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "HINCRBYFLOAT"), rkey(g, c), rfield(g, c), rfloat_arg(g, c);
}

static void g_hkeys(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "HKEYS"), rkey(g, c), c->check = DGEN_UNORDERED;
}
static void g_hvals(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "HVALS"), rkey(g, c), c->check = DGEN_UNORDERED;
}
static void g_hgetall(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "HGETALL"), rkey(g, c), c->check = DGEN_PAIRS;
}

static void g_hrandfield(dgen_t *g, dgen_cmd_t *c)
{
    static const char *odd[] = {"x", "", "-9223372036854775808", "9223372036854775807", "1.5"};
    dgen_args(c, "HRANDFIELD"), rkey(g, c);
    unsigned r = rn(g, 10);
    if (r >= 3) {
        if (rn(g, 10) == 0)
            dgen_args(c, PICK(g, odd));
        else
            argf(c, "%lld", (long long)rn(g, 15) - 7);
        if (rn(g, 2)) dgen_args(c, rn(g, 8) ? "WITHVALUES" : "withvalue");
    }
    c->check = DGEN_SHAPE;
}

static void g_hscan(dgen_t *g, dgen_cmd_t *c)
{
    static const char *cursors[] = {"x", "18446744073709551616", "1.5"};
    static const char *fpat[] = {"*", "f*", "f[0-2]", "?", "*x*", "f\\*"};
    dgen_args(c, "HSCAN"), rkey(g, c);
    dgen_args(c, rn(g, 25) == 0 ? PICK(g, cursors) : "0");
    if (rn(g, 2)) dgen_args(c, "MATCH"), dgen_args(c, PICK(g, fpat));
    if (rn(g, 2)) {
        dgen_args(c, "COUNT");
        if (rn(g, 15) == 0)
            dgen_args(c, rn(g, 2) ? "0" : "x");
        else
            argf(c, "%lld", 1 + (long long)rn(g, 5));
    }
    if (rn(g, 30) == 0) dgen_args(c, rn(g, 2) ? "FOO" : "TYPE");
    c->check = DGEN_HSCAN;
}

static void g_hello(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "HELLO"), dgen_args(c, rn(g, 2) ? "3" : "2");
    c->check = DGEN_HELLO;
}

/* Low limits make hashes cross into the hashtable encoding in a few
 * commands (OBJECT ENCODING tells); each server keeps what it converted. */
static void g_config_hash(dgen_t *g, dgen_cmd_t *c)
{
    static const char *names[] = {"hash-max-listpack-entries", "hash-max-ziplist-entries",
                                  "hash-max-listpack-value", "hash-max-ziplist-value"};
    static const char *vals[] = {"0", "1", "2", "3", "8", "64", "512"};
    dgen_args(c, "CONFIG"), dgen_args(c, "SET"), dgen_args(c, PICK(g, names)),
        dgen_args(c, PICK(g, vals));
}

/* ---- lists ---- */

/* Elements: a few short words (repeats, for LREM/LPOS/LINSERT), now and
 * then one past STORE_INLINE_MAX (a log extent) or binary. */
static void relem(dgen_t *g, dgen_cmd_t *c)
{
    static const char *w[] = {"a", "b", "c", "1", "", "a-long-element-past-the-inline-limit-xx"};
    if (rn(g, 12) == 0)
        dgen_arg(c, "e\0\r\n", 4);
    else
        dgen_args(c, PICK(g, w));
}

/* An index: mostly near either end, sometimes far out or not a number. */
static void rindex_(dgen_t *g, dgen_cmd_t *c)
{
    static const char *odd[] = {"x", "9223372036854775807", "-9223372036854775808", "1.5", ""};
    if (rn(g, 15) == 0)
        dgen_args(c, PICK(g, odd));
    else
        argf(c, "%lld", (long long)rn(g, 24) - 12);
}

static void g_push(dgen_t *g, dgen_cmd_t *c)
{
    static const char *names[] = {"LPUSH", "RPUSH", "LPUSHX", "RPUSHX", "RPUSH", "LPUSH"};
    dgen_args(c, PICK(g, names)), rkey(g, c);
    int n = 1 + (int)rn(g, rn(g, 6) ? 4 : 40); /* now and then a long list */
    for (int i = 0; i < n; i++)
        relem(g, c);
}

static void g_pop(dgen_t *g, dgen_cmd_t *c)
{
    static const char *counts[] = {"0", "1", "2", "5", "1000", "-1", "x"};
    dgen_args(c, rn(g, 2) ? "LPOP" : "RPOP"), rkey(g, c);
    if (rn(g, 2)) dgen_args(c, PICK(g, counts));
    if (rn(g, 30) == 0) dgen_args(c, "1");
}

static void g_llen(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "LLEN"), rkey(g, c);
}
static void g_lindex(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "LINDEX"), rkey(g, c), rindex_(g, c);
}
static void g_lset(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "LSET"), rkey(g, c), rindex_(g, c), relem(g, c);
}
static void g_lrange(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "LRANGE"), rkey(g, c), rindex_(g, c), rindex_(g, c);
}
static void g_ltrim(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "LTRIM"), rkey(g, c), rindex_(g, c), rindex_(g, c);
}
static void g_lrem(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "LREM"), rkey(g, c), rindex_(g, c), relem(g, c);
}

static void g_linsert(dgen_t *g, dgen_cmd_t *c)
{
    static const char *wh[] = {"BEFORE", "AFTER", "after", "MIDDLE"};
    dgen_args(c, "LINSERT"), rkey(g, c), dgen_args(c, PICK(g, wh)), relem(g, c), relem(g, c);
}

static void g_lpos(dgen_t *g, dgen_cmd_t *c)
{
    static const char *opts[] = {"RANK", "COUNT", "MAXLEN", "rank", "FOO"};
    dgen_args(c, "LPOS"), rkey(g, c), relem(g, c);
    for (int n = (int)rn(g, 4); n > 0; n--) {
        dgen_args(c, PICK(g, opts));
        if (rn(g, 12)) rindex_(g, c);
    }
}

static void g_lmove(dgen_t *g, dgen_cmd_t *c)
{
    static const char *wh[] = {"LEFT", "RIGHT", "left", "UP"};
    if (rn(g, 3) == 0) {
        dgen_args(c, "RPOPLPUSH"), rkey(g, c), rkey(g, c);
        return;
    }
    dgen_args(c, "LMOVE"), rkey(g, c), rkey(g, c), dgen_args(c, PICK(g, wh)),
        dgen_args(c, PICK(g, wh));
}

/* LMPOP and ZMPOP: numkeys (now and then a bad one), keys, one of the
 * four words wh, an optional COUNT. */
static void g_mpop(dgen_t *g, dgen_cmd_t *c, const char *name, const char *const wh[4])
{
    static const char *counts[] = {"1", "2", "100", "0", "-1", "x"};
    int n = 1 + (int)rn(g, 3);
    dgen_args(c, name);
    if (rn(g, 20) == 0)
        dgen_args(c, rn(g, 2) ? "0" : "9");
    else
        argf(c, "%d", n);
    for (int i = 0; i < n; i++)
        rkey(g, c);
    dgen_args(c, wh[rn(g, 4)]);
    if (rn(g, 2)) dgen_args(c, "COUNT"), dgen_args(c, PICK(g, counts));
}

static void g_lmpop(dgen_t *g, dgen_cmd_t *c)
{
    static const char *const wh[4] = {"LEFT", "RIGHT", "right", "UP"};
    g_mpop(g, c, "LMPOP", wh);
}

/* ---- sets ---- */

/* Members: mostly small integers (intset), now and then a word, a
 * non-canonical number or a binary member (hashtable). */
static void rmember(dgen_t *g, dgen_cmd_t *c)
{
    static const char *odd[] = {"a", "b", "01", " 1", "-0", "x y", "", "9223372036854775808"};
    unsigned r = rn(g, 10);
    if (r < 7)
        argf(c, "%lld", (long long)rn(g, 12) - 2);
    else if (r < 9)
        dgen_args(c, PICK(g, odd));
    else
        dgen_arg(c, "m\0\r\n", 4);
}

static void g_members_n(dgen_t *g, dgen_cmd_t *c, const char *name, int max)
{
    dgen_args(c, name), rkey(g, c);
    int n = 1 + (int)rn(g, (unsigned)max);
    for (int i = 0; i < n; i++)
        rmember(g, c);
}
static void g_sadd(dgen_t *g, dgen_cmd_t *c)
{
    g_members_n(g, c, "SADD", 4);
}
static void g_srem(dgen_t *g, dgen_cmd_t *c)
{
    g_members_n(g, c, "SREM", 3);
}
static void g_smismember(dgen_t *g, dgen_cmd_t *c)
{
    g_members_n(g, c, "SMISMEMBER", 3);
}
static void g_sismember(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "SISMEMBER"), rkey(g, c), rmember(g, c);
}
static void g_scard(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "SCARD"), rkey(g, c);
}
static void g_smembers(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "SMEMBERS"), rkey(g, c), c->check = DGEN_UNORDERED;
}
static void g_smove(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "SMOVE"), rkey(g, c), rkey(g, c), rmember(g, c);
}

/* SPOP only in the forms whose result is not random: a count of 0 or
 * past any set's size (the whole set), or an error. */
static void g_spop(dgen_t *g, dgen_cmd_t *c)
{
    static const char *counts[] = {"0", "1000", "-1", "x", "9223372036854775807"};
    dgen_args(c, "SPOP"), rkey(g, c), dgen_args(c, PICK(g, counts));
    if (rn(g, 20) == 0) dgen_args(c, "1");
    c->check = DGEN_UNORDERED;
}

static void g_srandmember(dgen_t *g, dgen_cmd_t *c)
{
    static const char *odd[] = {"x", "", "-9223372036854775808", "9223372036854775807", "-0"};
    dgen_args(c, "SRANDMEMBER"), rkey(g, c);
    if (rn(g, 10) >= 3) {
        if (rn(g, 10) == 0)
            dgen_args(c, PICK(g, odd));
        else
            argf(c, "%lld", (long long)rn(g, 15) - 7);
        if (rn(g, 15) == 0) dgen_args(c, "1");
    }
    c->check = DGEN_SHAPE;
}

static void g_setop(dgen_t *g, dgen_cmd_t *c, const char *name, int store)
{
    dgen_args(c, name);
    if (store) rkey(g, c);
    int n = 1 + (int)rn(g, 3);
    for (int i = 0; i < n; i++)
        rkey(g, c);
    if (!store) c->check = DGEN_UNORDERED;
}
static void g_sinter(dgen_t *g, dgen_cmd_t *c)
{
    g_setop(g, c, "SINTER", 0);
}
static void g_sunion(dgen_t *g, dgen_cmd_t *c)
{
    g_setop(g, c, "SUNION", 0);
}
static void g_sdiff(dgen_t *g, dgen_cmd_t *c)
{
    g_setop(g, c, "SDIFF", 0);
}
static void g_sinterstore(dgen_t *g, dgen_cmd_t *c)
{
    g_setop(g, c, "SINTERSTORE", 1);
}
static void g_sunionstore(dgen_t *g, dgen_cmd_t *c)
{
    g_setop(g, c, "SUNIONSTORE", 1);
}
static void g_sdiffstore(dgen_t *g, dgen_cmd_t *c)
{
    g_setop(g, c, "SDIFFSTORE", 1);
}

/* SINTERCARD numkeys key... [LIMIT n]: a numkeys that fits mostly, and
 * now and then one that does not, an odd LIMIT or a stray word. */
static void g_sintercard(dgen_t *g, dgen_cmd_t *c)
{
    static const char *odd[] = {"0", "x", "-1", "9"};
    static const char *lim[] = {"0", "1", "2", "-1", "x", "100"};
    int n = 1 + (int)rn(g, 3);
    dgen_args(c, "SINTERCARD");
    if (rn(g, 15) == 0)
        dgen_args(c, PICK(g, odd));
    else
        argf(c, "%d", n);
    for (int i = 0; i < n; i++)
        rkey(g, c);
    if (rn(g, 3) == 0) dgen_args(c, "LIMIT"), dgen_args(c, PICK(g, lim));
    if (rn(g, 20) == 0) dgen_args(c, rn(g, 2) ? "LIMIT" : "foo");
}

static void g_sscan(dgen_t *g, dgen_cmd_t *c)
{
    static const char *mpat[] = {"*", "1*", "[0-5]", "?", "*a*", "-*"};
    dgen_args(c, "SSCAN"), rkey(g, c);
    dgen_args(c, rn(g, 25) == 0 ? "x" : "0");
    if (rn(g, 2)) dgen_args(c, "MATCH"), dgen_args(c, PICK(g, mpat));
    if (rn(g, 2)) dgen_args(c, "COUNT"), argf(c, "%lld", (long long)rn(g, 5));
    c->check = DGEN_SSCAN;
}

/* ---- sorted sets ---- */

/* Scores: small numbers with repeats (ties order by member), infinities,
 * and now and then one Redis refuses. No -0 (nor weights that make one):
 * where Redis keeps a -0 depends on when its listpack held the member,
 * which test_cmds_zsets checks in the cases that are fixed. */
static void rscore(dgen_t *g, dgen_cmd_t *c)
{
    static const char *w[] = {"0", "1", "2", "-1", "1.5", "0.1", "inf", "-inf", "+inf", "1e3"};
    static const char *bad[] = {"nan", "x", "", " 1", "1e400"};
    dgen_args(c, rn(g, 25) == 0 ? PICK(g, bad) : PICK(g, w));
}

static void rzmember(dgen_t *g, dgen_cmd_t *c)
{
    static const char *w[] = {
        "a", "b", "c", "d",
        "e", "1", "",  "a-member-longer-than-sixty-four-bytes-to-pass-the-listpack-limit-x"};
    if (rn(g, 15) == 0)
        dgen_arg(c, "z\0\r\n", 4);
    else
        dgen_args(c, PICK(g, w));
}

/* Score bounds: ( exclusive, infinities, and a few that are refused. */
static void rsbound(dgen_t *g, dgen_cmd_t *c)
{
    static const char *w[] = {"-inf", "+inf", "0", "(0", "1", "(1", "2", "(1.5", "-1", "(", "inf"};
    dgen_args(c, rn(g, 30) == 0 ? "x" : PICK(g, w));
}

static void rlbound(dgen_t *g, dgen_cmd_t *c)
{
    static const char *w[] = {"-", "+", "[a", "(a", "[c", "(c", "[", "(", "[e", "(b"};
    dgen_args(c, rn(g, 30) == 0 ? "a" : PICK(g, w));
}

/* Lex ranges assume equal scores (with mixed scores a skiplist's answer
 * depends on its levels, which differ from Redis'): the lex commands use
 * keys lx0..lx2, written only by ZADD with score 0 here. */
static void rlexkey(dgen_t *g, dgen_cmd_t *c)
{
    argf(c, "lx%lld", rn(g, 3));
}

static void g_zadd(dgen_t *g, dgen_cmd_t *c)
{
    static const char *opts[] = {"NX", "XX", "GT", "LT", "CH", "INCR", "ch", "xx"};
    dgen_args(c, "ZADD"), rkey(g, c);
    if (rn(g, 3) == 0) {
        int n = 1 + (int)rn(g, 2);
        for (int i = 0; i < n; i++)
            dgen_args(c, PICK(g, opts));
    }
    int n = 1 + (int)rn(g, 3);
    for (int i = 0; i < n; i++)
        rscore(g, c), rzmember(g, c);
    if (rn(g, 30) == 0) rscore(g, c);
}

static void g_zadd_lex(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "ZADD"), rlexkey(g, c);
    int n = 1 + (int)rn(g, 3);
    for (int i = 0; i < n; i++)
        dgen_args(c, "0"), rzmember(g, c);
}

static void g_zincrby(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "ZINCRBY"), rkey(g, c), rscore(g, c), rzmember(g, c);
}

static void g_zrem(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, "ZREM"), rkey(g, c);
    int n = 1 + (int)rn(g, 2);
    for (int i = 0; i < n; i++)
        rzmember(g, c);
}

static void g_zkey(dgen_t *g, dgen_cmd_t *c)
{
    static const char *names[] = {"ZCARD", "ZSCORE", "ZMSCORE", "ZRANK", "ZREVRANK"};
    const char *name = PICK(g, names);
    dgen_args(c, name), rkey(g, c);
    if (strcmp(name, "ZCARD")) rzmember(g, c);
    if (!strcmp(name, "ZMSCORE") && rn(g, 2)) rzmember(g, c);
}

static void g_zcount(dgen_t *g, dgen_cmd_t *c)
{
    if (rn(g, 2))
        dgen_args(c, "ZCOUNT"), rkey(g, c), rsbound(g, c), rsbound(g, c);
    else
        dgen_args(c, "ZLEXCOUNT"), rlexkey(g, c), rlbound(g, c), rlbound(g, c);
}

/* The ZRANGE family, with each form's options now and then. */
static void g_zrange(dgen_t *g, dgen_cmd_t *c)
{
    static const char *names[] = {"ZRANGE",           "ZREVRANGE",   "ZRANGEBYSCORE",
                                  "ZREVRANGEBYSCORE", "ZRANGEBYLEX", "ZREVRANGEBYLEX",
                                  "ZRANGESTORE"};
    static const char *lim[] = {"0", "1", "2", "-1", "x"};
    const char *name = PICK(g, names);
    int store = !strcmp(name, "ZRANGESTORE");
    int by = strstr(name, "LEX") ? 2 : strstr(name, "SCORE") ? 1 : 0;
    if (!strcmp(name, "ZRANGE") || store) by = (int)rn(g, 3);
    dgen_args(c, name);
    if (store) rkey(g, c);
    if (by == 2)
        rlexkey(g, c), rlbound(g, c), rlbound(g, c);
    else if (by == 1)
        rkey(g, c), rsbound(g, c), rsbound(g, c);
    else
        rkey(g, c), argf(c, "%lld", (long long)rn(g, 8) - 4),
            argf(c, "%lld", (long long)rn(g, 8) - 4);
    if (!strcmp(name, "ZRANGE") || store) {
        if (by == 1) dgen_args(c, "BYSCORE");
        if (by == 2) dgen_args(c, "bylex");
        if (rn(g, 3) == 0) dgen_args(c, "REV");
    }
    if (rn(g, 3) == 0 && (by || rn(g, 5) == 0))
        dgen_args(c, "LIMIT"), dgen_args(c, PICK(g, lim)), dgen_args(c, PICK(g, lim));
    if (!store && rn(g, 2) && (by != 2 || rn(g, 5) == 0)) dgen_args(c, "WITHSCORES");
    if (rn(g, 40) == 0) dgen_args(c, "foo");
}

static void g_zremrange(dgen_t *g, dgen_cmd_t *c)
{
    unsigned r = rn(g, 3);
    if (r == 0)
        dgen_args(c, "ZREMRANGEBYRANK"), rkey(g, c), argf(c, "%lld", (long long)rn(g, 6) - 3),
            argf(c, "%lld", (long long)rn(g, 6) - 3);
    else if (r == 1)
        dgen_args(c, "ZREMRANGEBYSCORE"), rkey(g, c), rsbound(g, c), rsbound(g, c);
    else
        dgen_args(c, "ZREMRANGEBYLEX"), rlexkey(g, c), rlbound(g, c), rlbound(g, c);
}

static void g_zpop(dgen_t *g, dgen_cmd_t *c)
{
    static const char *counts[] = {"0", "1", "2", "100", "-1", "x"};
    dgen_args(c, rn(g, 2) ? "ZPOPMIN" : "ZPOPMAX"), rkey(g, c);
    if (rn(g, 2)) dgen_args(c, PICK(g, counts));
}

static void g_zmpop(dgen_t *g, dgen_cmd_t *c)
{
    static const char *const wh[4] = {"MIN", "MAX", "max", "UP"};
    g_mpop(g, c, "ZMPOP", wh);
}

/* ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD over zsets and
 * sets (k keys of any type), with WEIGHTS, AGGREGATE, WITHSCORES, LIMIT. */
static void g_zsetop(dgen_t *g, dgen_cmd_t *c)
{
    static const char *names[] = {"ZUNION",      "ZINTER",     "ZDIFF",     "ZUNIONSTORE",
                                  "ZINTERSTORE", "ZDIFFSTORE", "ZINTERCARD"};
    static const char *w[] = {"1", "2", "3", "inf", "x"};
    static const char *agg[] = {"SUM", "MIN", "MAX", "foo"};
    const char *name = PICK(g, names);
    int store = strstr(name, "STORE") != NULL, card = !strcmp(name, "ZINTERCARD");
    int n = 1 + (int)rn(g, 3);
    dgen_args(c, name);
    if (store) rkey(g, c);
    if (rn(g, 20) == 0)
        dgen_args(c, rn(g, 2) ? "0" : "9");
    else
        argf(c, "%d", n);
    for (int i = 0; i < n; i++)
        rkey(g, c);
    if (!card && rn(g, 3) == 0) {
        dgen_args(c, "WEIGHTS");
        for (int i = 0; i < n; i++)
            dgen_args(c, PICK(g, w));
    }
    if (!card && rn(g, 3) == 0) dgen_args(c, "AGGREGATE"), dgen_args(c, PICK(g, agg));
    if (!store && !card && rn(g, 2)) dgen_args(c, "WITHSCORES");
    if (card && rn(g, 2)) dgen_args(c, "LIMIT"), argf(c, "%lld", (long long)rn(g, 4) - 1);
}

static void g_zrandmember(dgen_t *g, dgen_cmd_t *c)
{
    static const char *odd[] = {"x", "-9223372036854775808", "9223372036854775807"};
    dgen_args(c, "ZRANDMEMBER"), rkey(g, c);
    if (rn(g, 10) >= 3) {
        if (rn(g, 10) == 0)
            dgen_args(c, PICK(g, odd));
        else
            argf(c, "%lld", (long long)rn(g, 11) - 5);
        if (rn(g, 3) == 0) dgen_args(c, rn(g, 8) ? "WITHSCORES" : "foo");
    }
    c->check = DGEN_SHAPE;
}

static void g_zscan(dgen_t *g, dgen_cmd_t *c)
{
    static const char *mpat[] = {"*", "a*", "[a-c]", "?", "*e*"};
    dgen_args(c, "ZSCAN"), rkey(g, c);
    dgen_args(c, rn(g, 25) == 0 ? "x" : "0");
    if (rn(g, 2)) dgen_args(c, "MATCH"), dgen_args(c, PICK(g, mpat));
    if (rn(g, 2)) dgen_args(c, "COUNT"), argf(c, "%lld", 1 + (long long)rn(g, 5));
    c->check = DGEN_HSCAN;
}

/* Low limits make zsets cross into the skiplist encoding (OBJECT ENCODING
 * tells); each server keeps what it converted. */
static void g_config_zset(dgen_t *g, dgen_cmd_t *c)
{
    static const char *names[] = {"zset-max-listpack-entries", "zset-max-ziplist-entries",
                                  "zset-max-listpack-value", "zset-max-ziplist-value"};
    static const char *vals[] = {"0", "1", "2", "3", "8", "64", "128"};
    dgen_args(c, "CONFIG"), dgen_args(c, "SET"), dgen_args(c, PICK(g, names)),
        dgen_args(c, PICK(g, vals));
}

static void g_config_set(dgen_t *g, dgen_cmd_t *c)
{
    static const char *vals[] = {"0", "1", "2", "3", "8", "512"};
    dgen_args(c, "CONFIG"), dgen_args(c, "SET"), dgen_args(c, "set-max-intset-entries"),
        dgen_args(c, PICK(g, vals));
}

static void g_watch(dgen_t *g, dgen_cmd_t *c)
{
    g_keys_n(g, c, "WATCH", 3);
}
static void g_unwatch(dgen_t *g, dgen_cmd_t *c)
{
    (void)g, dgen_args(c, "UNWATCH");
}
static void g_exec(dgen_t *g, dgen_cmd_t *c)
{
    (void)g, dgen_args(c, "EXEC");
} /* outside MULTI */
static void g_discard(dgen_t *g, dgen_cmd_t *c)
{
    (void)g, dgen_args(c, "DISCARD");
} /* outside MULTI */

/* ---- SORT and SORT_RO (D47) ---- */

/* Keys a BY or GET pattern names: "k" + the element (k0..k4 exist for
 * the elements 0..4), a hash field of it, the element itself. */
static const char *const sort_gets[] = {"#", "k*", "k*->f1", "k*->f0", "nosuch*"};

/* SORT with options whose order is the same on both servers: numeric
 * order (equal scores by bytes, a total order, even under a LIMIT's
 * partial sort), ALPHA only with STORE (compared by bytes, total too),
 * BY a pattern only numeric (ALPHA weights may tie, and ties are not
 * ordered as Redis orders them), BY nosort only with STORE (a set's own
 * order without it is its table's). */
static void g_sort(dgen_t *g, dgen_cmd_t *c)
{
    static const char *lim[] = {"0", "1", "2", "-1", "3", "10", "x"};
    int ro = rn(g, 4) == 0, store = !ro && rn(g, 3) == 0, alpha = store && rn(g, 2);
    dgen_args(c, ro ? "SORT_RO" : "SORT"), rkey(g, c);
    unsigned by = rn(g, 5);
    if (by == 1 && !alpha) dgen_args(c, "BY"), dgen_args(c, "k*");
    if (by == 2 && !alpha) dgen_args(c, "BY"), dgen_args(c, "k*->f1");
    if (by == 3 && store) dgen_args(c, "BY"), dgen_args(c, "nosort");
    if (rn(g, 3) == 0)
        dgen_args(c, "LIMIT"), dgen_args(c, PICK(g, lim)), dgen_args(c, PICK(g, lim));
    for (unsigned n = rn(g, 3); n > 0; n--)
        dgen_args(c, "GET"), dgen_args(c, PICK(g, sort_gets));
    if (alpha) dgen_args(c, "ALPHA");
    if (rn(g, 3) == 0) dgen_args(c, "DESC");
    if (store) dgen_args(c, "STORE"), rkey(g, c);
}

/* SORT ALPHA without STORE: strcoll stops at a NUL, so elements equal up
 * to one tie, and a set's come in its table's order: the same elements,
 * in any order, and no LIMIT (ties would choose which come) or GET. */
static void g_sort_alpha(dgen_t *g, dgen_cmd_t *c)
{
    dgen_args(c, rn(g, 3) ? "SORT" : "SORT_RO"), rkey(g, c);
    dgen_args(c, "ALPHA");
    if (rn(g, 2)) dgen_args(c, "DESC");
    c->check = DGEN_UNORDERED;
}

enum { G_NO_MULTI = 1, G_NO_MUTATE = 2 };

typedef struct gen {
    const char *name;
    int weight;
    unsigned flags;
    void (*fn)(dgen_t *g, dgen_cmd_t *c);
} gen_t;

/* ---- DUMP payloads (D34) ---- */

/* RESTORE of payloads redis-server 7.0.15 DUMPed (a string, an integer,
 * an intset, a listpack hash), one with its CRC damaged, one of another
 * version, and TTLs and options that are errors. DUMP itself is not
 * generated: its bytes differ from Redis' for values Redis LZF-compresses
 * and for table-encoded sets and hashes (their order). */
static void g_restore(dgen_t *g, dgen_cmd_t *c)
{
    static const char *const payloads[] = {
        "000568656c6c6f0a006372df766534200a",
        "00c00c0a003c2af8515c04bcd5",
        "0b0e02000000030000000100020003000a00a5025ce26d6e4d1b",
        "101616000000040081610201018162028568656c6c6f06ff0a00e8c5fe99ee07955d",
        "00c00c0a003c2af8515c04bcd6",
        "00c00c0b003c2af8515c04bcd5",
    };
    static const char *const ttls[] = {"0", "0", "0", "-1", "x"};
    static const char *const opts[][2] = {
        {NULL, NULL},      {NULL, NULL},    {"REPLACE", NULL}, {"replace", "ABSTTL"},
        {"IDLETIME", "5"}, {"FREQ", "300"}, {"BOGUS", NULL}};
    const char *hex = PICK(g, payloads);
    char bin[128];
    size_t n = strlen(hex) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        bin[i] = (char)v;
    }
    dgen_args(c, "RESTORE"), rkey(g, c), dgen_args(c, PICK(g, ttls));
    dgen_arg(c, bin, n);
    unsigned k = rn(g, (unsigned)(sizeof(opts) / sizeof(opts[0])));
    for (int i = 0; i < 2 && opts[k][i]; i++)
        dgen_args(c, opts[k][i]);
}

static const gen_t gens[] = {
    {"SET", 60, 0, g_set},
    {"SETNX", 6, 0, g_setnx},
    {"SETEX", 6, 0, g_setex},
    {"PSETEX", 5, 0, g_psetex},
    {"GETSET", 6, 0, g_getset},
    {"GETEX", 12, 0, g_getex},
    {"GETDEL", 8, 0, g_getdel},
    {"GET", 40, 0, g_get},
    {"MSET", 10, 0, g_mset},
    {"MSETNX", 8, 0, g_msetnx},
    {"MGET", 10, 0, g_mget},
    {"INCR", 10, 0, g_incr},
    {"DECR", 6, 0, g_decr},
    {"INCRBY", 10, 0, g_incrby},
    {"DECRBY", 8, 0, g_decrby},
    {"INCRBYFLOAT", 12, 0, g_incrbyfloat},
    {"APPEND", 12, 0, g_append},
    {"STRLEN", 8, 0, g_strlen},
    {"GETRANGE", 10, 0, g_getrange},
    {"SUBSTR", 4, 0, g_substr},
    {"SETRANGE", 12, 0, g_setrange},
    {"SETBIT", 10, 0, g_setbit},
    {"GETBIT", 8, 0, g_getbit},
    {"BITCOUNT", 10, 0, g_bitcount},
    {"BITPOS", 10, 0, g_bitpos},
    {"DEL", 10, 0, g_del},
    {"UNLINK", 5, 0, g_unlink},
    {"EXISTS", 10, 0, g_exists},
    {"TYPE", 5, 0, g_type},
    {"TOUCH", 5, 0, g_touch},
    {"RENAME", 8, 0, g_rename},
    {"RENAMENX", 6, 0, g_renamenx},
    {"COPY", 10, 0, g_copy},
    {"MOVE", 8, 0, g_move},
    {"SWAPDB", 3, 0, g_swapdb},
    {"SELECT", 12, 0, g_select},
    {"DBSIZE", 6, 0, g_dbsize},
    {"FLUSHDB", 2, 0, g_flushdb},
    {"FLUSHALL", 1, 0, g_flushall},
    {"EXPIRE", 12, 0, g_expire},
    {"PEXPIRE", 8, 0, g_pexpire},
    {"EXPIREAT", 8, 0, g_expireat},
    {"PEXPIREAT", 8, 0, g_pexpireat},
    {"PERSIST", 8, 0, g_persist},
    {"TTL", 10, G_NO_MULTI, g_ttl},
    {"PTTL", 6, G_NO_MULTI, g_pttl},
    {"EXPIRETIME", 6, G_NO_MULTI, g_expiretime},
    {"PEXPIRETIME", 6, G_NO_MULTI, g_pexpiretime},
    {"KEYS", 6, G_NO_MULTI, g_keys},
    {"SCAN", 5, G_NO_MULTI | G_NO_MUTATE, g_scan},
    {"RANDOMKEY", 3, G_NO_MULTI, g_randomkey},
    {"OBJECT", 5, 0, g_object},
    {"WATCH", 6, 0, g_watch},
    {"UNWATCH", 2, 0, g_unwatch},
    {"EXEC", 1, G_NO_MULTI | G_NO_MUTATE, g_exec},
    {"DISCARD", 1, G_NO_MULTI | G_NO_MUTATE, g_discard},
    {"HSET", 30, 0, g_hset},
    {"RESTORE", 6, 0, g_restore},
    {"HMSET", 6, 0, g_hmset},
    {"HSETNX", 8, 0, g_hsetnx},
    {"HGET", 20, 0, g_hget},
    {"HMGET", 8, 0, g_hmget},
    {"HDEL", 14, 0, g_hdel},
    {"HEXISTS", 6, 0, g_hexists},
    {"HLEN", 8, 0, g_hlen},
    {"HSTRLEN", 6, 0, g_hstrlen},
    {"HINCRBY", 12, 0, g_hincrby},
    {"HINCRBYFLOAT", 10, 0, g_hincrbyfloat},
    {"HKEYS", 5, G_NO_MULTI, g_hkeys},
    {"HVALS", 5, G_NO_MULTI, g_hvals},
    {"HGETALL", 10, G_NO_MULTI, g_hgetall},
    {"HRANDFIELD", 6, G_NO_MULTI, g_hrandfield},
    {"HSCAN", 5, G_NO_MULTI | G_NO_MUTATE, g_hscan},
    {"HELLO", 2, G_NO_MULTI | G_NO_MUTATE, g_hello},
    {"CONFIG", 2, G_NO_MULTI | G_NO_MUTATE, g_config_hash},
    {"SADD", 25, 0, g_sadd},
    {"SREM", 10, 0, g_srem},
    {"SISMEMBER", 6, 0, g_sismember},
    {"SMISMEMBER", 5, 0, g_smismember},
    {"SCARD", 6, 0, g_scard},
    {"SMEMBERS", 8, G_NO_MULTI, g_smembers},
    {"SMOVE", 6, 0, g_smove},
    {"SPOP", 5, G_NO_MULTI, g_spop},
    {"SRANDMEMBER", 5, G_NO_MULTI, g_srandmember},
    {"SINTER", 5, G_NO_MULTI, g_sinter},
    {"SUNION", 5, G_NO_MULTI, g_sunion},
    {"SDIFF", 5, G_NO_MULTI, g_sdiff},
    {"SINTERSTORE", 4, 0, g_sinterstore},
    {"SUNIONSTORE", 4, 0, g_sunionstore},
    {"SDIFFSTORE", 4, 0, g_sdiffstore},
    {"SINTERCARD", 4, 0, g_sintercard},
    {"SSCAN", 4, G_NO_MULTI | G_NO_MUTATE, g_sscan},
    {"LPUSH", 25, 0, g_push},
    {"LPOP", 12, 0, g_pop},
    {"LLEN", 6, 0, g_llen},
    {"LINDEX", 8, 0, g_lindex},
    {"LSET", 6, 0, g_lset},
    {"LRANGE", 10, 0, g_lrange},
    {"LTRIM", 4, 0, g_ltrim},
    {"LREM", 5, 0, g_lrem},
    {"LINSERT", 5, 0, g_linsert},
    {"LPOS", 6, 0, g_lpos},
    {"LMOVE", 6, 0, g_lmove},
    {"LMPOP", 5, 0, g_lmpop},
    {"ZADD", 25, 0, g_zadd},
    {"ZADD lex", 8, 0, g_zadd_lex},
    {"ZINCRBY", 6, 0, g_zincrby},
    {"ZREM", 6, 0, g_zrem},
    {"ZCARD", 12, 0, g_zkey},
    {"ZCOUNT", 6, 0, g_zcount},
    {"ZRANGE", 18, 0, g_zrange},
    {"ZREMRANGEBYRANK", 5, 0, g_zremrange},
    {"ZPOPMIN", 6, 0, g_zpop},
    {"ZMPOP", 4, 0, g_zmpop},
    {"ZUNION", 10, 0, g_zsetop},
    {"ZRANDMEMBER", 4, G_NO_MULTI, g_zrandmember},
    {"ZSCAN", 4, G_NO_MULTI | G_NO_MUTATE, g_zscan},
    {"SORT", 12, 0, g_sort},
    {"SORT ALPHA", 4, G_NO_MULTI, g_sort_alpha},
    {"CONFIG zset", 2, G_NO_MULTI | G_NO_MUTATE, g_config_zset},
    {"CONFIG SET", 1, G_NO_MULTI | G_NO_MUTATE, g_config_set},
};

/* ------------------------------------------------------------------ */
/* filters                                                             */

static char *name_list(const char *s)
{
    if (!s || !*s) return NULL;
    size_t n = strlen(s);
    char *out = malloc(n + 3);
    if (!out) abort();
    out[0] = ',';
    for (size_t i = 0; i < n; i++)
        out[i + 1] = (char)toupper((unsigned char)s[i]);
    out[n + 1] = ',';
    out[n + 2] = '\0';
    return out;
}

static int in_list(const char *list, const char *name)
{
    char pat[64];
    snprintf(pat, sizeof(pat), ",%s,", name);
    return strstr(list, pat) != NULL;
}

static int allowed(const dgen_t *g, const char *name)
{
    if (g->only && !in_list(g->only, name)) return 0;
    if (g->skip && in_list(g->skip, name)) return 0;
    return 1;
}

void dgen_init(dgen_t *g, uint64_t seed, const char *skip, const char *only)
{
    memset(g, 0, sizeof(*g));
    g->rng = seed;
    g->skip = name_list(skip);
    g->only = name_list(only);
}

void dgen_done(dgen_t *g)
{
    free(g->skip);
    free(g->only);
    g->skip = g->only = NULL;
}

/* ------------------------------------------------------------------ */
/* the sequence                                                        */

/* SPOP key without a count pops a random member (g_spop's forms are the
 * ones that are not random): dropping its count would make the servers
 * differ by chance. */
static int drop_makes_random(const dgen_cmd_t *c)
{
    return c->argc == 3 && !strcasecmp(c->argv[0], "SPOP");
}

/* Wrong arities, unknown names and odd letter case, now and then. */
static void mutate(dgen_t *g, dgen_cmd_t *c)
{
    static const char *unknown[] = {"NOSUCHCMD", "GETT", "SETT", "EXPIRES", "foo"};
    unsigned r = rn(g, 1000);
    if (r < 15 && c->argc > 1) {
        if (!drop_makes_random(c)) free(c->argv[--c->argc]);
    } else if (r < 30) {
        rval(g, c);
    } else if (r < 38) {
        free(c->argv[0]);
        const char *u = PICK(g, unknown);
        c->argv[0] = strdup(u);
        c->lens[0] = strlen(u);
        c->check = DGEN_EXACT;
    } else if (r < 55) {
        for (size_t i = 0; i < c->lens[0]; i++)
            if (rn(g, 2)) c->argv[0][i] = (char)tolower((unsigned char)c->argv[0][i]);
    }
}

void dgen_next(dgen_t *g, dgen_cmd_t *c)
{
    memset(c, 0, sizeof(*c));
    if (g->in_multi && g->multi_left == 0) {
        dgen_args(c, rn(g, 7) ? "EXEC" : "DISCARD");
        if (g->sorted) c->check = DGEN_ENCODING; /* an OBJECT ENCODING inside */
        g->in_multi = 0;
        g->watching = 0;
        return;
    }
    if (g->in_multi) {
        g->multi_left--;
        if (rn(g, 40) == 0) { /* nested: an error that keeps the MULTI */
            dgen_args(c, "MULTI");
            return;
        }
    } else if (allowed(g, "MULTI") && rn(g, 100) < (unsigned)(g->watching ? 30 : 3)) {
        dgen_args(c, "MULTI");
        g->in_multi = 1;
        g->multi_left = (int)rn(g, 7);
        return;
    }
    int total = 0;
    for (size_t i = 0; i < sizeof(gens) / sizeof(gens[0]); i++)
        if (allowed(g, gens[i].name) && !(g->in_multi && (gens[i].flags & G_NO_MULTI)))
            total += gens[i].weight;
    if (total == 0) {
        dgen_args(c, "PING");
        return;
    }
    int at = (int)rn(g, (unsigned)total);
    const gen_t *chosen = NULL;
    for (size_t i = 0; i < sizeof(gens) / sizeof(gens[0]) && !chosen; i++) {
        if (!allowed(g, gens[i].name) || (g->in_multi && (gens[i].flags & G_NO_MULTI))) continue;
        if (at < gens[i].weight) chosen = &gens[i];
        at -= gens[i].weight;
    }
    chosen->fn(g, c);
    if (!strncmp(chosen->name, "SORT", 4)) g->sorted = 1;
    if (!g->in_multi && strcmp(chosen->name, "WATCH") == 0) g->watching = 1;
    if (!g->in_multi && strcmp(chosen->name, "UNWATCH") == 0) g->watching = 0;
    if (!(chosen->flags & G_NO_MUTATE)) mutate(g, c);
}
