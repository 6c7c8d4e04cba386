/*
 * hl_hash.c - the core's 64-bit hash (see hl_hash.h).
 */
#include <string.h>

#include "hl_hash.h"

#define HL_FNV_OFFSET   0xcbf29ce484222325ULL

uint64_t hl_hash64_begin(uint64_t seed)
{
    return HL_FNV_OFFSET ^ seed;
}

uint64_t hl_hash64_end(uint64_t state)
{
    return hl_hash_mix64(state);
}

void hl_hash_hex16(char out[16], uint64_t h)
{
    static const char hex[] = "0123456789abcdef";
    int i;

    for (i = 0; i < 16; i++)
        out[i] = hex[(h >> (60 - 4 * i)) & 0xf];
}

/*
 * FNV-1a 64 over the bytes, with the seed folded into the offset basis,
 * then the splitmix64 finalizer. Not a keyed cryptographic hash: the seed
 * only changes the bucket layout from one table to the next.
 * Changing this function requires bumping HL_SLOTS_VERSION (stored hashes).
 */
uint64_t hl_hash64(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = HL_FNV_OFFSET ^ seed;
    size_t i;

    /* hl_hash64_begin, _more and _end written out: the module is built
     * position-independent, so calls to them would stay calls, and every
     * request hashes its slot keys here. */
    for (i = 0; i < len; i++)
        h = hl_hash64_byte(h, p[i]);
    return hl_hash_mix64(h);
}

/* Returns the 8 bytes at p as a little-endian-agnostic word (memcpy: no
 * alignment needed; compiled to one load). */
static inline uint64_t word_at(const unsigned char *p)
{
    uint64_t w;

    memcpy(&w, p, sizeof(w));
    return w;
}

/* Returns a and b multiplied into 128 bits, folded to 64 by xor: every
 * input bit reaches both halves, unlike a 64-bit product. */
static inline uint64_t fold_mul(uint64_t a, uint64_t b)
{
    __uint128_t p = (__uint128_t)a * b;

    return (uint64_t)p ^ (uint64_t)(p >> 64);
}

#define HL_WORDS_K1 0xa0761d6478bd642fULL
#define HL_WORDS_K2 0xe7037ed1a0b428dbULL

/*
 * Eight bytes a step: each word is xored in and folded through a 128-bit
 * product; the last (len % 8) bytes are read as the 8 bytes that end the
 * text (overlapping the previous word) when len >= 8, byte by byte below;
 * the length is in the seed, so overlapping reads of two lengths differ.
 * Changing this function requires bumping HL_SLOTS_VERSION.
 */
uint64_t hl_hash64_words(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = fold_mul(seed ^ HL_FNV_OFFSET, HL_WORDS_K1 ^ (uint64_t)len);
    size_t i;

    for (i = 0; i + 8 <= len; i += 8)
        h = fold_mul(h ^ word_at(p + i), HL_WORDS_K2);
    if (i < len) {
        uint64_t w = 0;

        if (len >= 8)
            w = word_at(p + len - 8);
        else
            for (; i < len; i++)
                w = w << 8 | p[i];
        h = fold_mul(h ^ w, HL_WORDS_K1);
    }
    return hl_hash_mix64(h);
}
