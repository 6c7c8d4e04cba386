/*
 * test_cidr.c - hl_cidr: addresses, blocks, matching and client keys.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include "hl_cidr.h"
#include "hl_tap.h"

/* Returns 1 if text parses as a block. */
static int cidr_ok(const char *text)
{
    hl_cidr_t c;
    return hl_cidr_parse(text, &c) == 0;
}

/* Returns 1 if address a lies in block b (both must parse), else 0. */
static int in_block(const char *a, const char *b)
{
    hl_cidr_t ip, c;

    if (hl_ip_parse(a, &ip) != 0 || hl_cidr_parse(b, &c) != 0)
        return -1;
    return hl_cidr_match(&c, &ip);
}

static const char *key(const char *ip, int prefix)
{
    static char out[HL_IP_KEY_MAX];
    size_t n = hl_client_key(out, ip, prefix);
    if (n != strlen(out))
        return "(length mismatch)";
    return out;
}

static void test_ip_parse(void)
{
    hl_cidr_t ip;
    static const unsigned char v4[4] = { 192, 0, 2, 1 };
    static const unsigned char v6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0,
                                          0, 0, 0, 0, 0, 0, 0, 1 };

    is_int(hl_ip_parse("192.0.2.1", &ip), 0, "IPv4 parses");
    is_int(ip.family, 4, "IPv4 family");
    is_int(ip.bits, 32, "IPv4 is a /32");
    ok(memcmp(ip.addr, v4, 4) == 0, "IPv4 bytes");
    is_int(hl_ip_parse("2001:db8::1", &ip), 0, "IPv6 parses");
    is_int(ip.family, 6, "IPv6 family");
    is_int(ip.bits, 128, "IPv6 is a /128");
    ok(memcmp(ip.addr, v6, 16) == 0, "IPv6 bytes");
    is_int(hl_ip_parse("::ffff:192.0.2.1", &ip), 0, "mapped parses");
    is_int(ip.family, 4, "mapped is IPv4");
    is_int(ip.bits, 32, "mapped is a /32");
    ok(memcmp(ip.addr, v4, 4) == 0, "mapped bytes");
    is_int(hl_ip_parse("::ffff:c000:201", &ip), 0, "mapped in hex parses");
    is_int(ip.family, 4, "mapped in hex is IPv4");
    is_int(hl_ip_parse("::1", &ip), 0, "::1 parses");
    is_int(ip.family, 6, "::1 is IPv6");

    is_int(hl_ip_parse("", &ip), -1, "empty");
    is_int(ip.family, 0, "family 0 on failure");
    is_int(hl_ip_parse(" 1.2.3.4", &ip), -1, "leading space");
    is_int(hl_ip_parse("1.2.3.4 ", &ip), -1, "trailing space");
    is_int(hl_ip_parse("1.2.3", &ip), -1, "short IPv4");
    is_int(hl_ip_parse("1.2.3.256", &ip), -1, "octet too big");
    is_int(hl_ip_parse("01.2.3.4", &ip), -1, "leading zero octet");
    is_int(hl_ip_parse("0x7f.0.0.1", &ip), -1, "hex octet");
    is_int(hl_ip_parse("1.2.3.4/32", &ip), -1, "a block is not an address");
    is_int(hl_ip_parse("fe80::1%eth0", &ip), -1, "zone not accepted");
    is_int(hl_ip_parse("2001:db8:::1", &ip), -1, "bad IPv6");
    is_int(hl_ip_parse("localhost", &ip), -1, "name");
    is_int(hl_ip_parse(NULL, &ip), -1, "NULL text");
    is_int(hl_ip_parse("1.2.3.4", NULL), -1, "NULL out");
}

static void test_cidr_parse(void)
{
    hl_cidr_t c;
    static const unsigned char net10[4] = { 10, 0, 0, 0 };

    is_int(hl_cidr_parse("10.1.2.3/8", &c), 0, "IPv4 block");
    is_int(c.family, 4, "IPv4 block family");
    is_int(c.bits, 8, "IPv4 block bits");
    ok(memcmp(c.addr, net10, 4) == 0, "host bits masked");
    is_int(hl_cidr_parse("2001:db8:ffff::1/32", &c), 0, "IPv6 block");
    is_int(c.family, 6, "IPv6 block family");
    is_int(c.bits, 32, "IPv6 block bits");
    ok(c.addr[3] == 0xb8 && c.addr[4] == 0 && c.addr[15] == 0, "IPv6 host bits masked");
    is_int(hl_cidr_parse("192.0.2.7", &c), 0, "bare IPv4");
    is_int(c.bits, 32, "bare IPv4 is /32");
    is_int(hl_cidr_parse("2001:db8::7", &c), 0, "bare IPv6");
    is_int(c.bits, 128, "bare IPv6 is /128");
    is_int(hl_cidr_parse("::ffff:10.9.8.7/104", &c), 0, "mapped block");
    is_int(c.family, 4, "mapped block is IPv4");
    is_int(c.bits, 8, "mapped /104 is /8");
    ok(memcmp(c.addr, net10, 4) == 0, "mapped block masked");

    ok(cidr_ok("0.0.0.0/0"), "/0 IPv4");
    ok(cidr_ok("::/0"), "/0 IPv6");
    ok(cidr_ok("1.2.3.4/32"), "/32");
    ok(cidr_ok("::1/128"), "/128");
    ok(cidr_ok("10.0.0.0/9"), "odd prefix");
    ok(!cidr_ok("1.2.3.4/33"), "/33 refused for IPv4");
    ok(!cidr_ok("::1/129"), "/129 refused");
    ok(!cidr_ok("1.2.3.4/-1"), "/-1 refused");
    ok(!cidr_ok("1.2.3.4/+8"), "/+8 refused");
    ok(!cidr_ok("/"), "lone slash refused");
    ok(!cidr_ok("/8"), "no address refused");
    ok(!cidr_ok("1.2.3.4/"), "empty prefix refused");
    ok(!cidr_ok("1.2.3.4/8x"), "trailing garbage refused");
    ok(!cidr_ok("1.2.3.4/08"), "leading zero in prefix refused");
    ok(!cidr_ok("1.2.3.4/00"), "/00 refused");
    ok(!cidr_ok("1.2.3.4/0008"), "long prefix refused");
    ok(!cidr_ok("1.2.3.4/1000"), "four digits refused");
    ok(!cidr_ok("1.2.3.4/8/8"), "two slashes refused");
    ok(!cidr_ok("1.2.3.4 /8"), "space before slash refused");
    ok(!cidr_ok("1.2.3.4/ 8"), "space after slash refused");
    ok(!cidr_ok("1.2.3.4/8 "), "trailing space refused");
    ok(!cidr_ok(""), "empty refused");
    ok(!cidr_ok(" "), "space refused");
    ok(!cidr_ok("10/8"), "short IPv4 refused");
    ok(!cidr_ok("::ffff:10.0.0.0/95"), "mapped block shorter than /96 refused");
    ok(!cidr_ok("::ffff:10.0.0.0/129"), "mapped /129 refused");
    ok(!cidr_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/8"),
       "long address part refused");
    is_int(hl_cidr_parse("1.2.3.4/33", &c), -1, "refusal returns -1");
    is_int(c.family, 0, "refusal leaves family 0");
    is_int(hl_cidr_parse(NULL, &c), -1, "NULL text");
    is_int(hl_cidr_parse("1.2.3.4", NULL), -1, "NULL out");
}

static void test_match(void)
{
    hl_cidr_t c, ip;

    is_int(in_block("10.200.3.4", "10.0.0.0/8"), 1, "in /8");
    is_int(in_block("11.0.0.1", "10.0.0.0/8"), 0, "outside /8");
    is_int(in_block("10.127.0.1", "10.0.0.0/9"), 1, "in /9");
    is_int(in_block("10.128.0.1", "10.0.0.0/9"), 0, "outside /9");
    is_int(in_block("192.0.2.7", "192.0.2.7"), 1, "bare address matches itself");
    is_int(in_block("192.0.2.8", "192.0.2.7"), 0, "bare address only itself");
    is_int(in_block("203.0.113.1", "0.0.0.0/0"), 1, "/0 matches all IPv4");
    is_int(in_block("2001:db8:1::5", "2001:db8::/32"), 1, "in IPv6 /32");
    is_int(in_block("2001:db9::5", "2001:db8::/32"), 0, "outside IPv6 /32");
    is_int(in_block("2001:db8::1", "::/0"), 1, "::/0 matches all IPv6");
    is_int(in_block("10.0.0.1", "::/0"), 0, "::/0 does not match IPv4");
    is_int(in_block("::ffff:10.0.0.1", "10.0.0.0/8"), 1, "mapped client matches IPv4 block");
    is_int(in_block("10.0.0.1", "::ffff:10.0.0.0/104"), 1, "mapped block matches IPv4 client");
    is_int(in_block("::a00:1", "10.0.0.0/8"), 0, "IPv4-compatible is IPv6");
    is_int(in_block("2001:db8::1", "0.0.0.0/0"), 0, "IPv4 block does not match IPv6");

    ok(!hl_cidr_match(NULL, NULL), "NULL does not match");
    memset(&c, 0, sizeof(c));
    memset(&ip, 0, sizeof(ip));
    ok(!hl_cidr_match(&c, &ip), "family 0 does not match");
    c.family = ip.family = 4;
    c.bits = 40;
    ok(!hl_cidr_match(&c, &ip), "bad bits do not match");
}

static void test_client_key(void)
{
    char out[HL_IP_KEY_MAX];
    char longtext[200];

    is_str(key("203.0.113.7", 64), "203.0.113.7", "IPv4 as is");
    is_str(key("::ffff:203.0.113.7", 64), "203.0.113.7", "mapped prints as IPv4");
    is_str(key("2001:db8:1:2:3:4:5:6", 64), "2001:db8:1:2::/64", "IPv6 masked to /64");
    is_str(key("2001:DB8:1:2::9", 64), "2001:db8:1:2::/64", "IPv6 key is lower case");
    is_str(key("2001:db8:1:2:3:4:5:6", 128), "2001:db8:1:2:3:4:5:6", "/128 bare");
    is_str(key("2001:db8:1:2:3:4:5:6", 48), "2001:db8:1::/48", "/48");
    is_str(key("2001:db8:1:2:3:4:5:6", 56), "2001:db8:1::/56", "/56");
    is_str(key("2001:db8:1:ff:3:4:5:6", 60), "2001:db8:1:f0::/60", "/60 masks inside a group");
    is_str(key("2001:db8::1", 0), "::/1", "prefix 0 clamps to 1");
    is_str(key("a001:db8::1", -5), "8000::/1", "negative prefix clamps to 1");
    is_str(key("2001:db8::1", 500), "2001:db8::1", "prefix 500 clamps to 128");
    is_str(key("::1", 64), "::/64", "loopback /64");
    is_str(key("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 127),
           "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe/127", "longest key fits");
    is_str(key("unix:/run/php.sock", 64), "unix:/run/php.sock", "unparsable copied");
    is_str(key("", 64), "", "empty copied");
    memset(longtext, 'x', sizeof(longtext) - 1);
    longtext[sizeof(longtext) - 1] = '\0';
    is_int(hl_client_key(out, longtext, 64), HL_IP_KEY_MAX - 1, "long text cut");
    is_int(strlen(out), HL_IP_KEY_MAX - 1, "cut text NUL-terminated");
    is_int(hl_client_key(out, NULL, 64), 0, "NULL text");
    is_str(out, "", "NULL text gives empty key");
    is_int(hl_client_key(NULL, "1.2.3.4", 64), 0, "NULL out");
}

/* hl_client_parse agrees with hl_ip_parse and hl_client_key, and IPv4
 * parsing (its own dotted-quad reader first) with inet_pton, on edge
 * cases of the dotted quad and on other kinds of text. */
static void test_client_parse(void)
{
    static const char *const texts[] = {
        "1.2.3.4", "0.0.0.0", "255.255.255.255", "10.0.0.10", "192.0.2.199",
        "01.2.3.4", "1.2.3.04", "00.1.1.1", "1.2.3.0", "256.1.1.1",
        "1.2.3.256", "1.2.3.2555", "1000.1.1.1", "1.2.3", "1.2.3.4.",
        ".1.2.3.4", "1..2.3", "1.2.3.4 ", " 1.2.3.4", "1.2.3.4/8", "a.b.c.d",
        "1.2.3.-4", "+1.2.3.4", "1.2.3.4.5", "", "::ffff:1.2.3.4",
        "2001:db8::1", "::1", "unix:/run/x.sock", "-" };
    size_t i;
    int agree = 0, pton = 0;

    for (i = 0; i < sizeof(texts) / sizeof(texts[0]); ++i) {
        char want[HL_IP_KEY_MAX], got[HL_IP_KEY_MAX];
        hl_cidr_t a, b;
        struct in_addr a4;
        size_t wn, gn;
        int parsed = hl_ip_parse(texts[i], &a) == 0;

        wn = hl_client_key(want, texts[i], 64);
        gn = hl_client_parse(got, texts[i], 64, &b);
        if (wn == gn && strcmp(want, got) == 0 && memcmp(&a, &b, sizeof(a)) == 0
            && (b.family != 0) == parsed)
            agree++;
        else
            printf("# hl_client_parse differs on \"%s\"\n", texts[i]);
        if (strchr(texts[i], ':') == NULL
            && (inet_pton(AF_INET, texts[i], &a4) == 1)
               == (parsed && a.family == 4)
            && (!parsed || memcmp(&a4, a.addr, 4) == 0))
            pton++;
        else if (strchr(texts[i], ':') == NULL)
            printf("# hl_ip_parse and inet_pton differ on \"%s\"\n", texts[i]);
    }
    is_int(agree, (int)i, "hl_client_parse = hl_ip_parse + hl_client_key");
    {
        /* Random texts of digits and dots (and a stray byte), read as
         * inet_pton reads them: the dotted-quad reader takes none that
         * inet_pton refuses and gives the same bytes. */
        static const char alphabet[] = "0123456789..........12525x";
        unsigned seed = 12345, k, bad = 0;

        for (k = 0; k < 200000; ++k) {
            char text[20];
            size_t len, j;
            hl_cidr_t c;
            struct in_addr a4;
            int mine, theirs;

            seed = seed * 1103515245u + 12345u;
            len = 1 + (seed >> 16) % 18;
            for (j = 0; j < len; ++j) {
                seed = seed * 1103515245u + 12345u;
                text[j] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
            }
            text[len] = '\0';
            mine = hl_ip_parse(text, &c) == 0 && c.family == 4;
            theirs = inet_pton(AF_INET, text, &a4) == 1;
            if (mine != theirs || (mine && memcmp(&a4, c.addr, 4) != 0)) {
                if (bad++ < 5)
                    printf("# \"%s\": ours %d, inet_pton %d\n", text, mine, theirs);
            }
        }
        is_int((int)bad, 0, "200,000 random dotted texts: read as inet_pton reads them");
    }
    is_int(pton, (int)i - 4, "IPv4 read as inet_pton reads it");
    {
        char out[HL_IP_KEY_MAX];
        hl_cidr_t ip;
        is_int((int)hl_client_parse(out, NULL, 64, &ip), 0, "NULL: empty key");
        is_int(ip.family, 0, "NULL: not an address");
    }
}

int main(void)
{
    test_ip_parse();
    test_cidr_parse();
    test_match();
    test_client_key();
    test_client_parse();
    return done_testing();
}
