/*
 * hl_php_src.c - the input of the PHP readers, in memory or read by offset
 * through a callback and a one-block cache (see hl_php_src.h).
 */
#include <string.h>
#include "hl_php_src.h"


/* Returns a memory source over s (n bytes, borrowed). */
hl_php_src_t hl_php_mem_src(const char *s, size_t n)
{
    hl_php_src_t src;

    memset(&src, 0, sizeof(src));
    src.mem = s;
    src.len = n;
    return src;
}

/* Returns a pointer to the bytes of s at off (< s->len) and sets *n to how
 * many follow there, at least 1: in memory, or in the cache, refilled from
 * off (zeros, and failed set, when the read fails). */
const char *hl_php_src_span(hl_php_src_t *s, size_t off, size_t *n)
{
    if (s->mem) {
        *n = s->len - off;
        return s->mem + off;
    }
    if (off < s->cache_off || off >= s->cache_off + s->cache_len) {
        size_t want = s->len - off < s->cache_size ? s->len - off
                                                   : s->cache_size;
        if (s->read(s->ctx, off, s->cache, want) != 0) {
            memset(s->cache, 0, want);
            s->failed = 1;
        }
        s->cache_off = off;
        s->cache_len = want;
    }
    *n = s->cache_off + s->cache_len - off;
    return s->cache + (off - s->cache_off);
}

/* Returns the offset of the first byte ch in s[from, to), or to. */
size_t hl_php_src_find(hl_php_src_t *s, size_t from, size_t to, int ch)
{
    while (from < to) {
        size_t n;
        const char *p = hl_php_src_span(s, from, &n), *hit;

        if (n > to - from)
            n = to - from;
        if ((hit = memchr(p, ch, n)) != NULL)
            return from + (size_t)(hit - p);
        from += n;
    }
    return to;
}

/* Copies s[off, off + n) into buf. */
void hl_php_src_copy(hl_php_src_t *s, size_t off, char *buf, size_t n)
{
    while (n > 0) {
        size_t got;
        const char *p = hl_php_src_span(s, off, &got);

        if (got > n)
            got = n;
        memcpy(buf, p, got);
        buf += got;
        off += got;
        n -= got;
    }
}
