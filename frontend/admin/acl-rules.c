/*
 * acl-rules.c - the ACL model, pure functions run by the frontends (and
 * by the master once, to build the table from the configuration): users,
 * their rules, how they are described, saved and loaded, and the
 * permission decision. acl.c shares the table between the
 * frontends and applies it to connections.
 *
 * The model follows Redis 7.0's ACL for the common cases: a user is on or
 * off, has SHA-256 password hashes or is nopass, key patterns (~pat,
 * allkeys), channel patterns (&pat, allchannels: PUBLISH, SUBSCRIBE,
 * PSUBSCRIBE and the shard forms), and one permission bit per "command index" (admin.h: a command,
 * or a subcommand such as config|get), set and cleared by +cmd, -cmd,
 * +cmd|sub, +@category, -@category, +@all, -@all. Rules apply all or
 * nothing: acl_setuser works on a copy and keeps it only if every rule
 * parsed. Selectors "(...)" and read/write key permissions (%R~, %W~) are
 * refused with a clear error.
 *
 * How a user is described (ACL LIST, GETUSER): Redis 7.0 rebuilds the
 * command rules from the permission bits by trying its categories in turn,
 * which depends on Redis' own command set; AtticDB keeps the rules as given
 * instead (as Redis 7.2 does): "+@all" or "-@all", then the +/- rules since
 * the last +@all/-@all, a command's earlier rule replaced by its newer one.
 * The common descriptions ("+@all", "-@all +get +set", "+@all -@dangerous")
 * are identical to Redis'.
 *
 * Saved form (shm): u32 users; per user u32 tokens, each token u32 length
 * + bytes: the name, then the rules that rebuild the user from nothing.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "resp.h"
#include "frontend/admin/admin.h"
#include "frontend/admin/sha256.h"
#include "glob.h"
#include "log.h"

#define ACL_WORDS ((FE_CMD_INDEXES + 63) / 64)

typedef struct acl_str {
    char *p;
    size_t n;
} acl_str_t;

typedef struct acl_strlist {
    acl_str_t *v;
    int n, cap;
} acl_strlist_t;

struct acl_user {
    char *name;
    int enabled;
    int nopass;
    int sanitize; /* 0 none, 1 sanitize-payload, 2 skip-sanitize-payload (shown only) */
    int allkeys, allchannels;
    int base_all; /* +@all is the base of the command rules (else -@all) */
    int unrestricted;
    unsigned char (*pass)[SHA256_LEN];
    int npass;
    uint64_t cmds[ACL_WORDS];
    acl_strlist_t firstargs; /* "idx:arg" entries: +get|foo on a command without subcommands */
    acl_strlist_t keys, channels;
    acl_strlist_t rules; /* command rules after the base, as described */
};

struct acl_table {
    acl_user_t **users; /* sorted by name */
    int n, cap;
};

/* ---- small helpers ---- */

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        log_warn("out of memory");
        abort();
    }
    return p;
}

static char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

static void sl_add(acl_strlist_t *l, const char *p, size_t n)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 4;
        acl_str_t *v = realloc(l->v, (size_t)cap * sizeof(*v));
        if (!v) abort();
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].p = xstrndup(p, n);
    l->v[l->n].n = n;
    l->n++;
}

static int sl_find(const acl_strlist_t *l, const char *p, size_t n)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i].n == n && memcmp(l->v[i].p, p, n) == 0) return i;
    return -1;
}

static void sl_del(acl_strlist_t *l, int i)
{
    free(l->v[i].p);
    memmove(&l->v[i], &l->v[i + 1], (size_t)(l->n - i - 1) * sizeof(l->v[0]));
    l->n--;
}

static void sl_clear(acl_strlist_t *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->v[i].p);
    l->n = 0;
}

static void sl_free(acl_strlist_t *l)
{
    sl_clear(l);
    free(l->v);
    memset(l, 0, sizeof(*l));
}

static void sl_copy(acl_strlist_t *dst, const acl_strlist_t *src)
{
    memset(dst, 0, sizeof(*dst));
    for (int i = 0; i < src->n; i++)
        sl_add(dst, src->v[i].p, src->v[i].n);
}

static int word_eq(const char *s, size_t n, const char *w)
{
    return strlen(w) == n && strncasecmp(s, w, n) == 0;
}

/* ---- categories ---- */

static const struct {
    const char *name;
    uint32_t bits;
} categories[] = {
    {"keyspace", CAT_KEYSPACE},
    {"read", CAT_READ},
    {"write", CAT_WRITE},
    {"set", CAT_SET},
    {"sortedset", CAT_SORTEDSET},
    {"list", CAT_LIST},
    {"hash", CAT_HASH},
    {"string", CAT_STRING},
    {"bitmap", CAT_BITMAP},
    {"hyperloglog", CAT_HYPERLOGLOG},
    {"geo", 0},
    {"stream", CAT_STREAM},
    {"pubsub", CAT_PUBSUB},
    {"admin", CAT_ADMIN},
    {"fast", CAT_FAST},
    {"slow", CAT_SLOW},
    {"blocking", CAT_BLOCKING},
    {"dangerous", CAT_DANGEROUS},
    {"connection", CAT_CONNECTION},
    {"transaction", CAT_TRANSACTION},
    {"scripting", 0},
};

const char *acl_category(int i, uint32_t *bits)
{
    if (i < 0 || (size_t)i >= sizeof(categories) / sizeof(categories[0])) return NULL;
    if (bits) *bits = categories[i].bits;
    return categories[i].name;
}

int acl_category_find(const char *s, size_t n, uint32_t *bits)
{
    for (int i = 0; acl_category(i, NULL); i++)
        if (word_eq(s, n, categories[i].name)) {
            if (bits) *bits = categories[i].bits;
            return i;
        }
    return -1;
}

/* ---- permission bits ---- */

static void bit_set(acl_user_t *u, unsigned idx, int on)
{
    if (on)
        u->cmds[idx / 64] |= 1ull << (idx % 64);
    else
        u->cmds[idx / 64] &= ~(1ull << (idx % 64));
}

static int bit_get(const acl_user_t *u, unsigned idx)
{
    return (u->cmds[idx / 64] >> (idx % 64)) & 1;
}

/* Call fn for every valid index. */
#define FOR_EACH_INDEX(var, body)                                                                  \
    do {                                                                                           \
        for (size_t i_ = 0; i_ < fe_cmd_index_count(); i_++) {                                     \
            unsigned var = fe_cmd_index_at(i_);                                                    \
            body;                                                                                  \
        }                                                                                          \
    } while (0)

static void update_unrestricted(acl_user_t *u)
{
    int all = 1;
    FOR_EACH_INDEX(idx, if (!bit_get(u, idx)) all = 0);
    u->unrestricted = all && u->allkeys && u->allchannels;
}

/* Set or clear a command and all its subcommands. */
static void set_command(acl_user_t *u, cmd_id_t id, int on)
{
    bit_set(u, (unsigned)id, on);
    size_t nsubs;
    const cmd_sub_t *subs = cmd_subs(&nsubs);
    for (size_t k = 0; k < nsubs; k++)
        if (subs[k].parent == id) bit_set(u, FE_SUB_BASE + (unsigned)k, on);
    /* First-arg allowances of the command are superseded. */
    char prefix[8];
    int pn = snprintf(prefix, sizeof(prefix), "%u:", (unsigned)id);
    for (int i = u->firstargs.n - 1; i >= 0; i--)
        if (u->firstargs.v[i].n >= (size_t)pn &&
            memcmp(u->firstargs.v[i].p, prefix, (size_t)pn) == 0)
            sl_del(&u->firstargs, i);
}

/* Replace an earlier rule for the same command with this one (Redis 7.2). */
static void rules_update(acl_user_t *u, const char *rule, size_t n)
{
    for (int i = u->rules.n - 1; i >= 0; i--) {
        const acl_str_t *r = &u->rules.v[i];
        if (r->p[1] != '@' && r->n == n && memcmp(r->p + 1, rule + 1, n - 1) == 0)
            sl_del(&u->rules, i);
    }
    sl_add(&u->rules, rule, n);
}

/* ---- users ---- */

static acl_user_t *user_new(const char *name, size_t n)
{
    acl_user_t *u = xmalloc(sizeof(*u));
    memset(u, 0, sizeof(*u));
    u->name = xstrndup(name, n);
    return u;
}

static void user_free(acl_user_t *u)
{
    if (!u) return;
    free(u->name);
    free(u->pass);
    sl_free(&u->firstargs);
    sl_free(&u->keys);
    sl_free(&u->channels);
    sl_free(&u->rules);
    free(u);
}

static acl_user_t *user_clone(const acl_user_t *s)
{
    acl_user_t *u = xmalloc(sizeof(*u));
    *u = *s;
    u->name = xstrndup(s->name, strlen(s->name));
    u->pass = xmalloc((size_t)(s->npass ? s->npass : 1) * SHA256_LEN);
    if (s->npass) memcpy(u->pass, s->pass, (size_t)s->npass * SHA256_LEN);
    sl_copy(&u->firstargs, &s->firstargs);
    sl_copy(&u->keys, &s->keys);
    sl_copy(&u->channels, &s->channels);
    sl_copy(&u->rules, &s->rules);
    return u;
}

const char *acl_user_name(const acl_user_t *u)
{
    return u->name;
}
int acl_user_enabled(const acl_user_t *u)
{
    return u->enabled;
}
int acl_user_nopass(const acl_user_t *u)
{
    return u->nopass;
}
int acl_user_unrestricted(const acl_user_t *u)
{
    return u->unrestricted;
}

int acl_user_all_keys(const acl_user_t *u)
{
    return u->unrestricted || u->allkeys;
}

static int pass_find(const acl_user_t *u, const unsigned char *h)
{
    for (int i = 0; i < u->npass; i++)
        if (memcmp(u->pass[i], h, SHA256_LEN) == 0) return i;
    return -1;
}

static void pass_add(acl_user_t *u, const unsigned char *h)
{
    if (pass_find(u, h) >= 0) return;
    unsigned char(*p)[SHA256_LEN] = realloc(u->pass, (size_t)(u->npass + 1) * SHA256_LEN);
    if (!p) abort();
    u->pass = p;
    memcpy(u->pass[u->npass++], h, SHA256_LEN);
}

static void pass_del(acl_user_t *u, int i)
{
    memmove(u->pass[i], u->pass[i + 1], (size_t)(u->npass - i - 1) * SHA256_LEN);
    u->npass--;
}

int acl_user_password_ok(const acl_user_t *u, const char *pass, size_t n)
{
    if (u->nopass) return 1;
    unsigned char h[SHA256_LEN];
    sha256(pass, n, h);
    /* Compare every hash in full: no early exit that times the match. */
    int ok = 0;
    for (int i = 0; i < u->npass; i++) {
        unsigned char diff = 0;
        for (int j = 0; j < SHA256_LEN; j++)
            diff |= (unsigned char)(u->pass[i][j] ^ h[j]);
        ok |= diff == 0;
    }
    return ok;
}

static int parse_hash(const char *s, size_t n, unsigned char *out)
{
    if (n != 2 * SHA256_LEN) return -1;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0) return -1;
        if (i % 2 == 0)
            out[i / 2] = (unsigned char)(v << 4);
        else
            out[i / 2] |= (unsigned char)v;
    }
    return 0;
}

/* The command named s[0, n) (any case), or NULL. */
static const cmd_desc_t *find_command(const char *s, size_t n)
{
    return cmd_lookup(s, n);
}

/* One rule. Returns 0, or -1 with the reason (Redis' text) in why. */
static int apply_rule(acl_user_t *u, const char *op, size_t n, const char **why)
{
    static const char E_SYNTAX[] = "Syntax error";
    static const char E_UNKNOWN[] = "Unknown command or category name in ACL";
    static const char E_HASH[] = "The password hash must be exactly 64 characters and contain only "
                                 "lowercase hexadecimal characters";
    static const char E_NOPASS[] =
        "The password you are trying to remove from the user does not exist";
    unsigned char h[SHA256_LEN];
    if (n == 0) {
        *why = E_SYNTAX;
        return -1;
    }
    if (word_eq(op, n, "on")) {
        u->enabled = 1;
    } else if (word_eq(op, n, "off")) {
        u->enabled = 0;
    } else if (word_eq(op, n, "nopass")) {
        u->nopass = 1;
        u->npass = 0;
    } else if (word_eq(op, n, "resetpass")) {
        u->nopass = 0;
        u->npass = 0;
    } else if (word_eq(op, n, "sanitize-payload")) {
        u->sanitize = 1;
    } else if (word_eq(op, n, "skip-sanitize-payload")) {
        u->sanitize = 2;
    } else if (word_eq(op, n, "allkeys") || (n == 2 && op[0] == '~' && op[1] == '*')) {
        u->allkeys = 1;
        sl_clear(&u->keys);
    } else if (word_eq(op, n, "resetkeys")) {
        u->allkeys = 0;
        sl_clear(&u->keys);
    } else if (word_eq(op, n, "allchannels") || (n == 2 && op[0] == '&' && op[1] == '*')) {
        u->allchannels = 1;
        sl_clear(&u->channels);
    } else if (word_eq(op, n, "resetchannels")) {
        u->allchannels = 0;
        sl_clear(&u->channels);
    } else if (word_eq(op, n, "allcommands") || word_eq(op, n, "+@all")) {
        FOR_EACH_INDEX(idx, bit_set(u, idx, 1));
        u->base_all = 1;
        sl_clear(&u->rules);
        sl_clear(&u->firstargs);
    } else if (word_eq(op, n, "nocommands") || word_eq(op, n, "-@all")) {
        memset(u->cmds, 0, sizeof(u->cmds));
        u->base_all = 0;
        sl_clear(&u->rules);
        sl_clear(&u->firstargs);
    } else if (word_eq(op, n, "reset")) {
        const char *const seq[] = {"resetpass", "resetkeys", "resetchannels",
                                   "off",       "-@all",     "sanitize-payload"};
        for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
            apply_rule(u, seq[i], strlen(seq[i]), why);
    } else if (word_eq(op, n, "clearselectors")) {
        /* no selectors exist here: nothing to clear */
    } else if (op[0] == '>') {
        sha256(op + 1, n - 1, h);
        pass_add(u, h);
        u->nopass = 0;
    } else if (op[0] == '#') {
        if (parse_hash(op + 1, n - 1, h) != 0) {
            *why = E_HASH;
            return -1;
        }
        pass_add(u, h);
        u->nopass = 0;
    } else if (op[0] == '<' || op[0] == '!') {
        if (op[0] == '<') {
            sha256(op + 1, n - 1, h);
        } else if (parse_hash(op + 1, n - 1, h) != 0) {
            *why = E_HASH;
            return -1;
        }
        int i = pass_find(u, h);
        if (i < 0) {
            *why = E_NOPASS;
            return -1;
        }
        pass_del(u, i);
    } else if (op[0] == '~') {
        if (u->allkeys) {
            *why =
                "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and "
                "does not have any effect. Try 'resetkeys' to start with an empty list of patterns";
            return -1;
        }
        if (sl_find(&u->keys, op + 1, n - 1) < 0) sl_add(&u->keys, op + 1, n - 1);
    } else if (op[0] == '%') {
        *why =
            "AtticDB does not support read/write key permissions (%R~, %W~, %RW~): use ~<pattern>";
        return -1;
    } else if (op[0] == '&') {
        if (u->allchannels) {
            *why = "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid "
                   "and does not have any effect. Try 'resetchannels' to start with an empty list "
                   "of channels";
            return -1;
        }
        if (sl_find(&u->channels, op + 1, n - 1) < 0) sl_add(&u->channels, op + 1, n - 1);
    } else if (op[0] == '(') {
        *why = "AtticDB does not support ACL selectors";
        return -1;
    } else if ((op[0] == '+' || op[0] == '-') && n > 1 && op[1] == '@') {
        int allow = op[0] == '+';
        int cat = acl_category_find(op + 2, n - 2, NULL);
        if (cat < 0) {
            *why = E_UNKNOWN;
            return -1;
        }
        uint32_t bits = categories[cat].bits;
        if (bits) FOR_EACH_INDEX(idx, if (fe_cmd_index_cats(idx) & bits) bit_set(u, idx, allow));
        char rule[32];
        int rn = snprintf(rule, sizeof(rule), "%c@%s", op[0], categories[cat].name);
        sl_add(&u->rules, rule, (size_t)rn);
    } else if (op[0] == '+' || op[0] == '-') {
        int allow = op[0] == '+';
        const char *name = op + 1;
        size_t len = n - 1;
        const char *bar = memchr(name, '|', len);
        size_t cmdlen = bar ? (size_t)(bar - name) : len;
        const cmd_desc_t *d = find_command(name, cmdlen);
        if (!d) {
            *why = E_UNKNOWN;
            return -1;
        }
        char rule[256];
        if (!bar) {
            set_command(u, d->id, allow);
            int rn = snprintf(rule, sizeof(rule), "%c%s", op[0], d->name);
            rules_update(u, rule, (size_t)rn);
        } else {
            const char *sub = bar + 1;
            size_t sublen = len - cmdlen - 1;
            if (sublen == 0 || memchr(sub, '|', sublen)) {
                *why = E_UNKNOWN;
                return -1;
            }
            if (fe_has_subcmds(d->id)) {
                int k = fe_subcmd_find(d->id, sub, sublen);
                if (k < 0) {
                    *why = E_UNKNOWN;
                    return -1;
                }
                bit_set(u, FE_SUB_BASE + (unsigned)k, allow);
                size_t nsubs;
                int rn = snprintf(rule, sizeof(rule), "%c%s", op[0], cmd_subs(&nsubs)[k].fullname);
                rules_update(u, rule, (size_t)rn);
            } else {
                /* "+get|foo": allow GET when its first argument is foo
                 * (Redis 7.0 accepts it for any command; never "-"). */
                if (!allow || sublen > 200) {
                    *why = E_UNKNOWN;
                    return -1;
                }
                char fa[256];
                int fn = snprintf(fa, sizeof(fa), "%u:%.*s", (unsigned)d->id, (int)sublen, sub);
                for (int i = 0; i < fn; i++)
                    fa[i] = (char)tolower((unsigned char)fa[i]);
                if (!bit_get(u, (unsigned)d->id) && sl_find(&u->firstargs, fa, (size_t)fn) < 0)
                    sl_add(&u->firstargs, fa, (size_t)fn);
                int rn = snprintf(rule, sizeof(rule), "+%s|%.*s", d->name, (int)sublen, sub);
                for (int i = 1; i < rn; i++)
                    rule[i] = (char)tolower((unsigned char)rule[i]);
                if (sl_find(&u->rules, rule, (size_t)rn) < 0) sl_add(&u->rules, rule, (size_t)rn);
            }
        }
    } else {
        *why = E_SYNTAX;
        return -1;
    }
    return 0;
}

/* ---- describing ---- */

static void describe_keys(const acl_user_t *u, buf_t *out, int with_reset)
{
    (void)with_reset;
    if (u->allkeys) {
        buf_append(out, "~*", 2);
        return;
    }
    for (int i = 0; i < u->keys.n; i++) {
        if (i) buf_append(out, " ", 1);
        buf_append(out, "~", 1);
        buf_append(out, u->keys.v[i].p, u->keys.v[i].n);
    }
}

static void describe_channels(const acl_user_t *u, buf_t *out, int with_reset)
{
    if (u->allchannels) {
        buf_append(out, "&*", 2);
        return;
    }
    if (with_reset) buf_append(out, "resetchannels", 13);
    for (int i = 0; i < u->channels.n; i++) {
        if (i || with_reset) buf_append(out, " ", 1);
        buf_append(out, "&", 1);
        buf_append(out, u->channels.v[i].p, u->channels.v[i].n);
    }
}

static void describe_commands(const acl_user_t *u, buf_t *out)
{
    buf_append(out, u->base_all ? "+@all" : "-@all", 5);
    for (int i = 0; i < u->rules.n; i++) {
        buf_append(out, " ", 1);
        buf_append(out, u->rules.v[i].p, u->rules.v[i].n);
    }
}

void acl_user_describe(const acl_user_t *u, buf_t *out)
{
    buf_appendf(out, "user %s %s", u->name, u->enabled ? "on" : "off");
    if (u->nopass) buf_append(out, " nopass", 7);
    if (u->sanitize == 2) buf_append(out, " skip-sanitize-payload", 22);
    if (u->sanitize == 1) buf_append(out, " sanitize-payload", 17);
    for (int i = 0; i < u->npass; i++) {
        char hex[2 * SHA256_LEN + 1];
        sha256_hex(u->pass[i], hex);
        buf_appendf(out, " #%s", hex);
    }
    if (u->allkeys || u->keys.n) {
        buf_append(out, " ", 1);
        describe_keys(u, out, 0);
    }
    buf_append(out, " ", 1);
    describe_channels(u, out, 1);
    buf_append(out, " ", 1);
    describe_commands(u, out);
}

void acl_user_getuser(const acl_user_t *u, int proto, buf_t *out)
{
    buf_t tmp;
    buf_init(&tmp);
    resp_map(out, proto, 6);
    resp_bulk_cstr(out, "flags");
    int nflags = 1 + (u->nopass != 0) + (u->sanitize != 0);
    resp_set(out, proto, nflags);
    resp_bulk_cstr(out, u->enabled ? "on" : "off");
    if (u->nopass) resp_bulk_cstr(out, "nopass");
    if (u->sanitize == 2) resp_bulk_cstr(out, "skip-sanitize-payload");
    if (u->sanitize == 1) resp_bulk_cstr(out, "sanitize-payload");
    resp_bulk_cstr(out, "passwords");
    resp_array(out, u->npass);
    for (int i = 0; i < u->npass; i++) {
        char hex[2 * SHA256_LEN + 1];
        sha256_hex(u->pass[i], hex);
        resp_bulk(out, hex, 2 * SHA256_LEN);
    }
    resp_bulk_cstr(out, "commands");
    describe_commands(u, &tmp);
    resp_bulk(out, tmp.data, tmp.len);
    buf_reset(&tmp);
    resp_bulk_cstr(out, "keys");
    describe_keys(u, &tmp, 0);
    resp_bulk(out, tmp.data, tmp.len);
    buf_reset(&tmp);
    resp_bulk_cstr(out, "channels");
    describe_channels(u, &tmp, 0);
    resp_bulk(out, tmp.data, tmp.len);
    resp_bulk_cstr(out, "selectors");
    resp_array(out, 0);
    buf_free(&tmp);
}

/* ---- the table ---- */

static acl_user_t *default_user(void)
{
    acl_user_t *u = user_new("default", 7);
    const char *const seq[] = {"on", "nopass", "~*", "&*", "+@all"};
    const char *why;
    for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
        apply_rule(u, seq[i], strlen(seq[i]), &why);
    update_unrestricted(u);
    return u;
}

static void table_put(acl_table_t *t, acl_user_t *u)
{
    int lo = 0, hi = t->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int c = strcmp(t->users[mid]->name, u->name);
        if (c == 0) {
            user_free(t->users[mid]);
            t->users[mid] = u;
            return;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 8;
        acl_user_t **v = realloc(t->users, (size_t)cap * sizeof(*v));
        if (!v) abort();
        t->users = v;
        t->cap = cap;
    }
    memmove(&t->users[lo + 1], &t->users[lo], (size_t)(t->n - lo) * sizeof(*t->users));
    t->users[lo] = u;
    t->n++;
}

acl_table_t *acl_table_new(void)
{
    acl_table_t *t = xmalloc(sizeof(*t));
    memset(t, 0, sizeof(*t));
    table_put(t, default_user());
    return t;
}

void acl_table_free(acl_table_t *t)
{
    if (!t) return;
    for (int i = 0; i < t->n; i++)
        user_free(t->users[i]);
    free(t->users);
    free(t);
}

acl_user_t *acl_find(const acl_table_t *t, const char *name, size_t nlen)
{
    int lo = 0, hi = t->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        const char *m = t->users[mid]->name;
        size_t mn = strlen(m);
        int c = memcmp(m, name, mn < nlen ? mn : nlen);
        if (c == 0) c = mn < nlen ? -1 : mn > nlen ? 1 : 0;
        if (c == 0) return t->users[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int acl_count(const acl_table_t *t)
{
    return t->n;
}

acl_user_t *acl_at(const acl_table_t *t, int i)
{
    return i >= 0 && i < t->n ? t->users[i] : NULL;
}

int acl_setuser(acl_table_t *t, const char *name, size_t nlen, int nrules, const char *const *rules,
                const uint32_t *lens, char *err, size_t errlen)
{
    for (size_t i = 0; i < nlen; i++)
        if (name[i] == ' ' || name[i] == '\0') {
            snprintf(err, errlen, "ERR Usernames can't contain spaces or null characters");
            return -1;
        }
    acl_user_t *old = acl_find(t, name, nlen);
    acl_user_t *u = old ? user_clone(old) : user_new(name, nlen);
    for (int i = 0; i < nrules; i++) {
        const char *why = NULL;
        if (apply_rule(u, rules[i], lens[i], &why) != 0) {
            snprintf(err, errlen, "ERR Error in ACL SETUSER modifier '%.*s': %s",
                     (int)(lens[i] > 128 ? 128 : lens[i]), rules[i], why);
            resp_error_clean(err);
            user_free(u);
            return -1;
        }
    }
    update_unrestricted(u);
    table_put(t, u);
    return 0;
}

int acl_deluser(acl_table_t *t, const char *name, size_t nlen)
{
    acl_user_t *u = acl_find(t, name, nlen);
    if (!u) return 0;
    int i = 0;
    while (t->users[i] != u)
        i++;
    user_free(u);
    memmove(&t->users[i], &t->users[i + 1], (size_t)(t->n - i - 1) * sizeof(*t->users));
    t->n--;
    return 1;
}

/* ---- the check ---- */

static int key_allowed(const acl_user_t *u, const char *k, size_t n)
{
    for (int i = 0; i < u->keys.n; i++)
        if (glob_match(u->keys.v[i].p, u->keys.v[i].n, k, n, 0)) return 1;
    return 0;
}

int acl_key_ok(const acl_user_t *u, const char *k, size_t n)
{
    return u->unrestricted || u->allkeys || key_allowed(u, k, n);
}

int acl_channel_ok(const acl_user_t *u, const char *ch, size_t n, int is_pattern)
{
    if (u->unrestricted || u->allchannels) return 1;
    for (int i = 0; i < u->channels.n; i++) {
        const acl_str_t *p = &u->channels.v[i];
        if (is_pattern ? p->n == n && !memcmp(p->p, ch, n) : glob_match(p->p, p->n, ch, n, 0))
            return 1;
    }
    return 0;
}

int acl_denied_channel(const acl_user_t *u, const cmd_desc_t *d, int argc, const char *const *argv,
                       const uint32_t *lens)
{
    if (u->unrestricted || u->allchannels) return 0;
    /* Redis 7.0's channel arguments: PUBLISH's and SPUBLISH's first, every
     * one of the subscribes; the unsubscribes are never refused. */
    int last;
    switch (d->id) {
    case CMD_PUBLISH:
    case CMD_SPUBLISH:
        last = argc > 1 ? 1 : 0;
        break;
    case CMD_SUBSCRIBE:
    case CMD_SSUBSCRIBE:
    case CMD_PSUBSCRIBE:
        last = argc - 1;
        break;
    default:
        return 0;
    }
    for (int i = 1; i <= last; i++)
        if (!acl_channel_ok(u, argv[i], lens[i], d->id == CMD_PSUBSCRIBE)) return i;
    return 0;
}

static int firstarg_allowed(const acl_user_t *u, cmd_id_t id, int argc, const char *const *argv,
                            const uint32_t *lens)
{
    if (argc < 2 || !u->firstargs.n) return 0;
    char prefix[8];
    int pn = snprintf(prefix, sizeof(prefix), "%u:", (unsigned)id);
    for (int i = 0; i < u->firstargs.n; i++) {
        const acl_str_t *f = &u->firstargs.v[i];
        if (f->n >= (size_t)pn && memcmp(f->p, prefix, (size_t)pn) == 0 &&
            f->n - (size_t)pn == lens[1] && strncasecmp(f->p + pn, argv[1], lens[1]) == 0)
            return 1;
    }
    return 0;
}

int acl_check(const acl_user_t *u, const cmd_desc_t *d, unsigned idx, int argc,
              const char *const *argv, const uint32_t *lens)
{
    if (u->unrestricted) return ACL_OK;
    if (!bit_get(u, idx) && !firstarg_allowed(u, d->id, argc, argv, lens)) return ACL_DENIED_CMD;
    /* A line whose keys cannot be found (a bad numkeys) names none: the
     * command itself then answers its error, as Redis does. SSUBSCRIBE's
     * and SPUBLISH's "keys" are shard channels (Redis' not_key key specs):
     * key patterns do not apply to them, channel patterns do. */
    if (!u->allkeys && !(d->flags & CMDF_PUBSUB) && cmd_key_count(d, argc, argv, lens) >= 0)
        for (int i = cmd_key_next(d, argc, argv, lens, 0); i;
             i = cmd_key_next(d, argc, argv, lens, i))
            if (!key_allowed(u, argv[i], lens[i])) return ACL_DENIED_KEY;
    return acl_denied_channel(u, d, argc, argv, lens) ? ACL_DENIED_CHANNEL : ACL_OK;
}

/* ---- saving and loading (shm) ----
 * u32 users; per user: u32 tokens; tokens: u32 length + bytes. Token 0 is
 * the name, the others are the rules that rebuild the user from nothing. */

static void put_token(buf_t *b, const char *p, size_t n)
{
    unsigned char len[4];
    cmd_put_u32(len, (uint32_t)n);
    buf_append(b, len, 4);
    buf_append(b, p, n);
}

static void save_user(const acl_user_t *u, buf_t *b)
{
    buf_t toks;
    buf_init(&toks);
    uint32_t count = 0;
#define TOK(p, n) (put_token(&toks, (p), (n)), count++)
#define TOKS(s)   TOK((s), strlen(s))
    TOKS(u->name);
    TOKS(u->enabled ? "on" : "off");
    if (u->nopass) TOKS("nopass");
    if (u->sanitize == 1) TOKS("sanitize-payload");
    if (u->sanitize == 2) TOKS("skip-sanitize-payload");
    for (int i = 0; i < u->npass; i++) {
        char hex[2 * SHA256_LEN + 2];
        hex[0] = '#';
        sha256_hex(u->pass[i], hex + 1);
        TOK(hex, 2 * SHA256_LEN + 1);
    }
    if (u->allkeys) TOKS("allkeys");
    for (int i = 0; i < u->keys.n; i++) {
        buf_t k;
        buf_init(&k);
        buf_append(&k, "~", 1);
        buf_append(&k, u->keys.v[i].p, u->keys.v[i].n);
        TOK(k.data, k.len);
        buf_free(&k);
    }
    if (u->allchannels) TOKS("allchannels");
    for (int i = 0; i < u->channels.n; i++) {
        buf_t k;
        buf_init(&k);
        buf_append(&k, "&", 1);
        buf_append(&k, u->channels.v[i].p, u->channels.v[i].n);
        TOK(k.data, k.len);
        buf_free(&k);
    }
    TOKS(u->base_all ? "+@all" : "-@all");
    for (int i = 0; i < u->rules.n; i++)
        TOK(u->rules.v[i].p, u->rules.v[i].n);
#undef TOK
#undef TOKS
    unsigned char cnt[4];
    cmd_put_u32(cnt, count);
    buf_append(b, cnt, 4);
    buf_append(b, toks.data, toks.len);
    buf_free(&toks);
}

void acl_table_save(const acl_table_t *t, buf_t *out)
{
    unsigned char cnt[4];
    cmd_put_u32(cnt, (uint32_t)t->n);
    buf_append(out, cnt, 4);
    for (int i = 0; i < t->n; i++)
        save_user(t->users[i], out);
}

acl_table_t *acl_table_load(const char *p, size_t n)
{
    const char *end = p + n;
    if (n < 4) return NULL;
    uint32_t nusers = cmd_get_u32((const unsigned char *)p);
    p += 4;
    acl_table_t *t = xmalloc(sizeof(*t));
    memset(t, 0, sizeof(*t));
    for (uint32_t i = 0; i < nusers; i++) {
        if (end - p < 4) goto bad;
        uint32_t ntok = cmd_get_u32((const unsigned char *)p);
        p += 4;
        if (ntok == 0 || ntok > 1u << 20) goto bad;
        const char **toks = xmalloc(ntok * sizeof(*toks));
        uint32_t *lens = xmalloc(ntok * sizeof(*lens));
        uint32_t k;
        for (k = 0; k < ntok; k++) {
            if (end - p < 4) break;
            lens[k] = cmd_get_u32((const unsigned char *)p);
            p += 4;
            if ((size_t)(end - p) < lens[k]) break;
            toks[k] = p;
            p += lens[k];
        }
        char err[256];
        int ok = k == ntok && acl_setuser(t, toks[0], lens[0], (int)ntok - 1, toks + 1, lens + 1,
                                          err, sizeof(err)) == 0;
        free(toks);
        free(lens);
        if (!ok) goto bad;
    }
    if (p != end || !acl_find(t, "default", 7)) goto bad;
    return t;
bad:
    acl_table_free(t);
    return NULL;
}

char *acl_strndup(const char *s, size_t n)
{
    return xstrndup(s, n);
}
