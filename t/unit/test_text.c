/* test_text.c - HTTP character classes, digit readers and the error
 * writer shared by the core parsers. */
#include <string.h>
#include "hl_tap.h"
#include "hl_text.h"

int main(void)
{
    /* RFC 9110 5.6.2: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+"
     * / "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA */
    static const char tchars[] =
        "!#$%&'*+-.^_`|~0123456789"
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    int c, wrong = 0;
    uint64_t v = 7;
    char err[8];

    for (c = 0; c < 256; ++c) {
        int want = c != 0 && memchr(tchars, c, sizeof(tchars) - 1) != NULL;
        wrong += hl_is_tchar((char)c) != want;
    }
    is_int(wrong, 0, "hl_is_tchar agrees with RFC 9110 on all 256 bytes");
    ok(!hl_is_tchar('\0'), "NUL is not a tchar");
    ok(!hl_is_tchar(' ') && !hl_is_tchar('"') && !hl_is_tchar(',')
       && !hl_is_tchar(';') && !hl_is_tchar('='), "delimiters are not");

    ok(hl_digits_parse("0042", 4, 100, &v) == 0 && v == 42, "digits read");
    v = 7;
    is_int(hl_digits_parse("", 0, 100, &v), -1, "no digit: -1");
    is_int(hl_digits_parse("1a", 2, 100, &v), -1, "a letter: -1");
    is_int(hl_digits_parse("-1", 2, 100, &v), -1, "a sign: -1");
    is_int(hl_digits_parse("101", 3, 100, &v), -2, "over cap: -2");
    is_int(hl_digits_parse("99999999999999999999999x", 24, 100, &v), -1,
           "a later non-digit wins over overflow");
    is_int((int)v, 7, "*out untouched on failure");
    is_int((int)hl_digits_count("12ms", 4), 2, "leading digits counted");
    is_int((int)hl_digits_count("12", 1), 1, "within len only");
    ok(hl_span_is("msx", 2, "ms") && !hl_span_is("msx", 3, "ms")
       && !hl_span_is("m", 1, "ms"), "span compared by length and bytes");
    is_int(hl_errf(err, sizeof(err), "bad '%s'", "long value"), -1,
           "hl_errf returns -1");
    is_str(err, "bad 'lo", "message cut to the buffer, NUL-terminated");
    is_int(hl_errf(NULL, 0, "x"), -1, "NULL err is allowed");
    return done_testing();
}
