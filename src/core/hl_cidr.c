/*
 * hl_cidr.c - client addresses (see hl_cidr.h).
 *
 * Addresses are read with inet_pton only: IPv4 as a dotted quad ("1.2.3.4",
 * no leading zeros, no short forms), IPv6 in any RFC 4291 text form without
 * a zone ("%eth0"). An IPv4-mapped IPv6 address is an IPv4 address, so a
 * client on a dual-stack socket has one key and matches IPv4 blocks.
 *
 * A prefix is written in decimal without sign, spaces or leading zeros
 * ("/08" is refused, "/0" is fine), so each block has one spelling.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include "hl_cidr.h"
#include "hl_fmt.h"

#define ADDR_TEXT_MAX 64    /* longer text is not an address */

static const uint8_t v4_mapped_prefix[12] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
};

/*
 * Returns the length of text when it is an IPv4 dotted quad exactly as
 * inet_pton(AF_INET) takes it (four decimal parts of 0..255, no leading
 * zero, nothing after), with its bytes in a[0..3]; 0 for anything else.
 * The common client address, read without inet_pton.
 */
static size_t dotted_quad(const char *text, uint8_t a[4])
{
    const unsigned char *p = (const unsigned char *)text;
    int part;

    /* A part is one, two or three digits, read without a loop: a client
     * address is parsed on every request of a new client. Each byte is
     * read only after the one before it was a digit or a dot, so never
     * past the NUL. */
    for (part = 0; part < 4; ++part) {
        unsigned d0 = (unsigned)p[0] - '0', d1, d2, v;

        if (d0 > 9)
            return 0;
        d1 = (unsigned)p[1] - '0';
        if (d1 > 9) {
            v = d0;
            p += 1;
        }
        else if (d0 == 0)
            return 0;                   /* a leading zero */
        else {
            d2 = (unsigned)p[2] - '0';
            if (d2 > 9) {
                v = d0 * 10 + d1;
                p += 2;
            }
            else {
                v = d0 * 100 + d1 * 10 + d2;
                if (v > 255 || (unsigned)p[3] - '0' <= 9)
                    return 0;
                p += 3;
            }
        }
        a[part] = (uint8_t)v;
        if (part < 3 && *p++ != '.')
            return 0;
    }
    return *p == '\0' ? (size_t)(p - (const unsigned char *)text) : 0;
}

/* Returns 0 with *ip set to the address in text (a /32 or /128, mapped
 * IPv6 turned into IPv4), or -1. text is NUL-terminated. */
static int parse_addr(const char *text, hl_cidr_t *ip)
{
    struct in_addr a4;
    struct in6_addr a6;

    memset(ip, 0, sizeof(*ip));
    if (dotted_quad(text, ip->addr) > 0) {
        ip->family = 4;
        ip->bits = 32;
        return 0;
    }
    memset(ip, 0, sizeof(*ip));
    if (inet_pton(AF_INET, text, &a4) == 1) {
        ip->family = 4;
        ip->bits = 32;
        memcpy(ip->addr, &a4, 4);
        return 0;
    }
    if (inet_pton(AF_INET6, text, &a6) == 1) {
        if (memcmp(a6.s6_addr, v4_mapped_prefix, 12) == 0) {
            ip->family = 4;
            ip->bits = 32;
            memcpy(ip->addr, a6.s6_addr + 12, 4);
        } else {
            ip->family = 6;
            ip->bits = 128;
            memcpy(ip->addr, a6.s6_addr, 16);
        }
        return 0;
    }
    return -1;
}

/* Returns the prefix length in s ("0".."999": digits only, no leading
 * zero, NUL after), or -1. The caller checks the range. */
static int parse_prefix(const char *s)
{
    int v = 0, i;

    if (s[0] == '0')
        return s[1] == '\0' ? 0 : -1;
    for (i = 0; i < 3 && s[i] >= '0' && s[i] <= '9'; ++i)
        v = v * 10 + (s[i] - '0');
    if (i == 0 || s[i] != '\0')
        return -1;
    return v;
}

/* Clears the bits of addr (nbytes) after the first `bits`. */
static void mask_addr(uint8_t *addr, int nbytes, int bits)
{
    int i;

    for (i = 0; i < nbytes; ++i) {
        if (bits >= 8) {
            bits -= 8;
        } else {
            addr[i] &= (uint8_t)(0xff << (8 - bits));
            bits = 0;
        }
    }
}

/* Returns -1 (and *ip family 0) for NULL or a non-address; text up to NUL. */
int hl_ip_parse(const char *text, hl_cidr_t *ip)
{
    if (ip == NULL)
        return -1;
    memset(ip, 0, sizeof(*ip));
    if (text == NULL || strnlen(text, ADDR_TEXT_MAX) >= ADDR_TEXT_MAX)
        return -1;
    return parse_addr(text, ip);
}

/*
 * Returns -1 (and *out family 0) as hl_cidr.h says, and also for an
 * IPv4-mapped block shorter than /96, which would be neither family.
 * "::ffff:10.0.0.0/104" is the IPv4 block 10.0.0.0/8.
 */
int hl_cidr_parse(const char *text, hl_cidr_t *out)
{
    char addr[ADDR_TEXT_MAX];
    const char *slash;
    size_t alen;
    int bits;

    if (out == NULL)
        return -1;
    memset(out, 0, sizeof(*out));
    if (text == NULL)
        return -1;
    slash = strchr(text, '/');
    if (slash == NULL)
        return hl_ip_parse(text, out);
    alen = (size_t)(slash - text);
    if (alen >= sizeof(addr))
        return -1;
    memcpy(addr, text, alen);
    addr[alen] = '\0';
    bits = parse_prefix(slash + 1);
    if (bits < 0 || parse_addr(addr, out) != 0)
        goto bad;
    if (out->family == 4 && strchr(addr, ':') != NULL) {
        if (bits < 96 || bits > 128)
            goto bad;
        bits -= 96;
    }
    if (bits > (out->family == 4 ? 32 : 128))
        goto bad;
    out->bits = (uint8_t)bits;
    mask_addr(out->addr, out->family == 4 ? 4 : 16, bits);
    return 0;
bad:
    memset(out, 0, sizeof(*out));
    return -1;
}

/* Returns 0 for NULL, a family mismatch or a malformed block. */
int hl_cidr_match(const hl_cidr_t *c, const hl_cidr_t *ip)
{
    int full, rest;

    if (c == NULL || ip == NULL || c->family != ip->family
        || (c->family != 4 && c->family != 6)
        || c->bits > (c->family == 4 ? 32 : 128))
        return 0;
    full = c->bits / 8;
    rest = c->bits % 8;
    if (memcmp(c->addr, ip->addr, (size_t)full) != 0)
        return 0;
    if (rest == 0)
        return 1;
    return ((c->addr[full] ^ ip->addr[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

/* Copies at most HL_IP_KEY_MAX - 1 bytes of s into out; returns the length. */
static size_t copy_key(char *out, const char *s)
{
    size_t n = strnlen(s, HL_IP_KEY_MAX - 1);

    memcpy(out, s, n);
    out[n] = '\0';
    return n;
}

/*
 * out must hold HL_IP_KEY_MAX bytes. ip is a parsed address (hl_ip_parse);
 * v6_prefix is clamped to 1..128. IPv4 is formatted by hand (inet_ntop
 * costs more than the rest of a decision). Returns the length; 0 with ""
 * only if inet_ntop fails, which it cannot for a parsed address.
 */
size_t hl_client_key_of(char *out, const hl_cidr_t *ip, int v6_prefix)
{
    uint8_t addr[16];
    char text[HL_IP_KEY_MAX];   /* >= INET6_ADDRSTRLEN (46) */
    size_t n = 0;
    int i;

    out[0] = '\0';
    if (ip->family == 4) {
        for (i = 0; i < 4; ++i) {
            if (i)
                out[n++] = '.';
            n += hl_fmt_u64(out + n, ip->addr[i]);
        }
        return n;
    }
    if (v6_prefix < 1)
        v6_prefix = 1;
    if (v6_prefix > 128)
        v6_prefix = 128;
    memcpy(addr, ip->addr, sizeof(addr));
    mask_addr(addr, 16, v6_prefix);
    if (inet_ntop(AF_INET6, addr, text, sizeof(text)) == NULL)
        return 0;
    n = strlen(text);
    if (v6_prefix == 128)
        return copy_key(out, text);
    memcpy(out, text, n);
    out[n++] = '/';
    n += hl_fmt_u64(out + n, (uint64_t)v6_prefix);
    return n;
}

size_t hl_client_parse(char *out, const char *ip_text, int v6_prefix,
                       hl_cidr_t *ip)
{
    size_t n;

    memset(ip, 0, sizeof(*ip));
    if (ip_text != NULL && (n = dotted_quad(ip_text, ip->addr)) > 0) {
        /* A dotted quad is written back as it came: the key is the text. */
        ip->family = 4;
        ip->bits = 32;
        memcpy(out, ip_text, n + 1);
        return n;
    }
    if (hl_ip_parse(ip_text, ip) != 0)
        return hl_client_key(out, ip_text, v6_prefix);
    return hl_client_key_of(out, ip, v6_prefix);
}

/*
 * out must hold HL_IP_KEY_MAX bytes. v6_prefix is clamped to 1..128. A NULL
 * ip_text gives "" (0); a NULL out returns 0. Text that is not an address
 * (a unix-socket peer, say) is the key itself, cut to fit.
 */
size_t hl_client_key(char *out, const char *ip_text, int v6_prefix)
{
    hl_cidr_t ip;
    size_t n;

    if (out == NULL)
        return 0;
    out[0] = '\0';
    if (ip_text == NULL)
        return 0;
    if (hl_ip_parse(ip_text, &ip) != 0)
        return copy_key(out, ip_text);
    n = hl_client_key_of(out, &ip, v6_prefix);
    return n ? n : copy_key(out, ip_text);
}
