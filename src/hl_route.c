/*
 * hl_route.c - route names (see hl_route.h).
 *
 * Every input here may come from a client, so each function reads at most
 * the bytes it is given (len, or up to the NUL), runs in one pass, and never
 * writes more than outlen bytes, NUL included.
 *
 * A route is built in the caller's buffer as a stack of "/segment" entries:
 * a segment is pushed, ".." pops one. When the buffer is full, the segments
 * that did not fit are only counted ("hidden"), so a later ".." still pops
 * the right one and the text kept is always the start of the full result.
 */
#include <string.h>
#include "hl_route.h"

typedef struct {
    char  *out;
    size_t cap;     /* bytes usable for text: outlen - 1 */
    size_t len;     /* bytes of out in use */
    size_t hidden;  /* pushed segments that did not fit, wholly or in part */
    size_t keep;    /* len before the first hidden segment */
} route_buf_t;

/* Returns the length of path up to the first NUL, '?' or '#' (at most len). */
static size_t route_span(const char *path, size_t len)
{
    size_t i;

    for (i = 0; i < len; ++i)
        if (path[i] == '\0' || path[i] == '?' || path[i] == '#')
            break;
    return i;
}

/* Appends "/seg" (n bytes of seg) to b, or as much of it as fits. */
static void rb_push(route_buf_t *b, const char *seg, size_t n)
{
    size_t room;

    if (b->hidden) {
        b->hidden++;
        return;
    }
    room = b->cap - b->len;
    if (n < room) {                     /* 1 + n <= room */
        b->out[b->len++] = '/';
        memcpy(b->out + b->len, seg, n);
        b->len += n;
        return;
    }
    b->keep = b->len;
    b->hidden = 1;
    if (room > 0) {                     /* the cut part: "/" and n' < n bytes */
        b->out[b->len++] = '/';
        memcpy(b->out + b->len, seg, room - 1);
        b->len += room - 1;
    }
}

/* Removes the last segment of b (a ".." segment); the root stays. */
static void rb_pop(route_buf_t *b)
{
    if (b->hidden) {
        if (--b->hidden == 0)
            b->len = b->keep;
        return;
    }
    while (b->len > 0 && b->out[b->len - 1] != '/')
        b->len--;
    if (b->len > 0)
        b->len--;
}

/* Closes the route: a cut that left a bare '/' or a last part reading "."
 * or ".." drops that part; an empty route is "/". Returns the length. */
static size_t rb_finish(route_buf_t *b)
{
    if (b->hidden && b->len > 0) {
        size_t p = b->len;

        while (p > 0 && b->out[p - 1] != '/')
            p--;                        /* out[p - 1] is the last '/' */
        if (p == b->len
            || (b->len - p == 1 && b->out[p] == '.')
            || (b->len - p == 2 && b->out[p] == '.' && b->out[p + 1] == '.'))
            b->len = p - 1;
    }
    if (b->len == 0)
        b->out[b->len++] = '/';
    b->out[b->len] = '\0';
    return b->len;
}

/* Returns 1 if c separates segments ('/', and '.' too in a dotted name). */
static int is_sep(char c, int dotted)
{
    return c == '/' || (dotted && c == '.');
}

/*
 * Normalises the n bytes of path (already cut by route_span) into out.
 * dotted: '.' separates segments like '/'. Returns the length written; 0
 * (and "" when outlen is 1) if outlen < 2 or out is NULL.
 */
static size_t normalize(char *out, size_t outlen, const char *path, size_t n,
                        int dotted)
{
    route_buf_t b;
    size_t i = 0;

    if (out == NULL || outlen == 0)
        return 0;
    if (outlen == 1) {
        out[0] = '\0';
        return 0;
    }
    b.out = out;
    b.cap = outlen - 1;
    b.len = 0;
    b.hidden = 0;
    b.keep = 0;
    while (i < n) {
        size_t start, seglen;

        while (i < n && is_sep(path[i], dotted))
            i++;
        start = i;
        while (i < n && !is_sep(path[i], dotted))
            i++;
        seglen = i - start;
        if (seglen == 0)
            break;
        if (seglen == 1 && path[start] == '.')
            continue;
        if (seglen == 2 && path[start] == '.' && path[start + 1] == '.')
            rb_pop(&b);
        else
            rb_push(&b, path + start, seglen);
    }
    return rb_finish(&b);
}

/* outlen < 2 or out NULL: writes "" if it can and returns 0. Owns nothing. */
size_t hl_route_normalize(char *out, size_t outlen, const char *path, size_t len)
{
    size_t n = path ? route_span(path, len) : 0;

    return normalize(out, outlen, path, n, 0);
}

/*
 * Table route names are routes, not file names: "index.php" (no '/', a dot)
 * is read as the dotted name "/index/php". Failure as hl_route_normalize.
 */
size_t hl_route_from_name(char *out, size_t outlen, const char *name, size_t len)
{
    size_t n = name ? route_span(name, len) : 0;
    int dotted = n > 0 && memchr(name, '/', n) == NULL
                 && memchr(name, '.', n) != NULL;

    return normalize(out, outlen, name, n, dotted);
}

/* Writes only route[result]; returns 0 for NULL, "", "/" or "/one". */
size_t hl_route_parent(char *route, size_t len)
{
    size_t p = len;

    if (route == NULL)
        return 0;
    while (p > 0 && route[p - 1] != '/')
        p--;                            /* route[p - 1] is the last '/' */
    if (p <= 1)
        return 0;
    route[p - 1] = '\0';
    return p - 1;
}

/* Returns the value of hex digit c, or -1. */
static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/*
 * Returns the next byte (0..255) of the form-encoded text s (n bytes) at
 * *pos, which must be < n, and moves *pos past it: '+' is a space, "%XX" a
 * byte, and a '%' not followed by two hex digits is itself (as PHP does).
 */
static int form_next(const char *s, size_t n, size_t *pos)
{
    size_t i = *pos;

    if (s[i] == '+') {
        *pos = i + 1;
        return ' ';
    }
    if (s[i] == '%' && n - i >= 3
        && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
        *pos = i + 3;
        return hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]);
    }
    *pos = i + 1;
    return (unsigned char)s[i];
}

/*
 * Returns 1 if the raw query key (klen bytes) names argument `name` once
 * decoded the way PHP registers it, else 0: the name ends at a decoded NUL,
 * leading spaces go, and ' ' or '.' before any '[' reads as '_'. So "+r",
 * "r%00x" and "my.route" name "r", "r" and "my_route", as they do for PHP,
 * while "rr", "r[]" and "r[" do not name "r".
 */
static int key_is(const char *key, size_t klen, const char *name)
{
    size_t pos = 0, j = 0;
    int leading = 1, bracket = 0;

    while (pos < klen) {
        int c = form_next(key, klen, &pos);

        if (c == 0)
            break;
        if (leading && c == ' ')
            continue;
        leading = 0;
        if (c == '[')
            bracket = 1;
        if (!bracket && (c == ' ' || c == '.'))
            c = '_';
        if (name[j] == '\0' || (unsigned char)name[j] != c)
            return 0;
        j++;
    }
    return j > 0 && name[j] == '\0';
}

/* Returns -1 (and "" in out if outlen > 0) if absent, empty, outlen < 2,
 * or an argument is NULL. Owns nothing; reads query up to its NUL. */
long hl_query_arg(char *out, size_t outlen, const char *query, const char *name)
{
    const char *p = query, *val = NULL;
    size_t vlen = 0, pos = 0, n = 0;

    if (out != NULL && outlen > 0)
        out[0] = '\0';
    if (out == NULL || outlen < 2 || query == NULL || name == NULL
        || name[0] == '\0')
        return -1;
    for (;;) {
        const char *amp = strchr(p, '&');
        size_t plen = amp ? (size_t)(amp - p) : strlen(p);
        const char *eq = memchr(p, '=', plen);
        size_t klen = eq ? (size_t)(eq - p) : plen;

        if (klen > 0 && key_is(p, klen, name)) {      /* the last one wins */
            val = eq ? eq + 1 : p + plen;
            vlen = eq ? plen - klen - 1 : 0;
        }
        if (amp == NULL)
            break;
        p = amp + 1;
    }
    if (val == NULL)
        return -1;
    while (pos < vlen && n < outlen - 1) {
        int c = form_next(val, vlen, &pos);

        if (c == 0)
            break;
        out[n++] = (char)c;
    }
    out[n] = '\0';
    return n > 0 ? (long)n : -1;
}

/* Returns 1 for the spaces and tabs trimmed around cookie names and values. */
static int is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* Returns -1 (and "" in out if outlen > 0) if absent, empty, outlen < 2,
 * or an argument is NULL. Owns nothing; the value is not %-decoded. */
long hl_cookie_value(char *out, size_t outlen, const char *cookie_header,
                     const char *name)
{
    const char *p = cookie_header;
    size_t nlen;

    if (out != NULL && outlen > 0)
        out[0] = '\0';
    if (out == NULL || outlen < 2 || cookie_header == NULL || name == NULL
        || name[0] == '\0')
        return -1;
    nlen = strlen(name);
    for (;;) {
        const char *semi = strchr(p, ';');
        const char *s = p, *e = semi ? semi : p + strlen(p);
        const char *eq, *ke;

        while (s < e && is_ows(*s))
            s++;
        while (e > s && is_ows(e[-1]))
            e--;
        eq = memchr(s, '=', (size_t)(e - s));
        if (eq != NULL) {
            ke = eq;
            while (ke > s && is_ows(ke[-1]))
                ke--;
            if ((size_t)(ke - s) == nlen && memcmp(s, name, nlen) == 0) {
                const char *v = eq + 1;
                size_t n;

                while (v < e && is_ows(*v))
                    v++;
                if (e - v >= 2 && *v == '"' && e[-1] == '"') {
                    v++;
                    e--;
                }
                n = (size_t)(e - v);
                if (n > outlen - 1)
                    n = outlen - 1;
                memcpy(out, v, n);
                out[n] = '\0';
                return n > 0 ? (long)n : -1;   /* the first one wins */
            }
        }
        if (semi == NULL)
            break;
        p = semi + 1;
    }
    return -1;
}
