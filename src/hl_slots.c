/*
 * hl_slots.c - the slot table: a hash index and an LRU list over a
 * caller-supplied memory block (layout in hl_slots.h). No allocation, no
 * floats, no locks: the caller holds the global mutex around every call.
 *
 * Conventions used throughout:
 *  - a link stored in the block is a slot number + 1; 0 means "none";
 *  - a free slot has tag 0 and is linked through `chain` from free_head;
 *  - a used slot has tag >= 1 and sits exactly once in the chain of the
 *    bucket of its hash, and exactly once in the LRU list.
 *
 * The block may come back from disk (mod_slotmem_shm persistence) or be
 * left half-updated by a process killed inside a call, so:
 *  - hl_slots_attach checks the whole structure and re-initialises a block
 *    that is not consistent;
 *  - every loop that follows links stops after `capacity` steps, so a bad
 *    block can never hang the process that holds the mutex.
 */
#include <string.h>
#include "hl_slots.h"

/*
 * A slot must fit in 120 bytes so that a slot plus its bucket head costs at
 * most 124 bytes. Compilation fails here (negative array size) if it grows.
 */
typedef char hl_slot_size_check[(sizeof(hl_slot_t) <= 120) ? 1 : -1];

#define HL_FNV_OFFSET   0xcbf29ce484222325ULL
#define HL_FNV_PRIME    0x100000001b3ULL
/* Seed of the hash that hl_key_compact appends. Keys are persisted with
 * the table: never change it without bumping HL_SLOTS_VERSION. */
#define HL_COMPACT_SEED 0x686f746c696d6974ULL /* "hotlimit" */

/* Returns n rounded up to a multiple of 8. */
static size_t align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* Returns the largest power of two <= capacity (1 when capacity is 0). */
static uint32_t nbuckets_for(uint32_t capacity)
{
    uint32_t n = 1;

    while (n <= capacity / 2)
        n *= 2;
    return n;
}

/* Returns the offset of the bucket heads in the block. */
static size_t buckets_offset(void)
{
    return align8(sizeof(hl_slots_header_t));
}

/* Returns the offset of the slot array in the block. */
static size_t slots_offset(uint32_t capacity)
{
    return buckets_offset()
           + align8((size_t)nbuckets_for(capacity) * sizeof(uint32_t));
}

/*
 * Returns the bytes a table of `capacity` slots needs, or 0 when that does
 * not fit in a size_t (only possible where size_t is 32 bits).
 */
size_t hl_slots_size(uint32_t capacity)
{
    size_t head = slots_offset(capacity);

    if (capacity > ((size_t)-1 - head) / sizeof(hl_slot_t))
        return 0;
    return head + (size_t)capacity * sizeof(hl_slot_t);
}

/*
 * FNV-1a 64 over the bytes, with the seed folded into the offset basis,
 * then the splitmix64 finalizer so that the low bits (the bucket number)
 * depend on every input bit. Not a keyed cryptographic hash: the seed only
 * changes the bucket layout from one table to the next.
 * Changing this function requires bumping HL_SLOTS_VERSION (stored hashes).
 */
uint64_t hl_hash64(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = HL_FNV_OFFSET ^ seed;
    size_t i;

    for (i = 0; i < len; i++) {
        h ^= p[i];
        h *= HL_FNV_PRIME;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h;
}

/*
 * Short keys (len <= HL_KEY_MAX) are copied unchanged. A longer key becomes
 * its first HL_KEY_MAX - 17 bytes, '~' and the 16 lowercase hex digits of
 * hl_hash64 of the whole key, exactly HL_KEY_MAX bytes, so long keys sharing
 * a prefix stay distinct. out may overlap key. Never fails.
 */
size_t hl_key_compact(char out[HL_KEY_MAX], const char *key, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const size_t keep = HL_KEY_MAX - 17;
    uint64_t h;
    size_t i;

    if (len <= HL_KEY_MAX) {
        if (len > 0)
            memmove(out, key, len);
        return len;
    }
    h = hl_hash64(key, len, HL_COMPACT_SEED);
    memmove(out, key, keep);
    out[keep] = '~';
    for (i = 0; i < 16; i++)
        out[keep + 1 + i] = hex[(h >> (60 - 4 * i)) & 0xf];
    return HL_KEY_MAX;
}

/* Returns the slot of link idx (1..capacity). */
static hl_slot_t *slot_at(const hl_slots_t *t, uint32_t idx)
{
    return &t->slots[idx - 1];
}

/* Returns the bucket number of a hash. */
static uint32_t bucket_of(const hl_slots_t *t, uint64_t hash)
{
    return (uint32_t)(hash & (t->hdr->nbuckets - 1));
}

/* Takes slot idx out of the LRU list (it must be in it). */
static void lru_unlink(hl_slots_t *t, uint32_t idx)
{
    hl_slot_t *s = slot_at(t, idx);

    if (s->lru_prev != 0)
        slot_at(t, s->lru_prev)->lru_next = s->lru_next;
    else
        t->hdr->lru_head = s->lru_next;
    if (s->lru_next != 0)
        slot_at(t, s->lru_next)->lru_prev = s->lru_prev;
    else
        t->hdr->lru_tail = s->lru_prev;
    s->lru_prev = 0;
    s->lru_next = 0;
}

/* Puts slot idx (not in the LRU list) at its head: most recently used. */
static void lru_push_head(hl_slots_t *t, uint32_t idx)
{
    hl_slot_t *s = slot_at(t, idx);

    s->lru_prev = 0;
    s->lru_next = t->hdr->lru_head;
    if (t->hdr->lru_head != 0)
        slot_at(t, t->hdr->lru_head)->lru_prev = idx;
    else
        t->hdr->lru_tail = idx;
    t->hdr->lru_head = idx;
}

/* Takes slot idx out of the chain of its bucket (no-op if not found). */
static void chain_unlink(hl_slots_t *t, uint32_t idx)
{
    hl_slot_t *s = slot_at(t, idx);
    uint32_t *link = &t->buckets[bucket_of(t, s->hash)];
    uint32_t steps;

    for (steps = 0; *link != 0 && steps < t->hdr->capacity; steps++) {
        if (*link == idx) {
            *link = s->chain;
            s->chain = 0;
            return;
        }
        link = &slot_at(t, *link)->chain;
    }
}

/* Returns the link of the slot holding key (with that hash), 0 if none. */
static uint32_t locate(const hl_slots_t *t, const char *key, size_t len,
                       uint64_t hash)
{
    uint32_t idx = t->buckets[bucket_of(t, hash)];
    uint32_t steps;

    for (steps = 0; idx != 0 && steps < t->hdr->capacity; steps++) {
        const hl_slot_t *s = slot_at(t, idx);

        if (s->hash == hash && s->key_len == len
            && (len == 0 || memcmp(s->key, key, len) == 0))
            return idx;
        idx = s->chain;
    }
    return 0;
}

/*
 * Empties the table: every slot zeroed and on the free list (in order),
 * no bucket chains, empty LRU list, statistics (evictions, inserts) reset.
 * Keeps magic, version, capacity, nbuckets and seed. O(capacity).
 */
void hl_slots_clear(hl_slots_t *t)
{
    hl_slots_header_t *h = t->hdr;
    uint32_t i;

    memset(t->buckets, 0, (size_t)h->nbuckets * sizeof(uint32_t));
    memset(t->slots, 0, (size_t)h->capacity * sizeof(hl_slot_t));
    for (i = 0; i + 1 < h->capacity; i++)
        t->slots[i].chain = i + 2;
    h->free_head = 1;
    h->used = 0;
    h->lru_head = 0;
    h->lru_tail = 0;
    h->evictions = 0;
    h->inserts = 0;
}

/*
 * Returns 1 if the LRU list is sound: walked from the head, every link is
 * in range, points back to the previous one and names a used slot (tag
 * != 0, key_len <= HL_KEY_MAX); it ends at lru_tail after exactly `used`
 * slots. The back-link test makes a repeated slot impossible.
 */
static int lru_is_valid(const hl_slots_t *t)
{
    const hl_slots_header_t *h = t->hdr;
    uint32_t idx = h->lru_head, prev = 0, n = 0;

    while (idx != 0) {
        const hl_slot_t *s;

        if (idx > h->capacity || n == h->capacity)
            return 0;
        s = slot_at(t, idx);
        if (s->lru_prev != prev || s->tag == 0 || s->key_len > HL_KEY_MAX)
            return 0;
        prev = idx;
        idx = s->lru_next;
        n++;
    }
    return prev == h->lru_tail && n == h->used;
}

/*
 * Returns 1 if the free list is sound: in-range links to slots with tag 0,
 * ending (so without a cycle) after exactly capacity - used slots.
 */
static int free_list_is_valid(const hl_slots_t *t)
{
    const hl_slots_header_t *h = t->hdr;
    uint32_t idx = h->free_head, n = 0;

    while (idx != 0) {
        if (idx > h->capacity || n == h->capacity)
            return 0;
        if (slot_at(t, idx)->tag != 0)
            return 0;
        idx = slot_at(t, idx)->chain;
        n++;
    }
    return n == h->capacity - h->used;
}

/*
 * Returns 1 if the bucket chains are sound: in-range links to used slots
 * whose hash belongs to that bucket, `used` entries in all. With the two
 * lists above this means every used slot is in exactly one chain.
 */
static int chains_are_valid(const hl_slots_t *t)
{
    const hl_slots_header_t *h = t->hdr;
    uint32_t b, total = 0;

    for (b = 0; b < h->nbuckets; b++) {
        uint32_t idx = t->buckets[b];

        while (idx != 0) {
            const hl_slot_t *s;

            if (idx > h->capacity || total == h->used)
                return 0;
            s = slot_at(t, idx);
            if (s->tag == 0 || bucket_of(t, s->hash) != b)
                return 0;
            idx = s->chain;
            total++;
        }
    }
    return total == h->used;
}

/*
 * Returns 1 if the block holds a table of this capacity and version whose
 * header and lists are consistent (O(capacity + nbuckets)), 0 otherwise.
 */
static int table_is_valid(const hl_slots_t *t, uint32_t capacity)
{
    const hl_slots_header_t *h = t->hdr;

    if (h->magic != HL_SLOTS_MAGIC || h->version != HL_SLOTS_VERSION
        || h->capacity != capacity || h->nbuckets != nbuckets_for(capacity))
        return 0;
    if (h->used > capacity || h->free_head > capacity
        || h->lru_head > capacity || h->lru_tail > capacity)
        return 0;
    if ((h->used == 0) != (h->lru_head == 0)
        || (h->lru_head == 0) != (h->lru_tail == 0)
        || (h->used == capacity) != (h->free_head == 0))
        return 0;
    return lru_is_valid(t) && free_list_is_valid(t) && chains_are_valid(t);
}

/*
 * Returns -1 (and leaves *t alone) when t or mem is NULL, mem is not
 * 8-byte aligned, capacity is 0 or UINT32_MAX, or size is below
 * hl_slots_size(capacity). Returns 0 when mem already holds a consistent
 * table of this capacity and version (its seed and contents are kept),
 * else initialises an empty table with `seed` and returns 1.
 * The caller owns mem; *t only points into it.
 */
int hl_slots_attach(hl_slots_t *t, void *mem, size_t size, uint32_t capacity,
                    uint64_t seed)
{
    size_t need;

    if (t == NULL || mem == NULL || capacity == 0 || capacity == UINT32_MAX)
        return -1;
    if ((uintptr_t)mem % 8 != 0)
        return -1;
    need = hl_slots_size(capacity);
    if (need == 0 || size < need)
        return -1;

    hl_slots_map(t, mem, capacity);
    if (table_is_valid(t, capacity))
        return 0;

    memset(t->hdr, 0, sizeof(*t->hdr));
    t->hdr->magic = HL_SLOTS_MAGIC;
    t->hdr->version = HL_SLOTS_VERSION;
    t->hdr->capacity = capacity;
    t->hdr->nbuckets = nbuckets_for(capacity);
    t->hdr->seed = seed;
    hl_slots_clear(t);
    return 1;
}

void hl_slots_map(hl_slots_t *t, void *mem, uint32_t capacity)
{
    char *base = mem;

    t->hdr = mem;
    t->buckets = (uint32_t *)(base + buckets_offset());
    t->slots = (hl_slot_t *)(base + slots_offset(capacity));
}

/*
 * Returns NULL when key is absent or len > HL_KEY_MAX (callers compact
 * long keys with hl_key_compact first). The slot belongs to the table.
 */
hl_slot_t *hl_slots_find(hl_slots_t *t, const char *key, size_t len)
{
    uint32_t idx;

    if (len > HL_KEY_MAX)
        return NULL;
    idx = locate(t, key, len, hl_hash64(key, len, t->hdr->seed));
    return idx != 0 ? slot_at(t, idx) : NULL;
}

/*
 * Returns the link of a slot to hold a new key, out of every list: a free
 * slot, else the first expired one (expires_ms <= now_ms) among the
 * HL_EVICT_SCAN least recently used, else the least recently used one
 * (counted in evictions). Never fails: a full table with an empty LRU list
 * cannot happen when consistent, and is repaired by clearing it.
 */
static uint32_t take_slot(hl_slots_t *t, int64_t now_ms)
{
    hl_slots_header_t *h = t->hdr;
    uint32_t idx, victim = 0, n;

    if (h->free_head == 0 && h->lru_tail == 0)
        hl_slots_clear(t);
    if (h->free_head != 0) {
        idx = h->free_head;
        h->free_head = slot_at(t, idx)->chain;
        slot_at(t, idx)->chain = 0;
        h->used++;
        return idx;
    }

    idx = h->lru_tail;
    for (n = 0; idx != 0 && n < HL_EVICT_SCAN; n++) {
        if (slot_at(t, idx)->expires_ms <= now_ms) {
            victim = idx;
            break;
        }
        idx = slot_at(t, idx)->lru_prev;
    }
    if (victim == 0) {
        victim = h->lru_tail;
        h->evictions++;
    }
    chain_unlink(t, victim);
    lru_unlink(t, victim);
    return victim;
}

/*
 * Returns NULL only when len > HL_KEY_MAX (compact the key first). A tag of
 * 0 is taken as 1 (0 marks free slots). *created (if not NULL) is set to 1
 * when the slot is new, else 0. The slot belongs to the table and stays
 * valid until the next call that may create or remove a slot.
 */
hl_slot_t *hl_slots_get(hl_slots_t *t, const char *key, size_t len,
                        uint32_t tag, int64_t now_ms, int *created)
{
    uint64_t hash;
    uint32_t idx, b;
    hl_slot_t *s;

    if (created != NULL)
        *created = 0;
    if (len > HL_KEY_MAX)
        return NULL;
    if (tag == 0)
        tag = 1;
    hash = hl_hash64(key, len, t->hdr->seed);

    idx = locate(t, key, len, hash);
    if (idx != 0) {
        s = slot_at(t, idx);
        if (s->tag != tag) {
            memset(&s->bucket, 0, sizeof(s->bucket));
            s->tag = tag;
            s->expires_ms = 0;
        }
        lru_unlink(t, idx);
        lru_push_head(t, idx);
        return s;
    }

    idx = take_slot(t, now_ms);
    s = slot_at(t, idx);
    memset(s, 0, sizeof(*s));  /* zero bucket, expires_ms 0, unused key bytes */
    s->hash = hash;
    s->tag = tag;
    s->key_len = (uint16_t)len;
    if (len > 0)
        memcpy(s->key, key, len);
    b = bucket_of(t, hash);
    s->chain = t->buckets[b];
    t->buckets[b] = idx;
    lru_push_head(t, idx);
    t->hdr->inserts++;
    if (created != NULL)
        *created = 1;
    return s;
}

/* Returns 1 if key existed (its slot is now free), 0 otherwise. */
int hl_slots_remove(hl_slots_t *t, const char *key, size_t len)
{
    uint32_t idx;
    hl_slot_t *s;

    if (len > HL_KEY_MAX)
        return 0;
    idx = locate(t, key, len, hl_hash64(key, len, t->hdr->seed));
    if (idx == 0)
        return 0;
    chain_unlink(t, idx);
    lru_unlink(t, idx);
    s = slot_at(t, idx);
    memset(s, 0, sizeof(*s));
    s->chain = t->hdr->free_head;
    t->hdr->free_head = idx;
    t->hdr->used--;
    return 1;
}

/*
 * Returns the number of slots fn was called on, most recently used first;
 * stops after the first call that returns nonzero. fn must not change the
 * table. Never more than capacity calls.
 */
uint32_t hl_slots_foreach(hl_slots_t *t,
                          int (*fn)(const hl_slot_t *s, void *baton),
                          void *baton)
{
    uint32_t idx = t->hdr->lru_head, n = 0;

    while (idx != 0 && n < t->hdr->capacity) {
        const hl_slot_t *s = slot_at(t, idx);

        n++;
        if (fn(s, baton) != 0)
            break;
        idx = s->lru_next;
    }
    return n;
}
