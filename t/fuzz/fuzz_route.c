/*
 * fuzz_route.c - libFuzzer target for hl_route.c. Every output buffer is
 * malloc'ed at exactly outlen bytes, so ASan catches any write past it; the
 * checks below abort on a broken invariant.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hl_php.h"
#include "hl_route.h"

#define CHECK(cond) do { \
    if (!(cond)) { \
        fprintf(stderr, "fuzz_route: check failed at line %d: %s\n", \
                __LINE__, #cond); \
        abort(); \
    } \
} while (0)

static const size_t outlens[] = { 2, 3, 4, 5, 8, 16, HL_ROUTE_MAX };

/* Aborts unless r (n bytes, NUL-terminated) is a normalised route. */
static void check_route(const char *r, size_t n, size_t outlen)
{
    CHECK(n < outlen);
    CHECK(strlen(r) == n);
    CHECK(n >= 1 && r[0] == '/');
    CHECK(n == 1 || r[n - 1] != '/');
    CHECK(strstr(r, "//") == NULL);
    CHECK(strstr(r, "/./") == NULL);
    CHECK(strstr(r, "/../") == NULL);
    CHECK(!(n >= 2 && strcmp(r + n - 2, "/.") == 0));
    CHECK(!(n >= 3 && strcmp(r + n - 3, "/..") == 0));
    CHECK(strchr(r, '?') == NULL && strchr(r, '#') == NULL);
    CHECK(strchr(r, ';') == NULL);
}

/* Aborts unless normalising route r (length n) again gives r itself. */
static void check_idempotent(const char *r, size_t n, size_t outlen)
{
    char *again = malloc(outlen);

    CHECK(again != NULL);
    CHECK(hl_route_normalize(again, outlen, r, n) == n);
    CHECK(memcmp(again, r, n + 1) == 0);
    free(again);
}

/* Walks the parents of route r (a copy is cut), checking each. */
static void check_parents(const char *r, size_t n)
{
    char *p = malloc(n + 1);
    size_t len = n, up;

    CHECK(p != NULL);
    memcpy(p, r, n + 1);
    while ((up = hl_route_parent(p, len)) != 0) {
        CHECK(up < len);
        CHECK(p[0] == '/');
        CHECK(strlen(p) == up);
        CHECK(up == 1 || p[up - 1] != '/');
        len = up;
    }
    CHECK(strlen(p) == len);
    free(p);
}

/*
 * The reference: a plain normaliser that keeps every segment in an array
 * and cuts the finished text at outlen-1 bytes, dropping a bare trailing
 * '/' or a last part cut down to "." or "..". Returns a malloc'ed string.
 */
static char *ref_route(const char *p, size_t size, int from_name, size_t outlen)
{
    size_t span = 0, nseg = 0, i = 0, len = 0, k;
    size_t *off, *seg;
    char *r;
    int dotted;

    while (span < size && p[span] != '\0' && p[span] != '?' && p[span] != '#')
        span++;
    dotted = from_name && memchr(p, '/', span) == NULL
             && memchr(p, '.', span) != NULL;
    off = malloc((span + 1) * sizeof(*off));
    seg = malloc((span + 1) * sizeof(*seg));
    r = malloc(span + 2);
    CHECK(off != NULL && seg != NULL && r != NULL);
    while (i < span) {
        size_t start;
        while (i < span && (p[i] == '/' || (dotted && p[i] == '.')))
            i++;
        size_t name;
        start = i;
        while (i < span && !(p[i] == '/' || (dotted && p[i] == '.')))
            i++;
        /* the name ends at a path parameter's ';' */
        for (name = 0; start + name < i && p[start + name] != ';'; ++name)
            ;
        if (name == 0 || (name == 1 && p[start] == '.'))
            continue;
        if (name == 2 && p[start] == '.' && p[start + 1] == '.') {
            if (nseg > 0)
                nseg--;
            continue;
        }
        off[nseg] = start;
        seg[nseg++] = name;
    }
    for (k = 0; k < nseg; ++k) {
        r[len++] = '/';
        memcpy(r + len, p + off[k], seg[k]);
        len += seg[k];
    }
    if (len > outlen - 1) {
        size_t last;
        len = outlen - 1;
        last = len;
        while (r[last - 1] != '/')
            last--;
        if (last == len
            || (len - last == 1 && r[last] == '.')
            || (len - last == 2 && r[last] == '.' && r[last + 1] == '.'))
            len = last - 1;
    }
    if (len == 0)
        r[len++] = '/';
    r[len] = '\0';
    free(seg);
    free(off);
    return r;
}

/* Runs normalize (or from_name) for every outlen and checks the results:
 * each is a normalised route, idempotent, and the start of the full one. */
static void check_all(const uint8_t *data, size_t size, int from_name)
{
    size_t full_len = size + 2;         /* room for "/" + input + NUL */
    char *full = malloc(full_len);
    size_t fn, i;

    CHECK(full != NULL);
    fn = from_name ? hl_route_from_name(full, full_len, (const char *)data, size)
                   : hl_route_normalize(full, full_len, (const char *)data, size);
    check_route(full, fn, full_len);
    {
        char *want = ref_route((const char *)data, size, from_name, full_len);
        CHECK(strcmp(full, want) == 0);
        free(want);
    }
    check_idempotent(full, fn, full_len);
    check_parents(full, fn);
    for (i = 0; i < sizeof(outlens) / sizeof(outlens[0]); ++i) {
        size_t outlen = outlens[i];
        char *out = malloc(outlen);
        size_t n;

        CHECK(out != NULL);
        n = from_name ? hl_route_from_name(out, outlen, (const char *)data, size)
                      : hl_route_normalize(out, outlen, (const char *)data, size);
        check_route(out, n, outlen);
        {
            char *want = ref_route((const char *)data, size, from_name, outlen);
            CHECK(strcmp(out, want) == 0);
            free(want);
        }
        check_idempotent(out, n, outlen);
        CHECK(n <= fn && memcmp(out, full, n) == 0);   /* a prefix of full */
        CHECK(n == fn || n + 3 >= outlen - 1);          /* cut near the end */
        free(out);
    }
    {
        char one[1] = { 'X' };
        CHECK(hl_route_normalize(one, 1, (const char *)data, size) == 0);
        CHECK(one[0] == '\0');
        CHECK(hl_route_normalize(NULL, 0, (const char *)data, size) == 0);
    }
    free(full);
}

/* Checks a query argument or cookie result got (in out, outlen bytes)
 * against the uncut result want (in full): -1 with "" both, or the first
 * outlen-1 bytes of the value (which may hold NUL bytes), NUL-terminated. */
static void check_value(long got, const char *out, size_t outlen,
                        long want, const char *full)
{
    CHECK(got >= -1 && (got < 0 || (size_t)got < outlen));
    CHECK(out[got < 0 ? 0 : got] == '\0');
    if (want < 0) {
        CHECK(got == -1);
    } else {
        size_t n = (size_t)want < outlen - 1 ? (size_t)want : outlen - 1;
        CHECK(got == (long)n);
        CHECK(memcmp(out, full, n) == 0);
    }
}

/* Aborts unless the route read from value v (n bytes) is a normalised one. */
static void check_value_route(const char *v, long n)
{
    char r[HL_ROUTE_MAX];
    size_t rn;

    if (n <= 0)
        return;
    rn = hl_route_from_name(r, sizeof(r), v, (size_t)n);
    check_route(r, rn, sizeof(r));
}

/* Reads variable name (and element key, if not NULL) of text both ways,
 * $_GET and $_COOKIE, uncut and into every outlen, and checks the cut
 * results against the uncut ones. Returns the two uncut lengths. */
static void check_source(const char *text, size_t size, const char *name,
                         const char *key, long *qlen, long *clen)
{
    static const hl_php_source_t sources[2] = { HL_PHP_GET, HL_PHP_COOKIE };
    size_t full_len = size + 2, i, s;

    for (s = 0; s < 2; ++s) {
        char *full = malloc(full_len);
        long want;

        CHECK(full != NULL);
        want = hl_php_var(full, full_len, text, sources[s], name, key);
        check_value(want, full, full_len, want, full);
        CHECK(want < 0 || (size_t)want <= size);
        check_value_route(full, want);
        for (i = 0; i < sizeof(outlens) / sizeof(outlens[0]); ++i) {
            size_t outlen = outlens[i];
            char *out = malloc(outlen);

            CHECK(out != NULL);
            check_value(hl_php_var(out, outlen, text, sources[s], name, key),
                        out, outlen, want, full);
            free(out);
        }
        *(s == 0 ? qlen : clen) = want;
        free(full);
    }
}

/* size > 0. The first byte picks the name length (0..7), the next bytes
 * are the name ("name|key" for an array element), the rest is the query
 * string / Cookie header. */
static void check_args(const uint8_t *data, size_t size)
{
    char name[8], *key, *text;
    size_t nlen = data[0] % 8;
    long q, c, qe, ce;

    if (nlen > size - 1)
        nlen = size - 1;
    memcpy(name, data + 1, nlen);
    name[nlen] = '\0';
    data += 1 + nlen;
    size -= 1 + nlen;
    text = malloc(size + 1);
    CHECK(text != NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    check_source(text, size, name, NULL, &q, &c);
    {
        char qb[8], cb[8];      /* the wrappers read the same variable */
        CHECK(hl_query_arg(qb, sizeof(qb), text, name) == (q < 7 ? q : 7));
        CHECK(hl_cookie_value(cb, sizeof(cb), text, name) == (c < 7 ? c : 7));
    }
    key = strchr(name, '|');
    if (key != NULL) {
        *key++ = '\0';
        check_source(text, size, name, key, &qe, &ce);
        check_source(text, size, name, NULL, &q, &c);
        CHECK(qe < 0 || q < 0);     /* name[key] set: name is no string */
        CHECK(ce < 0 || c < 0);
    }
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_all(data, size, 0);
    check_all(data, size, 1);
    if (size > 0)
        check_args(data, size);
    return 0;
}
