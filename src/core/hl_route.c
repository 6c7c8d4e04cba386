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
        const char *semi;

        while (i < n && is_sep(path[i], dotted))
            i++;
        if (i == n)
            break;
        start = i;
        while (i < n && !is_sep(path[i], dotted))
            i++;
        seglen = i - start;
        /* A path parameter: servlet containers behind mod_proxy route
         * "/login;jsessionid=1" as "/login" and "/a/..;x/login" as
         * "/login", so the segment's name ends at ';'. */
        semi = memchr(path + start, ';', seglen);
        if (semi != NULL)
            seglen = (size_t)(semi - (path + start));
        if (seglen == 0)
            continue;
        if (seglen == 1 && path[start] == '.')
            continue;
        if (seglen == 2 && path[start] == '.' && path[start + 1] == '.')
            rb_pop(&b);
        else
            rb_push(&b, path + start, seglen);
    }
    return rb_finish(&b);
}

/*
 * Copies path (at most len bytes, up to the first NUL, '?' or '#') into
 * out when it is a normalised route already and fits: a leading '/', no
 * empty segment, no segment starting with '.', no path parameter (';'), no
 * trailing '/' (but "/" itself). Returns its length, or 0 when it is not
 * (the caller then normalises it; what was written to out is garbage).
 * One pass: httpd has normalised r->uri already, so this is the usual case.
 */
static size_t copy_if_normal(char *out, size_t outlen, const char *path,
                             size_t len)
{
    /* 1: ends the route; 2: '/', '.' or ';', which need a look */
    static const unsigned char kind[256] = {
        ['\0'] = 1, ['?'] = 1, ['#'] = 1, ['/'] = 2, ['.'] = 2, [';'] = 2 };
    size_t i, max = len < outlen - 1 ? len : outlen - 1;

    if (max == 0 || path[0] != '/')
        return 0;
    out[0] = '/';
    for (i = 1; i < max; ++i) {
        unsigned char c = (unsigned char)path[i];

        if (kind[c] == 1)
            break;
        /* "//", "/." (".", ".." and dot names alike) or ';' */
        if (kind[c] == 2 && (c == ';' || path[i - 1] == '/'))
            return 0;
        out[i] = (char)c;
    }
    if (i == max && max < len && kind[(unsigned char)path[max]] != 1)
        return 0;                       /* longer than out: cut there */
    if (i > 1 && out[i - 1] == '/')
        return 0;                       /* a trailing '/' */
    out[i] = '\0';
    return i;
}

/* outlen < 2 or out NULL: writes "" if it can and returns 0. Owns nothing. */
size_t hl_route_normalize(char *out, size_t outlen, const char *path, size_t len)
{
    size_t n;

    if (out != NULL && outlen >= 2 && path != NULL
        && (n = copy_if_normal(out, outlen, path, len)) > 0)
        return n;
    n = path ? route_span(path, len) : 0;
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
