/* strutil.c - string helpers (strutil.h). Pure functions, any process. */
#include "strutil.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int str_to_ll(const char *s, size_t n, long long *out)
{
    if (n == 0 || n > 20) return -1;
    size_t i = 0;
    int neg = 0;
    if (s[0] == '-') {
        neg = 1;
        i = 1;
        if (n == 1) return -1;
    }
    if (s[i] == '0') {
        if (n == 1) {
            *out = 0;
            return 0;
        }
        return -1; /* leading zero, or "-0" */
    }
    unsigned long long v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (ULLONG_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    if (neg) {
        if (v > (unsigned long long)LLONG_MAX + 1) return -1;
        *out = (long long)(0 - v);
    } else {
        if (v > (unsigned long long)LLONG_MAX) return -1;
        *out = (long long)v;
    }
    return 0;
}

size_t str_from_ll(char *out, long long v)
{
    char tmp[24];
    size_t n = 0;
    unsigned long long u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t len = 0;
    if (v < 0) out[len++] = '-';
    while (n)
        out[len++] = tmp[--n];
    out[len] = '\0';
    return len;
}

int str_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

int str_to_ld(const char *s, size_t n, long double *out)
{
    char buf[STR_LD_MAX];
    if (n == 0 || n >= sizeof(buf)) return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    char *end;
    long double v = strtold(buf, &end);
    if (isspace((unsigned char)buf[0]) || *end != '\0' || (size_t)(end - buf) != n ||
        (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || fpclassify(v) == FP_ZERO)) ||
        errno == EINVAL || isnan(v))
        return -1;
    *out = v;
    return 0;
}

size_t str_from_ld(char *out, size_t cap, long double v)
{
    int l = snprintf(out, cap, "%.17Lf", v);
    if (l < 0 || (size_t)l + 1 > cap) {
        if (cap) out[0] = '\0';
        return 0;
    }
    if (strchr(out, '.')) {
        while (out[l - 1] == '0')
            l--;
        if (out[l - 1] == '.') l--;
    }
    if (l == 2 && out[0] == '-' && out[1] == '0') {
        out[0] = '0';
        l = 1;
    }
    out[l] = '\0';
    return (size_t)l;
}
