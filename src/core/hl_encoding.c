/*
 * hl_encoding.c - the content codings cost=usage can read (see
 * hl_encoding.h).
 */
#include <string.h>
#include <strings.h>
#include "hl_encoding.h"

/* Returns 1 if c is HTTP optional white space. */
static int is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* Returns the coding s[0..n) (trimmed) names: see hl_encoding_t. */
static hl_encoding_t coding_of(const char *s, size_t n)
{
    while (n > 0 && is_ows(*s))
        ++s, --n;
    while (n > 0 && is_ows(s[n - 1]))
        --n;
    if (n == 0 || (n == 8 && !strncasecmp(s, "identity", 8)))
        return HL_ENC_IDENTITY;
    if ((n == 4 && !strncasecmp(s, "gzip", 4))
        || (n == 6 && !strncasecmp(s, "x-gzip", 6)))
        return HL_ENC_GZIP;
    if (n == 7 && !strncasecmp(s, "deflate", 7))
        return HL_ENC_DEFLATE;
    return HL_ENC_OTHER;
}

hl_encoding_t hl_encoding_of(const char *ce)
{
    return ce ? coding_of(ce, strlen(ce)) : HL_ENC_IDENTITY;
}

size_t hl_accept_encoding_narrow(const char *ae, char *out, size_t size)
{
    size_t len = 0, n;

    if (size < (ae ? 2 * strlen(ae) : 0) + 9) {
        if (size)
            out[0] = '\0';
        return 0;
    }
    while (ae && *ae) {
        const char *el = ae, *end;

        n = strcspn(ae, ",");
        ae += n + (ae[n] == ',');
        while (n > 0 && is_ows(*el))
            ++el, --n;
        while (n > 0 && is_ows(el[n - 1]))
            --n;
        end = memchr(el, ';', n);
        if (n == 0 || coding_of(el, end ? (size_t)(end - el) : n) == HL_ENC_OTHER
            || (end && end == el))
            continue;
        if (len) {
            memcpy(out + len, ", ", 2);
            len += 2;
        }
        memcpy(out + len, el, n);
        len += n;
    }
    if (len == 0) {
        memcpy(out, "identity", 8);
        len = 8;
    }
    out[len] = '\0';
    return len;
}
