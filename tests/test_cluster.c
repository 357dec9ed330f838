/*
 * test_cluster.c - hash slots and the static topology file (common/cluster.c,
 * D35): the slots Redis computes, and every way a topology file can be
 * wrong, each refused with the line and the reason.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"

#define ID_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define ID_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define ID_C "cccccccccccccccccccccccccccccccccccccccc"
#define ID_R "dddddddddddddddddddddddddddddddddddddddd"

static unsigned slot_of(const char *k)
{
    return cluster_key_slot(k, strlen(k));
}

Test(cluster, crc16_and_slots_are_redis_ones)
{
    cr_expect_eq(cluster_crc16("123456789", 9), 0x31C3);
    /* Values read off redis-server 7.0.15's CLUSTER KEYSLOT. */
    cr_expect_eq(slot_of("foo"), 12182);
    cr_expect_eq(slot_of("b"), 3300);
    cr_expect_eq(slot_of("k2"), 449);
    cr_expect_eq(slot_of("{}a"), 10875);
    cr_expect_eq(slot_of("a{}"), 6082);
    cr_expect_eq(slot_of(""), 0);
}

Test(cluster, hash_tags_pick_the_first_non_empty_braces)
{
    unsigned user = slot_of("user1000");
    cr_expect_eq(slot_of("{user1000}.following"), user);
    cr_expect_eq(slot_of("{user1000}.followers"), user);
    cr_expect_eq(slot_of("foo{bar}{zap}"), slot_of("bar"));
    cr_expect_eq(slot_of("foo{{bar}}zap"), slot_of("{bar"));
    /* the first '{' has an empty tag: the whole key is hashed */
    cr_expect_eq(slot_of("foo{}{bar}"), cluster_crc16("foo{}{bar}", 10) & 16383);
    /* no closing brace: the whole key */
    cr_expect_eq(slot_of("foo{bar"), cluster_crc16("foo{bar", 7) & 16383);
    /* binary keys: a NUL inside the tag is part of it */
    cr_expect_eq(cluster_key_slot("x{a\0b}y", 7), cluster_crc16("a\0b", 3) & 16383);
}

static cluster_t *parse(const char *text, int port, char *err, size_t errlen, int *rc)
{
    cluster_t *c = malloc(sizeof(*c));
    cr_assert_not_null(c);
    const char *ips[] = {"127.0.0.1"};
    *rc = cluster_parse(c, text, strlen(text), ips, 1, port, err, errlen);
    return c;
}

static const char *three =
    "# three masters and a replica of the first\n" ID_A
    " 127.0.0.1:7001@17001 master - 0 0 1 connected 0-5460\n" ID_B
    " 127.0.0.1:7002@17002 master - 0 0 2 connected 5461-10922\n"
    "\n" ID_C " 127.0.0.1:7003 master - 0 0 3 connected 10923-16000 16001 16002-16383\n" ID_R
    " 127.0.0.1:7004@17004 slave " ID_A " 0 0 1 connected\n"
    "vars currentEpoch 3 lastVoteEpoch 0\n";

Test(cluster, a_topology_names_owners_and_finds_this_node_by_address)
{
    char err[256] = "";
    int rc;
    cluster_t *c = parse(three, 7002, err, sizeof(err), &rc);
    cr_assert_eq(rc, 0, "%s", err);
    cr_expect_eq(c->nnodes, 4);
    cr_expect_eq(c->myself, 1);
    cr_expect(cluster_ok(c));
    cr_expect_eq(c->max_epoch, 3);
    cr_expect_str_eq(cluster_owner(c, 0)->id, ID_A);
    cr_expect_str_eq(cluster_owner(c, 5461)->id, ID_B);
    cr_expect_str_eq(cluster_owner(c, 16001)->id, ID_C);
    cr_expect_str_eq(cluster_owner(c, 16383)->id, ID_C);
    cr_expect_eq(c->nodes[2].cport, 17003, "the bus port defaults to port + 10000");
    cr_expect(c->nodes[3].replica);
    cr_expect_eq(c->nodes[3].master, 0);
    free(c);
}

Test(cluster, myself_flag_wins_over_the_address)
{
    char text[1024];
    snprintf(text, sizeof(text),
             ID_A " 10.1.1.1:7001 master - 0 0 1 connected 0-16383\n" ID_B
                  " 127.0.0.1:7002 myself,slave " ID_A " 0 0 1 connected\n");
    char err[256] = "";
    int rc;
    cluster_t *c = parse(text, 7001, err, sizeof(err), &rc);
    cr_assert_eq(rc, 0, "%s", err);
    cr_expect_eq(c->myself, 1);
    free(c);
}

Test(cluster, a_partial_topology_is_not_ok)
{
    char err[256] = "";
    int rc;
    cluster_t *c =
        parse(ID_A " 127.0.0.1:7001 master - 0 0 1 connected 0-100\n", 7001, err, sizeof(err), &rc);
    cr_assert_eq(rc, 0, "%s", err);
    cr_expect(!cluster_ok(c));
    cr_expect_eq(c->nassigned, 101);
    cr_expect_null(cluster_owner(c, 101));
    free(c);
}

static void refused(const char *text, const char *want)
{
    char err[256] = "";
    int rc;
    cluster_t *c = parse(text, 7001, err, sizeof(err), &rc);
    cr_expect_eq(rc, -1, "accepted: %s", text);
    cr_expect(strstr(err, want), "'%s' lacks '%s'", err, want);
    free(c);
}

Test(cluster, every_bad_file_is_refused_with_its_reason)
{
    refused("", "no nodes");
    refused("abc 127.0.0.1:7001 master - 0 0 1 connected 0\n", "line 1: the node id");
    refused(ID_A " 127.0.0.1:7001 master - 0 0 1\n", "at least 8 words");
    refused(ID_A " 127.0.0.1 master - 0 0 1 connected 0\n", "is not <ip>:<port>");
    refused(ID_A " 127.0.0.1:70000 master - 0 0 1 connected 0\n", "is not <ip>:<port>");
    refused(ID_A " nosuchhost:7001 master - 0 0 1 connected 0\n", "is not <ip>:<port>");
    refused(ID_A " 127.0.0.1:7001 handshake - 0 0 1 connected 0\n", "master or slave");
    refused(ID_A " 127.0.0.1:7001 master - 0 0 x connected 0\n", "epoch");
    refused(ID_A " 127.0.0.1:7001 master - 0 0 1 connected 16384\n", "not a slot");
    refused(ID_A " 127.0.0.1:7001 master - 0 0 1 connected 9-3\n", "not a slot");
    refused(ID_A " 127.0.0.1:7001 master - 0 0 1 connected [5->-" ID_B "]\n", "static");
    refused(ID_A " 127.0.0.1:7001 master - 0 0 1 connected 0-10\n" ID_B
                 " 127.0.0.1:7002 master - 0 0 2 connected 10-20\n",
            "line 2: slot 10 is owned by " ID_A);
    refused(ID_A " 127.0.0.1:7001 master - 0 0 1 connected 0\n" ID_A
                 " 127.0.0.1:7002 master - 0 0 2 connected 1\n",
            "named twice");
    refused(ID_A " 127.0.0.1:7001 master - 0 0 1 connected 0\n" ID_B " 127.0.0.1:7002 slave " ID_C
                 " 0 0 1 connected\n",
            "line 2: its master");
    refused(ID_A " 127.0.0.1:7001 master - 0 0 1 connected 0\n" ID_B " 127.0.0.1:7002 slave " ID_A
                 " 0 0 1 connected 5\n",
            "a replica owns no slots");
    refused(ID_A " 127.0.0.1:7005 master - 0 0 1 connected 0\n", "none is at this server");
    refused(ID_A " 127.0.0.1:7001 myself,master - 0 0 1 connected 0\n" ID_B
                 " 127.0.0.1:7002 myself,master - 0 0 1 connected 1\n",
            "a second node flagged myself");
}

Test(cluster, a_missing_file_says_so)
{
    cluster_t *c = malloc(sizeof(*c));
    cr_assert_not_null(c);
    char err[256] = "";
    cr_expect_eq(cluster_load(c, "/nonexistent/nodes.conf", NULL, 0, 7001, err, sizeof(err)), -1);
    cr_expect(strstr(err, "cannot open cluster-config-file /nonexistent/nodes.conf: No such file"),
              "%s", err);
    free(c);
}
