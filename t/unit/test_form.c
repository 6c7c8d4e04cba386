/*
 * test_form.c - hl_php_request_param and hl_php_form_type: $_REQUEST[NAME]
 * from a query string and an urlencoded or multipart/form-data body.
 *
 * Every vector below was checked against php8.2 (8.2.36, request_order
 * "GP"): the body POSTed with curl to `php -S`, a page printing
 * $_REQUEST[NAME] (or the first key of the array it is). A vector is
 * pre repeated rep times, then body.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hl_php.h"
#include "hl_tap.h"

enum { ABS, STR, KEY };

typedef struct {
    const char *query;
    const char *ctype;
    const char *pre;
    int         rep;
    const char *body;
    const char *name;
    int         kind;       /* ABS: absent; STR: a string; KEY: an array */
    const char *want;       /* the string, or the array's first key */
    size_t      want_len;
} form_vec_t;

static const form_vec_t vectors[] = {
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "do=login",
      "do", STR, "login", 5 },
    { "do=show", "application/x-www-form-urlencoded",
      "", 0,
      "do=login",
      "do", STR, "login", 5 },
    { "do=show", "application/x-www-form-urlencoded",
      "", 0,
      "x=1",
      "do", STR, "show", 4 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "do=Log+in%21",
      "do", STR, "Log in!", 7 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "do[login]=x",
      "do", KEY, "login", 5 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "do%5Blogin%5D=x",
      "do", KEY, "login", 5 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "do[]=x",
      "do", KEY, "0", 1 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "do[ a]=x",
      "do", KEY, " a", 2 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "do[a]=1&do[b]=2",
      "do", KEY, "a", 1 },
    { "do[q]=1", "application/x-www-form-urlencoded",
      "", 0,
      "do[p]=2",
      "do", KEY, "q", 1 },
    { "do[q]=1", "application/x-www-form-urlencoded",
      "", 0,
      "do=str",
      "do", STR, "str", 3 },
    { "do=str", "application/x-www-form-urlencoded",
      "", 0,
      "do[p]=2",
      "do", KEY, "p", 1 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "do=a&do=b",
      "do", STR, "b", 1 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "d.o=x",
      "d_o", STR, "x", 1 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "d o=x",
      "d_o", STR, "x", 1 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "do=a%00b",
      "do", STR, "a\000b", 3 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "&&do=x&&",
      "do", STR, "x", 1 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "do",
      "do", STR, "", 0 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "do=",
      "do", STR, "", 0 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "=x&do=y",
      "do", STR, "y", 1 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "do[a]=1&do=2",
      "do", STR, "2", 1 },
    { NULL, "text/plain",
      "", 0,
      "do=x",
      "do", ABS, NULL, 0 },
    { NULL, "APPLICATION/X-WWW-FORM-URLENCODED; charset=utf-8",
      "", 0,
      "do=x",
      "do", STR, "x", 1 },
    { NULL, "application/x-www-form-urlencoded",
      "&", 999,
      "do=x",
      "do", STR, "x", 1 },
    { NULL, "application/x-www-form-urlencoded",
      "&", 1000,
      "do=x",
      "do", STR, "x", 1 },
    { NULL, "application/x-www-form-urlencoded",
      "&", 1001,
      "do=x",
      "do", ABS, NULL, 0 },
    { NULL, "application/x-www-form-urlencoded",
      "a=1&", 1000,
      "do=x",
      "do", STR, "x", 1 },
    { NULL, "application/x-www-form-urlencoded",
      "a=1&", 1001,
      "do=x",
      "do", ABS, NULL, 0 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin\r\n--XyZb--\r\n",
      "do", STR, "login", 5 },
    { "do=show", "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n1\r\n--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nLogin\r\n--XyZb--\r\n",
      "do", STR, "Login", 5 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do[admin]\"\r\n\r\nx\r\n--XyZb--\r\n",
      "do", KEY, "admin", 5 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do\"; filename=\"a.txt\"\r\n\r\nfile\r\n--XyZb--\r\n",
      "do", ABS, NULL, 0 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; filename=\"a.txt\"; name=\"up\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nafter\r\n--XyZb--\r\n",
      "do", STR, "after", 5 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\na+b%21\r\n--XyZb--\r\n",
      "do", STR, "a+b%21", 6 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nline1\r\nline2\r\n--XyZb--\r\n",
      "do", STR, "line1\r\nline2", 12 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"d.o\"\r\n\r\nx\r\n--XyZb--\r\n",
      "d_o", STR, "x", 1 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Type: text/plain\r\n\r\nzz\r\n--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nx\r\n--XyZb--\r\n",
      "do", STR, "x", 1 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nx\r\n",
      "do", STR, "x", 1 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nunterminated",
      "do", STR, "unterminated", 12 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\ncontent-disposition: form-data; NAME=do\r\n\r\nbare\r\n--XyZb--\r\n",
      "do", STR, "bare", 4 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"d\\\"o\"\r\n\r\nq\r\n--XyZb--\r\n",
      "d\"o", STR, "q", 1 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data;\r\n name=\"do\"\r\n\r\ncont\r\n--XyZb--\r\n",
      "do", STR, "cont", 4 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name='do'\r\n\r\nsq\r\n--XyZb--\r\n",
      "do", STR, "sq", 2 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\none\r\n--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\ntwo\r\n--XyZb--\r\n",
      "do", STR, "two", 3 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "preamble\r\n--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\npre\r\n--XyZb--\r\n",
      "do", STR, "pre", 3 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\nContent-Disposition: form-data; name=\"do\"\n\nlf\n--XyZb--\n",
      "do", STR, "lf", 2 },
    { NULL, "multipart/form-data; boundary=\"XyZb\"",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nquoted\r\n--XyZb--\r\n",
      "do", STR, "quoted", 6 },
    { NULL, "multipart/form-data; boundary=XyZb; charset=x",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nsemi\r\n--XyZb--\r\n",
      "do", STR, "semi", 4 },
    { NULL, "multipart/form-data",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nnob\r\n--XyZb--\r\n",
      "do", ABS, NULL, 0 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "--XyZb\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n", 1000,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nx\r\n--XyZb--\r\n",
      "do", ABS, NULL, 0 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "--XyZb\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n", 999,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nx\r\n--XyZb--\r\n",
      "do", STR, "x", 1 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "email=A%40b.c",
      "email", STR, "A@b.c", 5 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data\r\n\r\nnoname\r\n--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nx\r\n--XyZb--\r\n",
      "do", ABS, NULL, 0 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nv\r\n--Xy",
      "do", STR, "v", 1 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nv\r\n--Xa",
      "do", STR, "v\r\n--Xa", 7 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\na\r\n--XyZbc\r\n--XyZb--\r\n",
      "do", STR, "a", 1 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do[x]\"\r\n\r\n1\r\n--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\ns\r\n--XyZb--\r\n",
      "do", STR, "s", 1 },
    /* PHP's 5,120-byte buffer cuts a long line: the piece after the cut
     * is a line of its own, and may be the boundary. */
    { NULL, "multipart/form-data; boundary=XyZb",
      "x", 5120,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin\r\n--XyZb--\r\n",
      "do", STR, "login", 5 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "x", 5119,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin\r\n--XyZb--\r\n",
      "do", ABS, NULL, 0 },
    /* Parts without a Content-Disposition are not counted... */
    { NULL, "multipart/form-data; boundary=XyZb",
      "--XyZb\r\nX-A: 1\r\n\r\nx\r\n", 1100,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin\r\n--XyZb--\r\n",
      "do", STR, "login", 5 },
    /* ... the others are, up to max_input_vars + max_file_uploads. */
    { NULL, "multipart/form-data; boundary=XyZb",
      "--XyZb\r\nContent-Disposition: form-data; name=\"f\"; filename=\"\"\r\n\r\n\r\n", 1019,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin\r\n--XyZb--\r\n",
      "do", STR, "login", 5 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "--XyZb\r\nContent-Disposition: form-data; name=\"f\"; filename=\"\"\r\n\r\n\r\n", 1020,
      "--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin\r\n--XyZb--\r\n",
      "do", ABS, NULL, 0 },
    /* A file part with filename="" leaves its data unread: it is read as
     * lines, and a boundary line at its start opens a part. */
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"f\"; filename=\"\"\r\n\r\n--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin\r\n--XyZb--\r\n",
      "do", STR, "login", 5 },
    /* A file's data is read up to "\n--XyZb": no part starts inside. */
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\"\r\n\r\n--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin\r\n--XyZb--\r\n",
      "do", ABS, NULL, 0 },
    /* A skipped file part (its name's brackets) makes every later file
     * part skipped too: rfc1867.c never clears skip_upload. */
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\r\nContent-Disposition: form-data; name=\"f]x\"; filename=\"a\"\r\n\r\nd\r\n--XyZb\r\nContent-Disposition: form-data; name=\"g\"; filename=\"a\"\r\n\r\n--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin\r\n--XyZb--\r\n",
      "do", STR, "login", 5 },
    /* The 21st file part is over max_file_uploads: skipped. */
    { NULL, "multipart/form-data; boundary=XyZb",
      "--XyZb\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\"\r\n\r\nd\r\n", 20,
      "--XyZb\r\nContent-Disposition: form-data; name=\"g\"; filename=\"a\"\r\n\r\n--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin\r\n--XyZb--\r\n",
      "do", STR, "login", 5 },
    { NULL, "multipart/form-data; boundary=XyZb",
      "--XyZb\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\"\r\n\r\nd\r\n", 19,
      "--XyZb\r\nContent-Disposition: form-data; name=\"g\"; filename=\"a\"\r\n\r\n--XyZb\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin\r\n--XyZb--\r\n",
      "do", ABS, NULL, 0 },
    /* An empty boundary: "--" lines delimit the parts, as in PHP. */
    { NULL, "multipart/form-data; boundary=",
      "", 0,
      "--\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin\r\n----\r\n",
      "do", STR, "login", 5 },
    /* A text field's value keeps a '\r' that is not before the boundary. */
    { NULL, "multipart/form-data; boundary=XyZb",
      "", 0,
      "--XyZb\nContent-Disposition: form-data; name=\"do\"\n\nlog\rin\r\r\n--XyZb--\r\n",
      "do", STR, "log\rin\r", 7 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "do[x]=1&do[]=2&do[__Host-a]=3",
      "do", KEY, "x", 1 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "do[]=1&do[]=2",
      "do", KEY, "0", 1 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "do[5]=1&do[]=2",
      "do", KEY, "5", 1 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "do[%41]=1",
      "do", KEY, "A", 1 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "do[a+b]=1",
      "do", KEY, "a b", 3 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "do[a][b]=1",
      "do", KEY, "a", 1 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "do=first&do[a=2",
      "do", STR, "first", 5 },
    { NULL, "application/x-www-form-urlencoded",
      "", 0,
      "do[__Host-a]=3&do[b]=1",
      "do", KEY, "b", 1 },
};

/* The read callback of a body source over memory: ctx is the body. */
static int read_mem(void *ctx, size_t off, char *buf, size_t n)
{
    memcpy(buf, (const char *)ctx + off, n);
    return 0;
}

/* Returns 1 if hl_php_request_param_src, reading body (len bytes) through
 * a callback with caches of 1, 7 and 4,096 bytes, answers what the reader
 * over memory answered: n, and out (n bytes) when n >= 0. */
static int same_from_source(const char *query, const char *body, size_t len,
                            hl_php_form_t form, const char *boundary,
                            const char *name, int array_key, long n,
                            const char *out, size_t outlen)
{
    static const size_t sizes[] = { 1, 7, 4096 };
    char *got = tap_calloc(outlen), *cache = tap_calloc(4096);
    size_t i;
    int same = 1;

    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        hl_php_src_t src;
        long m;

        memset(&src, 0, sizeof(src));
        src.len = len;
        src.read = read_mem;
        src.ctx = (void *)body;
        src.cache = cache;
        src.cache_size = sizes[i];
        m = hl_php_request_param_src(got, outlen, query, body ? &src : NULL,
                                     form, boundary, name, array_key,
                                     1 << 20);
        if (m != n || (n >= 0 && memcmp(got, out, (size_t)n) != 0))
            same = 0;
    }
    free(got);
    free(cache);
    return same;
}

/* Returns the body of v in a malloc'd buffer (caller frees), *len set. */
static char *vec_body(const form_vec_t *v, size_t *len)
{
    size_t pl = strlen(v->pre), bl = strlen(v->body), i;
    char *b = tap_calloc(pl * (size_t)v->rep + bl + 1);

    for (i = 0; i < (size_t)v->rep; ++i)
        memcpy(b + i * pl, v->pre, pl);
    memcpy(b + pl * (size_t)v->rep, v->body, bl);
    *len = pl * (size_t)v->rep + bl;
    return b;
}

static void test_vectors(void)
{
    char out[512], boundary[HL_PHP_BOUNDARY_MAX + 1];
    size_t i;

    for (i = 0; i < sizeof(vectors) / sizeof(vectors[0]); ++i) {
        const form_vec_t *v = &vectors[i];
        size_t len;
        char *body = vec_body(v, &len);
        hl_php_form_t form = hl_php_form_type(v->ctype, boundary,
                                              sizeof(boundary));
        long n = hl_php_request_param(out, sizeof(out), v->query, body, len,
                                      form, boundary, v->name, 1);
        long m = hl_php_request_param(out + 256, 256, v->query, body, len,
                                      form, boundary, v->name, 0);

        okf(same_from_source(v->query, body, len, form, boundary, v->name, 1,
                             n, out, sizeof(out))
            && same_from_source(v->query, body, len, form, boundary, v->name,
                                0, m, out + 256, 256),
            "vector %zu: the same read through a source, cache 1, 7, 4096", i);

        if (v->kind == ABS) {
            okf(n == -1 && m == -1, "vector %zu: absent", i);
        } else {
            okf(n == (long)v->want_len && memcmp(out, v->want, v->want_len) == 0,
                "vector %zu: %s %zu bytes", i,
                v->kind == KEY ? "first key" : "string", v->want_len);
            if (v->kind == KEY)
                okf(m == -1, "vector %zu: an array is no string", i);
            else
                okf(m == n, "vector %zu: the string without array_key", i);
        }
        free(body);
    }
}

/* Returns what hl_php_request_param reads for "do" in the multipart body
 * built from parts (each a pointer and length, NULL-ended) with boundary
 * b, into out (256 bytes): its length, or -1. */
static long mp_read_do(char *out, const char *b, const char *const *parts,
                       const size_t *lens)
{
    size_t len = 0, i;
    char *body;
    long n;

    for (i = 0; parts[i]; ++i)
        len += lens[i];
    body = tap_calloc(len + 1);
    for (len = 0, i = 0; parts[i]; ++i) {
        memcpy(body + len, parts[i], lens[i]);
        len += lens[i];
    }
    n = hl_php_request_param(out, 256, NULL, body, len, HL_PHP_FORM_MULTIPART,
                             b, "do", 1);
    ok(same_from_source(NULL, body, len, HL_PHP_FORM_MULTIPART, b, "do", 1,
                        n, out, 256),
       "... the same read through a source, cache 1, 7, 4096");
    free(body);
    return n;
}

/* Multipart bodies only an attacker sends, read as PHP 8.2 reads them
 * (t/46-multipart-php.t checks the same against mod_php). */
static void test_multipart_php(void)
{
    static const char part[] =
        "Content-Disposition: form-data; name=\"do\"\r\n\r\nlogin\r\n--XyZb--\r\n";
    char out[256], *zs = tap_calloc(10239), *big = tap_calloc(5117);
    const char *p[6];
    size_t l[6];

    /* A NUL after the delimiter: PHP compares the line as a C string. */
    static const char nul_delim[] = "--XyZb\0junk\r\n";
    static const char nul_header[] = "--XyZb\r\nContent-Disposition: form-data; "
        "name=\"do\"\0\"; name=\"x\"\r\n\r\nlogin\r\n--XyZb--\r\n";

    p[0] = nul_delim; l[0] = sizeof(nul_delim) - 1;
    p[1] = part; l[1] = sizeof(part) - 1;
    p[2] = NULL;
    ok(mp_read_do(out, "XyZb", p, l) == 5 && !strcmp(out, "login"),
       "a NUL after the boundary delimiter ends the line");
    /* A NUL in a header line ends it. */
    p[0] = nul_header; l[0] = sizeof(nul_header) - 1;
    p[1] = NULL;
    ok(mp_read_do(out, "XyZb", p, l) == 5 && !strcmp(out, "login"),
       "a NUL ends a part's header line");
    /* MAX_FILE_SIZE cuts a file short after two pieces of 5,119 bytes:
     * the rest of its data is read as lines. */
    memset(zs, 'z', 10238);
    p[0] = "--XyZb\r\nContent-Disposition: form-data; name=\"MAX_FILE_SIZE\"\r\n\r\n1\r\n"
           "--XyZb\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\"\r\n\r\n";
    l[0] = strlen(p[0]);
    p[1] = zs; l[1] = 10238;
    p[2] = "--XyZb\r\n"; l[2] = 8;
    p[3] = part; l[3] = sizeof(part) - 1;
    p[4] = NULL;
    ok(mp_read_do(out, "XyZb", p, l) == 5 && !strcmp(out, "login"),
       "MAX_FILE_SIZE: the rest of a cut file is read as lines");
    p[0] = "--XyZb\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\"\r\n\r\n";
    l[0] = strlen(p[0]);
    ok(mp_read_do(out, "XyZb", p, l) == -1,
       "without MAX_FILE_SIZE the same file's data is read through");
    /* PHP's longest boundary, 5,116 bytes: the buffer is 5,122 bytes. */
    memset(big, 'c', 5116);
    ok(hl_php_form_type("multipart/form-data; boundary=x", out, sizeof(out))
       == HL_PHP_FORM_MULTIPART, "a short boundary fits");
    {
        char ct[5200], bnd[HL_PHP_BOUNDARY_MAX + 1];
        snprintf(ct, sizeof(ct), "multipart/form-data; boundary=%s", big);
        ok(hl_php_form_type(ct, bnd, sizeof(bnd)) == HL_PHP_FORM_MULTIPART
           && strlen(bnd) == 5116, "a 5,116-byte boundary is read");
        strcat(ct, "c");
        ok(hl_php_form_type(ct, bnd, sizeof(bnd)) == HL_PHP_FORM_NONE,
           "a 5,117-byte boundary is not (PHP: \"Boundary too large\")");
    }
    p[0] = "--"; l[0] = 2;
    p[1] = big; l[1] = 5116;
    p[2] = "\r\nContent-Disposition: form-data; name=\"do\"\r\n\r\nlogin\r\n--"; l[2] = strlen(p[2]);
    p[3] = big; l[3] = 5116;
    p[4] = "--\r\n"; l[4] = 4;
    p[5] = NULL;
    ok(mp_read_do(out, big, p, l) == 5 && !strcmp(out, "login"),
       "a field under a 5,116-byte boundary");
    free(zs);
    free(big);
}

static void test_form_type(void)
{
    char b[16];

    is_int(hl_php_form_type(NULL, b, sizeof(b)), HL_PHP_FORM_NONE, "no type");
    is_int(hl_php_form_type("application/x-www-form-urlencoded", b, sizeof(b)),
           HL_PHP_FORM_URLENCODED, "urlencoded");
    is_int(hl_php_form_type("Application/X-WWW-Form-Urlencoded;charset=UTF-8",
                            b, sizeof(b)), HL_PHP_FORM_URLENCODED,
           "urlencoded, any case, with a parameter");
    is_int(hl_php_form_type("application/x-www-form-urlencodedx", b, sizeof(b)),
           HL_PHP_FORM_NONE, "a longer type is another");
    is_int(hl_php_form_type("text/plain", b, sizeof(b)), HL_PHP_FORM_NONE,
           "text/plain");
    is_int(hl_php_form_type("multipart/form-data; boundary=abc", b, sizeof(b)),
           HL_PHP_FORM_MULTIPART, "multipart");
    is_str(b, "abc", "its boundary");
    is_int(hl_php_form_type("multipart/form-data; boundary=\"a;b\"; x=y", b,
                            sizeof(b)), HL_PHP_FORM_MULTIPART, "quoted boundary");
    is_str(b, "a;b", "quoted boundary read");
    is_int(hl_php_form_type("multipart/form-data; boundary=ab,c", b, sizeof(b)),
           HL_PHP_FORM_MULTIPART, "boundary ends at ,");
    is_str(b, "ab", "boundary before ,");
    /* PHP 8.2 reads "BOUNDARY=" too (a lowercased copy, looked at when
     * "boundary" is not there as written): its body is a form. */
    is_int(hl_php_form_type("multipart/form-data; BOUNDARY=Xy", b, sizeof(b)),
           HL_PHP_FORM_MULTIPART, "BOUNDARY= in capitals");
    is_str(b, "Xy", "... its boundary, case kept");
    is_int(hl_php_form_type("multipart/form-data; Boundary=\"q\"", b, sizeof(b)),
           HL_PHP_FORM_MULTIPART, "Boundary= quoted");
    is_str(b, "q", "... read");
    is_int(hl_php_form_type("multipart/form-data; boundary=\"abc", b, sizeof(b)),
           HL_PHP_FORM_NONE, "unterminated quote");
    is_int(hl_php_form_type("multipart/form-data; boundary=", b, sizeof(b)),
           HL_PHP_FORM_MULTIPART, "empty boundary: PHP reads the body");
    is_str(b, "", "... its delimiter line is \"--\"");
    is_int(hl_php_form_type("multipart/form-data; boundary=\"\"; x", b, sizeof(b)),
           HL_PHP_FORM_MULTIPART, "empty quoted boundary");
    is_int(hl_php_form_type("multipart/form-data", b, sizeof(b)),
           HL_PHP_FORM_NONE, "no boundary");
    is_int(hl_php_form_type("multipart/form-data; boundary=0123456789abcdef",
                            b, sizeof(b)), HL_PHP_FORM_NONE,
           "boundary longer than the buffer");
    is_str(b, "", "and none written");
}

static void test_args(void)
{
    char out[8];

    is_int(hl_php_request_param(NULL, 8, "a=1", NULL, 0, HL_PHP_FORM_NONE,
                                NULL, "a", 0), -1, "out NULL");
    is_int(hl_php_request_param(out, 1, "a=1", NULL, 0, HL_PHP_FORM_NONE,
                                NULL, "a", 0), -1, "outlen 1");
    is_int(hl_php_request_param(out, 8, "a=1", NULL, 0, HL_PHP_FORM_NONE,
                                NULL, "", 0), -1, "empty name");
    is_int(hl_php_request_param(out, 8, NULL, NULL, 0, HL_PHP_FORM_NONE,
                                NULL, "a", 0), -1, "nothing to read");
    is_int(hl_php_request_param(out, 8, "a=1", "a=2", 3, HL_PHP_FORM_NONE,
                                NULL, "a", 0), 1, "a body PHP does not read");
    is_str(out, "1", "is ignored");
    is_int(hl_php_request_param(out, 4, NULL, "a=123456", 8,
                                HL_PHP_FORM_URLENCODED, NULL, "a", 0), 3,
           "value cut at outlen-1");
    is_str(out, "123", "cut value");
    is_int(hl_php_request_param(out, 8, NULL, "a=1&b=2", 3,
                                HL_PHP_FORM_URLENCODED, NULL, "b", 0), -1,
           "the body is read by length");
    is_int(hl_php_request_param(out, 8, NULL, "--b\r\n", 5,
                                HL_PHP_FORM_MULTIPART, NULL, "a", 0), -1,
           "multipart without a boundary");
    is_int(hl_php_var(out, sizeof(out), "x&&a=2", HL_PHP_POST, "a", NULL), 1,
           "hl_php_var reads $_POST too");
}

/* Bodies read through a source (a spooled body): a big one, a header over
 * mem_max, a failed read. */
static int fail_read(void *ctx, size_t off, char *buf, size_t n)
{
    (void)ctx; (void)off; (void)buf; (void)n;
    return -1;
}

static void test_source(void)
{
    size_t big = 3 * 1024 * 1024, len, i;
    char *body = tap_calloc(big + 512), cache[8192], out[256];
    hl_php_src_t src;
    long n;

    memset(&src, 0, sizeof(src));
    src.read = read_mem;
    src.ctx = body;
    src.cache = cache;
    src.cache_size = sizeof(cache);
    /* 3 MiB of x=..., then do=login: the last token is read. */
    memcpy(body, "x=", 2);
    memset(body + 2, 'a', big);
    len = 2 + big;
    len += (size_t)sprintf(body + len, "&do[login]=1");
    src.len = len;
    n = hl_php_request_param_src(out, sizeof(out), "do=show", &src,
                                 HL_PHP_FORM_URLENCODED, NULL, "do", 1, 65536);
    ok(n == 5 && !strcmp(out, "login"), "3 MiB urlencoded body, do[login] at its end");
    /* A 3 MiB value is written out cut at outlen - 1. */
    src.cache_len = 0;
    n = hl_php_request_param_src(out, sizeof(out), NULL, &src,
                                 HL_PHP_FORM_URLENCODED, NULL, "x", 0, 65536);
    ok(n == 255 && out[0] == 'a' && out[254] == 'a', "a 3 MiB value is cut at outlen - 1");
    /* multipart: a 3 MiB text field, then do. */
    len = (size_t)sprintf(body, "--B\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n");
    for (i = 0; i < big; ++i)
        body[len++] = (char)(i % 61 == 60 ? '\n' : 'b');
    len += (size_t)sprintf(body + len, "\r\n--B\r\nContent-Disposition: form-data; "
                           "name=\"do\"\r\n\r\nlogin\r\n--B--\r\n");
    src.len = len;
    src.cache_len = 0;
    n = hl_php_request_param_src(out, sizeof(out), NULL, &src,
                                 HL_PHP_FORM_MULTIPART, "B", "do", 1, 65536);
    ok(n == 5 && !strcmp(out, "login"), "3 MiB multipart field, then do=login");
    /* A Content-Disposition of 70,000 bytes (continued lines) is over a
     * mem_max of 65,536: refused, never guessed. */
    len = (size_t)sprintf(body, "--B\r\nContent-Disposition: form-data; name=\"do\"");
    for (i = 0; i < 70; ++i) {
        body[len++] = '\r';
        body[len++] = '\n';
        body[len++] = ' ';
        memset(body + len, 'c', 1000);
        len += 1000;
    }
    len += (size_t)sprintf(body + len, "\r\n\r\nlogin\r\n--B--\r\n");
    src.len = len;
    src.cache_len = 0;
    n = hl_php_request_param_src(out, sizeof(out), NULL, &src,
                                 HL_PHP_FORM_MULTIPART, "B", "do", 1, 65536);
    ok(n == HL_PHP_TOO_BIG, "a Content-Disposition over mem_max: HL_PHP_TOO_BIG");
    n = hl_php_request_param(out, sizeof(out), NULL, body, len,
                             HL_PHP_FORM_MULTIPART, "B", "do", 1);
    ok(n == 5, "... read whole from memory (no mem_max)");
    /* A failed read. */
    src.read = fail_read;
    src.cache_len = 0;
    n = hl_php_request_param_src(out, sizeof(out), "do=show", &src,
                                 HL_PHP_FORM_URLENCODED, NULL, "do", 1, 65536);
    ok(n == HL_PHP_READ_FAIL && out[0] == '\0', "a failed read: HL_PHP_READ_FAIL");
    free(body);
}

/* Random bodies (fixed seed) over an alphabet of the bytes the readers
 * look at: the reader through a source (caches 1, 7, 4096) answers what the
 * reader over memory answers, urlencoded and multipart. */
static void test_source_random(void)
{
    static const char *const urlenc[] = {
        "&", "=", "do", "do[", "]", "[]", "login", "%5B", "%00", "+", ".",
        " ", "x", "%", "%6", "a[b][c]", "__Host-", "\r\n", "\0"
    };
    static const char *const multi[] = {
        "--B\r\n", "--B--\r\n", "\r\n", "\n", "Content-Disposition: form-data; ",
        "name=\"do\"", "name=do", "; filename=\"f\"", "login", "show", "\r\n\r\n",
        " ", "\0", "MAX_FILE_SIZE", "\r\n--B", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
    };
    char out[512], *body = tap_calloc(8192);
    unsigned seed = 18;
    int i, same = 1, found = 0;

    for (i = 0; i < 4000; ++i) {
        int mp = i & 1;
        const char *const *words = mp ? multi : urlenc;
        size_t nwords = mp ? sizeof(multi) / sizeof(multi[0])
                           : sizeof(urlenc) / sizeof(urlenc[0]);
        size_t len = 0;
        int k, parts = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 300;
        long n;

        for (k = 0; k < parts; ++k) {
            const char *w;
            size_t wl;
            seed = seed * 1103515245u + 12345u;
            w = words[(seed >> 16) % nwords];
            wl = w[0] == '\0' ? 1 : strlen(w);   /* "\0": one NUL byte */
            if (len + wl >= 8192)
                break;
            memcpy(body + len, w, wl);
            len += wl;
        }
        n = hl_php_request_param(out, sizeof(out), "do=q", body, len,
                                 mp ? HL_PHP_FORM_MULTIPART : HL_PHP_FORM_URLENCODED,
                                 "B", "do", 1);
        found += n > 0 && strcmp(out, "q") != 0;
        if (!same_from_source("do=q", body, len,
                              mp ? HL_PHP_FORM_MULTIPART : HL_PHP_FORM_URLENCODED,
                              "B", "do", 1, n, out, sizeof(out)))
            same = 0;
    }
    ok(same, "4,000 random bodies: the same through a source as from memory");
    okf(found > 100, "... %d of them set do from the body", found);
    free(body);
}

int main(void)
{
    test_vectors();
    test_form_type();
    test_multipart_php();
    test_args();
    test_source();
    test_source_random();
    return done_testing();
}
