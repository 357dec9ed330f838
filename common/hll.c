/*
 * hll.c - HyperLogLog values in Redis' string format (hll.h says what the
 * bytes are). Every change is made so that the bytes come out as Redis'
 * own would for the same commands: a sparse register is raised by
 * splitting the opcode that holds it into at most three, then neighbouring
 * VAL opcodes of one value are joined, the same five opcodes Redis looks
 * at; a sparse string that would grow past hll-sparse-max-bytes, or needs
 * a value over 32, becomes dense first. GET of a HyperLogLog is then byte
 * for byte Redis' (tests/integration/test_cmds_hll.c).
 */
#include "hll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HLL_P         14
#define HLL_Q         (64 - HLL_P)
#define HLL_REG_MAX   63
#define HLL_SEED      UINT64_C(0xadc83b19)
#define HLL_ALPHA_INF 0.721347520444481703680 /* 1 / (2 ln 2) */

/* Sparse opcodes. */
#define OP_IS_ZERO(p)  ((*(p)&0xc0) == 0x00)
#define OP_IS_XZERO(p) ((*(p)&0xc0) == 0x40)
#define OP_IS_VAL(p)   ((*(p)&0x80) != 0)
#define ZERO_LEN(p)    ((*(p)&0x3f) + 1)
#define XZERO_LEN(p)   ((((*(p)&0x3f) << 8) | (p)[1]) + 1)
#define VAL_VALUE(p)   (((*(p) >> 2) & 0x1f) + 1)
#define VAL_LEN(p)     ((*(p)&0x3) + 1)
#define VAL_MAX_VALUE  32
#define VAL_MAX_LEN    4
#define ZERO_MAX_LEN   64

static void val_put(unsigned char *p, int value, int len)
{
    *p = (unsigned char)(0x80 | (value - 1) << 2 | (len - 1));
}

/* A run of len zero registers at p: ZERO or XZERO. Returns its bytes. */
static int zeros_put(unsigned char *p, long len)
{
    if (len <= ZERO_MAX_LEN) {
        *p = (unsigned char)(len - 1);
        return 1;
    }
    p[0] = (unsigned char)(0x40 | (len - 1) >> 8);
    p[1] = (unsigned char)((len - 1) & 0xff);
    return 2;
}

uint64_t hll_murmur64a(const void *key, size_t len, uint64_t seed)
{
    const uint64_t m = UINT64_C(0xc6a4a7935bd1e995);
    const int r = 47;
    const unsigned char *d = key;
    uint64_t h = seed ^ ((uint64_t)len * m);
    size_t blocks = len / 8;
    for (size_t i = 0; i < blocks; i++, d += 8) {
        uint64_t k = 0;
        for (int j = 7; j >= 0; j--)
            k = k << 8 | d[j];
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
    }
    size_t rest = len & 7;
    if (rest) {
        for (size_t j = rest; j-- > 0;)
            h ^= (uint64_t)d[j] << (8 * j);
        h *= m;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}

int hll_pattern(const unsigned char *ele, size_t n, long *idx)
{
    uint64_t h = hll_murmur64a(ele, n, HLL_SEED);
    *idx = (long)(h & (HLL_REGISTERS - 1));
    h >>= HLL_P;
    h |= UINT64_C(1) << HLL_Q; /* the value is at most Q + 1 */
    int count = 1;
    while (!(h & 1)) {
        count++;
        h >>= 1;
    }
    return count;
}

/* ---- dense registers ---- */

int hll_dense_get(const unsigned char *regs, long i)
{
    size_t byte = (size_t)i * 6 / 8;
    unsigned fb = (unsigned)(i * 6) & 7;
    unsigned v = regs[byte] >> fb;
    if (fb > 2) v |= (unsigned)regs[byte + 1] << (8 - fb); /* it spans two bytes */
    return (int)(v & HLL_REG_MAX);
}

static void dense_put(unsigned char *regs, long i, int val)
{
    size_t byte = (size_t)i * 6 / 8;
    unsigned fb = (unsigned)(i * 6) & 7, v = (unsigned)val;
    regs[byte] = (unsigned char)((regs[byte] & ~(HLL_REG_MAX << fb)) | v << fb);
    if (fb > 2)
        regs[byte + 1] =
            (unsigned char)((regs[byte + 1] & ~(HLL_REG_MAX >> (8 - fb))) | v >> (8 - fb));
}

static int dense_set(unsigned char *regs, long i, int count)
{
    if (count <= hll_dense_get(regs, i)) return 0;
    dense_put(regs, i, count);
    return 1;
}

/* ---- the whole string ---- */

int hll_is_valid(const unsigned char *p, size_t len)
{
    if (len < HLL_HDR_SIZE || memcmp(p, "HYLL", 4) != 0) return 0;
    if (p[4] > HLL_SPARSE) return 0;
    return p[4] != HLL_DENSE || len == HLL_DENSE_SIZE;
}

static void buf_room(hll_buf_t *b, size_t need)
{
    if (need <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    unsigned char *p = realloc(b->p, cap);
    if (!p) abort();
    b->p = p;
    b->cap = cap;
}

void hll_new(hll_buf_t *b)
{
    b->p = NULL;
    b->len = b->cap = 0;
    buf_room(b, HLL_HDR_SIZE + 2);
    memset(b->p, 0, HLL_HDR_SIZE);
    memcpy(b->p, "HYLL", 4);
    b->p[4] = HLL_SPARSE;
    b->len = HLL_HDR_SIZE + (size_t)zeros_put(b->p + HLL_HDR_SIZE, HLL_REGISTERS);
}

void hll_invalidate(hll_buf_t *b)
{
    b->p[15] |= 0x80;
}

int hll_cached(const unsigned char *p, uint64_t *card)
{
    if (p[15] & 0x80) return 0;
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[8 + i];
    *card = v;
    return 1;
}

/* Walk the sparse opcodes of p[HLL_HDR_SIZE, len), calling fn for each
 * run of a value (zeros too); 0 when the runs cover the registers exactly,
 * else -1. Loose (merging, making dense, as Redis' hllMerge and
 * hllSparseToDense): a VAL run that would end past the last register stops
 * the walk, which then passes if the runs before it covered them all.
 * Strict (counting, as Redis' histogram): no run may pass the last. */
typedef void sparse_run_fn(void *arg, long first, long len, int value);
static int sparse_walk(const unsigned char *p, size_t len, int strict, sparse_run_fn *fn, void *arg)
{
    const unsigned char *q = p + HLL_HDR_SIZE, *end = p + len;
    long idx = 0;
    while (q < end) {
        long run;
        int value = 0;
        if (OP_IS_ZERO(q)) {
            run = ZERO_LEN(q);
            q++;
        } else if (OP_IS_XZERO(q)) {
            if (q + 1 >= end) return -1; /* cut inside its second byte */
            run = XZERO_LEN(q);
            q += 2;
        } else {
            run = VAL_LEN(q);
            value = VAL_VALUE(q);
            if (!strict && idx + run > HLL_REGISTERS) break;
            q++;
        }
        if (idx + run > HLL_REGISTERS) return -1;
        fn(arg, idx, run, value);
        idx += run;
    }
    return idx == HLL_REGISTERS ? 0 : -1;
}

static void run_to_dense(void *arg, long first, long len, int value)
{
    unsigned char *regs = arg;
    if (value)
        for (long i = first; i < first + len; i++)
            dense_put(regs, i, value);
}

int hll_to_dense(hll_buf_t *b)
{
    if (b->p[4] == HLL_DENSE) return 0;
    unsigned char *d = calloc(1, HLL_DENSE_SIZE);
    if (!d) abort();
    memcpy(d, b->p, HLL_HDR_SIZE); /* the magic and the cached estimate */
    d[4] = HLL_DENSE;
    if (sparse_walk(b->p, b->len, 0, run_to_dense, d + HLL_HDR_SIZE) != 0) {
        free(d);
        return -1;
    }
    free(b->p);
    b->p = d;
    b->len = b->cap = HLL_DENSE_SIZE;
    return 0;
}

/* Join neighbouring VAL opcodes of one value, at most VAL_MAX_LEN
 * registers together, over five opcodes from q. */
static void sparse_join(hll_buf_t *b, unsigned char *q)
{
    unsigned char *end = b->p + b->len;
    int left = 5;
    while (q < end && left--) {
        if (OP_IS_XZERO(q)) {
            q += 2;
            continue;
        }
        if (OP_IS_ZERO(q)) {
            q++;
            continue;
        }
        if (q + 1 < end && OP_IS_VAL(q + 1) && VAL_VALUE(q) == VAL_VALUE(q + 1)) {
            int len = VAL_LEN(q) + VAL_LEN(q + 1);
            if (len <= VAL_MAX_LEN) {
                val_put(q + 1, VAL_VALUE(q), len);
                memmove(q, q + 1, (size_t)(end - q - 1));
                b->len--;
                end--;
                continue; /* the joined one may join its right neighbour too */
            }
        }
        q++;
    }
}

static int sparse_set(hll_buf_t *b, long idx, int count, int64_t sparse_max)
{
    if (count > VAL_MAX_VALUE) goto promote;
    /* Find the opcode holding register idx (at offset at), and the one
     * before it (at prev; 0: none). Offsets, not pointers: the string may
     * move when it grows below. */
    size_t at = HLL_HDR_SIZE, prev = 0;
    long first = 0, span = 0;
    int oplen = 1;
    while (at < b->len) {
        const unsigned char *o = b->p + at;
        oplen = 1;
        if (OP_IS_ZERO(o)) {
            span = ZERO_LEN(o);
        } else if (OP_IS_VAL(o)) {
            span = VAL_LEN(o);
        } else {
            if (at + 1 >= b->len) return -1;
            span = XZERO_LEN(o);
            oplen = 2;
        }
        if (idx <= first + span - 1) break;
        prev = at;
        at += (size_t)oplen;
        first += span;
    }
    if (at >= b->len) return -1;
    unsigned char *q = b->p + at;
    int is_val = OP_IS_VAL(q), is_zero = OP_IS_ZERO(q);
    if (is_val) {
        if (VAL_VALUE(q) >= count) return 0;
        if (span == 1) { /* its own opcode: the value changes in place */
            val_put(q, count, 1);
            goto updated;
        }
    }
    if (is_zero && span == 1) {
        val_put(q, count, 1);
        goto updated;
    }
    /* Split the run into [before] VAL(count) [after]. */
    unsigned char seq[5], *s = seq;
    long last = first + span - 1;
    if (is_val) {
        int cur = VAL_VALUE(q);
        if (idx != first) val_put(s++, cur, (int)(idx - first));
        val_put(s++, count, 1);
        if (idx != last) val_put(s++, cur, (int)(last - idx));
    } else {
        if (idx != first) s += zeros_put(s, idx - first);
        val_put(s++, count, 1);
        if (idx != last) s += zeros_put(s, last - idx);
    }
    long seqlen = s - seq, delta = seqlen - oplen;
    if (delta > 0 && (int64_t)(b->len + (size_t)delta) > sparse_max) goto promote;
    buf_room(b, b->len + (size_t)(delta > 0 ? delta : 0));
    q = b->p + at;
    unsigned char *end = b->p + b->len;
    memmove(q + seqlen, q + oplen, (size_t)(end - (q + oplen)));
    memcpy(q, seq, (size_t)seqlen);
    b->len = (size_t)((long)b->len + delta);
updated:
    sparse_join(b, b->p + (prev ? prev : HLL_HDR_SIZE));
    return 1;
promote:
    if (hll_to_dense(b) != 0) return -1;
    return dense_set(b->p + HLL_HDR_SIZE, idx, count);
}

int hll_set(hll_buf_t *b, long idx, int count, int64_t sparse_max)
{
    if (b->p[4] == HLL_DENSE) return dense_set(b->p + HLL_HDR_SIZE, idx, count);
    return sparse_set(b, idx, count, sparse_max);
}

int hll_add(hll_buf_t *b, const unsigned char *ele, size_t n, int64_t sparse_max)
{
    long idx;
    int count = hll_pattern(ele, n, &idx);
    return hll_set(b, idx, count, sparse_max);
}

/* ---- merging and counting ---- */

static void run_to_max(void *arg, long first, long len, int value)
{
    uint8_t *max = arg;
    for (long i = first; i < first + len; i++)
        if (value > max[i]) max[i] = (uint8_t)value;
}

int hll_merge(uint8_t max[HLL_REGISTERS], const unsigned char *p, size_t len)
{
    if (p[4] == HLL_DENSE) {
        for (long i = 0; i < HLL_REGISTERS; i++) {
            int v = hll_dense_get(p + HLL_HDR_SIZE, i);
            if (v > max[i]) max[i] = (uint8_t)v;
        }
        return 0;
    }
    return sparse_walk(p, len, 0, run_to_max, max);
}

/* Ertl's sigma and tau (arXiv:1702.01284), iterated until they no longer
 * change, in this order of operations (the estimate must be Redis'). */
static double hll_sigma(double x)
{
    if (x == 1.) return INFINITY;
    double prev, y = 1, z = x;
    do {
        x *= x;
        prev = z;
        z += x * y;
        y += y;
    } while (prev != z);
    return z;
}

static double hll_tau(double x)
{
    if (x == 0. || x == 1.) return 0.;
    double prev, y = 1.0, z = 1 - x;
    do {
        x = sqrt(x);
        prev = z;
        y *= 0.5;
        z -= pow(1 - x, 2) * y;
    } while (prev != z);
    return z / 3;
}

/* The estimate from the histogram of register values. */
static uint64_t estimate(const int histo[64])
{
    double m = HLL_REGISTERS;
    double z = m * hll_tau((m - histo[HLL_Q + 1]) / m);
    for (int j = HLL_Q; j >= 1; --j) {
        z += histo[j];
        z *= 0.5;
    }
    z += m * hll_sigma(histo[0] / m);
    return (uint64_t)llroundl(HLL_ALPHA_INF * m * m / z);
}

static void run_to_histo(void *arg, long first, long len, int value)
{
    (void)first;
    ((int *)arg)[value] += (int)len;
}

uint64_t hll_count(const unsigned char *p, size_t len, int *invalid)
{
    int histo[64] = {0};
    if (p[4] == HLL_DENSE) {
        for (long i = 0; i < HLL_REGISTERS; i++)
            histo[hll_dense_get(p + HLL_HDR_SIZE, i)]++;
    } else if (sparse_walk(p, len, 1, run_to_histo, histo) != 0) {
        *invalid = 1;
        return 0;
    }
    return estimate(histo);
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

int hll_selftest(int64_t sparse_max, uint64_t seed, char *err, size_t errlen)
{
    uint64_t rng = seed | 1;
    unsigned char *regs = calloc(1, HLL_DENSE_SIZE - HLL_HDR_SIZE);
    uint8_t *bytes = malloc(HLL_REGISTERS);
    if (!regs || !bytes) abort();
    int rc = -1;
    for (int cycle = 0; cycle < 1000; cycle++) {
        for (long i = 0; i < HLL_REGISTERS; i++) {
            bytes[i] = (uint8_t)(xorshift(&rng) & HLL_REG_MAX);
            dense_put(regs, i, bytes[i]);
        }
        for (long i = 0; i < HLL_REGISTERS; i++)
            if (hll_dense_get(regs, i) != bytes[i]) {
                snprintf(err, errlen, "TESTFAILED Register %ld should be %d but is %d", i, bytes[i],
                         hll_dense_get(regs, i));
                goto out;
            }
    }
    hll_buf_t dense, sparse;
    hll_new(&dense);
    hll_new(&sparse);
    if (hll_to_dense(&dense)) abort();
    double relerr = 1.04 / sqrt(HLL_REGISTERS);
    int64_t checkpoint = 1;
    uint64_t base = xorshift(&rng);
    for (int64_t j = 1; j <= 10000000; j++) {
        uint64_t ele = (uint64_t)j ^ base;
        unsigned char b[8];
        for (int k = 0; k < 8; k++)
            b[k] = (unsigned char)(ele >> (8 * k));
        (void)hll_add(&dense, b, 8, sparse_max);
        (void)hll_add(&sparse, b, 8, sparse_max);
        if (j != checkpoint) continue;
        if (j < sparse_max / 2 && sparse.p[4] != HLL_SPARSE) {
            snprintf(err, errlen, "TESTFAILED sparse encoding not used");
            goto out2;
        }
        int bad = 0;
        uint64_t card = hll_count(dense.p, dense.len, &bad);
        if (card != hll_count(sparse.p, sparse.len, &bad)) {
            snprintf(err, errlen, "TESTFAILED dense/sparse disagree");
            goto out2;
        }
        int64_t abserr = checkpoint - (int64_t)card;
        uint64_t maxerr = j == 10 ? 1 : (uint64_t)ceil(relerr * 6 * (double)checkpoint);
        if (abserr < 0) abserr = -abserr;
        if (abserr > (int64_t)maxerr) {
            snprintf(err, errlen, "TESTFAILED Too big error. card:%lld abserr:%lld",
                     (long long)checkpoint, (long long)abserr);
            goto out2;
        }
        checkpoint *= 10;
    }
    rc = 0;
out2:
    free(dense.p);
    free(sparse.p);
out:
    free(regs);
    free(bytes);
    return rc;
}

uint64_t hll_count_raw(const uint8_t regs[HLL_REGISTERS])
{
    int histo[64] = {0};
    for (long i = 0; i < HLL_REGISTERS; i++)
        histo[regs[i] & 63]++;
    return estimate(histo);
}
