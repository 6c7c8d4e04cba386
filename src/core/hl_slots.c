/*
 * hl_slots.c - the slot table: a hash index and per-class LRU lists over a
 * caller-supplied memory block (layout and eviction rule in hl_slots.h). No
 * allocation, no floats, no locks: the caller holds the global mutex around
 * every call.
 *
 * Conventions used throughout:
 *  - a link stored in the block is a slot number + 1; 0 means "none";
 *  - a free slot has tag 0 and is linked through `chain` from free_head;
 *  - a used slot has tag >= 1 and sits exactly once in the chain of the
 *    bucket of its hash, and exactly once in one list of its class: the
 *    list of its level;
 *  - class records 0..nclasses-1 are in use; each one but record 0 is in
 *    the class index (linear probing on its hash), and records are never
 *    removed but by hl_slots_clear, so the index needs no deletion;
 *  - the class tree names the largest class; it is derived from the
 *    class counts and rebuilt by hl_slots_attach.
 *
 * Costs: hl_slots_find, hl_slots_remove and hl_slots_get of an existing key
 * are O(1) (one chain, plus a probe of the class index, load <= 1/2).
 * Creating a key in a full table frees or evicts: up to HL_EVICT_SCAN slot
 * reads in each non-empty list (at most HL_SLOT_LEVELS) of each of at most
 * three classes, then finding the least filled slot of two classes looks
 * at the head of each of their lists; the largest class is read off the
 * class tree (below) in O(1), and each slot that changes class costs
 * log2(HL_CLASSES) = 10 steps to keep that tree.
 *
 * The block may come back from disk (mod_slotmem_shm persistence) or be
 * left half-updated by a process killed inside a call, so:
 *  - hl_slots_attach checks the whole structure and re-initialises a block
 *    that is not consistent;
 *  - every loop that follows links stops after a bounded number of steps,
 *    so a bad block can never hang the process that holds the mutex.
 */
#include <string.h>
#include "hl_align.h"
#include "hl_slots.h"
#include "hl_slots_check.h"

/*
 * A slot must fit in 120 bytes so that a slot plus its bucket head costs at
 * most 124 bytes. Compilation fails here (negative array size) if it grows.
 */
typedef char hl_slot_size_check[(sizeof(hl_slot_t) <= 120) ? 1 : -1];
/* Class numbers fit the 16 bits of hl_slot_t.cls and of the index; the
 * class tree is complete (a power of two of records); the index is a
 * power of two at least twice as large (load <= 1/2); one decision's
 * windows all stay protected from each other. */
typedef char hl_class_check[(HL_CLASSES <= 65536
                             && (HL_CLASSES & (HL_CLASSES - 1)) == 0
                             && HL_CLASS_INDEX >= 2 * HL_CLASSES
                             && (HL_CLASS_INDEX & (HL_CLASS_INDEX - 1)) == 0
                             && HL_SLOTS_RECENT >= HL_MAX_WINDOWS) ? 1 : -1];

/* See hl_slots.h. */
uint32_t hl_slots_nbuckets(uint32_t capacity)
{
    uint32_t n = 1;

    while (n <= capacity / 2)
        n *= 2;
    return n;
}

/* Returns the offset of the class records in the block. */
static size_t classes_offset(void)
{
    return hl_align8(sizeof(hl_slots_header_t));
}

/* Returns the offset of the class index in the block. */
static size_t class_index_offset(void)
{
    return classes_offset() + hl_align8(HL_CLASSES * sizeof(hl_slot_class_t));
}

/* Returns the offset of the class tree in the block. */
static size_t class_tree_offset(void)
{
    return class_index_offset() + hl_align8(HL_CLASS_INDEX * sizeof(uint16_t));
}

/* Returns the offset of the bucket heads in the block. */
static size_t buckets_offset(void)
{
    return class_tree_offset() + hl_align8(HL_CLASSES * sizeof(uint16_t));
}

/* Returns the offset of the slot array in the block. */
static size_t slots_offset(uint32_t capacity)
{
    return buckets_offset()
           + hl_align8((size_t)hl_slots_nbuckets(capacity) * sizeof(uint32_t));
}

/*
 * Returns the bytes a table of `capacity` slots needs, or 0 when that does
 * not fit in a size_t (only possible where size_t is 32 bits).
 */
uint32_t hl_slots_nlogs(uint32_t capacity)
{
    return capacity / 8 + HL_SLOTS_RECENT + 1;
}

/* Returns the offset of the log records in the block, or 0 when that
 * does not fit in a size_t. */
static size_t logs_offset(uint32_t capacity)
{
    size_t head = slots_offset(capacity);

    if (capacity > ((size_t)-1 - head) / sizeof(hl_slot_t))
        return 0;
    return head + (size_t)capacity * sizeof(hl_slot_t);
}

size_t hl_slots_size(uint32_t capacity)
{
    size_t head = logs_offset(capacity);
    uint32_t nlogs = hl_slots_nlogs(capacity);

    if (head == 0 || nlogs > ((size_t)-1 - head) / sizeof(hl_log_t))
        return 0;
    return head + (size_t)nlogs * sizeof(hl_log_t);
}

/* Returns the list (its fill level) slot s belongs to. */
static int list_of(const hl_slot_t *s)
{
    return s->level;
}

/* Takes slot idx out of its class list (it must be in it). Leaves the
 * class count alone. */
static void list_unlink(hl_slots_t *t, uint32_t idx)
{
    hl_slot_t *s = hl_slots_at(t, idx);
    hl_slot_class_t *c = &t->classes[s->cls];
    int l = list_of(s);

    if (s->lru_prev != 0)
        hl_slots_at(t, s->lru_prev)->lru_next = s->lru_next;
    else
        c->head[l] = s->lru_next;
    if (s->lru_next != 0)
        hl_slots_at(t, s->lru_next)->lru_prev = s->lru_prev;
    else
        c->tail[l] = s->lru_prev;
    s->lru_prev = 0;
    s->lru_next = 0;
}

/* Puts slot idx (in no list) at the head of the list its cls and level
 * name: most recently used. Leaves the class count alone. */
static inline __attribute__((always_inline))
void list_push_head(hl_slots_t *t, uint32_t idx)
{
    hl_slot_t *s = hl_slots_at(t, idx);
    hl_slot_class_t *c = &t->classes[s->cls];
    int l = list_of(s);

    s->lru_prev = 0;
    s->lru_next = c->head[l];
    if (c->head[l] != 0)
        hl_slots_at(t, c->head[l])->lru_prev = idx;
    else
        c->tail[l] = idx;
    c->head[l] = idx;
}

/*
 * The class tree: a complete binary tree over the HL_CLASSES records (node
 * n has children 2n and 2n+1; node HL_CLASSES + c is record c itself),
 * each inner node holding the record with the most slots below it, the
 * lower record on a tie. tree[1] is then the largest class in O(1), and a
 * count change costs log2(HL_CLASSES) steps. It is derived from the
 * counts: hl_slots_attach rebuilds it rather than trusting the block.
 */

/* Returns the record that node n stands for. */
static uint32_t tree_node(const hl_slots_t *t, uint32_t n)
{
    return n >= HL_CLASSES ? n - HL_CLASSES : t->class_tree[n];
}

/* Sets inner node n from its two children. */
static void tree_set(hl_slots_t *t, uint32_t n)
{
    uint32_t a = tree_node(t, 2 * n), b = tree_node(t, 2 * n + 1);

    t->class_tree[n] = (uint16_t)(t->classes[b].count > t->classes[a].count ? b : a);
}

/* Recomputes every inner node. O(HL_CLASSES). */
static void tree_build(hl_slots_t *t)
{
    uint32_t n;

    for (n = HL_CLASSES - 1; n >= 1; n--)
        tree_set(t, n);
}

/* Adds delta (+1 or -1) to the slot count of record c. */
static void count_add(hl_slots_t *t, uint32_t c, int delta)
{
    uint32_t n;
    int largest = t->class_tree[1] == c;

    t->classes[c].count = (uint32_t)((int64_t)t->classes[c].count + delta);
    /* The largest class won every node on its way to the root; grown, it
     * wins them by more, and no other node compares it: nothing changes.
     * (A flood of new keys in one quota adds to the largest class at every
     * request.) */
    if (delta > 0 && largest)
        return;
    for (n = (HL_CLASSES + c) / 2; n >= 1; n /= 2)
        tree_set(t, n);
}

/* count_add(t, c, +1), the largest class's case inline: a new key of
 * the quota a flood is counted in. */
static inline __attribute__((always_inline))
void count_grow(hl_slots_t *t, uint32_t c)
{
    if (t->class_tree[1] == c)
        t->classes[c].count++;
    else
        count_add(t, c, +1);
}

/* Takes slot idx out of the chain of its bucket (no-op if not found). */
static void chain_unlink(hl_slots_t *t, uint32_t idx)
{
    hl_slot_t *s = hl_slots_at(t, idx);
    uint32_t *link = &t->buckets[hl_slots_bucket(t, s->hash)];
    uint32_t steps;

    for (steps = 0; *link != 0 && steps < t->hdr->capacity; steps++) {
        if (*link == idx) {
            *link = s->chain;
            s->chain = 0;
            return;
        }
        link = &hl_slots_at(t, *link)->chain;
    }
}

/* Returns the link of the slot holding key (with that hash), 0 if none. */
static inline __attribute__((always_inline))
uint32_t locate(const hl_slots_t *t, const char *key, size_t len,
                uint64_t hash)
{
    uint32_t idx = t->buckets[hl_slots_bucket(t, hash)];
    uint32_t steps;

    for (steps = 0; idx != 0 && steps < t->hdr->capacity; steps++) {
        const hl_slot_t *s = hl_slots_at(t, idx);

        if (s->hash == hash && s->key_len == len
            && (len == 0 || memcmp(s->key, key, len) == 0))
            return idx;
        idx = s->chain;
    }
    return 0;
}

/*
 * Returns the record of class hash cls, or 0 when cls is 0 or has no
 * record. If empty is not NULL it receives the index position where cls
 * would be added (HL_CLASS_INDEX if the index has no empty entry).
 */
static uint32_t class_find(const hl_slots_t *t, uint64_t cls, uint32_t *empty)
{
    uint32_t pos = (uint32_t)cls & (HL_CLASS_INDEX - 1), n;

    if (empty != NULL)
        *empty = HL_CLASS_INDEX;
    if (cls == 0)
        return 0;
    for (n = 0; n < HL_CLASS_INDEX; n++, pos = (pos + 1) & (HL_CLASS_INDEX - 1)) {
        uint32_t r = t->class_index[pos];

        if (r == 0) {
            if (empty != NULL)
                *empty = pos;
            return 0;
        }
        if (r < t->hdr->nclasses && t->classes[r].hash == cls)
            return r;
    }
    return 0;
}

/* See hl_slots.h. */
uint32_t hl_slots_class_record(const hl_slots_t *t, uint64_t cls)
{
    return class_find(t, cls, NULL);
}

/* Returns the record of class hash cls, adding one if there is room;
 * 0 (the shared class) for cls 0 or when every record is taken. Notes it
 * as this process's last record (class_intern). */
static __attribute__((noinline)) uint32_t class_intern_slow(hl_slots_t *t,
                                                           uint64_t cls)
{
    uint32_t empty, r = class_find(t, cls, &empty);

    if (r != 0 || cls == 0 || t->hdr->nclasses >= HL_CLASSES
        || empty == HL_CLASS_INDEX) {
        t->class_hint = r;
        return r;
    }
    r = t->hdr->nclasses++;
    memset(&t->classes[r], 0, sizeof(t->classes[r]));
    t->classes[r].hash = cls;
    t->class_index[empty] = (uint16_t)r;
    t->class_hint = r;
    return r;
}

/* class_intern_slow, but the record this process found last is tried
 * first, inline (a new key of the quota a flood of new clients is counted
 * in): it is cls's when it holds that hash, as class hashes are unique
 * among records; another process may have cleared or refilled the
 * records since, which the test sees. */
static inline __attribute__((always_inline))
uint32_t class_intern(hl_slots_t *t, uint64_t cls)
{
    uint32_t r = t->class_hint;

    if (cls != 0 && r < t->hdr->nclasses && t->classes[r].hash == cls)
        return r;
    return class_intern_slow(t, cls);
}

/* Records idx as just returned by hl_slots_get. */
static void remember(hl_slots_t *t, uint32_t idx)
{
    hl_slots_header_t *h = t->hdr;

    h->recent[h->recent_pos % HL_SLOTS_RECENT] = idx;
    h->recent_pos = (h->recent_pos + 1) % HL_SLOTS_RECENT;
}

/* See hl_slots.h. */
int hl_slots_is_recent(const hl_slots_t *t, uint32_t idx)
{
    int i;

    for (i = 0; i < HL_SLOTS_RECENT; i++) {
        if (t->hdr->recent[i] == idx)
            return 1;
    }
    return 0;
}

/* Puts back the log record of slot s, if it has one (its bucket is
 * about to be zeroed). */
static void log_release(hl_slots_t *t, hl_slot_t *s)
{
    uint32_t r = s->bucket.prev_count;

    if (s->tag != HL_SLOT_TAG_LOG || r == 0 || r > t->hdr->nlogs)
        return;
    if (t->classes[s->cls].logs > 0)
        t->classes[s->cls].logs--;
    memset(&t->logs[r - 1], 0, sizeof(hl_log_t));
    t->logs[r - 1].next = t->hdr->log_free;
    t->hdr->log_free = r;
    s->bucket.prev_count = 0;
}

/* See hl_slots.h. */
int hl_slots_owns_log(const hl_slots_t *t, const hl_slot_t *s)
{
    return s->tag == HL_SLOT_TAG_LOG && s->bucket.prev_count != 0
           && s->bucket.prev_count <= t->hdr->nlogs;
}

/* Recounts the log records of every class from the slots (the counts are
 * derived: never trusted from a block). O(capacity). */
static void log_counts_build(hl_slots_t *t)
{
    uint32_t c, i;

    for (c = 0; c < t->hdr->nclasses; c++)
        t->classes[c].logs = 0;
    for (i = 0; i < t->hdr->capacity; i++) {
        const hl_slot_t *s = &t->slots[i];

        if (s->tag != 0 && s->cls < t->hdr->nclasses && hl_slots_owns_log(t, s))
            t->classes[s->cls].logs++;
    }
}

/* Puts every log record on the free list, in order, all empty. */
static void logs_clear(hl_slots_t *t)
{
    uint32_t r, n = t->hdr->nlogs;

    memset(t->logs, 0, (size_t)n * sizeof(hl_log_t));
    for (r = 0; r + 1 < n; r++)
        t->logs[r].next = r + 2;
    t->hdr->log_free = n > 0 ? 1 : 0;
    t->hdr->log_hand = 0;
}

/* See hl_slots.h. */
void hl_slots_free_slot(hl_slots_t *t, uint32_t idx)
{
    hl_slot_t *s = hl_slots_at(t, idx);
    int i;

    log_release(t, s);
    for (i = 0; i < HL_SLOTS_RECENT; i++) {
        if (t->hdr->recent[i] == idx)
            t->hdr->recent[i] = 0;
    }
    chain_unlink(t, idx);
    list_unlink(t, idx);
    count_add(t, s->cls, -1);
    memset(s, 0, sizeof(*s));
    s->chain = t->hdr->free_head;
    t->hdr->free_head = idx;
    t->hdr->used--;
}

/*
 * Empties the table: every slot zeroed and on the free list (in order),
 * no bucket chains, only the shared class (empty), statistics (evictions,
 * reclaims, inserts) reset. Keeps magic, version, capacity, nbuckets and
 * seed. O(capacity).
 */
void hl_slots_clear(hl_slots_t *t)
{
    hl_slots_header_t *h = t->hdr;
    uint32_t i;

    memset(t->classes, 0, HL_CLASSES * sizeof(hl_slot_class_t));
    memset(t->class_index, 0, HL_CLASS_INDEX * sizeof(uint16_t));
    memset(t->buckets, 0, (size_t)h->nbuckets * sizeof(uint32_t));
    memset(t->slots, 0, (size_t)h->capacity * sizeof(hl_slot_t));
    logs_clear(t);
    for (i = 0; i + 1 < h->capacity; i++)
        t->slots[i].chain = i + 2;
    h->free_head = 1;
    h->used = 0;
    h->nclasses = 1;
    h->sweep = 0;
    memset(h->recent, 0, sizeof(h->recent));
    h->recent_pos = 0;
    h->evictions = 0;
    h->reclaims = 0;
    h->inserts = 0;
    tree_build(t);      /* all counts 0: each node names its lowest record */
}

void hl_slots_zero_free(hl_slots_t *t)
{
    uint32_t i;

    for (i = 0; i < t->hdr->capacity; i++)
        if (t->slots[i].tag == 0)
            memset(&t->slots[i], 0, sizeof(t->slots[i]));
    for (i = 0; i < t->hdr->nlogs; i++)
        if (t->logs[i].owner == 0)
            memset(&t->logs[i], 0, sizeof(t->logs[i]));
    t->hdr->free_head = 0;
    t->hdr->log_free = 0;
}

void hl_slots_relink_free(hl_slots_t *t)
{
    uint32_t i;

    t->hdr->free_head = 0;
    for (i = t->hdr->capacity; i-- > 0;)
        if (t->slots[i].tag == 0) {
            t->slots[i].chain = t->hdr->free_head;
            t->hdr->free_head = i + 1;
        }
    t->hdr->log_free = 0;
    for (i = t->hdr->nlogs; i-- > 0;)
        if (t->logs[i].owner == 0) {
            t->logs[i].next = t->hdr->log_free;
            t->hdr->log_free = i + 1;
        }
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
    if (hl_slots_check(t, capacity)) {
        tree_build(t);
        log_counts_build(t);
        return 0;
    }

    memset(t->hdr, 0, sizeof(*t->hdr));
    t->hdr->magic = HL_SLOTS_MAGIC;
    t->hdr->version = HL_SLOTS_VERSION;
    t->hdr->capacity = capacity;
    t->hdr->nbuckets = hl_slots_nbuckets(capacity);
    t->hdr->seed = seed;
    t->hdr->nlogs = hl_slots_nlogs(capacity);
    hl_slots_clear(t);
    return 1;
}

void hl_slots_map(hl_slots_t *t, void *mem, uint32_t capacity)
{
    char *base = mem;

    t->hdr = mem;
    t->class_hint = 0;
    t->classes = (hl_slot_class_t *)(base + classes_offset());
    t->class_index = (uint16_t *)(base + class_index_offset());
    t->class_tree = (uint16_t *)(base + class_tree_offset());
    t->buckets = (uint32_t *)(base + buckets_offset());
    t->slots = (hl_slot_t *)(base + slots_offset(capacity));
    t->logs = (hl_log_t *)(base + logs_offset(capacity));
}

/*
 * Returns NULL when key is absent or len > HL_KEY_MAX (callers compact
 * long keys with hl_key_compact, hl_slotkey.h, first). The slot belongs to the table.
 */
hl_slot_t *hl_slots_find_hashed(hl_slots_t *t, const char *key, size_t len,
                                uint64_t hash)
{
    uint32_t idx;

    if (len > HL_KEY_MAX)
        return NULL;
    idx = locate(t, key, len, hash);
    return idx != 0 ? hl_slots_at(t, idx) : NULL;
}

hl_slot_t *hl_slots_find(hl_slots_t *t, const char *key, size_t len)
{
    return hl_slots_find_hashed(t, key, len, hl_hash64_words(key, len, t->hdr->seed));
}

/*
 * Frees every expired slot (expires_ms <= now_ms) that is not recent among
 * the HL_EVICT_SCAN least recently used of each list of class c. Returns
 * how many it freed (also added to reclaims).
 */
static uint32_t reclaim(hl_slots_t *t, uint32_t c, int64_t now_ms)
{
    uint32_t freed = 0;
    int l;

    for (l = 0; l < HL_SLOT_LEVELS; l++) {
        uint32_t idx = t->classes[c].tail[l], n;

        for (n = 0; idx != 0 && n < HL_EVICT_SCAN; n++) {
            uint32_t prev = hl_slots_at(t, idx)->lru_prev;

            if (hl_slots_at(t, idx)->expires_ms <= now_ms && !hl_slots_is_recent(t, idx)) {
                hl_slots_free_slot(t, idx);
                freed++;
            }
            idx = prev;
        }
    }
    t->hdr->reclaims += freed;
    return freed;
}

/* Returns the least recently used slot of class c that is not recent in
 * its lowest level that has one, and sets *level to that level; 0 (and
 * *level HL_SLOT_LEVELS) if there is none. */
static uint32_t evictable(const hl_slots_t *t, uint32_t c, int *level)
{
    int l;

    for (l = 0; l < HL_SLOT_LEVELS; l++) {
        uint32_t idx = t->classes[c].tail[l], n;

        for (n = 0; idx != 0 && n <= HL_SLOTS_RECENT; n++) {
            if (!hl_slots_is_recent(t, idx)) {
                *level = l;
                return idx;
            }
            idx = hl_slots_at(t, idx)->lru_prev;
        }
    }
    *level = HL_SLOT_LEVELS;
    return 0;
}

/* Returns the class holding the most slots; on a tie the requester's class
 * rc, else the first record. O(1) through the class tree. */
static uint32_t victim_class(const hl_slots_t *t, uint32_t rc)
{
    uint32_t best = t->class_tree[1];

    return t->classes[rc].count >= t->classes[best].count ? rc : best;
}

/*
 * Returns the live slot to evict for a new key of class rc, v being the
 * victim class: the least filled evictable slot of v, or rc's when that is
 * less filled (so a new key never pushes out a counter used more than the
 * requester's own least filled one); else that of the first class that has
 * one; else (a table of at most HL_SLOTS_RECENT slots) the least recently
 * used slot of the lowest level of v even if recent. 0 only if the table
 * has no used slot (inconsistent).
 */
static uint32_t choose_eviction(const hl_slots_t *t, uint32_t rc, uint32_t v)
{
    int lv, lr, l;
    uint32_t idx = evictable(t, v, &lv), c;

    if (v != rc) {
        uint32_t own = evictable(t, rc, &lr);

        if (own != 0 && lr < lv)
            idx = own;
    }
    for (c = 0; idx == 0 && c < t->hdr->nclasses; c++)
        idx = evictable(t, c, &lv);
    for (l = 0; idx == 0 && l < HL_SLOT_LEVELS; l++)
        idx = t->classes[v].tail[l];
    return idx;
}

/*
 * Returns the link of a free slot for a new key of class rc, taken off the
 * free list: a free slot, else one freed from expired slots of the
 * requester's class, of the next class of the sweep, then of the victim
 * class, else an evicted live slot (counted in evictions). Never fails: a
 * full table with no used slot cannot happen when consistent, and is
 * repaired by clearing it (then the caller's class record is gone too).
 */
static uint32_t take_slot(hl_slots_t *t, uint32_t rc, int64_t now_ms)
{
    hl_slots_header_t *h = t->hdr;
    uint32_t idx;

    if (h->free_head == 0)
        reclaim(t, rc, now_ms);
    if (h->free_head == 0) {
        uint32_t c = h->sweep < h->nclasses ? h->sweep : 0;

        h->sweep = (c + 1) % h->nclasses;
        if (c != rc)
            reclaim(t, c, now_ms);
    }
    if (h->free_head == 0) {
        uint32_t v = victim_class(t, rc);

        if (v != rc)
            reclaim(t, v, now_ms);
        if (h->free_head == 0) {
            idx = choose_eviction(t, rc, v);
            if (idx != 0) {
                hl_slots_free_slot(t, idx);
                h->evictions++;
            }
            else
                hl_slots_clear(t);
        }
    }
    idx = h->free_head;
    h->free_head = hl_slots_at(t, idx)->chain;
    hl_slots_at(t, idx)->chain = 0;
    h->used++;
    return idx;
}

/*
 * Returns NULL only when len > HL_KEY_MAX (compact the key first). A tag of
 * 0 is taken as 1 (0 marks free slots). *created (if not NULL) is set to 1
 * when the slot is new, else 0. The slot belongs to the table and stays
 * valid until the next call that may create or remove a slot (the
 * HL_SLOTS_RECENT last returned by this function survive the next ones).
 */
hl_slot_t *hl_slots_get(hl_slots_t *t, const char *key, size_t len,
                        uint8_t tag, uint64_t cls, int64_t now_ms,
                        int *created)
{
    if (len > HL_KEY_MAX) {
        if (created != NULL)
            *created = 0;
        return NULL;
    }
    return hl_slots_get_hashed(t, key, len, hl_slots_hash(t, key, len), tag,
                               cls, now_ms, created);
}

hl_slot_t *hl_slots_get_hashed(hl_slots_t *t, const char *key, size_t len,
                               uint64_t hash, uint8_t tag, uint64_t cls,
                               int64_t now_ms, int *created)
{
    uint32_t idx, b, rc;
    hl_slot_t *s;

    if (created != NULL)
        *created = 0;
    if (len > HL_KEY_MAX)
        return NULL;
    if (tag == 0)
        tag = 1;
    rc = class_intern(t, cls);

    idx = locate(t, key, len, hash);
    if (idx != 0) {
        s = hl_slots_at(t, idx);
        list_unlink(t, idx);
        if (s->tag != tag) {
            log_release(t, s);
            memset(&s->bucket, 0, sizeof(s->bucket));
            s->tag = tag;
            s->expires_ms = 0;
            s->level = 0;
        }
        if (s->cls != rc) {
            if (hl_slots_owns_log(t, s)) {
                t->classes[s->cls].logs--;
                t->classes[rc].logs++;
            }
            count_add(t, s->cls, -1);
            count_add(t, rc, +1);
            s->cls = (uint16_t)rc;
        }
        list_push_head(t, idx);
        remember(t, idx);
        return s;
    }

    idx = take_slot(t, rc, now_ms);
    if (rc >= t->hdr->nclasses)     /* the table was repaired (cleared) */
        rc = class_intern(t, cls);
    s = hl_slots_at(t, idx);
    memset(s, 0, sizeof(*s));  /* zero bucket, expires_ms 0, unused key bytes */
    s->hash = hash;
    s->tag = tag;
    s->cls = (uint16_t)rc;
    s->key_len = (uint16_t)len;
    if (len > 0)
        memcpy(s->key, key, len);
    b = hl_slots_bucket(t, hash);
    s->chain = t->buckets[b];
    t->buckets[b] = idx;
    list_push_head(t, idx);
    count_grow(t, rc);
    remember(t, idx);
    t->hdr->inserts++;
    if (created != NULL)
        *created = 1;
    return s;
}

hl_slot_t *hl_slots_get_hinted(hl_slots_t *t, const char *key, size_t len,
                               uint64_t hash, uint8_t tag, uint64_t cls,
                               int64_t now_ms, uint32_t *hint)
{
    uint32_t idx = *hint;
    hl_slot_t *s;

    if (tag == 0)
        tag = 1;
    if (idx >= 1 && idx <= t->hdr->capacity) {
        s = hl_slots_at(t, idx);
        /* A used slot holding this key is its only slot; in this class
         * with this tag, hl_slots_get_hashed would only make it the most
         * recently used. */
        if (s->tag == tag && s->hash == hash && s->key_len == len
            && cls != 0 && t->classes[s->cls].hash == cls
            && memcmp(s->key, key, len) == 0) {
            if (t->classes[s->cls].head[list_of(s)] != idx) {
                list_unlink(t, idx);
                list_push_head(t, idx);
            }
            remember(t, idx);
            return s;
        }
    }
    s = hl_slots_get_hashed(t, key, len, hash, tag, cls, now_ms, NULL);
    *hint = s != NULL ? (uint32_t)(s - t->slots) + 1 : 0;
    return s;
}

uint8_t hl_slots_fill_level(uint32_t used, uint32_t limit)
{
    if (limit == 0)
        limit = 1;
    if (used >= limit)
        return HL_SLOT_FULL;
    if (used <= 1)
        return 0;
    return (uint8_t)(1 + (uint64_t)used * (HL_SLOT_FULL - 1) / limit);
}

/* Moves s to the head of its class's list of level (capped at
 * HL_SLOT_FULL), if it is not in that list already. Never fails. */
void hl_slots_set_level(hl_slots_t *t, hl_slot_t *s, uint8_t level)
{
    uint32_t idx = (uint32_t)(s - t->slots) + 1;

    if (level > HL_SLOT_FULL)
        level = HL_SLOT_FULL;
    if (s->level == level)
        return;
    list_unlink(t, idx);
    s->level = level;
    list_push_head(t, idx);
}

/* Returns 1 if key existed (its slot is now free), 0 otherwise. */
int hl_slots_remove(hl_slots_t *t, const char *key, size_t len)
{
    uint32_t idx;

    if (len > HL_KEY_MAX)
        return 0;
    idx = locate(t, key, len, hl_hash64_words(key, len, t->hdr->seed));
    if (idx == 0)
        return 0;
    hl_slots_free_slot(t, idx);
    return 1;
}

uint32_t hl_slots_scan(hl_slots_t *t, uint32_t from, uint32_t max,
                       int (*fn)(const hl_slot_t *s, void *baton), void *baton)
{
    uint32_t cap = t->hdr->capacity, end, i;

    if (from >= cap)
        return 0;
    end = max < cap - from ? from + max : cap;
    for (i = from; i < end; i++) {
        const hl_slot_t *s = &t->slots[i];

        if (s->tag != 0 && s->key_len <= HL_KEY_MAX && fn(s, baton) != 0)
            return 0;
    }
    return end < cap ? end : 0;
}
