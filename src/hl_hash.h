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
 * single pass: hl_hash64(data, len, seed) equals
 * hl_hash64_end(hl_hash64_more(hl_hash64_begin(seed), data, len)), and the
 * state after the first k bytes is that of their prefix. Never fail.
 */
uint64_t hl_hash64_begin(uint64_t seed);
uint64_t hl_hash64_more(uint64_t state, const void *data, size_t len);
uint64_t hl_hash64_end(uint64_t state);

/* hl_hash64_more over the one byte c, inline for a caller's own loop. */
#define HL_FNV_PRIME 0x100000001b3ULL
static inline uint64_t hl_hash64_byte(uint64_t state, unsigned char c)
{
    return (state ^ c) * HL_FNV_PRIME;
}

#endif
