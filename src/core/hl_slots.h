/*
 * hl_slots.h - a fixed-capacity table of counters over a caller-supplied
 * memory block (the shared-memory segment in httpd, a malloc'd block in
 * tests). Records have a fixed size with the key inline and no pointers,
 * only 32-bit indexes, so the block may be mapped anywhere and persisted.
 *
 * Layout: header | hl_slot_class_t classes[HL_CLASSES]
 *         | uint16_t class index[HL_CLASS_INDEX] | uint16_t class tree[HL_CLASSES]
 *         | uint32_t bucket heads[nbuckets] | hl_slot_t slots[capacity]
 *         | hl_log_t logs[nlogs]
 * A hash index (separate chaining through slot indexes) finds a key in O(1).
 *
 * Eviction classes. Every slot belongs to a class: in the limiter, one per
 * quota (origin + scope), so that a client flooding one quota with new
 * keys cannot push another quota's live counters out. Every slot also has
 * a fill level, set by the caller (hl_slots_fill_level: how much of its
 * limit the counter has used; 0 for one request or none, HL_SLOT_FULL at
 * its limit), and a class keeps one LRU list per level. When a new key
 * finds no free slot, hl_slots_get
 *   1. frees every expired slot among the HL_EVICT_SCAN oldest of each list
 *      of the requester's class, then of one more class taken in turn (a
 *      sweep that drains quotas nobody uses any more), then of the victim
 *      class below;
 *   2. if none was expired, evicts the least filled, least recently used
 *      slot of the victim class: the class holding the most slots (ties:
 *      the requester's own); but the requester's own least filled slot
 *      instead when it is less filled than the victim class's.
 * So the flooder pays: a class is only ever robbed by another class while
 * it is the largest, a class holding fewer than capacity / (classes in
 * use) slots never loses a live counter to another class, and a flood of
 * new one-request keys never evicts a counter that has been used more.
 * The HL_SLOTS_RECENT slots most recently returned by hl_slots_get are
 * never freed nor evicted by it (the windows of one decision never take
 * each other's slot), unless nothing else is left.
 *
 * Classes are found by a 64-bit class hash given by the caller (0: the
 * shared class 0). HL_CLASSES - 1 classes get their own record, first come
 * first served, kept until hl_slots_clear; further classes share class 0.
 *
 * NOT thread-safe: the caller holds the global mutex around every call.
 */
#ifndef HL_SLOTS_H
#define HL_SLOTS_H

#include <stddef.h>
#include <stdint.h>
#include "hl_bucket.h"
#include "hl_hash.h"    /* hl_slot_t.hash is hl_hash64_words of the key */
#include "hl_log.h"     /* the log pool of algo=log */

#define HL_KEY_MAX       70          /* bytes of key stored inline */
#define HL_SLOTS_MAGIC   0x484c5354u /* "HLST" */
#define HL_SLOTS_VERSION 5u          /* 2: eviction classes; 3: fill levels;
                                        4: log pool; 5: hl_hash64_words */
#define HL_EVICT_SCAN    8           /* list tail entries checked for expiry */
#define HL_CLASSES       1024        /* class records, class 0 shared;
                                        a power of two */
#define HL_CLASS_INDEX   2048        /* open-addressing index of the classes */
#define HL_SLOTS_RECENT  8           /* slots protected from hl_slots_get */

#define HL_SLOT_LEVELS   8           /* fill levels: LRU lists per class */
#define HL_SLOT_FULL     (HL_SLOT_LEVELS - 1)  /* the level of a counter
                                                   at its limit */

typedef struct {
    uint64_t    hash;        /* seeded hash of the key */
    uint32_t    chain;       /* next slot in the bucket: index + 1, 0 = end */
    uint32_t    lru_prev;    /* index + 1, 0 = none (towards most recent) */
    uint32_t    lru_next;    /* index + 1, 0 = none (towards least recent) */
    uint8_t     tag;         /* caller's policy tag (algo); 0 = slot is free */
    uint8_t     level;       /* fill level 0..HL_SLOT_FULL: which list of
                                its class */
    uint16_t    cls;         /* class record index */
    int64_t     expires_ms;  /* from hl_bucket_expires_ms; reuse after it */
    hl_bucket_t bucket;
    uint16_t    key_len;
    char        key[HL_KEY_MAX];  /* not NUL-terminated */
} hl_slot_t;

/* One eviction class: its slot count and one LRU list per fill level. */
typedef struct {
    uint64_t hash;           /* class hash; 0 for class 0 and unused records */
    uint32_t count;          /* slots in all its lists */
    uint32_t head[HL_SLOT_LEVELS];  /* index + 1, most recently used */
    uint32_t tail[HL_SLOT_LEVELS];  /* index + 1, least recently used */
    uint32_t logs;           /* log records its slots own (derived: rebuilt
                                by hl_slots_attach) */
} hl_slot_class_t;

typedef struct {
    uint32_t magic;
    uint32_t version;
    uint32_t capacity;    /* number of slots */
    uint32_t nbuckets;    /* power of two */
    uint64_t seed;        /* hash seed chosen at init */
    uint32_t used;        /* slots in use */
    uint32_t free_head;   /* index + 1 of first free slot (linked by chain) */
    uint32_t nclasses;    /* class records in use, 1..HL_CLASSES */
    uint32_t sweep;       /* next class the sweep looks at, < nclasses */
    uint32_t recent[HL_SLOTS_RECENT];  /* index + 1 of slots just returned */
    uint32_t recent_pos;  /* next entry of recent to overwrite */
    uint32_t nlogs;       /* log records (hl_slots_nlogs(capacity)) */
    uint32_t log_free;    /* index + 1 of the first free log record */
    uint32_t log_hand;    /* next log record looked at when none is free */
    uint64_t evictions;   /* live slots reused */
    uint64_t reclaims;    /* expired slots freed for a new key */
    uint64_t inserts;
} hl_slots_header_t;

typedef struct {
    hl_slots_header_t *hdr;
    hl_slot_class_t   *classes;
    uint16_t          *class_index;
    uint16_t          *class_tree;
    uint32_t          *buckets;
    hl_slot_t         *slots;
    hl_log_t          *logs;
    uint32_t           class_hint;  /* the record class_intern found last
                                       in this process: a guess, checked */
} hl_slots_t;

/* Returns the slot of link idx (1..capacity): no check. */
static inline hl_slot_t *hl_slots_at(const hl_slots_t *t, uint32_t idx)
{
    return &t->slots[idx - 1];
}

/* Returns the bucket number of a hash. */
static inline uint32_t hl_slots_bucket(const hl_slots_t *t, uint64_t hash)
{
    return (uint32_t)(hash & (t->hdr->nbuckets - 1));
}

/* Returns the bucket heads of a table of capacity slots: the largest
 * power of two <= capacity (1 when capacity is 0). Never fails. */
uint32_t hl_slots_nbuckets(uint32_t capacity);

/* Returns the record of class hash cls, or 0 when cls is 0 or has no
 * record (the shared class 0). Reads only; never fails. */
uint32_t hl_slots_class_record(const hl_slots_t *t, uint64_t cls);

/*
 * The log pool (algo=log, issue 20). A slot tagged HL_SLOT_TAG_LOG keeps
 * its sliding log in a record of the pool, named by bucket.prev_count
 * (record index + 1; 0: none yet), the record naming its slot back in
 * owner. Freeing, evicting or re-tagging the slot frees its record. There
 * are hl_slots_nlogs(capacity) records: an eighth of the slots, plus
 * HL_SLOTS_RECENT + 1 so that one decision's windows always get theirs.
 * When none is free, hl_slots_log frees one as the slot table evicts
 * (issue 25): first the slot of an expired log among 16 records from a
 * rotating hand (counted in reclaims); else (counted in evictions) the
 * least filled, least recently used slot owning a log, not a recent one,
 * of the class owning the most records (ties: the requester's own), or
 * the requester's own least filled when it is less filled than that. So a
 * flood of new keys on one quota never frees the log of another quota
 * while that one is not the largest, nor a log at its limit while a less
 * filled one of the class is left. Each class counts its records (logs).
 * Cost: finding the largest class reads every class record in use (one
 * per quota and host, at most HL_CLASSES), only when the pool is full.
 */
#define HL_SLOT_TAG_LOG 4   /* the limiter's tag of algo=log (algo + 1) */

/* Returns the log records of a table of capacity slots. */
uint32_t hl_slots_nlogs(uint32_t capacity);

/* For hl_slots_logs.c, the log pool (hl_slots_log). Returns 1 if idx is
 * one of the HL_SLOTS_RECENT slots last returned by hl_slots_get, else 0. */
int hl_slots_is_recent(const hl_slots_t *t, uint32_t idx);

/* For hl_slots_logs.c. Returns 1 if slot s owns a log record, else 0. */
int hl_slots_owns_log(const hl_slots_t *t, const hl_slot_t *s);

/* For hl_slots_logs.c. Frees the used slot idx: out of its chain, list
 * and the recent slots, its log record freed, zeroed, on the free list.
 * Never fails. */
void hl_slots_free_slot(hl_slots_t *t, uint32_t idx);

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
 * For a compact copy of the table (the persisted counters file): zeroes
 * every free slot and free log record whole, their free-list links
 * included, so that only records in use hold nonzero bytes. The free
 * lists are then empty: t must not be used until hl_slots_relink_free.
 * Never fails.
 */
void hl_slots_zero_free(hl_slots_t *t);

/*
 * Rebuilds the free lists of t from the records themselves (a slot of tag
 * 0 and a log record of owner 0 are free), in ascending order, as
 * hl_slots_clear links them: the inverse of hl_slots_zero_free. Never
 * fails; the table is then checked by hl_slots_attach as usual.
 */
void hl_slots_relink_free(hl_slots_t *t);

/*
 * Finds the slot of key (len bytes, len <= HL_KEY_MAX). Returns NULL when
 * absent. Does not touch the LRU order.
 */
hl_slot_t *hl_slots_find(hl_slots_t *t, const char *key, size_t len);

/* hl_slots_find with the key's hash already computed (hl_slots_hash):
 * nothing is hashed, for callers under a lock. */
hl_slot_t *hl_slots_find_hashed(hl_slots_t *t, const char *key, size_t len,
                                uint64_t hash);

/* Returns the hash hl_slots_get uses for key in t (t's seed). Reads only
 * the seed, which never changes once attached: callable without the lock.
 * Inline: every new key is hashed once. */
static inline uint64_t hl_slots_hash(const hl_slots_t *t, const char *key,
                                     size_t len)
{
    return hl_hash64_words(key, len, t->hdr->seed);
}

/* hl_slots_get with the key's hl_slots_hash given, so that nothing is hashed
 * under the caller's lock. Same results and failures as hl_slots_get. */
hl_slot_t *hl_slots_get_hashed(hl_slots_t *t, const char *key, size_t len,
                               uint64_t hash, uint8_t tag, uint64_t cls,
                               int64_t now_ms, int *created);

/* hl_slots_get_hashed, looking first at the slot *hint names (index + 1,
 * from an earlier call for the same key; 0 or a slot that holds another
 * key, tag or class now: looked up as usual) and setting *hint to the
 * slot returned. The same results and failures. */
hl_slot_t *hl_slots_get_hinted(hl_slots_t *t, const char *key, size_t len,
                               uint64_t hash, uint8_t tag, uint64_t cls,
                               int64_t now_ms, uint32_t *hint);

/*
 * Returns the slot of key, creating it (zeroed bucket, tag as given, level
 * 0) when absent in the class of class hash cls (0: the shared class),
 * by taking a free slot, else freeing expired ones, else evicting (see the
 * top of this file; counted in evictions). Marks the slot most recently
 * used in its list. Never NULL when len <= HL_KEY_MAX; *created is set to
 * 1 for a new slot. If an existing slot has another tag, its bucket is
 * reset, its tag updated and its level set to 0; if it is in another
 * class, it moves to this one.
 */
hl_slot_t *hl_slots_get(hl_slots_t *t, const char *key, size_t len,
                        uint8_t tag, uint64_t cls, int64_t now_ms,
                        int *created);

/*
 * Returns the fill level of a counter that has used `used` of its limit
 * `limit`: 0 when used <= 1 (a key seen once, or not at all, in its
 * window), HL_SLOT_FULL when used >= limit, else 1 + used * (HL_SLOT_FULL
 * - 1) / limit, so 1 .. HL_SLOT_FULL - 1, growing with used / limit.
 * A limit of 0 reads as 1. Pure; never fails.
 */
uint8_t hl_slots_fill_level(uint32_t used, uint32_t limit);

/*
 * Sets the fill level of slot s (from hl_slots_get on t) to level
 * (HL_SLOT_FULL when larger), moving it to the head of that list of its
 * class when it changes. Less filled slots are evicted first within their
 * class. Never fails.
 */
void hl_slots_set_level(hl_slots_t *t, hl_slot_t *s, uint8_t level);

/* Frees the slot of key. Returns 1 if it existed, 0 otherwise. */
int hl_slots_remove(hl_slots_t *t, const char *key, size_t len);

/*
 * Calls fn for the used slots among slots from .. from + max - 1 (in array
 * order); stops early when fn returns nonzero. Returns the index to go on
 * from, or 0 when the end of the table was reached (or fn stopped). For a
 * scan in bounded chunks, letting go of the caller's lock between them:
 * a slot may then be seen twice or not at all, never torn.
 */
uint32_t hl_slots_scan(hl_slots_t *t, uint32_t from, uint32_t max,
                       int (*fn)(const hl_slot_t *s, void *baton), void *baton);


#endif
