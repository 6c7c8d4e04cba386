/*
 * hl_hash.h - the one 64-bit hash of the core, and the named seeds its
 * callers use. Pure: no allocation, no APR, no httpd.
 *
 * Hashes made with these seeds are stored (slot keys and class records in
 * the persisted slot table, route statistics, table images), so neither
 * hl_hash64 nor a seed may change without bumping the version of what
 * stores them (HL_SLOTS_VERSION for the slot table, whose keys are
 * hashed by hl_hash64_words). t/unit/test_hash.c pins known values.
 */
#ifndef HL_HASH_H
#define HL_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Client keys: the suffix hl_key_compact appends to a long key (persisted
 * with the slot table), and the hash of the header/cookie values that make
 * a key (mod_hotlimit_access.c): keys stay stable across restarts. */
#define HL_SEED_KEYS  0x686f746c696d6974ULL /* "hotlimit" */
/* Route names in the statistics table (hl_stats.c): entries must survive
 * restarts. */
#define HL_SEED_STATS 0x5354415453ULL       /* "STATS" */
/* Route names in the table image and the table digest (hl_table.c), and
 * the scopes and virtual hosts eviction classes and statistics are made of
 * (hl_table_route_hash): fixed, so images are reproducible; class hashes
 * are persisted with the slot table. */
#define HL_SEED_TABLE 0x686c7461626c6531ULL /* "hltable1" */

/*
 * Returns the seeded 64-bit hash of len bytes at data (data may be NULL
 * when len is 0): FNV-1a 64 with the seed folded into the offset basis,
 * then the splitmix64 finalizer, so the low bits depend on every input
 * bit. Not a keyed cryptographic hash. Never fails; reads only.
 */
uint64_t hl_hash64(const void *data, size_t len, uint64_t seed);

/*
 * Returns another seeded 64-bit hash of len bytes at data (data may be
 * NULL when len is 0), eight bytes a step: about half hl_hash64's
 * instructions on a 40-byte key. The slot table's (hl_slots.c): its keys
 * are hashed on every request of a new client. Not in steps (no prefix
 * states), not cryptographic; collisions depend on the seed. Never
 * fails; reads only.
 */
uint64_t hl_hash64_words(const void *data, size_t len, uint64_t seed);

/*
 * hl_hash64 in steps, for the hashes of several prefixes of one text in a
 * single pass: hl_hash64(data, len, seed) equals hl_hash64_end of the
 * state hl_hash64_begin(seed) fed each byte by hl_hash64_byte, and the
 * state after the first k bytes is that of their prefix. Never fail.
 */
uint64_t hl_hash64_begin(uint64_t seed);
uint64_t hl_hash64_end(uint64_t state);

/*
 * Returns h through the splitmix64 finalizer (xor-shift 30, 27, 31 and two
 * multiplications), so that every output bit depends on every input bit:
 * the end of hl_hash64, and the mix of hl_limiter_class_of. Never fails.
 */
static inline uint64_t hl_hash_mix64(uint64_t h)
{
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h;
}

/* Writes the 16 lowercase hex digits of h, most significant first, into
 * out (16 bytes, no NUL). Never fails. */
void hl_hash_hex16(char out[16], uint64_t h);

/* Feeds the one byte c to a hash state (hl_hash64_begin), inline for a
 * caller's own loop. */
#define HL_FNV_PRIME 0x100000001b3ULL
static inline uint64_t hl_hash64_byte(uint64_t state, unsigned char c)
{
    return (state ^ c) * HL_FNV_PRIME;
}

#endif
