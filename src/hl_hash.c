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
