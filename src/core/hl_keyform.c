/*
 * hl_keyform.c - client values put in one form before they become keys
 * (see hl_keyform.h).
 */
#include <string.h>
#include "hl_keyform.h"
#include "hl_phone.h"

/* Returns 1 if c is white space as C's isspace() sees it in the "C"
 * locale (what httpd's apr_isspace does). */
static int is_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Returns c lowercased if it is an ASCII capital. */
static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c + ('a' - 'A')) : c;
}

size_t hl_keyform_account(char *v, size_t n)
{
    size_t start = 0, i;

    while (start < n && is_space(v[start]))
        start++;
    while (n > start && is_space(v[n - 1]))
        n--;
    for (i = start; i < n; ++i)
        v[i - start] = lower(v[i]);
    return n - start;
}

size_t hl_keyform_header(char *out, const char *v, size_t n)
{
    size_t i, len = 0;
    int space = 0;

    for (i = 0; i < n; ++i) {
        if (is_space(v[i])) {
            space = len > 0;
            continue;
        }
        if (space)
            out[len++] = ' ';
        space = 0;
        out[len++] = lower(v[i]);
    }
    out[len] = '\0';
    return len;
}

/* Unquotes the quoted local part ("a b"@x, "a\\"b"@x) that starts the len
 * bytes of s, in place, when a quote closes it just before an "@". Returns
 * the new length (len when it is not quoted). */
static size_t unquote_local(char *s, size_t len)
{
    size_t i, o = 0, end;

    if (len < 2 || s[0] != '"')
        return len;
    for (end = 1; end < len && s[end] != '"'; end++)
        if (s[end] == '\\')
            end++;
    if (end + 1 >= len || s[end + 1] != '@')
        return len;             /* no closing quote before "@": as sent */
    for (i = 1; i < end; i++) {
        if (s[i] == '\\')
            i++;
        s[o++] = s[i];
    }
    memmove(s + o, s + end + 1, len - end - 1);
    return len - (end + 1 - o);
}

/* Returns 1 if the len bytes at s are the string lit. */
static int span_eq(const char *s, size_t len, const char *lit)
{
    return strlen(lit) == len && memcmp(s, lit, len) == 0;
}

size_t hl_keyform_email(char *out, const char *v, size_t n)
{
    size_t len, at, plus, i, o;

    memcpy(out, v, n);
    len = hl_keyform_account(out, n);
    len = unquote_local(out, len);
    out[len] = '\0';
    for (at = len; at > 0 && out[at - 1] != '@'; --at)
        ;
    if (at == 0)
        return len;             /* no "@": lower only */
    at--;                       /* the last "@" */
    while (len > at + 2 && out[len - 1] == '.')
        len--;                  /* "example.org." is "example.org" */
    out[len] = '\0';
    for (plus = 0; plus < at && out[plus] != '+'; ++plus)
        ;
    if (plus < at && plus > 0) {
        memmove(out + plus, out + at, len - at + 1);
        len -= at - plus;
        at = plus;
    }
    if (span_eq(out + at + 1, len - at - 1, "googlemail.com")) {
        memcpy(out + at + 1, "gmail.com", sizeof("gmail.com"));
        len = at + 1 + sizeof("gmail.com") - 1;
    }
    if (span_eq(out + at + 1, len - at - 1, "gmail.com")) {
        for (i = o = 0; i < len; i++)   /* Gmail ignores the dots */
            if (i >= at || out[i] != '.')
                out[o++] = out[i];
        len = o;
        out[len] = '\0';
    }
    return len;
}

size_t hl_keyform_fold(hl_norm_t norm, unsigned cc, int header, char *out,
                       const char *v, size_t n)
{
    size_t len;

    switch (norm) {
    case HL_NORM_DIGITS:
        return hl_phone_fold(out, v, n, cc);
    case HL_NORM_EMAIL:
        return hl_keyform_email(out, v, n);
    case HL_NORM_EXACT:
        memcpy(out, v, n);
        out[n] = '\0';
        return n;
    case HL_NORM_LOWER:
    default:
        if (header)
            return hl_keyform_header(out, v, n);
        memcpy(out, v, n);
        len = hl_keyform_account(out, n);
        out[len] = '\0';
        return len;
    }
}

static const char *const norm_names[] = { "lower", "digits", "email", "exact" };

int hl_keyform_norm_of(const char *s)
{
    int i;

    for (i = 0; s && i < (int)(sizeof(norm_names) / sizeof(norm_names[0])); ++i)
        if (strcmp(s, norm_names[i]) == 0)
            return i;
    return -1;
}

const char *hl_keyform_norm_name(hl_norm_t norm)
{
    return (unsigned)norm < sizeof(norm_names) / sizeof(norm_names[0])
           ? norm_names[norm] : norm_names[0];
}

int hl_keyform_norm_parse(const char *s, unsigned *cc)
{
    unsigned code = 0;
    size_t i;

    *cc = 0;
    if (s == NULL || strncmp(s, "digits:", 7) != 0)
        return hl_keyform_norm_of(s);
    for (i = 7; s[i] >= '0' && s[i] <= '9' && i < 10; i++)
        code = code * 10 + (unsigned)(s[i] - '0');
    if (i == 7 || s[i] != '\0' || s[7] == '0')
        return -1;
    if (!hl_phone_cc_known(code))
        return -2;
    *cc = code;
    return HL_NORM_DIGITS;
}

size_t hl_keyform_hashed(char *out, char prefix, uint64_t h)
{
    static const char hex[] = "0123456789abcdef";
    int i;

    out[0] = prefix;
    out[1] = ':';
    for (i = 0; i < 16; ++i)
        out[2 + i] = hex[(h >> (60 - 4 * i)) & 0xf];
    out[HL_KEYFORM_HASHED_LEN] = '\0';
    return HL_KEYFORM_HASHED_LEN;
}
