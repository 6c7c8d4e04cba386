/*
 * hl_php_src.h - the input of the PHP readers (hl_php.c, hl_php_multipart.c):
 * an hl_php_src_t (hl_php.h) in memory or read by offset, and C's isspace().
 * Pure: no allocation, no httpd header.
 */
#ifndef HL_PHP_SRC_H
#define HL_PHP_SRC_H

#include <stddef.h>
#include "hl_php.h"

/* Returns a memory source over s (n bytes, borrowed). */
hl_php_src_t hl_php_mem_src(const char *s, size_t n);

/* Returns a pointer to the bytes of s at off (< s->len) and sets *n to how
 * many follow there, at least 1: in memory, or in the cache, refilled from
 * off (zeros, and failed set, when the read fails). */
const char *hl_php_src_span(hl_php_src_t *s, size_t off, size_t *n);

/* Returns the offset of the first byte ch in s[from, to), or to. */
size_t hl_php_src_find(hl_php_src_t *s, size_t from, size_t to, int ch);

/* Copies s[off, off + n) into buf. */
void hl_php_src_copy(hl_php_src_t *s, size_t off, char *buf, size_t n);

/* Returns 1 for the bytes C's isspace() accepts in the "C" locale
 * (inline, as it was when static in hl_php.c: the name walk calls it per
 * byte). */
static inline int hl_php_is_space(int c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Returns the byte of s at off (< s->len). */
static inline unsigned char hl_php_src_at(hl_php_src_t *s, size_t off)
{
    size_t n;

    if (s->mem)
        return (unsigned char)s->mem[off];
    return (unsigned char)*hl_php_src_span(s, off, &n);
}

#endif
