/* test_siphash.c - SipHash-2-4 (hl_siphash.c) against the reference
 * vectors (key 00..0f, message 00..len-1; the paper's Appendix A example
 * is the 15-byte one), and the keyed hash of client-sent key values under
 * a server secret (hl_device_value_key + hl_siphash24, what
 * hl_secret_hash computes): another secret, another hash; the same secret,
 * the same hash. */
#include <string.h>
#include "hl_tap.h"
#include "hl_device.h"
#include "hl_siphash.h"

/* Returns the keyed hash of value under a key derived from secret (32
 * bytes), as the module hashes an account. */
static uint64_t value_hash(const char *secret, const char *value)
{
    unsigned char bytes[HL_DEVICE_VALUE_KEY];
    hl_siphash_key_t k;

    if (hl_device_value_key(bytes, (const unsigned char *)secret, 32) != 0)
        return 0;
    hl_siphash_key(&k, bytes);
    return hl_siphash24(&k, value, strlen(value));
}

int main(void)
{
    /* vectors_sip64 of the reference implementation, read little-endian. */
    static const uint64_t want[] = {
        0x726fdb47dd0e0e31ULL, 0x74f839c593dc67fdULL, 0x0d6c8009d9a94f5aULL,
        0x85676696d7fb7e2dULL, 0xcf2794e0277187b7ULL, 0x18765564cd99a68dULL,
        0xcbc9466e58fee3ceULL, 0xab0200f58b01d137ULL, 0x93f5f5799a932462ULL,
        0x9e0082df0ba9e4b0ULL,
    };
    static const char *s1 = "0123456789abcdef0123456789abcdef";
    static const char *s2 = "0123456789abcdef0123456789abcdeF";
    unsigned char key[16], msg[64], zero[HL_DEVICE_VALUE_KEY] = { 0 };
    unsigned char out[HL_DEVICE_VALUE_KEY];
    hl_siphash_key_t k;
    size_t i;

    for (i = 0; i < sizeof(key); ++i)
        key[i] = (unsigned char)i;
    for (i = 0; i < sizeof(msg); ++i)
        msg[i] = (unsigned char)i;
    hl_siphash_key(&k, key);
    is_int(k.k0 == 0x0706050403020100ULL && k.k1 == 0x0f0e0d0c0b0a0908ULL, 1,
           "key: two little-endian words");
    for (i = 0; i < sizeof(want) / sizeof(want[0]); ++i)
        okf(hl_siphash24(&k, msg, i) == want[i], "vector: %zu bytes", i);
    ok(hl_siphash24(&k, msg, 15) == 0xa129ca6149be45e5ULL,
       "paper, Appendix A: 15 bytes give a129ca6149be45e5");
    ok(hl_siphash24(&k, NULL, 0) == want[0], "NULL data of length 0");

    /* The keyed hash of key values under a server secret. */
    ok(value_hash(s1, "alice") != 0, "value hash: made");
    ok(value_hash(s1, "alice") == value_hash(s1, "alice"),
       "same secret, same value: same hash (servers sharing the file agree)");
    ok(value_hash(s1, "alice") != value_hash(s2, "alice"),
       "another secret: another hash (not precomputable without it)");
    ok(value_hash(s1, "alice") != value_hash(s1, "alicf"),
       "another value: another hash");
    ok(hl_device_value_key(out, (const unsigned char *)s1, 32) == 0
       && memcmp(out, s1, sizeof(out)) != 0,
       "derived key: not the secret's own bytes");
    ok(hl_device_value_key(out, NULL, 0) == -1
       && memcmp(out, zero, sizeof(out)) == 0,
       "derived key: no secret fails, zeroed");
    return done_testing();
}
