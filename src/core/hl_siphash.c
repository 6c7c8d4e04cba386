/*
 * hl_siphash.c - SipHash-2-4 (see hl_siphash.h), written from the paper's
 * description: 2 compression rounds per 8-byte word, 4 finalisation
 * rounds, the length in the last word's top byte.
 */
#include "hl_siphash.h"

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

#define SIPROUND                                                         \
    do {                                                                 \
        v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);        \
        v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                           \
        v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                           \
        v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);        \
    } while (0)

/* Returns the n (at most 8) bytes at p read little-endian. */
static uint64_t load_le(const unsigned char *p, size_t n)
{
    uint64_t v = 0;

    while (n-- > 0)
        v = v << 8 | p[n];
    return v;
}

void hl_siphash_key(hl_siphash_key_t *k, const unsigned char *bytes)
{
    k->k0 = load_le(bytes, 8);
    k->k1 = load_le(bytes + 8, 8);
}

uint64_t hl_siphash24(const hl_siphash_key_t *k, const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t v0 = k->k0 ^ 0x736f6d6570736575ULL;
    uint64_t v1 = k->k1 ^ 0x646f72616e646f6dULL;
    uint64_t v2 = k->k0 ^ 0x6c7967656e657261ULL;
    uint64_t v3 = k->k1 ^ 0x7465646279746573ULL;
    uint64_t m;
    size_t i, full = len & ~(size_t)7;

    for (i = 0; i < full; i += 8) {
        m = load_le(p + i, 8);
        v3 ^= m;
        SIPROUND;
        SIPROUND;
        v0 ^= m;
    }
    m = (uint64_t)(len & 0xff) << 56 | (len > full ? load_le(p + full, len - full) : 0);
    v3 ^= m;
    SIPROUND;
    SIPROUND;
    v0 ^= m;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}
