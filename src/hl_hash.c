/*
 * hl_hash.c - the core's 64-bit hash (see hl_hash.h).
 */
#include "hl_hash.h"

#define HL_FNV_OFFSET   0xcbf29ce484222325ULL

uint64_t hl_hash64_begin(uint64_t seed)
{
    return HL_FNV_OFFSET ^ seed;
}

/* FNV-1a 64: one xor and one multiplication per byte (hl_hash64_byte). */
uint64_t hl_hash64_more(uint64_t state, const void *data, size_t len)
{
    const unsigned char *p = data;
    size_t i;

    for (i = 0; i < len; i++)
        state = hl_hash64_byte(state, p[i]);
    return state;
}

/* Returns h through the splitmix64 finalizer, so that the low bits (the
 * bucket number) depend on every input bit. */
static uint64_t finish(uint64_t h)
{
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h;
}

uint64_t hl_hash64_end(uint64_t state)
{
    return finish(state);
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
    return finish(h);
}

/* Returns the eight bytes at p as a little-endian number (one load on
 * x86-64: the compiler merges the shifts). */
static uint64_t load_le64(const unsigned char *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16
           | (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32
           | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48
           | (uint64_t)p[7] << 56;
}

/* Folds the word w into state h: xor, multiply, and the high half folded
 * down so the next multiplication mixes it into the low bits. */
static uint64_t mix_word(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
    return h ^ (h >> 32);
}

/* Returns the last rest bytes (1..7) before end as a little-endian number;
 * whole is 1 when at least eight bytes precede end. No byte loop: one load
 * (whole) or two overlapping loads, whose shared bytes land in the same
 * place, so or-ing them changes nothing. */
static uint64_t load_tail(const unsigned char *end, size_t rest, int whole)
{
    const unsigned char *p = end - rest;

    if (whole)
        return load_le64(end - 8) >> (64 - 8 * rest);
    if (rest >= 4)
        return ((uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16
                | (uint64_t)p[3] << 24)
               | ((uint64_t)end[-4] | (uint64_t)end[-3] << 8
                  | (uint64_t)end[-2] << 16 | (uint64_t)end[-1] << 24)
                 << (8 * (rest - 4));
    return (uint64_t)p[0] | (uint64_t)p[rest / 2] << (8 * (rest / 2))
           | (uint64_t)end[-1] << (8 * (rest - 1));
}

/*
 * The length goes into the start state, so "a" and "a\0" differ; the last
 * 1..7 bytes make one more word. Changing this function requires bumping
 * HL_SLOTS_VERSION (stored hashes, the image checksum).
 */
uint64_t hl_hash64_words(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = (HL_FNV_OFFSET ^ seed) + (uint64_t)len * 0xbf58476d1ce4e5b9ULL;
    int whole = len >= 8;

    for (; len >= 8; p += 8, len -= 8)
        h = mix_word(h, load_le64(p));
    if (len > 0)
        h = mix_word(h, load_tail(p + len, len, whole));
    return finish(h);
}
