/*
 * hl_keyform.c - client values put in one form before they become keys
 * (see hl_keyform.h).
 */
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
