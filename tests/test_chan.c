/*
 * test_chan.c - unit tests of the SPSC message channel (common/chan.c):
 * round trip, wrap with skip markers, full channel, a forked producer
 * streaming checksummed messages, and consumer/producer restarts.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "chan.h"
#include "crc32c.h"

static chan_t *chan_new(uint64_t size)
{
    void *m =
        mmap(NULL, chan_shm_size(size), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(m, MAP_FAILED);
    chan_init(m, size);
    return m;
}

static void chan_free(chan_t *c)
{
    munmap(c, chan_shm_size(c->size));
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Message seq: u32 seq, u32 crc32c of the rest, then bytes derived from seq. */
static uint32_t msg_len(uint32_t seq, uint32_t max)
{
    uint32_t n = 8 + (seq * 2654435761u) % 700u;
    return n > max ? max : n;
}

static void msg_fill(unsigned char *p, uint32_t seq, uint32_t len)
{
    memcpy(p, &seq, 4);
    for (uint32_t i = 8; i < len; i++)
        p[i] = (unsigned char)(seq * 13u + i * 7u);
    uint32_t crc = crc32c(0, p + 8, len - 8);
    memcpy(p + 4, &crc, 4);
}

/* Returns the seq of a valid message, or -1. */
static int64_t msg_check(const unsigned char *p, uint32_t len)
{
    if (len < 8) return -1;
    uint32_t seq, crc;
    memcpy(&seq, p, 4);
    memcpy(&crc, p + 4, 4);
    if (crc32c(0, p + 8, len - 8) != crc) return -1;
    for (uint32_t i = 8; i < len; i++)
        if (p[i] != (unsigned char)(seq * 13u + i * 7u)) return -1;
    return seq;
}

static int send_msg(chan_t *c, uint32_t seq, uint32_t len)
{
    unsigned char *p = chan_reserve(c, len);
    if (!p) return -EAGAIN;
    msg_fill(p, seq, len);
    chan_publish(c);
    return 0;
}

/* Take one message and check it is seq; returns 0, or -EAGAIN when empty. */
static int recv_msg(chan_t *c, uint32_t seq, uint32_t want_len)
{
    uint32_t len = 0;
    const unsigned char *p = chan_peek(c, &len);
    if (!p) return -EAGAIN;
    cr_assert_eq((uintptr_t)p % 8, 0, "payload must be 8-byte aligned");
    cr_assert_eq(len, want_len);
    cr_assert_eq(msg_check(p, len), seq);
    chan_consume(c);
    return 0;
}

Test(chan, round_trip)
{
    chan_t *c = chan_new(1024);
    cr_assert(chan_empty(c));
    cr_assert_null(chan_peek(c, &(uint32_t){0}));
    chan_consume(c); /* nothing to drop: no effect */
    cr_assert_eq(atomic_load(&c->tail), 0);

    cr_assert_eq(send_msg(c, 1, 13), 0);
    cr_assert_eq(send_msg(c, 2, 8), 0);
    cr_assert_not(chan_empty(c));
    cr_assert_eq(recv_msg(c, 1, 13), 0);
    cr_assert_eq(recv_msg(c, 2, 8), 0);
    cr_assert(chan_empty(c));

    /* Zero-length messages are messages too. */
    cr_assert_not_null(chan_reserve(c, 0));
    chan_publish(c);
    uint32_t len = 99;
    cr_assert_not_null(chan_peek(c, &len));
    cr_assert_eq(len, 0);
    chan_consume(c);
    cr_assert(chan_empty(c));

    /* A reservation is invisible until published. */
    cr_assert_not_null(chan_reserve(c, 40));
    cr_assert(chan_empty(c));
    chan_publish(c);
    cr_assert_not(chan_empty(c));
    chan_publish(c); /* a second publish of the same reservation: no effect */
    chan_consume(c);
    cr_assert(chan_empty(c));
    chan_free(c);
}

Test(chan, max_msg)
{
    chan_t *c = chan_new(1024);
    uint32_t max = chan_max_msg(c);
    cr_assert_eq(max, 512 - 8);
    cr_assert_null(chan_reserve(c, max + 1));
    /* The largest message fits an empty channel wherever head stands. */
    for (uint32_t step = 0; step < 1024 / 8; step++) {
        unsigned char *p = chan_reserve(c, max);
        cr_assert_not_null(p, "max message refused at offset %u", step * 8);
        msg_fill(p, step, max);
        chan_publish(c);
        cr_assert_eq(recv_msg(c, step, max), 0);
        /* Move head by 8 bytes (an empty message) for the next round. */
        cr_assert_not_null(chan_reserve(c, 0));
        chan_publish(c);
        chan_consume(c);
        cr_assert(chan_empty(c));
    }
    chan_free(c);
}

Test(chan, wrap)
{
    chan_t *c = chan_new(1024);
    uint32_t max = chan_max_msg(c);
    uint32_t sent = 0, got = 0;
    /* Keep a few messages in flight so skips land at all sorts of places. */
    while (got < 20000) {
        while (sent < 20000 && send_msg(c, sent, msg_len(sent, max) % 300 + 8) == 0)
            sent++;
        cr_assert_eq(recv_msg(c, got, msg_len(got, max) % 300 + 8), 0);
        got++;
    }
    cr_assert(chan_empty(c));
    cr_assert_gt(atomic_load(&c->head) / 1024, 1000, "expected many laps");
    chan_free(c);
}

Test(chan, full)
{
    chan_t *c = chan_new(1024);
    /* 150-byte messages take 8 + 152 = 160 bytes: 6 fit, 64 bytes left. */
    int n = 0;
    while (send_msg(c, (uint32_t)n, 150) == 0)
        n++;
    cr_assert_eq(n, 6);
    cr_assert_eq(atomic_load(&c->head), 960);
    /* 224 bytes free after one is consumed, enough for 200 + 8, but the
     * message does not fit before the end: it needs the skip (64) too. */
    cr_assert_eq(recv_msg(c, 0, 150), 0);
    cr_assert_eq(send_msg(c, 6, 200), -EAGAIN);
    cr_assert_eq(recv_msg(c, 1, 150), 0);
    cr_assert_eq(send_msg(c, 6, 200), 0, "skip to the wrap, then the message");
    cr_assert_eq(atomic_load(&c->head), 1024 + 208);
    for (uint32_t i = 2; i < 6; i++)
        cr_assert_eq(recv_msg(c, i, 150), 0);
    cr_assert_eq(recv_msg(c, 6, 200), 0);
    cr_assert(chan_empty(c));
    chan_free(c);
}

/* Looking ahead with a cursor: messages are read past the oldest without
 * consuming, in order, across skips at the wrap, and consuming the oldest
 * ones later (as the store does once their replies are out, D59) frees
 * exactly their space. */
Test(chan, cursor_reads_ahead)
{
    chan_t *c = chan_new(1024);
    uint32_t max = chan_max_msg(c);
    uint32_t sent = 0, seen = 0, consumed = 0;
    uint64_t pos = chan_cursor(c);
    uint32_t len;
    cr_assert_null(chan_peek_at(c, &pos, &len));
    cr_assert_eq(pos, 0, "an empty channel leaves the cursor alone");
    while (consumed < 5000) {
        while (sent < 5000 && send_msg(c, sent, msg_len(sent, max) % 200 + 8) == 0)
            sent++;
        /* Read ahead up to three messages past the oldest... */
        const unsigned char *p;
        while (seen - consumed < 3 && (p = chan_peek_at(c, &pos, &len)) != NULL) {
            cr_assert_eq((uintptr_t)p % 8, 0);
            cr_assert_eq(len, msg_len(seen, max) % 200 + 8);
            cr_assert_eq(msg_check(p, len), seen);
            seen++;
        }
        cr_assert_gt(seen, consumed);
        /* ...then consume the oldest: chan_peek still shows it. */
        cr_assert_eq(recv_msg(c, consumed, msg_len(consumed, max) % 200 + 8), 0);
        consumed++;
    }
    cr_assert_eq(seen, 5000);
    cr_assert(chan_empty(c));
    cr_assert_null(chan_peek_at(c, &pos, &len));
    cr_assert_eq(pos, atomic_load(&c->head), "the cursor ends where the producer does");
    cr_assert_eq(chan_cursor(c), pos);
    chan_free(c);
}

/* A consumer killed before chan_consume(): its successor sees the message
 * again; one killed after it does not. Consumer state is only tail. */
Test(chan, consumer_restart, .timeout = 20)
{
    chan_t *c = chan_new(4096);
    for (uint32_t i = 0; i < 3; i++)
        cr_assert_eq(send_msg(c, i, 50 + i), 0);
    pid_t parent = getpid();
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(99);
        uint32_t len;
        const unsigned char *p = chan_peek(c, &len);
        if (!p || msg_check(p, len) != 0) _exit(1);
        chan_consume(c);
        p = chan_peek(c, &len);
        if (!p || msg_check(p, len) != 1) _exit(2);
        kill(getpid(), SIGKILL); /* dies holding message 1 */
        _exit(3);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "child status %#x", st);
    cr_assert_eq(recv_msg(c, 1, 51), 0, "unconsumed message seen again");
    cr_assert_eq(recv_msg(c, 2, 52), 0);
    cr_assert(chan_empty(c));
    chan_free(c);
}

/* A producer killed between reserve and publish leaves nothing; its
 * successor reserves the same space again. */
Test(chan, producer_restart, .timeout = 20)
{
    chan_t *c = chan_new(4096);
    cr_assert_eq(send_msg(c, 0, 30), 0);
    pid_t parent = getpid();
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(99);
        unsigned char *p = chan_reserve(c, 200);
        if (!p) _exit(1);
        memset(p, 0x5a, 200);
        kill(getpid(), SIGKILL);
        _exit(3);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFSIGNALED(st));
    cr_assert_eq(recv_msg(c, 0, 30), 0);
    cr_assert(chan_empty(c), "an unpublished reservation must stay invisible");
    cr_assert_eq(send_msg(c, 1, 64), 0);
    cr_assert_eq(recv_msg(c, 1, 64), 0);
    chan_free(c);
}

#define STRESS_MSGS 300000u

Test(chan, multiprocess_spsc, .timeout = 60)
{
    chan_t *c = chan_new(8192);
    uint32_t max = chan_max_msg(c);
    pid_t parent = getpid();
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(99);
        for (uint32_t seq = 0; seq < STRESS_MSGS; seq++)
            while (send_msg(c, seq, msg_len(seq, max)) != 0)
                sched_yield();
        _exit(0);
    }
    uint64_t deadline = now_ms() + 30000;
    uint32_t seq = 0;
    while (seq < STRESS_MSGS) {
        uint32_t len;
        const unsigned char *p = chan_peek(c, &len);
        if (!p) {
            if (now_ms() > deadline) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                cr_assert_fail("stuck after %u messages", seq);
            }
            sched_yield();
            continue;
        }
        int64_t got = msg_check(p, len);
        if (got != (int64_t)seq || len != msg_len(seq, max)) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            cr_assert_fail("message %u: got %lld, len %u", seq, (long long)got, len);
        }
        chan_consume(c);
        seq++;
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "producer status %#x", st);
    cr_assert(chan_empty(c));
    chan_free(c);
}
