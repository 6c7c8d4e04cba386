/*
 * hl_hash.c - the core's 64-bit hash (see hl_hash.h).
 */
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
