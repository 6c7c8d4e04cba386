/*
 * hl_keyform.c - client values put in one form before they become keys
 * (see hl_keyform.h).
 */
#include <string.h>
#include "hl_keyform.h"

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

/* Returns 1 if c is an ASCII digit. */
static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

size_t hl_keyform_digits(char *out, const char *v, size_t n)
{
    size_t i, len = 0;
    int intl = 0;
    char *d = out + 1;          /* digits after a room for "+" */

    for (i = 0; i < n; ++i) {
        if (v[i] == '+' && len == 0)
            intl = 1;
        else if (v[i] == '(' && len > 0 && i + 2 < n && v[i + 1] == '0'
                 && v[i + 2] == ')')
            i += 2;             /* "(0)": the trunk zero of a country */
        else if (is_digit(v[i]))
            d[len++] = v[i];
    }
    if (!intl && len >= 2 && d[0] == '0' && d[1] == '0') {
        intl = 1;               /* 00 is the international prefix */
        d += 2;
        len -= 2;
    }
    if (len == 0) {
        out[0] = '\0';
        return 0;
    }
    if (intl) {
        d[-1] = '+';
        memmove(out, d - 1, len + 1);
        len++;
    }
    else
        memmove(out, d, len);
    out[len] = '\0';
    return len;
}

size_t hl_keyform_email(char *out, const char *v, size_t n)
{
    size_t len, at, plus;

    memcpy(out, v, n);
    len = hl_keyform_account(out, n);
    out[len] = '\0';
    for (at = len; at > 0 && out[at - 1] != '@'; --at)
        ;
    if (at == 0)
        return len;             /* no "@": lower only */
    at--;                       /* the last "@" */
    for (plus = 0; plus < at && out[plus] != '+'; ++plus)
        ;
    if (plus < at && plus > 0) {
        memmove(out + plus, out + at, len - at + 1);
        len -= at - plus;
    }
    return len;
}

size_t hl_keyform_fold(hl_norm_t norm, int header, char *out, const char *v,
                       size_t n)
{
    size_t len;

    switch (norm) {
    case HL_NORM_DIGITS:
        return hl_keyform_digits(out, v, n);
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
