/* test_text.c - HTTP character classes shared by the core parsers. */
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

    for (c = 0; c < 256; ++c) {
        int want = c != 0 && memchr(tchars, c, sizeof(tchars) - 1) != NULL;
        wrong += hl_is_tchar((char)c) != want;
    }
    is_int(wrong, 0, "hl_is_tchar agrees with RFC 9110 on all 256 bytes");
    ok(!hl_is_tchar('\0'), "NUL is not a tchar");
    ok(!hl_is_tchar(' ') && !hl_is_tchar('"') && !hl_is_tchar(',')
       && !hl_is_tchar(';') && !hl_is_tchar('='), "delimiters are not");
    return done_testing();
}
