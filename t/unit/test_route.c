/*
 * test_route.c - hl_route: normalisation, dotted names, parents, query
 * arguments and cookies.
 */
#include <string.h>
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

static long q(const char *query, const char *name)
{
    return hl_query_arg(buf, sizeof(buf), query, name);
}

static void test_query_arg(void)
{
    char small[4];

    is_int(q("r=site%2Flogin", "r"), 10, "length of decoded value");
    is_str(buf, "site/login", "%2F decoded");
    q("a=1&r=site%2flogin&b=2", "r");
    is_str(buf, "site/login", "lower-case hex, middle argument");
    q("r=a+b%20c", "r");
    is_str(buf, "a b c", "+ and %20 are spaces");
    q("r=a&r=b", "r");
    is_str(buf, "b", "last duplicate wins");
    is_int(q("r=a&r=", "r"), -1, "last duplicate empty gives -1");
    is_int(q("r=a&r", "r"), -1, "last duplicate without = gives -1");
    is_int(q("rr=a", "r"), -1, "r does not match rr");
    is_int(q("r[]=a", "r"), -1, "r does not match r[]");
    is_int(q("r[=a", "r"), -1, "r does not match r[");
    is_int(q("xr=a", "r"), -1, "r does not match xr");
    is_int(q("R=a", "r"), -1, "names are case-sensitive");
    is_int(q("a=%zz&r=%2", "r"), 2, "invalid % kept");
    is_str(buf, "%2", "trailing % sequence literal");
    q("r=%zz%4", "r");
    is_str(buf, "%zz%4", "invalid % sequences literal");
    q("%72=x", "r");
    is_str(buf, "x", "key is decoded before comparing");
    q("r=a&+r=b", "r");
    is_str(buf, "b", "leading space of a key dropped (PHP)");
    q("r=a&r%00x=b", "r");
    is_str(buf, "b", "key ends at a decoded NUL (PHP)");
    q("my_route=a&my.route=b&my+route=c", "my_route");
    is_str(buf, "c", "' ' and '.' in a key read as '_' (PHP)");
    is_int(q("r=ab%00cd", "r"), 2, "decoded NUL ends the value");
    is_int(q("r=%00cd", "r"), -1, "value empty after NUL");
    is_int(q("", "r"), -1, "empty query");
    is_int(q("&&&", "r"), -1, "only separators");
    is_int(q("=x&r=y", "r"), 1, "empty key skipped");
    is_int(q("r=a=b", "r"), 3, "= inside value kept");
    is_str(buf, "a=b", "value with =");
    is_int(q("r=x", ""), -1, "empty name");
    is_int(q(NULL, "r"), -1, "NULL query");
    is_int(q("r=x", NULL), -1, "NULL name");
    is_int(hl_query_arg(small, sizeof(small), "r=abcdef", "r"), 3, "value cut at outlen-1");
    is_str(small, "abc", "cut value");
    is_int(hl_query_arg(small, 1, "r=abcdef", "r"), -1, "outlen 1 gives -1");
    is_str(small, "", "outlen 1 writes empty string");
    is_int(hl_query_arg(NULL, 8, "r=a", "r"), -1, "NULL out");
    is_int(hl_query_arg(small, sizeof(small), "r=%41%42%43%44", "r"), 3, "cut while decoding");
    is_str(small, "ABC", "cut decoded value");
}

static long ck(const char *hdr, const char *name)
{
    return hl_cookie_value(buf, sizeof(buf), hdr, name);
}

static void test_cookie(void)
{
    char small[4];

    is_int(ck("a=1; sid=xyz", "sid"), 3, "cookie length");
    is_str(buf, "xyz", "cookie value");
    ck("sid=first; sid=second", "sid");
    is_str(buf, "first", "first match wins");
    ck(" \tsid = \"quoted\" \t; a=1", "sid");
    is_str(buf, "quoted", "trimmed and unquoted");
    ck("sid=\"\"x\"\"", "sid");
    is_str(buf, "\"x\"", "one pair of quotes removed");
    ck("sid=\"open", "sid");
    is_str(buf, "\"open", "unbalanced quote kept");
    ck("sid=\"", "sid");
    is_str(buf, "\"", "lone quote kept");
    is_int(ck("sid=\"\"", "sid"), -1, "empty quoted value");
    is_int(ck("sid=; sid=x", "sid"), -1, "first match empty gives -1");
    is_int(ck("SID=x", "sid"), -1, "names are case-sensitive");
    is_int(ck("xsid=x; sidx=y", "sid"), -1, "no partial name match");
    is_int(ck("sid; a=1", "sid"), -1, "cookie without = is not a match");
    ck("sid; sid=v", "sid");
    is_str(buf, "v", "skips a name without =");
    ck("a=b=c;sid=v=w", "sid");
    is_str(buf, "v=w", "= in value kept");
    is_int(ck("", "sid"), -1, "empty header");
    is_int(ck(";;;", "sid"), -1, "only separators");
    is_int(ck(NULL, "sid"), -1, "NULL header");
    is_int(ck("sid=x", ""), -1, "empty name");
    is_int(ck("sid=x", NULL), -1, "NULL name");
    is_int(hl_cookie_value(small, sizeof(small), "sid=abcdef", "sid"), 3, "cut at outlen-1");
    is_str(small, "abc", "cut cookie");
    is_int(hl_cookie_value(small, 1, "sid=abcdef", "sid"), -1, "outlen 1 gives -1");
    is_int(hl_cookie_value(NULL, 8, "sid=a", "sid"), -1, "NULL out");
}

int main(void)
{
    test_normalize();
    test_from_name();
    test_parent();
    test_query_arg();
    test_cookie();
    return done_testing();
}
