/*
 * hl_buf.c - a growable string in an APR pool (see hl_buf.h).
 */
#include <string.h>
#include "hl_buf.h"

void hl_buf_init(hl_buf_t *b, apr_pool_t *p, size_t cap)
{
    b->p = p;
    b->cap = cap < 64 ? 64 : cap;
    b->s = apr_palloc(p, b->cap);
    b->len = 0;
    b->s[0] = '\0';
}

void hl_buf_addn(hl_buf_t *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap * 2;
        char *ns;

        while (cap < b->len + n + 1)
            cap *= 2;
        ns = apr_palloc(b->p, cap);
        memcpy(ns, b->s, b->len);
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}
