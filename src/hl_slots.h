/*
 * hl_slots.h - a fixed-capacity table of counters over a caller-supplied
 * memory block (the shared-memory segment in httpd, a malloc'd block in
 * tests). Records have a fixed size with the key inline and no pointers,
 * only 32-bit indexes, so the block may be mapped anywhere and persisted.
 *
 * Layout: header | uint32_t bucket heads[nbuckets] | hl_slot_t slots[capacity]
 * A hash index (separate chaining through slot indexes) finds a key in O(1);
 * a doubly linked LRU list makes eviction O(1). When the table is full the
 * oldest few slots are searched for an expired one, then the least recently
 * used is reused: inserting never fails.
 *
 * NOT thread-safe: the caller holds the global mutex around every call.
 */
#ifndef HL_SLOTS_H
#define HL_SLOTS_H

#include <stddef.h>
#include <stdint.h>
#include "hl_bucket.h"

#define HL_KEY_MAX       70          /* bytes of key stored inline */
#define HL_SLOTS_MAGIC   0x484c5354u /* "HLST" */
#define HL_SLOTS_VERSION 1u
#define HL_EVICT_SCAN    8           /* LRU tail entries checked for expiry */

typedef struct {
    uint64_t    hash;        /* seeded hash of the key */
    uint32_t    chain;       /* next slot in the bucket: index + 1, 0 = end */
    uint32_t    lru_prev;    /* index + 1, 0 = none (towards most recent) */
    uint32_t    lru_next;    /* index + 1, 0 = none (towards least recent) */
    uint32_t    tag;         /* caller's policy tag (algo); 0 = slot is free */
    int64_t     expires_ms;  /* from hl_bucket_expires_ms; reuse after it */
    hl_bucket_t bucket;
    uint16_t    key_len;
    char        key[HL_KEY_MAX];  /* not NUL-terminated */
} hl_slot_t;

typedef struct {
    uint32_t magic;
    uint32_t version;
    uint32_t capacity;    /* number of slots */
    uint32_t nbuckets;    /* power of two */
    uint64_t seed;        /* hash seed chosen at init */
    uint32_t used;        /* slots in use */
    uint32_t free_head;   /* index + 1 of first free slot (linked by chain) */
    uint32_t lru_head;    /* index + 1, most recently used */
    uint32_t lru_tail;    /* index + 1, least recently used */
    uint64_t evictions;   /* slots reused while still in use */
    uint64_t inserts;
} hl_slots_header_t;

typedef struct {
    hl_slots_header_t *hdr;
    uint32_t          *buckets;
    hl_slot_t         *slots;
} hl_slots_t;

/* Returns the bytes a table of `capacity` slots needs (capacity >= 1). */
size_t hl_slots_size(uint32_t capacity);

/*
 * Attaches *t to mem (size bytes, from hl_slots_size(capacity)). If mem holds
 * a valid table of the same capacity and version (persisted or inherited), it
 * is kept and 0 is returned; otherwise mem is initialised empty with `seed`
 * and 1 is returned. Returns -1 if size is too small. Never allocates.
 */
int hl_slots_attach(hl_slots_t *t, void *mem, size_t size, uint32_t capacity,
                    uint64_t seed);

/*
 * Points *t at a table already initialised in mem (by hl_slots_attach in
 * this or another process) without reading or checking it: for a process
 * that maps memory another one validated, while others may be using it.
 * Never fails; the caller owns mem.
 */
void hl_slots_map(hl_slots_t *t, void *mem, uint32_t capacity);

/* Empties the table (all counters dropped), keeping capacity and seed. */
void hl_slots_clear(hl_slots_t *t);

/*
 * Finds the slot of key (len bytes, len <= HL_KEY_MAX). Returns NULL when
 * absent. Does not touch the LRU order.
 */
hl_slot_t *hl_slots_find(hl_slots_t *t, const char *key, size_t len);

/*
 * Returns the slot of key, creating it (zeroed bucket, tag as given) when
 * absent, by taking a free slot, else an expired slot among the
 * HL_EVICT_SCAN least recently used, else the least recently used one
 * (counted in evictions). Marks the slot most recently used. Never NULL when
 * len <= HL_KEY_MAX; *created is set to 1 for a new slot.
 * If an existing slot has another tag, its bucket is reset and tag updated.
 */
hl_slot_t *hl_slots_get(hl_slots_t *t, const char *key, size_t len,
                        uint32_t tag, int64_t now_ms, int *created);

/* Frees the slot of key. Returns 1 if it existed, 0 otherwise. */
int hl_slots_remove(hl_slots_t *t, const char *key, size_t len);

/*
 * Calls fn for every used slot, most recently used first; stops early when
 * fn returns nonzero. Returns the number of slots visited.
 */
uint32_t hl_slots_foreach(hl_slots_t *t,
                          int (*fn)(const hl_slot_t *s, void *baton),
                          void *baton);

/*
 * Makes a key fit in HL_KEY_MAX bytes: a short key is copied as is; a longer
 * one keeps its first bytes and ends in '~' and 16 hex digits of a hash of
 * the whole key. Writes into out (HL_KEY_MAX bytes) and returns the length.
 */
size_t hl_key_compact(char out[HL_KEY_MAX], const char *key, size_t len);

/* Seeded 64-bit hash used by the index (exposed for tests). */
uint64_t hl_hash64(const void *data, size_t len, uint64_t seed);

#endif
