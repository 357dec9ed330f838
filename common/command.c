/*
 * command.c - the command tables (see command.h), made from the registry
 * (commands.def). Shared by the frontends (lookup, arity, COMMAND replies)
 * and the store (canonical ids). Read-only data, plus the name hash and the
 * subcommand indexes, which a constructor builds once when the program
 * loads (before main, so before any fork or thread): nothing here can fail
 * at run time.
 */
#include "command.h"

#include "bitfield.h"
#include "sort.h"
#include "strutil.h"

#include <string.h>
#include <strings.h>

#define W   CMDF_WRITE
#define R   CMDF_READONLY
#define F   CMDF_FAST
#define OOM CMDF_DENYOOM
#define LS  (CMDF_LOADING | CMDF_STALE)
#define NS  CMDF_NOSCRIPT
#define NA  CMDF_NO_AUTH
#define AB  CMDF_ALLOW_BUSY
#define NM  CMDF_NO_MULTI
#define ADM CMDF_ADMIN
#define MK  CMDF_MOVABLEKEYS
#define NAL CMDF_NO_ASYNC_LOADING
#define BLK CMDF_BLOCKING
#define PS  CMDF_PUBSUB
#define RC  CMDF_REPLY_CACHE

#define KS   CAT_KEYSPACE
#define RD   CAT_READ
#define WR   CAT_WRITE
#define STR  CAT_STRING
#define BM   CAT_BITMAP
#define CF   CAT_FAST
#define CS   CAT_SLOW
#define DNG  CAT_DANGEROUS
#define CONN CAT_CONNECTION
#define TX   CAT_TRANSACTION
#define HSH  CAT_HASH
#define SETC CAT_SET
#define LST  CAT_LIST
#define ZST  CAT_SORTEDSET
#define CBLK CAT_BLOCKING
#define STRM CAT_STREAM
#define PSC  CAT_PUBSUB
#define CADM CAT_ADMIN
#define HLL  CAT_HYPERLOGLOG

static const cmd_desc_t cmd_descs[] = {
#define CMD(ID, num, name, arity, flags, first, last, step, cats, route, handler, summary, cx)     \
    {name, CMD_##ID, arity, flags, first, last, step, cats, CMD_ROUTE_##route, summary, cx},
#include "commands.def"
};
#define NCMDS (sizeof(cmd_descs) / sizeof(cmd_descs[0]))

/* Each row's position in cmd_descs, by id (0 = no row). */
enum {
#define CMD(ID, ...) ROW_##ID,
#include "commands.def"
};
static const uint8_t row_of_id[CMD__COUNT] = {
#define CMD(ID, ...) [CMD_##ID] = ROW_##ID + 1,
#include "commands.def"
};

/* Two rows with one number would make two commands share a log id: as
 * case labels, they do not compile. Never called. */
__attribute__((unused)) static int ids_are_unique(int id)
{
    switch (id) {
#define CMD(ID, num, ...) case num:
#define OP_ID(ID, num)    case num:
#include "commands.def"
        return 1;
    default:
        return 0;
    }
}

/* A subcommand's name is its full name past "<parent>|": the parent's
 * token (CLIENT) is as long as its name (client), which test_command checks. */
static const cmd_sub_t sub_descs[] = {
#define SUB(P, full, arity, flags, first, last, step, cats, summary, cx)                           \
    {CMD_##P, full + sizeof(#P), full, arity, flags, first, last, step, cats, summary, cx},
#include "commands.def"
};
#define NSUBS (sizeof(sub_descs) / sizeof(sub_descs[0]))

/* KEYNUM rows: where a movable-keys command's numkeys is (0 = none). */
static const uint8_t numkeys_at[CMD__COUNT] = {
#define KEYNUM(ID, at) [CMD_##ID] = at,
#include "commands.def"
};

/* A row with MK has a KEYNUM row, and a KEYNUM row's command MK (checked
 * once, by test_command through cmd_key_count's answers; here: at > 0). */
#define KEYNUM(ID, at) _Static_assert((at) > 0, #ID ": numkeys is an argument");
#include "commands.def"

static const cmd_sub_t redis_subs[] = {
#define REDIS_SUB(P, full, arity)                                                                  \
    {CMD_##P, full + sizeof(#P), full, arity, 0, 0, 0, 0, 0, NULL, NULL},
#include "commands.def"
};

static const char *const cat_names[CAT__COUNT] = {
    "keyspace",  "read",      "write",      "string",      "bitmap",      "admin", "fast",
    "slow",      "dangerous", "connection", "transaction", "hash",        "set",   "list",
    "sortedset", "stream",    "blocking",   "pubsub",      "hyperloglog",
};

const char *cmd_cat_name(int i)
{
    return i >= 0 && i < CAT__COUNT ? cat_names[i] : NULL;
}

/* ---- indexes, built once ---- */

/* Open addressing over the lower-cased name, at most half full (ids are
 * below 256, so are rows). One hash and usually one comparison per request,
 * however many commands the registry grows to. */
#define NAME_SLOTS 512
static uint8_t name_slot[NAME_SLOTS]; /* row + 1, 0 = empty */
static uint8_t name_len[NCMDS];
static size_t name_max;

static uint8_t subs_of[CMD__COUNT];    /* 1: has subcommands, run or Redis-only */
static uint16_t sub_first[CMD__COUNT]; /* this parent's rows in sub_descs */
static uint16_t sub_count[CMD__COUNT];

_Static_assert(CMD__COUNT * 2 <= NAME_SLOTS, "the name hash stays at most half full");

static uint32_t name_hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 'A' && c <= 'Z') c = (unsigned char)(c + 32);
        h = (h ^ c) * 16777619u;
    }
    return h;
}

__attribute__((constructor)) static void cmd_index_init(void)
{
    for (size_t i = 0; i < NCMDS; i++) {
        size_t n = strlen(cmd_descs[i].name);
        name_len[i] = (uint8_t)n;
        if (n > name_max) name_max = n;
        uint32_t k = name_hash(cmd_descs[i].name, n) & (NAME_SLOTS - 1);
        while (name_slot[k])
            k = (k + 1) & (NAME_SLOTS - 1);
        name_slot[k] = (uint8_t)(i + 1);
    }
    for (size_t i = NSUBS; i-- > 0;) {
        cmd_id_t p = sub_descs[i].parent;
        subs_of[p] = 1;
        sub_first[p] = (uint16_t)i; /* rows of a parent are adjacent */
        sub_count[p]++;
    }
    for (size_t i = 0; i < sizeof(redis_subs) / sizeof(redis_subs[0]); i++)
        subs_of[redis_subs[i].parent] = 1;
}

/* ---- lookups ---- */

const cmd_desc_t *cmd_lookup(const char *name, size_t len)
{
    /* Length first: a name with a NUL inside ("GETDEL\0") is not a
     * command, and we must not read past the end of a table name.
     * (Redis 7 hashes the whole name but compares up to the NUL, so
     * whether it finds such a name depends on its hash seed.) */
    if (len > name_max) return NULL;
    uint32_t k = name_hash(name, len) & (NAME_SLOTS - 1);
    for (; name_slot[k]; k = (k + 1) & (NAME_SLOTS - 1)) {
        unsigned row = name_slot[k] - 1u;
        if (name_len[row] == len && strncasecmp(cmd_descs[row].name, name, len) == 0)
            return &cmd_descs[row];
    }
    return NULL;
}

const cmd_desc_t *cmd_by_id(cmd_id_t id)
{
    if ((unsigned)id >= (unsigned)CMD__COUNT || !row_of_id[id]) return NULL;
    return &cmd_descs[row_of_id[id] - 1];
}

const cmd_desc_t *cmd_table(size_t *n)
{
    *n = NCMDS;
    return cmd_descs;
}

int cmd_has_subs(cmd_id_t id)
{
    return (unsigned)id < (unsigned)CMD__COUNT && subs_of[id];
}

const cmd_sub_t *cmd_subs(size_t *n)
{
    *n = NSUBS;
    return sub_descs;
}

int cmd_sub_count(cmd_id_t parent)
{
    return (unsigned)parent < (unsigned)CMD__COUNT ? sub_count[parent] : 0;
}

static int sub_name_is(const cmd_sub_t *s, const char *name, size_t len)
{
    return strlen(s->name) == len && strncasecmp(s->name, name, len) == 0;
}

int cmd_sub_index(cmd_id_t parent, const char *name, size_t len)
{
    if ((unsigned)parent >= (unsigned)CMD__COUNT) return -1;
    for (unsigned k = sub_first[parent]; k < (unsigned)sub_first[parent] + sub_count[parent]; k++)
        if (sub_name_is(&sub_descs[k], name, len)) return (int)k;
    return -1;
}

const cmd_sub_t *cmd_lookup_sub(cmd_id_t parent, const char *name, size_t len)
{
    int k = cmd_sub_index(parent, name, len);
    if (k >= 0) return &sub_descs[k];
    for (size_t i = 0; i < sizeof(redis_subs) / sizeof(redis_subs[0]); i++)
        if (redis_subs[i].parent == parent && sub_name_is(&redis_subs[i], name, len))
            return &redis_subs[i];
    return NULL;
}

/* ---- key positions ---- */

/* The fixed range's last position for a line of argc words (< argc), or 0. */
static int fixed_last(const cmd_desc_t *d, int argc)
{
    if (d->first_key <= 0 || d->first_key >= argc) return 0;
    int last = d->last_key < 0 ? argc + d->last_key : d->last_key;
    return last >= argc ? argc - 1 : last;
}

static const uint8_t keys_after_streams[CMD__COUNT] = {
#define KEYSTREAMS(ID) [CMD_##ID] = 1,
#include "commands.def"
};

static const uint8_t key_after_store[CMD__COUNT] = {
#define KEYSORT(ID) [CMD_##ID] = 1,
#include "commands.def"
};

/* A SORT-shaped line's STORE key (KEYSORT), or 0. */
static int store_key_of(const cmd_desc_t *d, int argc, const char *const *argv,
                        const uint32_t *lens)
{
    if ((unsigned)d->id >= (unsigned)CMD__COUNT || !key_after_store[d->id]) return 0;
    return sort_store_key_at(argc, argv, lens);
}

const cmd_desc_t *cmd_runs_as(const cmd_desc_t *d, int argc, const char *const *argv,
                              const uint32_t *lens)
{
    if (d->id == CMD_SORT && !sort_store_key_at(argc, argv, lens)) return cmd_by_id(CMD_SORT_RO);
    /* A BITFIELD of GETs only changes nothing: Redis writes nothing to its
     * AOF for it, and here it is a read the store answers. */
    if (d->id == CMD_BITFIELD && !bf_line_writes(argc, argv, lens))
        return cmd_by_id(CMD_BITFIELD_RO);
    return d;
}

/* The keys of an XREAD-shaped line (KEYSTREAMS): the first half of the
 * words after the first STREAMS, which starts them at *at + 1; -1 when
 * there is no STREAMS or the words after it are none or odd. */
static long long streams_keys(int argc, const char *const *argv, const uint32_t *lens, int *at)
{
    for (int i = 1; i < argc; i++) {
        if (lens[i] == 7 && strncasecmp(argv[i], "STREAMS", 7) == 0) {
            int rest = argc - 1 - i;
            if (rest == 0 || rest % 2) return -1;
            *at = i;
            return rest / 2;
        }
    }
    return -1;
}

/* The numkeys of a movable-keys line: > 0 and fitting, 0 when d has none,
 * -1 when it is invalid; *at is the argument after which they start. */
static long long numkeys_of(const cmd_desc_t *d, int argc, const char *const *argv,
                            const uint32_t *lens, int *at_out)
{
    int known = (unsigned)d->id < (unsigned)CMD__COUNT;
    if (known && keys_after_streams[d->id]) return streams_keys(argc, argv, lens, at_out);
    int at = known ? numkeys_at[d->id] : 0;
    if (!at) return 0;
    long long n;
    if (at >= argc || str_to_ll(argv[at], lens[at], &n) != 0 || n < 1 || n > argc - 1 - at)
        return -1;
    *at_out = at;
    return n;
}

int cmd_key_count(const cmd_desc_t *d, int argc, const char *const *argv, const uint32_t *lens)
{
    int at;
    long long n = numkeys_of(d, argc, argv, lens, &at);
    if (n < 0) return -1;
    int step = d->key_step > 0 ? d->key_step : 1, last = fixed_last(d, argc), count = (int)n;
    if (last) count += (last - d->first_key) / step + 1;
    if (store_key_of(d, argc, argv, lens)) count++;
    return count > 0 ? count : -1;
}

int cmd_key_next(const cmd_desc_t *d, int argc, const char *const *argv, const uint32_t *lens,
                 int prev)
{
    int step = d->key_step > 0 ? d->key_step : 1, last = fixed_last(d, argc);
    if (last && prev < d->first_key) return d->first_key;
    if (last && prev < last && prev + step <= last) return prev + step;
    int store = store_key_of(d, argc, argv, lens);
    if (store) return prev < store ? store : 0;
    int at = 0;
    long long n = numkeys_of(d, argc, argv, lens, &at);
    if (n <= 0) return 0;
    if (prev <= at) return at + 1;
    return prev < at + (int)n ? prev + 1 : 0;
}

/* ---- large values (D31, D45, D58) ---- */

int cmd_big_value_arg(cmd_id_t op, uint32_t which, uint32_t argc)
{
    if (which >= argc) return 0;
    switch (op) {
    case CMD_SET:
    case CMD_APPEND:
    case CMD_RESTORE:
        return which == 1;
    case CMD_SETRANGE:
    case CMD_LSET:
        return which == 2;
    case CMD_LINSERT:
        return which == 3;
    case CMD_MSET:
    case CMD_MSETNX:
        return which % 2 == 1;
    case CMD_HSET: /* key, limits, flags, then field, value pairs */
        return which >= 4 && which % 2 == 0;
    case CMD_LPUSH: /* key, mode, elements */
    case CMD_SADD:  /* key, limit, members */
        return which >= 2;
    case CMD_SREM: /* key, members */
        return which >= 1;
    default:
        return 0;
    }
}
