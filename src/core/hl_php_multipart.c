/*
 * hl_php_multipart.c - a multipart/form-data body read through PHP's
 * rfc1867 buffer, and a part's Content-Disposition (see hl_php_multipart.h).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "hl_php_multipart.h"
#include "hl_php_src.h"

/* fill_buffer: moves the window to the buffer's start and reads on.
 * Returns the bytes added to the window. */
static size_t mp_fill(hl_mp_buf_t *m)
{
    size_t room = m->size - m->avail, left = m->len - (m->begin + m->avail);
    size_t n = room < left ? room : left;

    if (m->w != m->buf)
        memmove(m->buf, m->w, m->avail);
    m->w = m->buf;
    hl_php_src_copy(m->body, m->begin + m->avail, m->buf + m->avail, n);
    m->avail += n;
    return n;
}

/* multipart_buffer_eof: 1 when the window is empty and the body ends. */
int hl_mp_eof(hl_mp_buf_t *m)
{
    return m->avail == 0 && mp_fill(m) < 1;
}

/* next_line: the line at the window's start, up to '\n' (a '\r' before
 * it dropped), or the whole window when it is full and holds no '\n'; read
 * as a C string (cut at a NUL). Returns 0 and consumes it, or -1 when the
 * window holds no whole line and is not full. */
static int mp_next_line(hl_mp_buf_t *m, const char **line, size_t *n)
{
    const char *s = m->w, *nl = memchr(s, '\n', m->avail), *nul;

    if (nl != NULL) {
        size_t used = (size_t)(nl - s) + 1;

        *n = (size_t)(nl - s);
        if (*n > 0 && s[*n - 1] == '\r')
            (*n)--;
        m->w += used;
        m->begin += used;
        m->avail -= used;
    } else if (m->avail < m->size) {
        return -1;
    } else {
        *n = m->avail;
        m->w += m->avail;
        m->begin += m->avail;
        m->avail = 0;
    }
    *line = s;
    if ((nul = memchr(s, '\0', *n)) != NULL)
        *n = (size_t)(nul - s);
    return 0;
}

/* get_line: next_line, refilling the window once if needed. */
int hl_mp_get_line(hl_mp_buf_t *m, const char **line, size_t *n)
{
    if (mp_next_line(m, line, n) == 0)
        return 0;
    mp_fill(m);
    return mp_next_line(m, line, n);
}

/* php_ap_memstr with partial matches: the offset in the window of the
 * first place where "\n--BOUNDARY" starts, or where the window ends with
 * a beginning of it; or -1. */
static long mp_bound(const hl_mp_buf_t *m)
{
    const char *w = m->w, *p = w, *stop = w + m->avail;

    while (p < stop && (p = memchr(p, m->next[0], (size_t)(stop - p)))) {
        size_t left = (size_t)(stop - p);

        if (memcmp(p, m->next, left < m->next_len ? left : m->next_len) == 0)
            return (long)(p - w);
        p++;
    }
    return -1;
}

/* multipart_buffer_read(bytes = FILLUNIT): consumes the part's next
 * piece of data, up to a boundary. Returns its length (0: the part ends).
 * A '\r' just before a boundary is left in the window, so the pieces
 * together are one run of the body. */
size_t hl_mp_read(hl_mp_buf_t *m)
{
    long bound;
    size_t max, len;

    if (HL_MP_FILLUNIT > m->avail)
        mp_fill(m);
    bound = mp_bound(m);
    max = bound >= 0 ? (size_t)bound : m->avail;
    len = max < HL_MP_FILLUNIT - 1 ? max : HL_MP_FILLUNIT - 1;
    if (len > 0 && bound >= 0 && m->w[len - 1] == '\r')
        len--;
    m->w += len;
    m->begin += len;
    m->avail -= len;
    return len;
}

/* php_ap_getword: returns the end of the word at s (NUL-terminated) that
 * ends at `stop` outside quotes, or at the NUL. */
static const char *word_end(const char *s, char stop)
{
    char quote;

    while (*s && *s != stop) {
        if ((quote = *s) == '"' || quote == '\'') {
            ++s;
            while (*s && *s != quote)
                s += (*s == '\\' && s[1] == quote) ? 2 : 1;
            if (*s)
                ++s;
        } else {
            ++s;
        }
    }
    return s;
}

/* php_ap_getword_conf: copies the parameter value at s (up to end) into
 * out (outlen bytes), unquoted. Returns its length, or -1 if it does not
 * fit. */
static long conf_value(const char *s, const char *end, char *out, size_t outlen)
{
    char quote = 0;
    size_t n = 0;

    while (s < end && hl_php_is_space((unsigned char)*s))
        s++;
    if (s < end && (*s == '"' || *s == '\''))
        quote = *s++;
    else {
        const char *t = s;
        while (t < end && !hl_php_is_space((unsigned char)*t))
            t++;
        end = t;
    }
    for (; s < end && *s != quote; ++s) {
        if (*s == '\\' && s + 1 < end
            && (s[1] == '\\' || (quote && s[1] == quote)))
            ++s;
        if (n + 1 >= outlen)
            return -1;
        out[n++] = *s;
    }
    out[n] = '\0';
    return (long)n;
}

/* Returns 1 if php_ap_getword_conf gives "" for the value at s (up to
 * end): nothing but white space, or a quote closed at once. */
static int conf_empty(const char *s, const char *end)
{
    while (s < end && hl_php_is_space((unsigned char)*s))
        s++;
    if (s == end)
        return 1;
    if (*s == '"' || *s == '\'')
        return s + 1 == end || s[1] == *s;
    return 0;
}

/* Reads a Content-Disposition value (cd, NUL-terminated) as rfc1867.c
 * does into *d, and its name= into name (namelen bytes, at least strlen(cd)
 * + 1, so it always fits). */
void hl_mp_disposition(const char *cd, char *name, size_t namelen,
                       hl_mp_disposition_t *d)
{
    memset(d, 0, sizeof(*d));
    while (hl_php_is_space((unsigned char)*cd))
        cd++;
    while (*cd) {
        const char *pair = cd, *pend = word_end(cd, ';'), *eq;

        cd = pend;
        while (*cd == ';')
            cd++;
        while (hl_php_is_space((unsigned char)*cd))
            cd++;
        eq = memchr(pair, '=', (size_t)(pend - pair));
        if (eq == NULL)
            continue;
        {
            const char *kend = word_end(pair, '='), *v = kend;
            size_t klen = (size_t)(kend - pair);

            while (v < pend && *v == '=')
                v++;
            if (klen == 4 && strncasecmp(pair, "name", 4) == 0)
                d->has_name = conf_value(v, pend, name, namelen) >= 0;
            else if (klen == 8 && strncasecmp(pair, "filename", 8) == 0) {
                d->has_file = 1;
                d->file_empty = conf_empty(v, pend);
            }
        }
    }
}

/* rfc1867.c's "never repair potential malicious user input": returns 1 if
 * a file part named v is skipped (brackets not closed, or text after a
 * ']' that does not open another). */
int hl_mp_bad_brackets(const char *v)
{
    long c = 0;

    for (; *v; ++v) {
        if (*v == '[')
            c++;
        else if (*v == ']') {
            c--;
            if (v[1] && v[1] != '[')
                return 1;
        }
        if (c < 0)
            return 1;
    }
    return c != 0;
}

/* Makes t empty, in its own buf. Cannot fail; owns nothing yet. */
void hl_mp_text_init(hl_mp_text_t *t)
{
    t->p = t->buf;
    t->cap = sizeof(t->buf);
    t->p[0] = '\0';
}

/* Makes t hold at least need bytes, keeping its first keep bytes. Returns
 * 0, or -1 when out of memory (t unchanged). */
int hl_mp_text_reserve(hl_mp_text_t *t, size_t need, size_t keep)
{
    size_t cap = t->cap * 2 > need ? t->cap * 2 : need;
    char *p;

    if (need <= t->cap)
        return 0;
    if ((p = malloc(cap)) == NULL)
        return -1;
    memcpy(p, t->p, keep);
    if (t->p != t->buf)
        free(t->p);
    t->p = p;
    t->cap = cap;
    return 0;
}

/* Frees the memory t took, if any (t then unusable until hl_mp_text_init). */
void hl_mp_text_free(hl_mp_text_t *t)
{
    if (t->p != t->buf)
        free(t->p);
}
