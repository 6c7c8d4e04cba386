/*
 * test_route.c - hl_route: normalisation, dotted names, parents, query
 * arguments and cookies.
 */
#include <string.h>
#include "hl_php.h"
#include "hl_route.h"
#include "hl_tap.h"

static char buf[HL_ROUTE_MAX];

/* Returns the normalised form of s (in a static buffer of outlen bytes). */
static const char *norm_n(const char *s, size_t outlen)
{
    size_t n = hl_route_normalize(buf, outlen, s, s ? strlen(s) : 0);
    if (n != strlen(buf))
        return "(length mismatch)";
    return buf;
}

static const char *norm(const char *s)
{
    return norm_n(s, sizeof(buf));
}

static const char *from_name(const char *s)
{
    size_t n = hl_route_from_name(buf, sizeof(buf), s, strlen(s));
    if (n != strlen(buf))
        return "(length mismatch)";
    return buf;
}

static void test_normalize(void)
{
    char big[1000], out[8];

    is_str(norm("/user/login"), "/user/login", "plain path kept");
    is_str(norm("/user//login/"), "/user/login", "repeated and trailing slash");
    is_str(norm("/user/./login"), "/user/login", "dot segment");
    is_str(norm("/user/x/../login"), "/user/login", "dot-dot segment");
    is_str(norm("/../../etc"), "/etc", "never above the root");
    is_str(norm("/.."), "/", "/.. is the root");
    is_str(norm(""), "/", "empty is the root");
    is_str(norm(NULL), "/", "NULL is the root");
    is_str(norm("/"), "/", "root kept");
    is_str(norm("//"), "/", "// is the root");
    is_str(norm("user/login"), "/user/login", "slash prefixed");
    is_str(norm("/a/b/.."), "/a", "trailing ..");
    is_str(norm("/a/."), "/a", "trailing .");
    is_str(norm("/."), "/", "/. is the root");
    is_str(norm("."), "/", ". is the root");
    is_str(norm("/..."), "/...", "three dots is a name");
    is_str(norm("/.../..a/a../.a"), "/.../..a/a../.a", "dotted names kept");
    is_str(norm("/User/Login"), "/User/Login", "case kept");
    is_str(norm("/%2e%2e/x"), "/%2e%2e/x", "no %-decoding here");
    is_str(norm("/a/b?x=/../c"), "/a/b", "stops at ?");
    is_str(norm("/a/b#/.."), "/a/b", "stops at #");
    is_str(norm("/a/b/../../../c/./d//"), "/c/d", "mixed");
    is_str(norm("///a///b///"), "/a/b", "many slashes");
    is_str(norm("/a/\xff\x01/b"), "/a/\xff\x01/b", "raw bytes kept");
    is_str(norm("/user/login;jsessionid=1"), "/user/login",
           "a path parameter is not part of the name (servlet containers)");
    is_str(norm("/a/..;x/login"), "/login", "..;x is .. (the Tomcat bypass)");
    is_str(norm("/a/.;x/login"), "/a/login", ".;x is .");
    is_str(norm("/;x/user;y/login;"), "/user/login", "a bare ;x is an empty segment");
    is_str(norm("/x;a/y;b=/c"), "/x/y/c", "parameters in every segment");
    is_str(norm(";"), "/", "; alone is the root");

    hl_route_normalize(buf, sizeof(buf), "/a\0/../b", 8);
    is_str(buf, "/a", "stops at NUL within len");
    hl_route_normalize(buf, sizeof(buf), "/abc/def", 4);
    is_str(buf, "/abc", "reads only len bytes");

    /* cuts */
    is_str(norm_n("/user/login", 2), "/", "outlen 2 gives /");
    is_str(norm_n("/user/login", 6), "/user", "cut at a segment end");
    is_str(norm_n("/user/login", 7), "/user", "cut leaving a bare slash drops it");
    is_str(norm_n("/user/login", 8), "/user/l", "cut inside a segment");
    is_str(norm_n("/user/login", 12), "/user/login", "exact fit");
    is_str(norm_n("/a/..b", 6), "/a", "cut part reading .. is dropped");
    is_str(norm_n("/a/.b", 5), "/a", "cut part reading . is dropped");
    is_str(norm_n("/ab/cd/../ef", 5), "/ab", "pop after a cut pops the cut segment");
    is_str(norm_n("/ab/cd/gh/../..", 5), "/ab", "two pops after a cut");
    is_str(norm_n("/ab/cd/gh/../../x", 5), "/ab", "pops then a push that does not fit");
    is_str(norm_n("/ab/cdef/../x", 6), "/ab/x", "pop restores room");
    is_str(norm_n("/abcdef/../../x", 4), "/x", "pop past a cut first segment");

    memset(big, 'a', sizeof(big));
    big[0] = '/';
    hl_route_normalize(buf, sizeof(buf), big, sizeof(big));
    is_int(strlen(buf), HL_ROUTE_MAX - 1, "long segment cut at outlen-1");
    big[500] = '/';
    big[501] = '.';
    big[502] = '.';
    big[503] = '/';
    hl_route_normalize(buf, sizeof(buf), big, sizeof(big));
    is_int(strlen(buf), HL_ROUTE_MAX - 1, "long route with .. cut at outlen-1");
    ok(buf[0] == '/' && buf[1] == 'a', "cut long route starts right");

    memset(out, 'X', sizeof(out));
    is_int(hl_route_normalize(out, 1, "/a", 2), 0, "outlen 1 returns 0");
    ok(out[0] == '\0' && out[1] == 'X', "outlen 1 writes only the NUL");
    is_int(hl_route_normalize(out + 1, 0, "/a", 2), 0, "outlen 0 returns 0");
    ok(out[1] == 'X', "outlen 0 writes nothing");
    is_int(hl_route_normalize(NULL, 8, "/a", 2), 0, "NULL out returns 0");
    memset(out, 'X', sizeof(out));
    is_int(hl_route_normalize(out, 4, "/abcdef", 7), 3, "returns length of cut");
    ok(out[3] == '\0' && out[4] == 'X', "no write past outlen");
}

static void test_from_name(void)
{
    is_str(from_name("user.login"), "/user/login", "dotted name");
    is_str(from_name("site.user.login"), "/site/user/login", "three parts");
    is_str(from_name("/user.login"), "/user.login", "a slash makes it a path");
    is_str(from_name("index.php"), "/index/php", "table names are routes, not files");
    is_str(from_name(""), "/", "empty is the root");
    is_str(from_name("site/login"), "/site/login", "path without leading slash");
    is_str(from_name("login"), "/login", "one word");
    is_str(from_name("user..login."), "/user/login", "empty dotted parts merged");
    is_str(from_name(".."), "/", "dots only is the root");
    is_str(from_name("a/../b"), "/b", "paths are normalised");
    is_str(from_name("user.login?x=1"), "/user/login", "stops at ?");
    is_int(hl_route_from_name(NULL, 8, "a.b", 3), 0, "NULL out returns 0");
    hl_route_from_name(buf, sizeof(buf), NULL, 5);
    is_str(buf, "/", "NULL name is the root");
}

static void test_parent(void)
{
    char r[64];
    size_t n;

    strcpy(r, "/user/login/sms");
    n = hl_route_parent(r, strlen(r));
    is_int(n, 11, "parent length");
    is_str(r, "/user/login", "parent of /user/login/sms");
    n = hl_route_parent(r, n);
    is_str(r, "/user", "parent of /user/login");
    is_int(n, 5, "parent length 5");
    n = hl_route_parent(r, n);
    is_int(n, 0, "/user has no parent");
    is_str(r, "/user", "/user left as it is");
    strcpy(r, "/");
    is_int(hl_route_parent(r, 1), 0, "/ has no parent");
    is_str(r, "/", "/ left as it is");
    is_int(hl_route_parent(r, 0), 0, "empty has no parent");
    is_int(hl_route_parent(NULL, 5), 0, "NULL has no parent");
    strcpy(r, "user");
    is_int(hl_route_parent(r, 4), 0, "no slash, no parent");
}

/*
 * Request variables as PHP 8.2 reads them. Every vector below was checked
 * against php8.2 8.2.36: $_GET through parse_str() and through mod_php,
 * $_COOKIE through the built-in web server (php -S) and mod_php.
 * want NULL: $_GET[name] / $_COOKIE[name] is not a string (absent or an
 * array). wlen: the value's length (values may hold NUL bytes).
 */
typedef struct {
    hl_php_source_t src;
    const char *input, *name, *key, *want;
    long wlen;
} php_vec_t;

#define G HL_PHP_GET
#define C HL_PHP_COOKIE
#define S(s) s, (long)(sizeof(s) - 1)     /* a value and its length */
#define ABSENT NULL, -1

static const php_vec_t php_vectors[] = {
    /* $_GET: decoding */
    { G, "r=site%2Flogin",            "r",     NULL, S("site/login") },
    { G, "a=1&r=site%2flogin&b=2",    "r",     NULL, S("site/login") },
    { G, "r=a+b%20c",                 "r",     NULL, S("a b c") },
    { G, "r=a%2Bb",                   "r",     NULL, S("a+b") },
    { G, "r=%zz%4",                   "r",     NULL, S("%zz%4") },
    { G, "a=%zz&r=%2",                "r",     NULL, S("%2") },
    { G, "r=ab%00cd",                 "r",     NULL, S("ab\0cd") },
    { G, "r=%00",                     "r",     NULL, S("\0") },
    { G, "r=a=b",                     "r",     NULL, S("a=b") },
    { G, "r=1;r=2",                   "r",     NULL, S("1;r=2") },
    /* $_GET: empty values, duplicates, separators */
    { G, "r=",                        "r",     NULL, S("") },
    { G, "r",                         "r",     NULL, S("") },
    { G, "r=a&r=b",                   "r",     NULL, S("b") },
    { G, "r=a&r=",                    "r",     NULL, S("") },
    { G, "r=a&r",                     "r",     NULL, S("") },
    { G, "&&r=y&&",                   "r",     NULL, S("y") },
    { G, "=x&r=y",                    "r",     NULL, S("y") },
    { G, "",                          "r",     NULL, ABSENT },
    { G, "&&&",                       "r",     NULL, ABSENT },
    /* $_GET: names */
    { G, "%72=x",                     "r",     NULL, S("x") },
    { G, "R=x",                       "r",     NULL, ABSENT },
    { G, "rr=a&xr=b",                 "r",     NULL, ABSENT },
    { G, " r=1",                      "r",     NULL, S("1") },
    { G, "+r=1",                      "r",     NULL, S("1") },
    { G, "%20%20r=1",                 "r",     NULL, S("1") },
    { G, "%09r=1",                    "r",     NULL, ABSENT },
    { G, "%09r=1",                    "\tr",   NULL, S("1") },
    { G, "r%00x=1",                   "r",     NULL, S("1") },
    { G, "r.x=1",                     "r_x",   NULL, S("1") },
    { G, "r.x=1",                     "r.x",   NULL, ABSENT },
    { G, "r_x=1&r.x=2&r+x=3",         "r_x",   NULL, S("3") },
    { G, "r x=1",                     "r_x",   NULL, S("1") },
    { G, "r[=1",                      "r",     NULL, ABSENT },
    { G, "r[=1",                      "r_",    NULL, S("1") },
    { G, "r[a.b[c=1",                 "r_a_b_c", NULL, S("1") },
    { G, "[a]=1&[=2",                 "_a_",   NULL, ABSENT },
    { G, "__Host-x=1",                "__Host-x", NULL, S("1") },
    { G, "._Host-x=1",                "__Host-x", NULL, ABSENT },
    { G, "_.Secure-x=1",              "__Secure-x", NULL, ABSENT },
    { G, "_[Host-=1",                 "__Host-", NULL, ABSENT },
    /* $_GET: arrays are not strings */
    { G, "r[]=x",                     "r",     NULL, ABSENT },
    { G, "r[a]=x",                    "r",     NULL, ABSENT },
    { G, "r%5B%5D=x",                 "r",     NULL, ABSENT },
    { G, "r=x&r[]=y",                 "r",     NULL, ABSENT },
    { G, "r[]=y&r=x",                 "r",     NULL, S("x") },
    { G, "r[a]x=1",                   "r",     NULL, ABSENT },
    { G, "r[__Host-x]=1&x=2",         "r",     NULL, ABSENT },
    /* $_GET[name][key] */
    { G, "r[a]=1&r[b]=2",             "r",     "a",  S("1") },
    { G, "r[a]=1&r[a]=2",             "r",     "a",  S("2") },
    { G, "r[a]=1&r=x&r[b]=2",         "r",     "a",  ABSENT },
    { G, "r[a]=1&r=x&r[b]=2",         "r",     "b",  S("2") },
    { G, "r[a][b]=1",                 "r",     "a",  ABSENT },
    { G, "r[a]=1&r[a][b]=2",          "r",     "a",  ABSENT },
    { G, "r[a][b]=2&r[a]=1",          "r",     "a",  S("1") },
    { G, "r[a]x[b]=1",                "r",     "a",  S("1") },
    { G, "r[a][b=1",                  "r",     "a",  S("1") },
    { G, "r[a%5Db]=1",                "r",     "a",  S("1") },
    { G, "r=x",                       "r",     "a",  ABSENT },
    { G, "r[]=a&r[]=b",               "r",     "0",  S("a") },
    { G, "r[]=a&r[]=b",               "r",     "1",  S("b") },
    { G, "r[]=a&r[][x]=b&r[]=c",      "r",     "2",  S("c") },
    { G, "r[]=a&r[5]=b&r[]=c",        "r",     "6",  S("c") },
    { G, "r[-3]=a&r[]=b",             "r",     "-2", S("b") },
    { G, "r[01]=a&r[1]=b",            "r",     "01", S("a") },
    { G, "r[01]=a&r[1]=b",            "r",     "1",  S("b") },
    { G, "r[00]=a&r[]=b",             "r",     "0",  S("b") },
    { G, "r[-0]=a&r[]=b",             "r",     "0",  S("b") },
    { G, "r[ 1]=a&r[]=b",             "r",     "0",  S("b") },
    { G, "r[ 1]=a&r[]=b",             "r",     " 1", S("a") },
    { G, "r[ ]=x",                    "r",     "0",  S("x") },
    { G, "r[%09]=x",                  "r",     "0",  S("x") },
    { G, "r[  ]=x",                   "r",     "  ", S("x") },
    { G, "r[][x=1",                   "r",     "0",  S("1") },
    { G, "r[9223372036854775807]=a&r[]=b", "r", "9223372036854775807", S("a") },
    { G, "r[9223372036854775806]=a&r[]=b&r[]=c", "r", "9223372036854775807", S("b") },
    { G, "r[9223372036854775808]=a&r[]=b", "r", "0", S("b") },
    { G, "r[-9223372036854775808]=a&r[]=b", "r", "-9223372036854775807", S("b") },
    { G, "r[__Host-x]=1",             "r",     "__Host-x", ABSENT },
    { G, "__Host-r[__Host-x]=1",      "__Host-r", "__Host-x", S("1") },
    /* $_COOKIE: %-spellings of one value, rawurldecode */
    { C, "sid=abc",                   "sid",   NULL, S("abc") },
    { C, "sid=%61bc",                 "sid",   NULL, S("abc") },
    { C, "sid=a%62c",                 "sid",   NULL, S("abc") },
    { C, "sid=%61%62%63",             "sid",   NULL, S("abc") },
    { C, "sid=a+b",                   "sid",   NULL, S("a+b") },
    { C, "sid=a%2Bb",                 "sid",   NULL, S("a+b") },
    { C, "sid=a%20b",                 "sid",   NULL, S("a b") },
    { C, "sid=%zz%4",                 "sid",   NULL, S("%zz%4") },
    { C, "sid=a%00b",                 "sid",   NULL, S("a\0b") },
    /* $_COOKIE: the first one wins, separators, white space */
    { C, "sid=first; sid=second",     "sid",   NULL, S("first") },
    { C, "sid=; sid=x",               "sid",   NULL, S("") },
    { C, "sid; sid=y",                "sid",   NULL, S("") },
    { C, "=x; sid=y",                 "sid",   NULL, S("y") },
    { C, ";;sid=x;;",                 "sid",   NULL, S("x") },
    { C, ";;;",                       "sid",   NULL, ABSENT },
    { C, " \tsid=x",                  "sid",   NULL, S("x") },
    { C, "\vsid=x",                   "sid",   NULL, S("x") },
    { C, "sid= x",                    "sid",   NULL, S(" x") },
    { C, "sid=x ; a=1",               "sid",   NULL, S("x ") },
    { C, "sid =x",                    "sid",   NULL, ABSENT },
    { C, "sid =x",                    "sid_",  NULL, S("x") },
    { C, "sid=\"q\"",                 "sid",   NULL, S("\"q\"") },
    { C, "a=b=c;sid=v=w",             "sid",   NULL, S("v=w") },
    { C, "SID=x",                     "sid",   NULL, ABSENT },
    { C, "xsid=x; sidx=y",            "sid",   NULL, ABSENT },
    /* $_COOKIE: names are not decoded, but mangled */
    { C, "s%69d=x",                   "sid",   NULL, ABSENT },
    { C, "s%69d=x",                   "s%69d", NULL, S("x") },
    { C, "a.b=1",                     "a_b",   NULL, S("1") },
    { C, "s id=1",                    "s_id",  NULL, S("1") },
    { C, "sid[=1; sid[=2",            "sid_",  NULL, S("1") },
    { C, "__Host-sid=1; ._Host-sid=2", "__Host-sid", NULL, S("1") },
    /* $_COOKIE: arrays */
    { C, "sid[]=1; sid=2",            "sid",   NULL, ABSENT },
    { C, "sid=1; sid[a]=2",           "sid",   NULL, ABSENT },
    { C, "sid=1; sid=2; sid[]=3",     "sid",   NULL, ABSENT },
    { C, "sid[a]=1; sid[a]=2",        "sid",   "a",  S("2") },
};

/* Returns the name of a vector for its TAP line (bytes outside printable
 * ASCII as \xNN), in name (size bytes). */
static const char *vec_name(const php_vec_t *v, char *name, size_t size)
{
    size_t len = (size_t)snprintf(name, size, "%s[%s]%s%s%s \"",
                                  v->src == C ? "$_COOKIE" : "$_GET", v->name,
                                  v->key ? "[" : "", v->key ? v->key : "",
                                  v->key ? "]" : "");
    const unsigned char *p;

    for (p = (const unsigned char *)v->input; *p && len + 6 < size; ++p)
        len += (size_t)snprintf(name + len, size - len,
                                *p >= ' ' && *p < 127 ? "%c" : "\\x%02x", *p);
    snprintf(name + len, size - len, "\"");
    return name;
}

static void test_php_vectors(void)
{
    size_t i;

    for (i = 0; i < sizeof(php_vectors) / sizeof(php_vectors[0]); ++i) {
        const php_vec_t *v = &php_vectors[i];
        char name[160];
        long n;

        memset(buf, 'X', sizeof(buf));
        n = v->key ? hl_php_var(buf, sizeof(buf), v->input, v->src, v->name, v->key)
            : v->src == C ? hl_cookie_value(buf, sizeof(buf), v->input, v->name)
            : hl_query_arg(buf, sizeof(buf), v->input, v->name);
        vec_name(v, name, sizeof(name));
        if (v->want == NULL) {
            if (!ok(n == -1 && buf[0] == '\0', name))
                printf("#   got %ld '%s', expected absent\n", n, buf);
        } else if (!ok(n == v->wlen && memcmp(buf, v->want, (size_t)n + 1) == 0,
                       name)) {
            printf("#   got %ld '%s', expected %ld '%s'\n", n, buf, v->wlen,
                   v->want);
        }
    }
}

/*
 * Returns (in a static buffer) head, then n filler tokens made by the
 * format fillfmt from their number (it may leave the number out), then tail.
 */
static char *fill(const char *head, const char *fillfmt, int n, const char *tail)
{
    static char big[64 * 1024];
    size_t len = 0;
    int i;

    len += (size_t)snprintf(big + len, sizeof(big) - len, "%s", head);
    for (i = 0; i < n; ++i)
        len += (size_t)snprintf(big + len, sizeof(big) - len, fillfmt, i);
    snprintf(big + len, sizeof(big) - len, "%s", tail);
    return big;
}

/* Returns $_GET[r] / $_COOKIE[sid] of s as a string ("(absent)"). */
static const char *qv(const char *s)
{
    return hl_query_arg(buf, sizeof(buf), s, "r") < 0 ? "(absent)" : buf;
}

static const char *cv(const char *s)
{
    return hl_cookie_value(buf, sizeof(buf), s, "sid") < 0 ? "(absent)" : buf;
}

/* max_input_vars = 1000: PHP reads the first 1000 counted tokens only.
 * (Checked with php -S / mod_php, the tokens built as here.) */
static void test_max_input_vars(void)
{
    /* the target as token 999, 1000 and 1001 */
    is_str(qv(fill("", "a%d=1&", 998, "r=x")), "x", "$_GET: r as the 999th variable is read");
    is_str(qv(fill("", "a%d=1&", 999, "r=x")), "x", "$_GET: r as the 1000th variable is read");
    is_str(qv(fill("", "a%d=1&", 1000, "r=x")), "(absent)", "$_GET: r as the 1001st variable is not");
    /* a duplicate before and after the cut: the issue's route */
    is_str(qv(fill("r=site/login&", "a%d=1&", 997, "r=site/index")), "site/index",
           "$_GET: a duplicate as the 999th wins");
    is_str(qv(fill("r=site/login&", "a%d=1&", 998, "r=site/index")), "site/index",
           "$_GET: a duplicate as the 1000th wins");
    is_str(qv(fill("r=site/login&", "a%d=1&", 999, "r=site/index")), "site/login",
           "$_GET: a duplicate as the 1001st is not read (PHP sees the first)");
    is_str(qv(fill("r=site/login&", "a%d=1&", 1000, "r=site/index")), "site/login",
           "$_GET: ... nor as the 1002nd (the issue's query)");
    /* what counts */
    is_str(qv(fill("r=a&", "a%d&", 999, "r=b")), "a", "$_GET: tokens without '=' count");
    is_str(qv(fill("r=a&", "=%d&", 999, "r=b")), "a", "$_GET: tokens with an empty name count");
    is_str(qv(fill("r=a&", "a[%d]=1&", 999, "r=b")), "a", "$_GET: array elements count");
    is_str(qv(fill("r=a&", "&&", 5000, "r=b")), "b", "$_GET: empty tokens do not count");
    is_str(qv(fill("", "a=%d&", 999, "r=x")), "x", "$_GET: duplicates count once each (1000th read)");
    is_str(qv(fill("", "a=%d&", 1000, "r=x")), "(absent)", "$_GET: duplicates count once each (1001st not)");
    /* cookies */
    is_str(cv(fill("", "a%d=1; ", 999, "sid=x")), "x", "$_COOKIE: sid as the 1000th cookie is read");
    is_str(cv(fill("", "a%d=1; ", 1000, "sid=x")), "(absent)", "$_COOKIE: sid as the 1001st is not");
    is_str(cv(fill("", "a%d; ", 1000, "sid=x")), "(absent)", "$_COOKIE: cookies without '=' count");
    is_str(cv(fill("", "=a%d; ", 5000, "sid=x")), "x", "$_COOKIE: cookies with an empty name do not count");
    is_str(cv(fill("", " \t;", 5000, "sid=x")), "x", "$_COOKIE: blank cookies do not count");
    is_str(cv(fill("", ";;", 5000, "sid=x")), "x", "$_COOKIE: empty tokens do not count");
}

/* Returns (in a static buffer) head, name, `levels` times "[a]", tail. */
static const char *nested(const char *head, const char *name, int levels,
                          const char *tail)
{
    static char in[512];
    size_t len = (size_t)snprintf(in, sizeof(in), "%s%s", head, name);
    int i;

    for (i = 0; i < levels; ++i)
        len += (size_t)snprintf(in + len, sizeof(in) - len, "[a]");
    snprintf(in + len, sizeof(in) - len, "%s", tail);
    return in;
}

/* PHP's max_input_nesting_level = 64: a deeper name deletes the variable. */
static void test_nesting(void)
{
    is_int(hl_php_var(buf, sizeof(buf), nested("r=x&", "r", 64, "=1"), G, "r", NULL), -1,
           "64 levels: r is an array");
    is_int(hl_php_var(buf, sizeof(buf), nested("r=x&", "r", 64, "=1"), G, "r", "a"), -1,
           "... whose [a] is an array too");
    is_str(qv(nested("r=x&", "r", 65, "=1&r=z")), "z", "65 levels, then r=z: r is z");
    is_int(hl_php_var(buf, sizeof(buf), nested("r[b]=x&", "r", 65, "=1"), G, "r", "b"), -1,
           "65 levels: r is deleted (r[b] is gone)");
    is_int(hl_php_var(buf, sizeof(buf), nested("r[b]=x&", "r", 65, "=1&r[c]=y"), G, "r", "b"), -1,
           "... and a later r[c] makes a new array");
    is_int(hl_php_var(buf, sizeof(buf), nested("r[b]=x&", "r", 64, "[b=1"), G, "r", "b"), -1,
           "64 levels and an unclosed '[': deleted too");
    is_str(hl_php_var(buf, sizeof(buf), nested("r[b]=x&", "r", 63, "[b=1"), G, "r", "b") < 0
           ? "(absent)" : buf, "x", "63 levels and an unclosed '[': kept");
    is_str(cv(nested("sid=1; ", "sid", 65, "=1; sid=2")), "2",
           "$_COOKIE: 65 levels delete sid, so a later sid is the first one");
    is_str(cv(nested("sid=1; ", "sid", 64, "=1; sid=2")), "(absent)",
           "$_COOKIE: 64 levels: sid stays an array");
}

static void test_php_api(void)
{
    char small[4];

    is_int(hl_query_arg(small, sizeof(small), "r=abcdef", "r"), 3, "value cut at outlen-1");
    is_str(small, "abc", "cut value");
    is_int(hl_query_arg(small, sizeof(small), "r=%41%42%43%44", "r"), 3, "cut while decoding");
    is_str(small, "ABC", "cut decoded value");
    is_int(hl_query_arg(small, 1, "r=abcdef", "r"), -1, "outlen 1 gives -1");
    is_str(small, "", "outlen 1 writes empty string");
    is_int(hl_query_arg(NULL, 8, "r=a", "r"), -1, "NULL out");
    is_int(hl_query_arg(small, sizeof(small), NULL, "r"), -1, "NULL query");
    is_int(hl_query_arg(small, sizeof(small), "r=x", NULL), -1, "NULL name");
    is_int(hl_query_arg(small, sizeof(small), "r=x", ""), -1, "empty name");
    is_int(hl_cookie_value(small, sizeof(small), "sid=abcdef", "sid"), 3, "cookie cut at outlen-1");
    is_str(small, "abc", "cut cookie");
    is_int(hl_cookie_value(small, 1, "sid=abcdef", "sid"), -1, "cookie: outlen 1 gives -1");
    is_int(hl_cookie_value(NULL, 8, "sid=a", "sid"), -1, "cookie: NULL out");
    is_int(hl_cookie_value(small, sizeof(small), NULL, "sid"), -1, "NULL header");
    is_int(hl_cookie_value(small, sizeof(small), "sid=x", NULL), -1, "cookie: NULL name");
    is_int(hl_php_var(small, sizeof(small), "r[]=x", G, "r", ""), -1, "empty key");
}

int main(void)
{
    test_normalize();
    test_from_name();
    test_parent();
    test_php_vectors();
    test_max_input_vars();
    test_nesting();
    test_php_api();
    return done_testing();
}
