/*
 * fuzz_cidr.c - libFuzzer target for hl_cidr.c. The input is copied into a
 * NUL-terminated buffer of its exact size (the functions take C strings);
 * the checks below abort on a broken invariant.
 *
 * Layout: byte 0 picks the IPv6 key prefix; the rest is split at the first
 * '|' into a block and an address (without '|', both are the whole text).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hl_cidr.h"

#define CHECK(cond) do { \
    if (!(cond)) { \
        fprintf(stderr, "fuzz_cidr: check failed at line %d: %s\n", \
                __LINE__, #cond); \
        abort(); \
    } \
} while (0)

/* Aborts unless c is a well-formed block with its host bits clear. */
static void check_block(const hl_cidr_t *c)
{
    int max = c->family == 4 ? 32 : 128, i;
    hl_cidr_t self = *c;

    CHECK(c->family == 4 || c->family == 6);
    CHECK(c->bits <= max);
    for (i = c->bits; i < max; ++i)
        CHECK((c->addr[i / 8] & (0x80 >> (i % 8))) == 0);
    if (c->family == 4)
        for (i = 4; i < 16; ++i)
            CHECK(c->addr[i] == 0);
    self.bits = (uint8_t)max;           /* the network address, as a host */
    CHECK(hl_cidr_match(c, &self) == 1);
}

/* Checks an address parse result (rc from hl_ip_parse). */
static void check_ip(int rc, const hl_cidr_t *ip)
{
    hl_cidr_t again;

    CHECK(rc == 0 || rc == -1);
    if (rc != 0) {
        CHECK(ip->family == 0);
        return;
    }
    CHECK(ip->bits == (ip->family == 4 ? 32 : 128));
    check_block(ip);
    CHECK(hl_cidr_match(ip, ip) == 1);
    again = *ip;
    again.family = ip->family == 4 ? 6 : 4;
    CHECK(hl_cidr_match(ip, &again) == 0);
}

/* Checks the client key of text: its size, and for an address, that the
 * key reads back as a block holding it (IPv4: the address itself). */
static void check_key(const char *text, int prefix)
{
    char out[HL_IP_KEY_MAX + 8];
    hl_cidr_t ip, blk;
    size_t n;

    memset(out, 'Z', sizeof(out));
    n = hl_client_key(out, text, prefix);
    CHECK(n < HL_IP_KEY_MAX && strlen(out) == n);
    CHECK(out[HL_IP_KEY_MAX] == 'Z');
    if (hl_ip_parse(text, &ip) != 0) {
        CHECK(strncmp(out, text, n) == 0);
        return;
    }
    CHECK(hl_cidr_parse(out, &blk) == 0);
    CHECK(blk.family == ip.family);
    CHECK(hl_cidr_match(&blk, &ip) == 1);
    if (ip.family == 4) {
        CHECK(blk.bits == 32 && memcmp(blk.addr, ip.addr, 4) == 0);
    } else {
        int want = prefix < 1 ? 1 : prefix > 128 ? 128 : prefix;
        CHECK(blk.bits == want);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text;
    const char *addr;
    char *bar;
    hl_cidr_t c, ip;
    int rc, prefix;

    if (size == 0)
        return 0;
    prefix = (int)(int8_t)data[0] * 2;  /* -256..254: clamping is exercised */
    text = malloc(size);
    if (text == NULL)
        abort();
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';

    check_ip(hl_ip_parse(text, &ip), &ip);
    rc = hl_cidr_parse(text, &c);
    CHECK(rc == 0 || rc == -1);
    if (rc == 0)
        check_block(&c);
    else
        CHECK(c.family == 0);
    check_key(text, prefix);
    check_key(text, 64);
    check_key(text, 128);

    addr = text;
    bar = strchr(text, '|');
    if (bar != NULL) {
        *bar = '\0';
        addr = bar + 1;
        rc = hl_cidr_parse(text, &c);
        if (rc == 0)
            check_block(&c);
        check_ip(hl_ip_parse(addr, &ip), &ip);
        check_key(addr, prefix);
    }
    if (hl_cidr_parse(text, &c) == 0 && hl_ip_parse(addr, &ip) == 0) {
        int m = hl_cidr_match(&c, &ip);
        CHECK(m == 0 || m == 1);
        if (c.family != ip.family)
            CHECK(m == 0);
    }
    free(text);
    return 0;
}
