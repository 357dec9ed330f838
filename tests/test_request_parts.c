/*
 * test_request_parts.c - a read request put back together from its parts
 * in the store (store/request-parts.c, D58): parts in order make the
 * payload; a first part starts over; parts whose first went to a
 * predecessor, a first part cut short or one announcing too much, and
 * parts that overrun are answered an error at the last; a drop and a
 * frontend gone forget it.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "store/request-parts.h"

static store_req_parts_t p;

static void clear(void)
{
    store_req_parts_clear(&p);
}

TestSuite(request_parts, .init = clear, .fini = clear);

/* Part of request id: flags (CONT, MORE) and its bytes; the first part's
 * bytes start with the payload's length (total, when first). */
static int part(uint64_t id, uint32_t flags, int first, uint64_t total, const char *bytes,
                const unsigned char **out, uint64_t *len)
{
    unsigned char body[64];
    size_t n = 0;
    if (first) {
        memcpy(body, &total, 8);
        n = 8;
    }
    memcpy(body + n, bytes, strlen(bytes));
    n += strlen(bytes);
    store_req_t req = {.id = id, .payload_len = (uint32_t)n, .reserved = STORE_REQ_PART | flags};
    return store_req_parts_add(&p, &req, body, (uint32_t)n, 42, out, len);
}

Test(request_parts, parts_in_order_make_the_payload)
{
    const unsigned char *w;
    uint64_t n;
    cr_assert_eq(part(7, STORE_REQ_MORE, 1, 11, "hello", &w, &n), 0);
    cr_assert_eq(part(7, STORE_REQ_CONT | STORE_REQ_MORE, 0, 0, " wo", &w, &n), 0);
    cr_assert_eq(part(7, STORE_REQ_CONT, 0, 0, "rld", &w, &n), 1);
    cr_assert_eq(n, 11);
    cr_assert(memcmp(w, "hello world", 11) == 0);
}

Test(request_parts, a_first_part_starts_over)
{
    const unsigned char *w;
    uint64_t n;
    cr_assert_eq(part(7, STORE_REQ_MORE, 1, 6, "abc", &w, &n), 0);
    cr_assert_eq(part(8, STORE_REQ_MORE, 1, 4, "xy", &w, &n), 0);
    cr_assert_eq(part(8, STORE_REQ_CONT, 0, 0, "zw", &w, &n), 1);
    cr_assert(n == 4 && memcmp(w, "xyzw", 4) == 0);
}

Test(request_parts, missing_or_wrong_parts_are_an_error_at_the_last)
{
    const unsigned char *w;
    uint64_t n;
    /* Its first part went to a store that died. */
    cr_assert_eq(part(9, STORE_REQ_CONT | STORE_REQ_MORE, 0, 0, "abc", &w, &n), 0);
    cr_assert_eq(part(9, STORE_REQ_CONT, 0, 0, "def", &w, &n), -1);
    cr_assert_eq(p.active, 0, "forgotten");
    /* Fewer bytes than announced. */
    cr_assert_eq(part(10, STORE_REQ_MORE, 1, 10, "abc", &w, &n), 0);
    cr_assert_eq(part(10, STORE_REQ_CONT, 0, 0, "def", &w, &n), -1);
    /* More than announced. */
    cr_assert_eq(part(11, STORE_REQ_MORE, 1, 4, "abc", &w, &n), 0);
    cr_assert_eq(part(11, STORE_REQ_CONT, 0, 0, "def", &w, &n), -1);
    /* A first part too short to say its length, and one past 4 GB. */
    store_req_t req = {.id = 12, .payload_len = 3, .reserved = STORE_REQ_PART};
    cr_assert_eq(store_req_parts_add(&p, &req, (const unsigned char *)"abc", 3, 42, &w, &n), -1);
    cr_assert_eq(part(13, 0, 1, (uint64_t)1 << 33, "abc", &w, &n), -1);
    /* A later part of another request than the one in progress. */
    cr_assert_eq(part(14, STORE_REQ_MORE, 1, 6, "abc", &w, &n), 0);
    cr_assert_eq(part(15, STORE_REQ_CONT, 0, 0, "def", &w, &n), -1);
}

Test(request_parts, a_drop_or_a_frontend_gone_forgets_it)
{
    const unsigned char *w;
    uint64_t n;
    cr_assert_eq(part(7, STORE_REQ_MORE, 1, 6, "abc", &w, &n), 0);
    store_req_t drop = {.id = 8, .reserved = STORE_REQ_PART_DROP};
    cr_assert_eq(store_req_parts_add(&p, &drop, NULL, 0, 42, &w, &n), 0);
    cr_assert_eq(p.active, 1, "another id's drop changes nothing");
    drop.id = 7;
    cr_assert_eq(store_req_parts_add(&p, &drop, NULL, 0, 42, &w, &n), 0);
    cr_assert_eq(p.active, 0);
    cr_assert_eq(part(7, STORE_REQ_MORE, 1, 6, "abc", &w, &n), 0);
    store_req_parts_sweep(&p, 42);
    cr_assert_eq(p.active, 1, "its frontend is alive");
    store_req_parts_sweep(&p, 43);
    cr_assert_eq(p.active, 0, "its frontend is gone");
}
