/*
 * command-index.c - the "command index" helpers (admin.h) the ACL, the
 * statistics, the slow log and CLIENT LIST use: a number per command and
 * per subcommand (FE_SUB_BASE + k), its name and ACL categories, and the
 * shared subcommand errors and HELP replies. Run by the frontends; reads
 * only the registry's constant tables (common/command.h), so it sits at the
 * bottom of admin/: everything there may call it, it calls nothing there.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "frontend/admin/admin.h"
#include "frontend/cmd/cmd.h"
#include "frontend/core/core.h"

/* Every subcommand's index must fit the ACL bitmaps and the statistics
 * tables (FE_CMD_INDEXES): past them ACL SETUSER wrote beyond a user's
 * bitmap (found when two branches' subcommands met in one tree). */
enum {
    FE_NSUBS = 0
#define SUB(...) +1
#include "commands.def"
};
_Static_assert(FE_SUB_BASE + FE_NSUBS <= FE_CMD_INDEXES,
               "more subcommands than command indexes: raise SHM_STAT_SLOTS");

int fe_has_subcmds(cmd_id_t id)
{
    return cmd_sub_count(id) > 0;
}

int fe_subcmd_find(cmd_id_t parent, const char *s, size_t n)
{
    return cmd_sub_index(parent, s, n);
}

unsigned fe_cmd_index(const cmd_desc_t *d, int argc, const char *const *argv, const uint32_t *lens)
{
    if (__builtin_expect(cmd_sub_count(d->id) == 0, 1) || argc < 2) return (unsigned)d->id;
    int k = cmd_sub_index(d->id, argv[1], lens[1]);
    return k < 0 ? (unsigned)d->id : FE_SUB_BASE + (unsigned)k;
}

size_t fe_cmd_index_count(void)
{
    size_t n, nsubs;
    cmd_table(&n);
    cmd_subs(&nsubs);
    return n + nsubs;
}

unsigned fe_cmd_index_at(size_t i)
{
    size_t n;
    const cmd_desc_t *t = cmd_table(&n);
    return i < n ? (unsigned)t[i].id : FE_SUB_BASE + (unsigned)(i - n);
}

/* The subcommand of index idx (FE_SUB_BASE + k), or NULL. */
static const cmd_sub_t *sub_at(unsigned idx)
{
    size_t nsubs;
    const cmd_sub_t *subs = cmd_subs(&nsubs);
    return idx - FE_SUB_BASE < nsubs ? &subs[idx - FE_SUB_BASE] : NULL;
}

const char *fe_cmd_index_name(unsigned idx)
{
    if (idx >= FE_SUB_BASE) {
        const cmd_sub_t *s = sub_at(idx);
        return s ? s->fullname : NULL;
    }
    const cmd_desc_t *d = cmd_by_id((cmd_id_t)idx);
    return d ? d->name : NULL;
}

uint32_t fe_cmd_index_cats(unsigned idx)
{
    if (idx >= FE_SUB_BASE) {
        const cmd_sub_t *s = sub_at(idx);
        return s ? s->cats : 0;
    }
    const cmd_desc_t *d = cmd_by_id((cmd_id_t)idx);
    return d ? d->cats : 0;
}

int fe_subcmd_arity_check(const cmd_desc_t *d, int argc, const char *const *argv,
                          const uint32_t *lens, buf_t *out)
{
    if (argc < 2) return 0;
    int k = cmd_sub_index(d->id, argv[1], lens[1]);
    if (k < 0) return 0;
    const cmd_sub_t *s = sub_at(FE_SUB_BASE + (unsigned)k);
    if (cmd_arity_ok(s->arity, argc)) return 0;
    buf_appendf(out, "-ERR wrong number of arguments for '%s' command\r\n", s->fullname);
    return -1;
}

void fe_reply_unknown_subcmd(buf_t *out, const char *cmd_upper, const char *sub, size_t n)
{
    char msg[256];
    snprintf(msg, sizeof(msg), "ERR unknown subcommand '%.*s'. Try %s HELP.",
             (int)(n > 128 ? 128 : n), sub, cmd_upper);
    resp_error(out, msg);
}

void fe_reply_help(buf_t *out, const char *const *lines)
{
    int n = 0;
    while (lines[n])
        n++;
    resp_array(out, n);
    for (int i = 0; i < n; i++)
        resp_simple(out, lines[i]);
}
