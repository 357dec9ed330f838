/*
 * streamid.c - stream IDs and XADD/XTRIM options (streamid.h), parsed as
 * Redis 7.0.15 does, in its order and with its texts. Runs in the
 * frontends (to refuse a bad command before the ring) and in the store
 * (to read the record); no state.
 */
#include "streamid.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "strutil.h"

/* Redis' string2ull: a strict decimal (no sign, spaces or leading zeros)
 * that is not negative, or else what strtoull takes whole without a range
 * error (so "+5", " 7" and "007" are IDs too, and "-5" is not). */
static int parse_u64(const char *p, size_t n, uint64_t *out)
{
    long long ll;
    if (str_to_ll(p, n, &ll) == 0) {
        if (ll < 0) return -1;
        *out = (uint64_t)ll;
        return 0;
    }
    char tmp[128];
    if (n == 0 || n >= sizeof(tmp) || memchr(p, '\0', n)) return -1;
    memcpy(tmp, p, n);
    tmp[n] = '\0';
    char *end;
    errno = 0;
    unsigned long long v = strtoull(tmp, &end, 10);
    if (errno == EINVAL || errno == ERANGE || *end != '\0') return -1;
    *out = v;
    return 0;
}

int sid_parse(const char *p, size_t n, int strict, uint64_t missing_seq, uint64_t *ms,
              uint64_t *seq, int *seq_given)
{
    if (seq_given) *seq_given = 1;
    if (n > 127) return -1;
    if (n == 1 && (p[0] == '-' || p[0] == '+')) {
        if (strict) return -1;
        *ms = *seq = p[0] == '-' ? 0 : UINT64_MAX;
        return 0;
    }
    size_t dash = 0;
    while (dash < n && p[dash] != '-')
        dash++;
    if (parse_u64(p, dash, ms)) return -1;
    if (dash == n) {
        *seq = missing_seq;
        return 0;
    }
    const char *q = p + dash + 1;
    size_t qn = n - dash - 1;
    if (seq_given && qn == 1 && q[0] == '*') {
        *seq = 0;
        *seq_given = 0;
        return 0;
    }
    return parse_u64(q, qn, seq);
}

int sid_format(char *buf, uint64_t ms, uint64_t seq)
{
    return snprintf(buf, SID_TEXT_MAX, "%" PRIu64 "-%" PRIu64, ms, seq);
}

static int is(const char *p, uint32_t n, const char *w)
{
    size_t k = strlen(w);
    return n == k && strncasecmp(p, w, k) == 0;
}

#define ERR_BOTH "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"

/* After MAXLEN or MINID at i: an optional '=' or '~' when two more
 * arguments follow; returns the threshold's index. */
static int trim_threshold(int argc, const char *const *argv, const uint32_t *lens, int i,
                          sid_trim_args_t *o)
{
    int more = argc - 1 - i;
    o->approx = 0;
    if (more >= 2 && lens[i + 1] == 1 && (argv[i + 1][0] == '~' || argv[i + 1][0] == '=')) {
        o->approx = argv[i + 1][0] == '~';
        i++;
    }
    return i + 1;
}

int sid_trim_parse(int argc, const char *const *argv, const uint32_t *lens, int xadd,
                   sid_trim_args_t *o, const char **err)
{
    memset(o, 0, sizeof(*o));
    int limit_given = 0, i = 1;
    for (; i < argc; i++) {
        int more = argc - 1 - i;
        const char *w = argv[i];
        uint32_t n = lens[i];
        if (xadd && n == 1 && w[0] == '*') break;
        if ((is(w, n, "MAXLEN") || is(w, n, "MINID")) && more) {
            int maxlen = is(w, n, "MAXLEN");
            if (o->strategy != STRIM_NONE) return *err = ERR_BOTH, -1;
            i = trim_threshold(argc, argv, lens, i, o);
            if (maxlen) {
                if (str_to_ll(argv[i], lens[i], &o->maxlen))
                    return *err = "ERR value is not an integer or out of range", -1;
                if (o->maxlen < 0) return *err = "ERR The MAXLEN argument must be >= 0.", -1;
            } else if (sid_parse(argv[i], lens[i], 1, 0, &o->minid_ms, &o->minid_seq, NULL)) {
                return *err = SID_ERR_INVALID, -1;
            }
            o->strategy = maxlen ? STRIM_MAXLEN : STRIM_MINID;
        } else if (is(w, n, "LIMIT") && more) {
            if (str_to_ll(argv[i + 1], lens[i + 1], &o->limit))
                return *err = "ERR value is not an integer or out of range", -1;
            if (o->limit < 0) return *err = "ERR The LIMIT argument must be >= 0.", -1;
            limit_given = 1;
            i++;
        } else if (xadd && is(w, n, "NOMKSTREAM")) {
            o->nomkstream = 1;
        } else if (xadd) {
            if (sid_parse(w, n, 1, 0, &o->id_ms, &o->id_seq, &o->seq_given))
                return *err = SID_ERR_INVALID, -1;
            o->id_given = 1;
            break;
        } else {
            return *err = "ERR syntax error", -1;
        }
    }
    if (limit_given && o->strategy == STRIM_NONE)
        return *err = "ERR syntax error, LIMIT cannot be used without specifying a trimming "
                      "strategy",
               -1;
    if (!xadd && o->strategy == STRIM_NONE)
        return *err = "ERR syntax error, XTRIM must be called with a trimming strategy", -1;
    if (limit_given && !o->approx)
        return *err = "ERR syntax error, LIMIT cannot be used without the special ~ option", -1;
    if (!limit_given) o->limit = o->approx ? SID_TRIM_LIMIT : 0;
    if (xadd) {
        o->id_at = i;
        int pairs = argc - i - 1;
        if (i >= argc || pairs < 2 || pairs % 2)
            return *err = "ERR wrong number of arguments for 'xadd' command", -1;
    }
    return 0;
}

int sid_xread_parse(int argc, const char *const *argv, const uint32_t *lens, int group,
                    sid_xread_args_t *o, const char **err)
{
    memset(o, 0, sizeof(*o));
    o->block_ms = -1;
    for (int i = 0; i < argc; i++) {
        int more = argc - i - 1;
        if (is(argv[i], lens[i], "BLOCK") && more) {
            i++;
            if (str_to_ll(argv[i], lens[i], &o->block_ms))
                return *err = "ERR timeout is not an integer or out of range", -1;
            if (o->block_ms < 0) return *err = "ERR timeout is negative", -1;
        } else if (is(argv[i], lens[i], "COUNT") && more) {
            i++;
            if (str_to_ll(argv[i], lens[i], &o->count))
                return *err = "ERR value is not an integer or out of range", -1;
            if (o->count < 0) o->count = 0;
        } else if (is(argv[i], lens[i], "STREAMS") && more) {
            o->streams_at = i + 1;
            if ((argc - o->streams_at) % 2)
                return *err = "ERR Unbalanced XREAD list of streams: for each stream key an ID "
                              "or '$' must be specified.",
                       -1;
            o->nstreams = (argc - o->streams_at) / 2;
            break;
        } else if (is(argv[i], lens[i], "GROUP") && more >= 2) {
            if (!group)
                return *err = "ERR The GROUP option is only supported by XREADGROUP. You called "
                              "XREAD instead.",
                       -1;
            o->group_at = i + 1;
            i += 2;
        } else if (is(argv[i], lens[i], "NOACK")) {
            if (!group)
                return *err = "ERR The NOACK option is only supported by XREADGROUP. You called "
                              "XREAD instead.",
                       -1;
            o->noack = 1;
        } else {
            return *err = "ERR syntax error", -1;
        }
    }
    if (!o->streams_at) return *err = "ERR syntax error", -1;
    if (group && !o->group_at) return *err = "ERR Missing GROUP option for XREADGROUP", -1;
    return 0;
}
