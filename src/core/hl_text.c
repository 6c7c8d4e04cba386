/*
 * hl_text.c - character classes of HTTP syntax, digit readers and the
 * parsers' error writer (see hl_text.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "hl_text.h"

int hl_is_tchar(char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return 1;
    return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

int hl_hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Returns 1 if c is an ASCII digit (no locale involved). */
static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

int hl_digits_parse(const char *s, size_t len, uint64_t cap, uint64_t *out)
{
    uint64_t v = 0;
    size_t i;
    int over = 0;

    if (len == 0)
        return -1;
    for (i = 0; i < len; i++) {
        if (!is_digit(s[i]))
            return -1;
        if (!over) {
            v = v * 10 + (uint64_t)(s[i] - '0');
            if (v > cap)
                over = 1;   /* keep scanning: a later non-digit wins */
        }
    }
    if (over)
        return -2;
    *out = v;
    return 0;
}

size_t hl_digits_count(const char *s, size_t len)
{
    size_t n = 0;

    while (n < len && is_digit(s[n]))
        n++;
    return n;
}

int hl_span_is(const char *s, size_t len, const char *w)
{
    return strlen(w) == len && memcmp(s, w, len) == 0;
}

int hl_errf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || errlen == 0)
        return -1;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}
