/*
 * hl_buf.h - a growable, always NUL-terminated byte string in an APR pool,
 * for building response bodies and header values and for collecting a
 * fetched document.
 */
#ifndef HL_BUF_H
#define HL_BUF_H

#include <stddef.h>
#include <apr_pools.h>

typedef struct {
    apr_pool_t *p;
    char       *s;      /* NUL-terminated, cap bytes allocated from p */
    size_t      len;
    size_t      cap;
} hl_buf_t;

/* Starts an empty string in pool p with room for cap bytes (at least 64).
 * The memory belongs to p. Never fails (APR aborts on OOM). */
void hl_buf_init(hl_buf_t *b, apr_pool_t *p, size_t cap);

/* Appends n bytes of s. Growing doubles the buffer (the old one stays in the
 * pool until it is cleared), so appending costs amortised linear time. */
void hl_buf_addn(hl_buf_t *b, const char *s, size_t n);

#endif
