/*
 * test_glob.c - glob_match against the cases Redis' KEYS documents and the
 * corner cases of its matcher (open sets, escapes, reversed ranges), plus a
 * pathological pattern that must not take exponential time.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "glob.h"

static int m(const char *pat, const char *s)
{
    return glob_match(pat, strlen(pat), s, strlen(s), 0);
}

Test(glob, documented_examples)
{
    cr_assert(m("h?llo", "hello"));
    cr_assert(m("h?llo", "hallo"));
    cr_assert(!m("h?llo", "hllo"));
    cr_assert(m("h*llo", "hllo"));
    cr_assert(m("h*llo", "heeeello"));
    cr_assert(m("h[ae]llo", "hello"));
    cr_assert(!m("h[ae]llo", "hillo"));
    cr_assert(m("h[^e]llo", "hallo"));
    cr_assert(!m("h[^e]llo", "hello"));
    cr_assert(m("h[a-b]llo", "hbllo"));
    cr_assert(!m("h[a-b]llo", "hcllo"));
}

Test(glob, stars)
{
    cr_assert(!m("*", ""), "Redis: the empty string matches only the empty pattern");
    cr_assert(m("*", "anything"));
    cr_assert(m("**a**", "bab"));
    cr_assert(!m("*a", "b"));
    cr_assert(m("a*b*c", "axxbyyc"));
    cr_assert(!m("a*b*c", "axxbyy"));
    cr_assert(m("k:1*", "k:1"));
    cr_assert(!m("k:1*", "k:2"));
    cr_assert(!m("", "a"));
    cr_assert(m("", ""));
    cr_assert(!m("?", ""));
}

Test(glob, sets_and_escapes)
{
    cr_assert(m("[z-a]", "m"), "reversed range ends are swapped");
    cr_assert(m("[\\]]", "]"));
    cr_assert(m("[a", "a"), "a set left open ends at the pattern's end");
    cr_assert(!m("[a", "b"));
    cr_assert(m("\\*", "*"));
    cr_assert(!m("\\*", "x"));
    cr_assert(m("a\\", "a\\"), "a trailing backslash is literal");
    cr_assert(m("[-a]", "-"));
    cr_assert(glob_match("H[A-Z]LLO", 9, "hello", 5, 1), "nocase folds both sides");
    cr_assert(!glob_match("H[A-Z]LLO", 9, "hello", 5, 0));
}

Test(glob, binary_bytes)
{
    cr_assert(glob_match("a?c", 3, "a\0c", 3, 0));
    cr_assert(glob_match("a\0*", 3, "a\0zz", 4, 0));
    cr_assert(!glob_match("a\0*", 3, "a\1zz", 4, 0));
}

Test(glob, no_exponential_backtracking, .timeout = 10)
{
    char pat[200], s[5001];
    for (int i = 0; i < 100; i++) {
        pat[2 * i] = '*';
        pat[2 * i + 1] = 'a';
    }
    memset(s, 'a', 5000);
    s[5000] = '\0';
    cr_assert(glob_match(pat, 200, s, 5000, 0));
    pat[199] = 'b';
    cr_assert(!glob_match(pat, 200, s, 5000, 0));
}
