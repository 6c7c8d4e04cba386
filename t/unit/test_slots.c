/*
 * test_slots.c - unit tests of the slot table (hl_slots.c), printing TAP.
 * The table lives in calloc'd blocks here, as it lives in shm in httpd.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hl_tap.h"
#include "hl_slots.h"
#include "hl_slots_logs.h"
#include "hl_slotkey.h"

#define FAR_FUTURE INT64_MAX

/* ---- helpers ------------------------------------------------------------ */

/* Deterministic PRNG (splitmix64). */
static uint64_t rng_state = 1;

static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Returns a zeroed block for capacity slots (size in *size); exits on OOM. */
static void *new_block(uint32_t capacity, size_t *size)
{
    *size = hl_slots_size(capacity);
    return tap_calloc(*size);
}

/* Writes the simple key "k<id>" into buf and returns its length. */
static size_t simple_key(char *buf, uint32_t id)
{
    return (size_t)snprintf(buf, HL_KEY_MAX, "k%u", id);
}

/* Returns the id of a "k<id>" slot, or -1. */
static long simple_id(const hl_slot_t *s)
{
    char tmp[HL_KEY_MAX + 1];

    if (s->key_len < 2 || s->key[0] != 'k')
        return -1;
    memcpy(tmp, s->key, s->key_len);
    tmp[s->key_len] = '\0';
    return strtol(tmp + 1, NULL, 10);
}

/*
 * Calls fn for every used slot of t: class by class (record order), in
 * each class level by level from 0 up, most recently used first, along
 * the table's own lists; stops after the first call that returns
 * nonzero. Returns the number of slots fn was called on, never more than
 * the capacity. fn must not change the table.
 */
static uint32_t walk_slots(const hl_slots_t *t,
                           int (*fn)(const hl_slot_t *s, void *baton),
                           void *baton)
{
    uint32_t c, n = 0;
    int l;

    for (c = 0; c < t->hdr->nclasses; c++) {
        for (l = 0; l < HL_SLOT_LEVELS; l++) {
            uint32_t idx = t->classes[c].head[l];

            while (idx != 0 && n < t->hdr->capacity) {
                const hl_slot_t *s = &t->slots[idx - 1];

                n++;
                if (fn(s, baton) != 0)
                    return n;
                idx = s->lru_next;
            }
        }
    }
    return n;
}

/*
 * Returns the index of the class record of class hash cls, looked up as
 * the table does: through its class index, an open-addressing table
 * probed from cls's position up to an empty entry. 0 for hash 0, and for a
 * class sharing record 0 (every record taken); -1 if it has none yet and
 * one would be added.
 */
static int class_record(const hl_slots_t *t, uint64_t cls)
{
    uint32_t pos = (uint32_t)cls & (HL_CLASS_INDEX - 1), probes;

    if (cls == 0)
        return 0;
    for (probes = 0; probes < HL_CLASS_INDEX; probes++) {
        uint32_t r = t->class_index[pos];

        if (r == 0)
            break;
        if (r < t->hdr->nclasses && t->classes[r].hash == cls)
            return (int)r;
        pos = (pos + 1) & (HL_CLASS_INDEX - 1);
    }
    return t->hdr->nclasses >= HL_CLASSES ? 0 : -1;
}

/* Gets "k<id>" and marks it never expiring; returns the slot. */
static hl_slot_t *get_id(hl_slots_t *t, uint32_t id, int64_t now, int *created)
{
    char k[HL_KEY_MAX];
    size_t len = simple_key(k, id);
    hl_slot_t *s = hl_slots_get(t, k, len, 1, 0, now, created);

    if (s != NULL)
        s->expires_ms = FAR_FUTURE;
    return s;
}

/* Gets "k<id>" in the class of hash cls and marks it never expiring;
 * returns the slot. */
static hl_slot_t *get_in(hl_slots_t *t, uint32_t id, uint64_t cls, int64_t now,
                         int *created)
{
    char k[HL_KEY_MAX];
    size_t len = simple_key(k, id);
    hl_slot_t *s = hl_slots_get(t, k, len, 1, cls, now, created);

    if (s != NULL)
        s->expires_ms = FAR_FUTURE;
    return s;
}

/* Sets the level of s to full (full nonzero) or to 0. */
static void set_full(hl_slots_t *t, hl_slot_t *s, int full)
{
    hl_slots_set_level(t, s, full ? HL_SLOT_FULL : 0);
}

/* Returns 1 if "k<id>" is in the table. */
static int has_id(hl_slots_t *t, uint32_t id)
{
    char k[HL_KEY_MAX];
    size_t len = simple_key(k, id);

    return hl_slots_find(t, k, len) != NULL;
}

/* walk_slots callback: appends the slot's id to an array. */
typedef struct {
    long ids[4096];
    uint32_t n;
    uint32_t stop_after; /* 0 = never stop */
} collect_t;

static int collect_cb(const hl_slot_t *s, void *baton)
{
    collect_t *c = baton;

    if (c->n < sizeof(c->ids) / sizeof(c->ids[0]))
        c->ids[c->n] = simple_id(s);
    c->n++;
    return c->stop_after != 0 && c->n >= c->stop_after;
}

/*
 * Independent full structural check: walks the classes, their lists, the
 * free list and every bucket chain with its own bookkeeping. Returns 1 if sound, else
 * prints the reason as a TAP diagnostic and returns 0.
 */
static int check_structure(const hl_slots_t *t)
{
    const hl_slots_header_t *h = t->hdr;
    uint32_t cap = h->capacity, idx, prev, n, b, i, c, total;
    unsigned char *seen = calloc(cap + 1, 1);
    const char *why = NULL;

    if (seen == NULL)
        return 0;
    if (h->nbuckets == 0 || (h->nbuckets & (h->nbuckets - 1)) != 0
        || h->nbuckets > cap || h->nbuckets * 2 <= cap) {
        why = "nbuckets is not the largest power of two <= capacity";
        goto out;
    }
    /* classes: record 0 shared, the others found through the index */
    if (h->nclasses < 1 || h->nclasses > HL_CLASSES || t->classes[0].hash != 0) {
        why = "nclasses out of range or record 0 not the shared class"; goto out;
    }
    for (i = 1, n = 0; i < HL_CLASS_INDEX; i++)
        n += t->class_index[i] != 0;
    n += t->class_index[0] != 0;
    if (n != h->nclasses - 1) { why = "class index entries != nclasses - 1"; goto out; }
    for (i = 1; i < h->nclasses; i++) {
        if (class_record(t, t->classes[i].hash) != (int)i) {
            why = "class record not found through the index"; goto out;
        }
    }
    for (i = h->nclasses; i < HL_CLASSES; i++) {
        if (t->classes[i].count || t->classes[i].hash || t->classes[i].head[0]
            || t->classes[i].head[HL_SLOT_FULL]) {
            why = "unused class record not empty"; goto out;
        }
    }
    /* class lists: head to tail, back links, used slots of that class and
     * level only; the class counts add up to used */
    for (c = 0, total = 0; c < h->nclasses; c++) {
        uint32_t in_class = 0, l;
        for (l = 0; l < HL_SLOT_LEVELS; l++) {
            for (idx = t->classes[c].head[l], prev = 0; idx != 0;
                 idx = t->slots[idx - 1].lru_next) {
                const hl_slot_t *s;
                if (idx > cap) { why = "LRU link out of range"; goto out; }
                if (seen[idx] & 1) { why = "LRU cycle or slot in two lists"; goto out; }
                seen[idx] |= 1;
                s = &t->slots[idx - 1];
                if (s->lru_prev != prev) { why = "LRU back link wrong"; goto out; }
                if (s->tag == 0) { why = "free slot in LRU list"; goto out; }
                if (s->cls != c) { why = "slot in the list of another class"; goto out; }
                if (s->level != l) {
                    why = "slot in the list of another level"; goto out;
                }
                if (s->key_len > HL_KEY_MAX) { why = "key_len too big"; goto out; }
                if (s->hash != hl_hash64_words(s->key, s->key_len, h->seed)) {
                    why = "stored hash differs from the key's hash"; goto out;
                }
                prev = idx;
                in_class++;
            }
            if (prev != t->classes[c].tail[l]) { why = "list does not end at its tail"; goto out; }
        }
        if (in_class != t->classes[c].count) { why = "class count wrong"; goto out; }
        total += in_class;
    }
    if (total != h->used) { why = "listed count != used"; goto out; }
    {   /* the class tree names the first record with the most slots */
        uint32_t best = 0;
        for (c = 1; c < HL_CLASSES; c++)
            if (t->classes[c].count > t->classes[best].count)
                best = c;
        if (t->class_tree[1] != best) { why = "class tree does not name the largest class"; goto out; }
    }
    {   /* every inner node names the larger of its children's (lower on a
         * tie), as a rebuild would: hl_slots skips nodes it knows unchanged */
        static uint16_t want[2 * HL_CLASSES];
        uint32_t nn;
        for (nn = 0; nn < HL_CLASSES; nn++)
            want[HL_CLASSES + nn] = (uint16_t)nn;
        for (nn = HL_CLASSES - 1; nn >= 1; nn--) {
            uint16_t a = want[2 * nn], b = want[2 * nn + 1];
            want[nn] = t->classes[b].count > t->classes[a].count ? b : a;
            if (t->class_tree[nn] != want[nn]) { why = "class tree node differs from a rebuild"; goto out; }
        }
    }
    /* free list */
    for (idx = h->free_head, n = 0; idx != 0; idx = t->slots[idx - 1].chain) {
        if (idx > cap) { why = "free link out of range"; goto out; }
        if (seen[idx]) { why = "free list cycle or shared slot"; goto out; }
        seen[idx] |= 4;
        if (t->slots[idx - 1].tag != 0) { why = "used slot on free list"; goto out; }
        n++;
    }
    if (n != cap - h->used) { why = "free count != capacity - used"; goto out; }
    /* bucket chains */
    for (b = 0, n = 0; b < h->nbuckets; b++) {
        for (idx = t->buckets[b]; idx != 0; idx = t->slots[idx - 1].chain) {
            if (idx > cap) { why = "chain link out of range"; goto out; }
            if (seen[idx] & 2) { why = "chain cycle or slot in two chains"; goto out; }
            if (!(seen[idx] & 1)) { why = "chained slot not in LRU list"; goto out; }
            seen[idx] |= 2;
            if ((t->slots[idx - 1].hash & (h->nbuckets - 1)) != b) {
                why = "slot chained in the wrong bucket"; goto out;
            }
            n++;
        }
    }
    if (n != h->used) { why = "chained count != used"; goto out; }
    for (i = 1; i <= cap; i++) {
        if (seen[i] != 3 && seen[i] != 4) { why = "slot lost from every list"; goto out; }
    }
out:
    free(seen);
    if (why != NULL)
        printf("#   structure: %s\n", why);
    return why == NULL;
}

/* ---- size and layout ---------------------------------------------------- */

static void test_size(void)
{
    static const uint32_t caps[] = { 1, 2, 3, 7, 8, 9, 1000, 1024, 1025, 65536 };
    /* fixed part: header, class records, class index */
    size_t hdr = (sizeof(hl_slots_header_t) + 7) / 8 * 8;
    size_t cls = HL_CLASSES * sizeof(hl_slot_class_t);
    size_t idx = HL_CLASS_INDEX * sizeof(uint16_t);
    size_t tree = HL_CLASSES * sizeof(uint16_t);
    size_t fixed = hdr + cls + idx + tree;
    size_t i;

    ok(sizeof(hl_slot_t) <= 120, "sizeof(hl_slot_t) <= 120");
    is_int(sizeof(hl_slot_class_t), 16 + 8 * HL_SLOT_LEVELS,
           "sizeof(hl_slot_class_t) = 16 + 8 per level (80)");
    ok(cls % 8 == 0 && idx % 8 == 0, "class records and index are whole multiples of 8");
    printf("# sizeof(hl_slot_t) = %zu, sizeof(hl_slots_header_t) = %zu, "
           "classes %zu + index %zu\n", sizeof(hl_slot_t), sizeof(hl_slots_header_t),
           cls, idx);
    for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
        uint32_t c = caps[i], nb = 1;
        size_t want;
        char name[100];

        while ((uint64_t)nb * 2 <= c)
            nb *= 2;
        want = fixed + ((size_t)nb * 4 + 7) / 8 * 8 + (size_t)c * sizeof(hl_slot_t)
               + (size_t)(c / 8 + HL_SLOTS_RECENT + 1) * sizeof(hl_log_t);
        snprintf(name, sizeof(name),
                 "hl_slots_size(%u) = header + classes + index + tree + buckets"
                 " + slots + logs", c);
        is_int(hl_slots_size(c), want, name);
        /* The log pool (algo=log): a 280-byte record per 8 slots. */
        okf(hl_slots_size(c) <= fixed + 8 + (size_t)c * (124 + sizeof(hl_log_t) / 8)
                                + (HL_SLOTS_RECENT + 1) * sizeof(hl_log_t),
            "capacity %u: <= 159 bytes per slot + fixed part", c);
    }
    printf("# capacity 65536: %zu bytes, %zu per slot + %zu fixed\n",
           hl_slots_size(65536), (hl_slots_size(65536) - fixed) / 65536, fixed);

    {   /* the arrays start 8-aligned where the header says */
        size_t size;
        void *mem = new_block(3, &size);
        hl_slots_t t;

        is_int(hl_slots_attach(&t, mem, size, 3, 1), 1, "attach capacity 3");
        is_int(t.hdr->nbuckets, 2, "capacity 3: 2 buckets");
        is_int((char *)t.classes - (char *)mem, hdr, "class records right after the header");
        is_int((char *)t.class_index - (char *)mem, hdr + cls, "class index after them");
        is_int((char *)t.class_tree - (char *)mem, hdr + cls + idx, "class tree after the index");
        is_int((char *)t.buckets - (char *)mem, fixed, "buckets after the class tree");
        is_int((char *)t.slots - (char *)mem, fixed + 8, "slots after the buckets, 8-aligned");
        is_int((uintptr_t)t.slots % 8, 0, "slots 8-aligned");
        ok((char *)t.logs == (char *)(t.slots + 3), "log records right after the slots");
        ok((char *)(t.logs + hl_slots_nlogs(3)) == (char *)mem + size,
           "log records end at the end of the block");
        is_int(t.hdr->nclasses, 1, "a fresh table has the shared class only");
        free(mem);
    }
}

/* ---- attach ------------------------------------------------------------- */

/* Attaches a fresh block of capacity 1024 and fills 100 keys in four
 * classes (hash 0 and three others), every fifth at limit. */
static void *populated(hl_slots_t *t, size_t *size)
{
    void *mem = new_block(1024, size);
    uint32_t i;

    hl_slots_attach(t, mem, *size, 1024, 77);
    for (i = 0; i < 100; i++) {
        hl_slot_t *s = get_in(t, i, i % 4 == 0 ? 0 : 0x1000 + i % 4, 1000, NULL);
        s->bucket.count = i + 1;
        set_full(t, s, i % 5 == 0);
    }
    return mem;
}

/* Corrupts a copy of a populated block with fn and expects a re-init. */
static void expect_reinit(void (*fn)(hl_slots_t *t), const char *name)
{
    size_t size;
    hl_slots_t t, t2;
    void *mem = populated(&t, &size);
    char msg[120];

    fn(&t);
    snprintf(msg, sizeof(msg), "%s: attach re-initialises (1)", name);
    is_int(hl_slots_attach(&t2, mem, size, 1024, 5), 1, msg);
    snprintf(msg, sizeof(msg), "%s: table empty and sound after re-init", name);
    ok(t2.hdr->used == 0 && !has_id(&t2, 1) && t2.hdr->seed == 5
       && t2.hdr->nclasses == 1 && check_structure(&t2), msg);
    free(mem);
}

/* The first slot of the open list of class record 1. */
#define HEAD1(t) (&(t)->slots[(t)->classes[1].head[0] - 1])

static void bad_magic(hl_slots_t *t)     { t->hdr->magic ^= 1; }
static void bad_version(hl_slots_t *t)   { t->hdr->version = HL_SLOTS_VERSION + 1; }
static void old_version(hl_slots_t *t)   { t->hdr->version = 1; }
static void bad_nbuckets(hl_slots_t *t)  { t->hdr->nbuckets = 512; }
static void bad_used(hl_slots_t *t)      { t->hdr->used = 1025; }
static void bad_used2(hl_slots_t *t)     { t->hdr->used = 99; }
static void bad_free_head(hl_slots_t *t) { t->hdr->free_head = 1025; }
static void bad_lru_tail(hl_slots_t *t)  { t->classes[1].tail[0] = 4000; }
static void bad_lru_head(hl_slots_t *t)  { t->classes[1].head[0] = 0; }
static void bad_limit_tail(hl_slots_t *t) { t->classes[2].tail[HL_SLOT_FULL] = t->classes[2].head[HL_SLOT_FULL] + 1; }
static void chain_cycle(hl_slots_t *t)
{
    uint32_t b;

    for (b = 0; t->buckets[b] == 0; b++)
        ;
    t->slots[t->buckets[b] - 1].chain = t->buckets[b];
}
static void lru_out_of_range(hl_slots_t *t) { HEAD1(t)->lru_next = 5000; }
static void lru_back_link(hl_slots_t *t)    { t->slots[t->classes[1].tail[0] - 1].lru_prev = 0; }
static void used_slot_freed(hl_slots_t *t)  { HEAD1(t)->tag = 0; }
static void free_cycle(hl_slots_t *t)
{
    t->slots[t->hdr->free_head - 1].chain = t->hdr->free_head;
}
static void wrong_bucket(hl_slots_t *t)     { HEAD1(t)->hash ^= 1; }
static void nclasses_zero(hl_slots_t *t)    { t->hdr->nclasses = 0; }
static void nclasses_big(hl_slots_t *t)     { t->hdr->nclasses = HL_CLASSES + 1; }
static void nclasses_less(hl_slots_t *t)    { t->hdr->nclasses--; }
static void nclasses_more(hl_slots_t *t)    { t->hdr->nclasses++; }
static void class_count(hl_slots_t *t)      { t->classes[2].count++; }
static void slot_other_class(hl_slots_t *t) { HEAD1(t)->cls = 2; }
static void slot_class_big(hl_slots_t *t)   { HEAD1(t)->cls = HL_CLASSES + 5; }
static void level_mismatch(hl_slots_t *t)   { HEAD1(t)->level = HL_SLOT_FULL; }
static void level_beyond(hl_slots_t *t)     { HEAD1(t)->level = HL_SLOT_LEVELS; }
static void record0_hash(hl_slots_t *t)     { t->classes[0].hash = 5; }
static void record_dup_hash(hl_slots_t *t)  { t->classes[2].hash = t->classes[1].hash; }
static void record_zero_hash(hl_slots_t *t) { t->classes[3].hash = 0; }
static void record_beyond(hl_slots_t *t)    { t->classes[t->hdr->nclasses].count = 1; }
static void sweep_out(hl_slots_t *t)        { t->hdr->sweep = t->hdr->nclasses; }
static void recent_out(hl_slots_t *t)       { t->hdr->recent[3] = 5000; }
static void recent_pos_out(hl_slots_t *t)   { t->hdr->recent_pos = HL_SLOTS_RECENT; }
/* Returns the index position of the entry of record r (or of the first
 * empty entry). */
static uint32_t index_pos_of(hl_slots_t *t, uint32_t r)
{
    uint32_t pos;

    for (pos = 0; pos < HL_CLASS_INDEX && t->class_index[pos] != r; pos++)
        ;
    return pos;
}
static void index_lost(hl_slots_t *t)       { t->class_index[index_pos_of(t, 1)] = 0; }
static void index_dup(hl_slots_t *t)        { t->class_index[index_pos_of(t, 0)] = 1; }
static void index_big(hl_slots_t *t)        { t->class_index[index_pos_of(t, 2)] = 900; }
static void index_moved(hl_slots_t *t)      /* off its probe path */
{
    uint32_t pos = index_pos_of(t, 1), to = (pos + HL_CLASS_INDEX / 2) % HL_CLASS_INDEX;

    if (t->class_index[to] == 0) {
        t->class_index[to] = 1;
        t->class_index[pos] = 0;
    } else
        t->hdr->magic = 0;
}

static void test_attach(void)
{
    size_t size;
    void *mem = new_block(1024, &size);
    void *copy;
    hl_slots_t t, t2, t3;
    hl_slot_t *s;
    int created = -1;

    is_int(hl_slots_attach(&t, NULL, size, 1024, 1), -1, "attach NULL mem: -1");
    is_int(hl_slots_attach(&t, mem, size - 1, 1024, 1), -1, "attach too small: -1");
    is_int(hl_slots_attach(&t, mem, size, 0, 1), -1, "attach capacity 0: -1");
    is_int(hl_slots_attach(&t, (char *)mem + 4, size - 4, 4, 1), -1,
           "attach misaligned: -1");

    is_int(hl_slots_attach(&t, mem, size, 1024, 0x1234), 1, "attach zeroed block: init (1)");
    is_int(t.hdr->magic, HL_SLOTS_MAGIC, "magic set");
    is_int(t.hdr->version, HL_SLOTS_VERSION, "version set");
    is_int(t.hdr->capacity, 1024, "capacity set");
    is_int(t.hdr->nbuckets, 1024, "nbuckets 1024");
    ok(t.hdr->seed == 0x1234, "seed stored");
    is_int(t.hdr->used, 0, "empty");
    ok(check_structure(&t), "fresh table sound (all slots free)");

    s = hl_slots_get(&t, "alpha", 5, 3, 0, 1000, &created);
    ok(s != NULL, "get alpha");
    is_int(created, 1, "alpha created");
    s->bucket.count = 42;
    s->bucket.t = 123456789;
    s->expires_ms = 5000;
    is_int(t.hdr->inserts, 1, "inserts 1");

    is_int(hl_slots_attach(&t2, mem, size, 1024, 0x9999), 0, "second attach keeps (0)");
    ok(t2.hdr->seed == 0x1234, "second attach keeps the stored seed");
    s = hl_slots_find(&t2, "alpha", 5);
    ok(s != NULL && s->bucket.count == 42 && s->bucket.t == 123456789
       && s->expires_ms == 5000 && s->tag == 3, "stored counter kept");
    is_int(t2.hdr->inserts, 1, "statistics kept");

    /* pointer-free: a byte copy at another address (a restored file) works */
    copy = malloc(size);
    memcpy(copy, mem, size);
    is_int(hl_slots_attach(&t3, copy, size, 1024, 1), 0, "copy at another address kept (0)");
    s = hl_slots_find(&t3, "alpha", 5);
    ok(s != NULL && s->bucket.count == 42, "counter found in the copy");
    ok(s != NULL && (char *)s >= (char *)copy && (char *)s < (char *)copy + size,
       "slot points into the copy");
    free(copy);

    /* another capacity in the same (big enough) block */
    is_int(hl_slots_attach(&t2, mem, size, 512, 7), 1, "attach capacity 512 re-inits (1)");
    is_int(t2.hdr->capacity, 512, "capacity now 512");
    ok(hl_slots_find(&t2, "alpha", 5) == NULL, "alpha gone");
    ok(check_structure(&t2), "512 table sound");
    is_int(hl_slots_attach(&t2, mem, size, 1024, 7), 1, "back to 1024 re-inits (1)");
    is_int(hl_slots_attach(&t2, mem, size, 1024, 8), 0, "then kept (0)");
    free(mem);

    expect_reinit(bad_magic, "bad magic");
    expect_reinit(bad_version, "other version");
    expect_reinit(bad_nbuckets, "wrong nbuckets");
    expect_reinit(bad_used, "used > capacity");
    expect_reinit(bad_used2, "used off by one");
    expect_reinit(bad_free_head, "free_head > capacity");
    expect_reinit(old_version, "version 1 (one global LRU list)");
    expect_reinit(bad_lru_tail, "class list tail > capacity");
    expect_reinit(bad_lru_head, "class list head lost");
    expect_reinit(bad_limit_tail, "at-limit list tail wrong");
    expect_reinit(chain_cycle, "chain cycle");
    expect_reinit(lru_out_of_range, "LRU link out of range");
    expect_reinit(lru_back_link, "LRU back link broken");
    expect_reinit(used_slot_freed, "used slot with tag 0");
    expect_reinit(free_cycle, "free list cycle");
    expect_reinit(wrong_bucket, "slot in the wrong bucket");
    expect_reinit(nclasses_zero, "nclasses 0");
    expect_reinit(nclasses_big, "nclasses > HL_CLASSES");
    expect_reinit(nclasses_less, "nclasses one too few");
    expect_reinit(nclasses_more, "nclasses one too many");
    expect_reinit(class_count, "class count off by one");
    expect_reinit(slot_other_class, "slot in the list of another class");
    expect_reinit(slot_class_big, "slot class out of range");
    expect_reinit(level_mismatch, "slot level and list disagree");
    expect_reinit(level_beyond, "slot level beyond the last");
    expect_reinit(record0_hash, "shared class with a hash");
    expect_reinit(record_dup_hash, "two class records with one hash");
    expect_reinit(record_zero_hash, "class record with hash 0");
    expect_reinit(record_beyond, "unused class record not empty");
    expect_reinit(sweep_out, "sweep cursor >= nclasses");
    expect_reinit(recent_out, "recent slot out of range");
    expect_reinit(recent_pos_out, "recent position out of range");
    expect_reinit(index_lost, "class index entry lost");
    expect_reinit(index_dup, "class index entry repeated");
    expect_reinit(index_big, "class index entry out of range");
    expect_reinit(index_moved, "class index entry off its probe path");
    {   /* the class tree is derived: attach rebuilds it */
        size_t size;
        hl_slots_t t4, t5;
        void *mem4 = populated(&t4, &size);
        memset(t4.class_tree, 0xff, HL_CLASSES * sizeof(uint16_t));
        is_int(hl_slots_attach(&t5, mem4, size, 1024, 5), 0, "garbage class tree: block kept (0)");
        ok(check_structure(&t5), "... and the tree rebuilt");
        free(mem4);
    }
    {   /* the populated block itself is sound and kept */
        size_t size;
        hl_slots_t t4, t5;
        void *mem4 = populated(&t4, &size);
        ok(check_structure(&t4) && t4.hdr->nclasses == 4, "populated block: 4 classes, sound");
        is_int(hl_slots_attach(&t5, mem4, size, 1024, 5), 0, "populated block kept (0)");
        free(mem4);
    }
}

/* ---- fill, evict, round trips ------------------------------------------- */

static void test_fill_evict(void)
{
    size_t size;
    void *mem = new_block(1024, &size);
    hl_slots_t t;
    uint32_t i, bad;
    int created;
    collect_t *c = calloc(1, sizeof(*c));
    long want;

    hl_slots_attach(&t, mem, size, 1024, 42);
    for (i = 0, bad = 0; i < 1024; i++) {
        if (get_id(&t, i, 1000, &created) == NULL || created != 1)
            bad++;
    }
    is_int(bad, 0, "1024 keys created");
    is_int(t.hdr->used, 1024, "used == capacity");
    is_int(t.hdr->free_head, 0, "free list empty");
    is_int(t.hdr->evictions, 0, "no evictions while filling");
    for (i = 0, bad = 0; i < 1024; i++)
        bad += !has_id(&t, i);
    is_int(bad, 0, "all 1024 found");
    ok(check_structure(&t), "full table sound");

    /* touch every multiple of 3: LRU order (oldest first) becomes the
     * non-multiples ascending, then the multiples ascending */
    for (i = 0, bad = 0; i < 1024; i += 3) {
        if (get_id(&t, i, 1000, &created) == NULL || created != 0)
            bad++;
    }
    is_int(bad, 0, "re-get of existing keys does not create");
    is_int(t.hdr->inserts, 1024, "inserts unchanged by hits");

    for (i = 1024, bad = 0; i < 2024; i++) {
        if (get_id(&t, i, 1000, &created) == NULL || created != 1)
            bad++;
    }
    is_int(bad, 0, "1000 more keys created");
    is_int(t.hdr->evictions, 1000, "1000 evictions counted");
    is_int(t.hdr->used, 1024, "used still == capacity");
    is_int(t.hdr->inserts, 2024, "inserts 2024");
    {   /* evicted: the 682 non-multiples of 3, then the 318 oldest multiples */
        uint32_t wrong = 0, mult = 0;

        for (i = 0; i < 1024; i++) {
            int expect_present;
            if (i % 3 != 0)
                expect_present = 0;
            else
                expect_present = mult++ >= 318;
            wrong += has_id(&t, i) != expect_present;
        }
        is_int(wrong, 0, "exactly the least recently used were evicted");
        for (i = 1024, wrong = 0; i < 2024; i++)
            wrong += !has_id(&t, i);
        is_int(wrong, 0, "all new keys present");
    }
    c->n = 0;
    is_int(walk_slots(&t, collect_cb, c), 1024, "walk visits 1024");
    for (i = 0, bad = 0; i < 1000; i++)
        bad += c->ids[i] != (long)(2023 - i);
    want = 1023;  /* then the surviving multiples of 3, newest first */
    for (i = 1000; i < 1024; i++, want -= 3)
        bad += c->ids[i] != want;
    is_int(bad, 0, "walk order is MRU first");
    ok(check_structure(&t), "table sound after evictions");

    for (i = 2024; i < 5024; i++)
        get_id(&t, i, 1000, NULL);
    is_int(t.hdr->evictions, 4000, "4000 evictions after 3000 more keys");
    for (i = 0, bad = 0; i < 5024; i++)
        bad += has_id(&t, i) != (i >= 4000);
    is_int(bad, 0, "exactly the last 1024 keys present");

    for (i = 0, bad = 0; i < 5024; i++) {
        char k[HL_KEY_MAX];
        size_t len = simple_key(k, i);
        bad += hl_slots_remove(&t, k, len) != (i >= 4000);
    }
    is_int(bad, 0, "remove returns 1 exactly for present keys");
    is_int(t.hdr->used, 0, "used 0 after removing all");
    ok(t.classes[0].head[0] == 0 && t.classes[0].tail[0] == 0
       && t.classes[0].count == 0, "class 0 lists empty");
    ok(check_structure(&t), "empty table sound, every slot free");
    for (i = 0, bad = 0; i < 5024; i++)
        bad += has_id(&t, i);
    is_int(bad, 0, "nothing found after removal");
    is_int(hl_slots_remove(&t, "k1", 2), 0, "removing twice returns 0");

    for (i = 0; i < 1024; i++)
        get_id(&t, i, 1000, NULL);
    is_int(t.hdr->evictions, 4000, "refill from the free list: no eviction");
    for (i = 0, bad = 0; i < 1024; i++)
        bad += !has_id(&t, i);
    is_int(bad, 0, "refilled keys found");
    hl_slots_clear(&t);
    ok(t.hdr->used == 0 && !has_id(&t, 5) && t.hdr->seed == 42
       && t.hdr->capacity == 1024, "clear empties, keeps capacity and seed");
    ok(check_structure(&t), "cleared table sound");
    free(c);
    free(mem);
}

/* Fills a capacity-16 table with k0..k15 (k0 least recently used). */
static void fill16(hl_slots_t *t)
{
    uint32_t i;

    hl_slots_clear(t);
    for (i = 0; i < 16; i++)
        get_id(t, i, 1000, NULL);
}

/* Sets expires_ms of "k<id>". */
static void set_expiry(hl_slots_t *t, uint32_t id, int64_t when)
{
    char k[HL_KEY_MAX];
    size_t len = simple_key(k, id);

    hl_slots_find(t, k, len)->expires_ms = when;
}

static void test_expired_reuse(void)
{
    size_t size;
    void *mem = new_block(16, &size);
    hl_slots_t t;
    int created;
    const int64_t now = 5000;

    hl_slots_attach(&t, mem, size, 16, 3);

    fill16(&t);  /* position p from the tail (1-based) holds k(p-1) */
    set_expiry(&t, 2, now - 1);
    ok(get_id(&t, 100, now, &created) != NULL && created == 1, "insert into a full table");
    ok(!has_id(&t, 2), "the expired slot (3rd from the tail) was reused");
    ok(has_id(&t, 0), "the LRU tail was kept");
    is_int(t.hdr->evictions, 0, "reusing an expired slot is not an eviction");
    is_int(t.hdr->inserts, 17, "but it is an insert");

    fill16(&t);
    set_expiry(&t, 1, now - 10);
    set_expiry(&t, 4, now - 10);
    get_id(&t, 100, now, NULL);
    ok(!has_id(&t, 1) && !has_id(&t, 4) && has_id(&t, 0),
       "every expired slot among the oldest is freed at once");
    is_int(t.hdr->reclaims, 2, "two reclaimed");
    is_int(t.hdr->used, 15, "one of them taken, the other free");
    get_id(&t, 101, now, NULL);
    ok(has_id(&t, 0) && t.hdr->used == 16, "the next key takes the free one");
    is_int(t.hdr->evictions, 0, "still no eviction");
    get_id(&t, 102, now, NULL);
    ok(!has_id(&t, 0), "no expired slot left: the tail goes");
    is_int(t.hdr->evictions, 1, "and that is an eviction");

    fill16(&t);
    set_expiry(&t, HL_EVICT_SCAN - 1, now);  /* expires exactly now */
    get_id(&t, 100, now, NULL);
    ok(!has_id(&t, HL_EVICT_SCAN - 1) && has_id(&t, 0),
       "slot HL_EVICT_SCAN from the tail, expiring exactly now, is reused");
    is_int(t.hdr->evictions, 0, "no eviction");

    fill16(&t);
    set_expiry(&t, HL_EVICT_SCAN, now - 1);  /* one past the scan */
    get_id(&t, 100, now, NULL);
    ok(has_id(&t, HL_EVICT_SCAN) && !has_id(&t, 0),
       "an expired slot beyond HL_EVICT_SCAN is not looked at: tail evicted");
    is_int(t.hdr->evictions, 1, "eviction counted");

    fill16(&t);
    set_expiry(&t, 0, now + 1);  /* not yet expired */
    get_id(&t, 100, now, NULL);
    ok(!has_id(&t, 0), "nothing expired: the tail goes");
    is_int(t.hdr->evictions, 1, "eviction counted");

    {   /* a new slot has expires_ms 0 until the caller sets it */
        hl_slot_t *s;
        fill16(&t);
        s = hl_slots_get(&t, "fresh", 5, 1, 0, now, &created);
        ok(s != NULL && created && s->expires_ms == 0, "new slot: expires_ms 0");
    }
    ok(check_structure(&t), "table sound");
    free(mem);
}

/* ---- tags, LRU order, odd keys ------------------------------------------ */

static void test_tags(void)
{
    size_t size;
    void *mem = new_block(8, &size);
    hl_slots_t t;
    hl_slot_t *s, *s2;
    int created = -1;

    hl_slots_attach(&t, mem, size, 8, 9);
    s = hl_slots_get(&t, "ip:1", 4, 1, 0, 10, &created);
    ok(s != NULL && created == 1 && s->tag == 1, "created with tag 1");
    ok(s->bucket.t == 0 && s->bucket.count == 0 && s->bucket.prev_count == 0,
       "new bucket zeroed");
    s->bucket.t = 99;
    s->bucket.count = 5;
    s->bucket.prev_count = 4;
    s->expires_ms = 777;

    s2 = hl_slots_get(&t, "ip:1", 4, 1, 0, 20, &created);
    ok(s2 == s && created == 0, "same slot, not created");
    ok(s2->bucket.count == 5 && s2->bucket.t == 99 && s2->expires_ms == 777,
       "same tag: bucket kept");

    s2 = hl_slots_get(&t, "ip:1", 4, 2, 0, 20, &created);
    ok(s2 == s && created == 0, "other tag: same slot, not created");
    ok(s2->tag == 2 && s2->bucket.t == 0 && s2->bucket.count == 0
       && s2->bucket.prev_count == 0 && s2->expires_ms == 0,
       "other tag: bucket reset, tag updated, expires_ms 0");
    is_int(t.hdr->inserts, 1, "tag change is not an insert");

    s = hl_slots_get(&t, "ip:2", 4, 0, 0, 20, NULL);
    ok(s != NULL && s->tag == 1, "tag 0 is taken as 1 (created may be NULL)");
    s->bucket.count = 3;
    s = hl_slots_get(&t, "ip:2", 4, 1, 0, 20, &created);
    ok(s->bucket.count == 3 && created == 0, "tag 0 then 1: same tag, kept");
    free(mem);
}

static void test_lru_order(void)
{
    size_t size;
    void *mem = new_block(8, &size);
    hl_slots_t t;
    collect_t *c = calloc(1, sizeof(*c));

    hl_slots_attach(&t, mem, size, 8, 9);
    c->n = 0;
    is_int(walk_slots(&t, collect_cb, c), 0, "walk on an empty table: 0");
    get_id(&t, 1, 0, NULL);
    get_id(&t, 2, 0, NULL);
    get_id(&t, 3, 0, NULL);
    get_id(&t, 4, 0, NULL);
    get_id(&t, 2, 0, NULL);
    ok(hl_slots_find(&t, "k1", 2) != NULL, "find k1 (does not touch the order)");
    c->n = 0;
    is_int(walk_slots(&t, collect_cb, c), 4, "walk visits 4");
    ok(c->ids[0] == 2 && c->ids[1] == 4 && c->ids[2] == 3 && c->ids[3] == 1,
       "order MRU first: k2 k4 k3 k1");
    c->n = 0;
    c->stop_after = 2;
    is_int(walk_slots(&t, collect_cb, c), 2, "walk stops when fn returns nonzero");
    hl_slots_remove(&t, "k4", 2);
    get_id(&t, 1, 0, NULL);
    c->n = 0;
    c->stop_after = 0;
    walk_slots(&t, collect_cb, c);
    ok(c->n == 3 && c->ids[0] == 1 && c->ids[1] == 2 && c->ids[2] == 3,
       "after remove k4 and get k1: k1 k2 k3");
    ok(check_structure(&t), "table sound");
    free(c);
    free(mem);
}

static void test_odd_keys(void)
{
    size_t size;
    void *mem = new_block(64, &size);
    hl_slots_t t;
    char a[HL_KEY_MAX + 1], b[HL_KEY_MAX];
    hl_slot_t *s1, *s2, *s3, *s4;
    int created;

    hl_slots_attach(&t, mem, size, 64, 11);
    s1 = hl_slots_get(&t, "a\0b", 3, 1, 0, 0, NULL);
    s2 = hl_slots_get(&t, "a\0c", 3, 1, 0, 0, NULL);
    s3 = hl_slots_get(&t, "a", 1, 1, 0, 0, NULL);
    s4 = hl_slots_get(&t, "a\0", 2, 1, 0, 0, NULL);
    ok(s1 && s2 && s3 && s4 && s1 != s2 && s1 != s3 && s2 != s3 && s4 != s3
       && s4 != s1, "keys with embedded NUL bytes are distinct");
    ok(hl_slots_find(&t, "a\0b", 3) == s1 && hl_slots_find(&t, "a\0c", 3) == s2
       && hl_slots_find(&t, "a\0", 2) == s4, "and found again");
    ok(hl_slots_find(&t, "a\0d", 3) == NULL, "a\\0d absent");
    ok(hl_slots_get(&t, "", 0, 1, 0, 0, &created) != NULL && created == 1, "empty key works");
    ok(hl_slots_find(&t, "", 0) != NULL, "empty key found");

    memset(a, 'x', sizeof(a));
    memcpy(b, a, HL_KEY_MAX);
    b[HL_KEY_MAX - 1] = 'y';
    s1 = hl_slots_get(&t, a, HL_KEY_MAX, 1, 0, 0, NULL);
    s2 = hl_slots_get(&t, b, HL_KEY_MAX, 1, 0, 0, NULL);
    ok(s1 && s2 && s1 != s2 && s1->key_len == HL_KEY_MAX,
       "maximum-length keys differing in the last byte");
    ok(hl_slots_find(&t, a, HL_KEY_MAX) == s1 && hl_slots_find(&t, b, HL_KEY_MAX) == s2,
       "maximum-length keys found");
    ok(hl_slots_find(&t, a, HL_KEY_MAX - 1) == NULL, "a prefix is another key");
    ok(hl_slots_get(&t, a, HL_KEY_MAX + 1, 1, 0, 0, &created) == NULL && created == 0,
       "get of a too long key: NULL");
    ok(hl_slots_find(&t, a, HL_KEY_MAX + 1) == NULL, "find of a too long key: NULL");
    is_int(hl_slots_remove(&t, a, HL_KEY_MAX + 1), 0, "remove of a too long key: 0");
    is_int(hl_slots_remove(&t, "a\0b", 3), 1, "remove a\\0b");
    ok(hl_slots_find(&t, "a\0b", 3) == NULL && hl_slots_find(&t, "a\0c", 3) != NULL,
       "only a\\0b removed");
    ok(check_structure(&t), "table sound");
    free(mem);
}

/* ---- hash and key compaction -------------------------------------------- */

static int cmp_keys(const void *x, const void *y)
{
    return memcmp(x, y, HL_KEY_MAX);
}

static void test_key_compact(void)
{
    char long1[300], long2[300], out1[HL_KEY_MAX], out2[HL_KEY_MAX];
    char (*many)[HL_KEY_MAX];
    size_t n, i;
    int hex_ok = 1, dups = 0;

    n = hl_key_compact(out1, "short\0key", 9);
    ok(n == 9 && memcmp(out1, "short\0key", 9) == 0, "short key copied as is");
    memset(long1, 'q', sizeof(long1));
    n = hl_key_compact(out1, long1, HL_KEY_MAX);
    ok(n == HL_KEY_MAX && memcmp(out1, long1, HL_KEY_MAX) == 0,
       "key of exactly HL_KEY_MAX copied as is");

    memset(long1, 'p', sizeof(long1));
    memcpy(long2, long1, sizeof(long2));
    long2[299] = 'z';
    n = hl_key_compact(out1, long1, 300);
    is_int(n, HL_KEY_MAX, "long key compacted to HL_KEY_MAX");
    ok(memcmp(out1, long1, HL_KEY_MAX - 17) == 0, "first HL_KEY_MAX-17 bytes kept");
    ok(out1[HL_KEY_MAX - 17] == '~', "then '~'");
    for (i = HL_KEY_MAX - 16; i < HL_KEY_MAX; i++)
        hex_ok &= (out1[i] >= '0' && out1[i] <= '9') || (out1[i] >= 'a' && out1[i] <= 'f');
    ok(hex_ok, "then 16 lowercase hex digits");
    hl_key_compact(out2, long2, 300);
    ok(memcmp(out1, out2, HL_KEY_MAX) != 0, "long keys differing only at the end stay distinct");
    hl_key_compact(out2, long1, 300);
    ok(memcmp(out1, out2, HL_KEY_MAX) == 0, "compaction is deterministic");
    is_int(hl_key_compact(out2, long1, HL_KEY_MAX + 1), HL_KEY_MAX, "HL_KEY_MAX+1 compacted");
    ok(memcmp(out1, out2, HL_KEY_MAX) != 0, "length is part of the compacted key");

    /* 5000 long keys with a 200-byte shared prefix and a numeric suffix,
     * some with NUL bytes: all compact to distinct keys */
    many = malloc(5000 * sizeof(*many));
    for (i = 0; i < 5000; i++) {
        char k[260];
        int len;
        memset(k, 'r', 200);
        if (i % 2)
            k[150] = '\0';
        len = 200 + snprintf(k + 200, 60, "/%zu", i / 2);
        hl_key_compact(many[i], k, (size_t)len);
    }
    qsort(many, 5000, sizeof(*many), cmp_keys);
    for (i = 1; i < 5000; i++)
        dups += memcmp(many[i - 1], many[i], HL_KEY_MAX) == 0;
    is_int(dups, 0, "5000 long keys with shared prefixes compact to distinct keys");
    free(many);

    {   /* compacted keys work in the table, in place */
        size_t size;
        void *mem = new_block(16, &size);
        hl_slots_t t;
        char k[HL_KEY_MAX];

        hl_slots_attach(&t, mem, size, 16, 1);
        n = hl_key_compact(k, long1, 300);
        ok(hl_slots_get(&t, k, n, 1, 0, 0, NULL) != NULL, "compacted key inserted");
        hl_key_compact(out2, long2, 300);
        ok(hl_slots_find(&t, out2, HL_KEY_MAX) == NULL, "the sibling long key is absent");
        memcpy(long2, long1, 300);
        n = hl_key_compact(long2, long2, 300);   /* out overlapping key */
        ok(n == HL_KEY_MAX && hl_slots_find(&t, long2, n) != NULL,
           "compaction in place gives the same key");
        free(mem);
    }
}

/* ---- eviction classes --------------------------------------------------- */

#define CLASS_A 0xA11CE5ULL
#define CLASS_B 0xB0BULL

/* Returns 1 if "k<id>" is present with count, at-limit flag and class
 * record as given. */
static int intact(hl_slots_t *t, uint32_t id, uint32_t count, int at_limit,
                  uint64_t cls)
{
    char k[HL_KEY_MAX];
    size_t len = simple_key(k, id);
    hl_slot_t *s = hl_slots_find(t, k, len);

    return s != NULL && s->bucket.count == count
           && (s->level == HL_SLOT_FULL) == at_limit
           && (int)s->cls == class_record(t, cls);
}

static void test_class_flood(void)
{
    static const uint32_t floods[] = { 64, 1000, 100000 };
    size_t size, f;
    void *mem = new_block(64, &size);
    hl_slots_t t;
    uint32_t i;

    hl_slots_attach(&t, mem, size, 64, 21);
    for (f = 0; f < sizeof(floods) / sizeof(floods[0]); f++) {
        int lim;
        for (lim = 0; lim < 2; lim++) {
            hl_slot_t *s;

            hl_slots_clear(&t);
            s = get_in(&t, 1, CLASS_A, 1000, NULL);   /* the victim, at limit */
            s->bucket.count = 3;
            set_full(&t, s, 1);
            get_in(&t, 2, CLASS_A, 1000, NULL)->bucket.count = 1;  /* not at limit */
            for (i = 0; i < floods[f]; i++) {
                s = get_in(&t, 1000 + i, CLASS_B, 2000 + i, NULL);
                s->bucket.count = 1;
                if (lim)   /* the flooder's keys at their limit too */
                    set_full(&t, s, 1);
            }
            okf(intact(&t, 1, 3, 1, CLASS_A), "flood of %u keys%s on quota B: "
                "quota A's key at limit intact", floods[f], lim ? " at limit" : "");
            okf(intact(&t, 2, 1, 0, CLASS_A),
                "... and its live key not at limit too (%u)", floods[f]);
            okf(t.classes[class_record(&t, CLASS_B)].count == 62
                && t.hdr->used == 64 && t.hdr->evictions == floods[f] - 62,
                "... B holds the other 62 slots, %llu evictions",
                (unsigned long long)t.hdr->evictions);
            okf(check_structure(&t), "... table sound after a flood of %u",
                floods[f]);
        }
    }

    /* Within one quota: the key at its limit is evicted last. */
    hl_slots_clear(&t);
    get_in(&t, 1, CLASS_A, 1000, NULL)->bucket.count = 3;
    set_full(&t, hl_slots_find(&t, "k1", 2), 1);
    for (i = 0; i < 100000; i++)
        get_in(&t, 1000 + i, CLASS_A, 2000, NULL);
    ok(intact(&t, 1, 3, 1, CLASS_A), "flood of 100000 fresh keys of the same quota: "
       "its key at limit intact");
    is_int(t.classes[class_record(&t, CLASS_A)].count, 64, "one class holds the table");
    ok(check_structure(&t), "table sound");
    /* ... but at-limit keys go, oldest first, once no other key is left */
    hl_slots_clear(&t);
    for (i = 0; i < 64; i++)
        set_full(&t, get_in(&t, i, CLASS_A, 1000, NULL), 1);
    get_in(&t, 100, CLASS_A, 1000, NULL);
    ok(!has_id(&t, 0) && has_id(&t, 1), "all at limit: the oldest at limit is evicted");
    set_full(&t, hl_slots_find(&t, "k1", 2), 0);
    get_in(&t, 101, CLASS_A, 1000, NULL);
    ok(has_id(&t, 100) && !has_id(&t, 1) && has_id(&t, 2),
       "a key no longer at limit goes before keys at limit");

    /* Ties go to the requester's own class; a larger class pays. */
    hl_slots_clear(&t);
    for (i = 0; i < 32; i++) {
        get_in(&t, i, CLASS_A, 1000, NULL);
        get_in(&t, 100 + i, CLASS_B, 1000, NULL);
    }
    get_in(&t, 200, CLASS_B, 1000, NULL);
    ok(has_id(&t, 0) && !has_id(&t, 100), "A 32 = B 32: B's new key evicts B's oldest");
    get_in(&t, 300, CLASS_A, 1000, NULL);
    ok(!has_id(&t, 0) && has_id(&t, 101), "A 32 = B 32: A's new key evicts A's oldest");
    hl_slots_clear(&t);
    for (i = 0; i < 44; i++)
        get_in(&t, 100 + i, CLASS_B, 1000, NULL);
    for (i = 0; i < 20; i++)
        get_in(&t, i, CLASS_A, 1000, NULL);
    for (i = 0; i < 12; i++)
        get_in(&t, 20 + i, CLASS_A, 1000, NULL);
    ok(has_id(&t, 0) && !has_id(&t, 111) && has_id(&t, 112),
       "A 20 < B 44: A's 12 new keys evict B's 12 oldest");
    get_in(&t, 32, CLASS_A, 1000, NULL);
    ok(!has_id(&t, 0) && has_id(&t, 112), "then at 32 = 32 A evicts its own");
    ok(check_structure(&t), "table sound");
    free(mem);
}
/* Fill levels: the least filled slot goes first, the oldest among equals;
 * the requester's own less filled slot before a fuller one of a larger
 * class. */
static void test_fill_levels(void)
{
    size_t size;
    void *mem = new_block(64, &size);
    hl_slots_t t;
    uint32_t i, bad;

    is_int(hl_slots_fill_level(0, 5), 0, "fill level: 0 of 5 is 0");
    is_int(hl_slots_fill_level(1, 5), 0, "fill level: 1 of 5 is 0 (one request)");
    is_int(hl_slots_fill_level(2, 5), 3, "fill level: 2 of 5 is 1 + 12/5 = 3");
    is_int(hl_slots_fill_level(4, 5), 5, "fill level: 4 of 5 is 1 + 24/5 = 5");
    is_int(hl_slots_fill_level(5, 5), HL_SLOT_FULL, "fill level: 5 of 5 is full");
    is_int(hl_slots_fill_level(9, 5), HL_SLOT_FULL, "fill level: 9 of 5 is full");
    is_int(hl_slots_fill_level(2, 1000000), 1, "fill level: 2 of a million is 1");
    is_int(hl_slots_fill_level(999999, 1000000), HL_SLOT_FULL - 1,
           "fill level: one short of a million is full - 1");
    is_int(hl_slots_fill_level(1, 1), HL_SLOT_FULL, "fill level: 1 of 1 is full");
    is_int(hl_slots_fill_level(0, 0), 0, "fill level: limit 0 reads as 1");
    is_int(hl_slots_fill_level(UINT32_MAX - 1, UINT32_MAX), HL_SLOT_FULL - 1,
           "fill level: no overflow near 2^32");
    for (i = 1, bad = 0; i < 1000; i++)
        bad += hl_slots_fill_level(i + 1, 1000) < hl_slots_fill_level(i, 1000);
    is_int(bad, 0, "fill level never falls as the count grows");

    hl_slots_attach(&t, mem, size, 64, 25);
    /* the case: one key one short of its limit, 64 new keys */
    hl_slots_set_level(&t, get_in(&t, 1, CLASS_A, 1000, NULL),
                       hl_slots_fill_level(4, 5));
    for (i = 0; i < 64; i++)
        get_in(&t, 100 + i, CLASS_A, 1000, NULL);
    ok(has_id(&t, 1) && !has_id(&t, 100) && has_id(&t, 101),
       "a key 4 of 5 outlives 64 new keys; the oldest new key went");
    is_int(t.hdr->evictions, 1, "one eviction");
    /* levels in order, the oldest first among equals */
    hl_slots_clear(&t);
    for (i = 0; i < 64; i++)
        hl_slots_set_level(&t, get_in(&t, i, CLASS_A, 1000, NULL), (uint8_t)(i % 4));
    for (i = 0, bad = 0; i < 64; i++) {
        uint32_t gone = (i % 16) * 4 + i / 16;   /* level i/16, in age order */
        uint32_t next = ((i + 1) % 16) * 4 + (i + 1) / 16;

        hl_slots_set_level(&t, get_in(&t, 1000 + i, CLASS_A, 1000, NULL), HL_SLOT_FULL);
        bad += has_id(&t, gone) || (i < 63 && !has_id(&t, next));
    }
    is_int(bad, 0, "64 new keys evict level 0 first, then 1, 2, 3, oldest first in each");
    ok(check_structure(&t), "table sound");
    /* the requester's own least filled slot before a fuller one of the
     * larger class; at equal levels the larger class pays */
    hl_slots_clear(&t);
    for (i = 0; i < 48; i++)
        hl_slots_set_level(&t, get_in(&t, i, CLASS_A, 1000, NULL), 3);
    for (i = 0; i < 16; i++)
        get_in(&t, 100 + i, CLASS_B, 1000, NULL);
    for (i = 0; i < 100; i++)
        get_in(&t, 200 + i, CLASS_B, 1000, NULL);
    for (i = 0, bad = 0; i < 48; i++)
        bad += !has_id(&t, i);
    is_int(bad, 0, "100 new keys of B (16 slots, level 0): A's 48 keys at level 3 kept");
    is_int(t.classes[class_record(&t, CLASS_B)].count, 16, "B still holds 16");
    hl_slots_set_level(&t, hl_slots_find(&t, "k40", 3), 0);
    get_in(&t, 300, CLASS_B, 1000, NULL);
    ok(!has_id(&t, 40) && has_id(&t, 299),
       "A's key back at level 0: B's next new key evicts it, A being larger");
    ok(check_structure(&t), "table sound");
    free(mem);
}

static void test_class_expiry(void)
{
    size_t size;
    void *mem = new_block(64, &size);
    hl_slots_t t;
    uint32_t i, d;
    const int64_t now = 50000;

    hl_slots_attach(&t, mem, size, 64, 22);
    /* the requester's own expired slot first */
    for (i = 0; i < 32; i++) {
        get_in(&t, i, CLASS_A, 1000, NULL);
        get_in(&t, 100 + i, CLASS_B, 1000, NULL);
    }
    set_expiry(&t, 105, now - 1);
    get_in(&t, 200, CLASS_B, now, NULL);
    ok(!has_id(&t, 105) && has_id(&t, 100) && has_id(&t, 0),
       "B's expired slot reused for B's new key");
    is_int(t.hdr->evictions, 0, "no live slot evicted");
    /* then the victim class's */
    set_expiry(&t, 7, now - 1);
    get_in(&t, 201, CLASS_B, now, NULL);   /* A 32 = B 32: B is the victim */
    ok(has_id(&t, 7) && !has_id(&t, 100), "a tie: B evicts its own oldest, A's expired "
       "slot stays");
    set_expiry(&t, 102, now - 1);
    get_in(&t, 300, CLASS_A, now, NULL);
    ok(!has_id(&t, 7) && has_id(&t, 0), "A's new key: its own expired slot first");
    hl_slots_clear(&t);
    for (i = 0; i < 40; i++)
        get_in(&t, 100 + i, CLASS_B, 1000, NULL);
    for (i = 0; i < 24; i++)
        get_in(&t, i, CLASS_A, 1000, NULL);
    set_expiry(&t, 105, now - 1);
    get_in(&t, 24, CLASS_A, now, NULL);
    ok(!has_id(&t, 105) && has_id(&t, 100),
       "the victim class's expired slot (6th oldest) before its oldest live one");
    is_int(t.hdr->evictions, 0, "no eviction");
    ok(check_structure(&t), "table sound");

    /* a class nobody uses any more is drained by the sweep */
    hl_slots_clear(&t);
    for (d = 0; d < 3; d++)         /* three dead quotas of 16 expired keys */
        for (i = 0; i < 16; i++)
            get_in(&t, 1000 + 16 * d + i, 0x900 + d, 1000, NULL)->expires_ms = now - 1;
    for (i = 0; i < 16; i++)
        get_in(&t, i, CLASS_A, 1000, NULL);
    for (i = 0; i < 64; i++)
        get_in(&t, 100 + i, CLASS_B, now, NULL);
    printf("# B's 64 new keys: %llu reclaims, %llu evictions\n",
           (unsigned long long)t.hdr->reclaims, (unsigned long long)t.hdr->evictions);
    is_int(t.hdr->reclaims, 48, "64 new keys of B: the sweep frees all 48 expired "
           "slots of three quotas nobody uses");
    ok(t.hdr->evictions <= 16, "B evicted at most 16 live keys, its own");
    for (i = 0, d = 0; i < 16; i++)
        d += !has_id(&t, i);
    is_int(d, 0, "A's 16 live keys intact");
    is_int(t.classes[class_record(&t, CLASS_B)].count, 48, "B holds the other 48");
    ok(check_structure(&t), "table sound");
    free(mem);
}

static void test_class_misc(void)
{
    size_t size;
    void *mem = new_block(2048, &size);
    hl_slots_t t;
    hl_slot_t *s, *s2;
    uint32_t i, bad;
    int created;

    hl_slots_attach(&t, mem, size, 2048, 23);
    /* more classes than records: the rest share record 0 */
    for (i = 0, bad = 0; i < 1100; i++) {
        s = get_in(&t, i, 0x5000 + i, 1000, NULL);
        bad += s->cls != (i < HL_CLASSES - 1 ? i + 1 : 0);
    }
    is_int(bad, 0, "1023 classes get their own record, the rest share record 0");
    is_int(t.hdr->nclasses, HL_CLASSES, "every record taken");
    is_int(class_record(&t, 0x5000 + 1099), 0, "class_of a late class: 0");
    is_int(class_record(&t, 0x5000 + 5), 6, "class_of an early class: its record");
    ok(check_structure(&t), "table sound with every record taken");
    {   /* kept by attach */
        hl_slots_t t2;
        is_int(hl_slots_attach(&t2, mem, size, 2048, 1), 0, "full class table kept by attach");
    }
    hl_slots_clear(&t);
    is_int(t.hdr->nclasses, 1, "clear drops every class");
    is_int(class_record(&t, 0x5000), -1, "class_of an unknown class: -1");
    is_int(class_record(&t, 0), 0, "class_of hash 0: 0");

    /* a key asked for in another class moves there */
    s = get_in(&t, 1, CLASS_A, 1000, NULL);
    s->bucket.count = 9;
    set_full(&t, s, 1);
    s2 = get_in(&t, 1, CLASS_B, 1000, &created);
    ok(s2 == s && !created && s->bucket.count == 9 && s->level == HL_SLOT_FULL
       && (int)s->cls == class_record(&t, CLASS_B), "moved to B, counter and flag kept");
    ok(t.classes[class_record(&t, CLASS_A)].count == 0
       && t.classes[class_record(&t, CLASS_B)].count == 1, "class counts follow");
    s2 = hl_slots_get(&t, "k1", 2, 2, CLASS_B, 1000, &created);
    ok(s2 == s && s->bucket.count == 0 && s->level == 0,
       "another tag: bucket reset and no longer at limit");
    ok(check_structure(&t), "table sound");
    free(mem);

    /* the slots of one decision never take each other's place */
    mem = new_block(64, &size);
    hl_slots_attach(&t, mem, size, 64, 24);
    for (i = 0; i < 64; i++)
        set_full(&t, get_in(&t, i, CLASS_A, 1000, NULL), 1);
    {
        hl_slot_t *w[HL_SLOTS_RECENT];
        for (i = 0; i < HL_SLOTS_RECENT; i++)
            w[i] = get_in(&t, 500 + i, CLASS_A, 1000, NULL);
        for (i = 0, bad = 0; i < HL_SLOTS_RECENT; i++)
            bad += !has_id(&t, 500 + i) || hl_slots_find(&t, "k0", 2) != NULL
                   || (i > 0 && w[i] == w[i - 1]);
        is_int(bad, 0, "HL_SLOTS_RECENT new keys in a table full of keys at limit: "
               "each new key keeps its own slot");
    }
    ok(check_structure(&t), "table sound");
    free(mem);
}

/* ---- randomized test against a reference model -------------------------- */

/* Writes the key of id into buf (distinct for every id; some with NUL bytes,
 * some of the maximum length) and returns its length. */
static size_t model_key(char *buf, uint32_t id)
{
    uint64_t r = id * 0x9e3779b97f4a7c15ULL;
    size_t len, i;

    switch (id % 4) {
    case 0:
        return (size_t)snprintf(buf, HL_KEY_MAX, "ip:%u", id);
    case 1:  /* maximum length, differing only in the last 4 bytes */
        memset(buf, 'x', HL_KEY_MAX - 4);
        memcpy(buf + HL_KEY_MAX - 4, &id, 4);
        return HL_KEY_MAX;
    case 2:  /* binary, starts with NUL, id in bytes 1..3 */
        len = 4 + id % (HL_KEY_MAX - 3);
        buf[0] = '\0';
        buf[1] = (char)(id & 0xff);
        buf[2] = (char)((id >> 8) & 0xff);
        buf[3] = (char)((id >> 16) & 0xff);
        for (i = 4; i < len; i++, r = r * 6364136223846793005ULL + 1)
            buf[i] = (char)(r >> 56);
        return len;
    default:
        buf[0] = 'k';
        buf[1] = '\0';
        return 2 + (size_t)snprintf(buf + 2, HL_KEY_MAX - 2, "%u", id);
    }
}

/* Class hashes the random test uses; keys have a home class among them. */
#define MODEL_HASHES 6
static const uint64_t model_hashes[MODEL_HASHES] = {
    0, 0x1111111111111111ULL, 0x2222, 0x3333, 0x4444, 0x8000000000000001ULL
};

/* The rule of hl_slots.h on plain arrays: per class record one list of
 * key ids per level, most recently used first. */
typedef struct {
    uint32_t  nkeys, capacity;
    int      *present;
    uint32_t *tag;
    uint32_t *value;
    int64_t  *expires;
    uint32_t *cls;        /* class record of a present key */
    int      *level;      /* fill level of a present key */
    uint64_t  rec_hash[MODEL_HASHES];
    uint32_t  nrec, sweep;
    uint32_t *list[MODEL_HASHES][HL_SLOT_LEVELS];
    uint32_t  len[MODEL_HASHES][HL_SLOT_LEVELS];
    uint32_t  recent[HL_SLOTS_RECENT];  /* id + 1, 0 = none */
    uint32_t  recent_pos;
    uint32_t  n;
    uint64_t  evictions, inserts, reclaims;
} model_t;

/* Returns the position of id in its list (it must be there). */
static uint32_t model_pos(const model_t *m, uint32_t id)
{
    const uint32_t *l = m->list[m->cls[id]][m->level[id]];
    uint32_t i;

    for (i = 0; l[i] != id; i++)
        ;
    return i;
}

/* Takes present id out of its list (it stays present). */
static void model_unlink(model_t *m, uint32_t id)
{
    uint32_t c = m->cls[id], l = (uint32_t)m->level[id], pos = model_pos(m, id);

    memmove(m->list[c][l] + pos, m->list[c][l] + pos + 1,
            (m->len[c][l] - pos - 1) * sizeof(uint32_t));
    m->len[c][l]--;
}

/* Puts id at the front of the list its class and flag name. */
static void model_push(model_t *m, uint32_t id)
{
    uint32_t c = m->cls[id], l = (uint32_t)m->level[id];

    memmove(m->list[c][l] + 1, m->list[c][l], m->len[c][l] * sizeof(uint32_t));
    m->list[c][l][0] = id;
    m->len[c][l]++;
}

static int model_recent(const model_t *m, uint32_t id)
{
    uint32_t i;

    for (i = 0; i < HL_SLOTS_RECENT; i++) {
        if (m->recent[i] == id + 1)
            return 1;
    }
    return 0;
}

/* Removes present id. */
static void model_drop(model_t *m, uint32_t id)
{
    uint32_t i;

    model_unlink(m, id);
    m->present[id] = 0;
    m->n--;
    for (i = 0; i < HL_SLOTS_RECENT; i++) {
        if (m->recent[i] == id + 1)
            m->recent[i] = 0;
    }
}

static uint32_t model_intern(model_t *m, uint64_t hash)
{
    uint32_t r;

    if (hash == 0)
        return 0;
    for (r = 1; r < m->nrec; r++) {
        if (m->rec_hash[r] == hash)
            return r;
    }
    m->rec_hash[m->nrec] = hash;
    return m->nrec++;
}

static uint32_t model_count(const model_t *m, uint32_t c)
{
    uint32_t l, n = 0;

    for (l = 0; l < HL_SLOT_LEVELS; l++)
        n += m->len[c][l];
    return n;
}

static void model_reclaim(model_t *m, uint32_t c, int64_t now)
{
    uint32_t l, k, ids[HL_EVICT_SCAN], nids;

    for (l = 0; l < HL_SLOT_LEVELS; l++) {
        for (nids = 0; nids < HL_EVICT_SCAN && nids < m->len[c][l]; nids++)
            ids[nids] = m->list[c][l][m->len[c][l] - 1 - nids];
        for (k = 0; k < nids; k++) {
            if (m->expires[ids[k]] <= now && !model_recent(m, ids[k])) {
                model_drop(m, ids[k]);
                m->reclaims++;
            }
        }
    }
}

static uint32_t model_victim(const model_t *m, uint32_t rc)
{
    uint32_t c, best = rc;

    for (c = 0; c < m->nrec; c++) {
        if (model_count(m, c) > model_count(m, best))
            best = c;
    }
    return best;
}

/* Returns id + 1 of the oldest not recent key of the lowest level of
 * class c that has one, and its level in *level; 0 if none. */
static uint32_t model_evictable(const model_t *m, uint32_t c, uint32_t *level)
{
    uint32_t l, k;

    for (l = 0; l < HL_SLOT_LEVELS; l++) {
        for (k = 0; k < m->len[c][l]; k++) {
            uint32_t id = m->list[c][l][m->len[c][l] - 1 - k];
            if (!model_recent(m, id)) {
                *level = l;
                return id + 1;
            }
        }
    }
    *level = HL_SLOT_LEVELS;
    return 0;
}

/* The model's get: returns 1 if id is created. */
static int model_get(model_t *m, uint32_t id, uint32_t tag, uint64_t hash,
                     int64_t now)
{
    uint32_t rc = model_intern(m, hash);
    int created = !m->present[id];

    if (!created) {
        model_unlink(m, id);
        if (m->tag[id] != tag) {
            m->tag[id] = tag;
            m->value[id] = 0;
            m->expires[id] = 0;
            m->level[id] = 0;
        }
        m->cls[id] = rc;
        model_push(m, id);
    } else {
        if (m->n == m->capacity)
            model_reclaim(m, rc, now);
        if (m->n == m->capacity) {
            uint32_t c = m->sweep;
            m->sweep = (c + 1) % m->nrec;
            if (c != rc)
                model_reclaim(m, c, now);
        }
        if (m->n == m->capacity) {
            uint32_t v = model_victim(m, rc);
            if (v != rc)
                model_reclaim(m, v, now);
        }
        if (m->n == m->capacity) {
            uint32_t v = model_victim(m, rc), lv, lr, c, l;
            uint32_t victim = model_evictable(m, v, &lv);
            uint32_t own = model_evictable(m, rc, &lr);
            if (own != 0 && lr < lv)
                victim = own;
            for (c = 0; victim == 0 && c < m->nrec; c++)
                victim = model_evictable(m, c, &lv);
            for (l = 0; victim == 0 && l < HL_SLOT_LEVELS; l++)
                if (m->len[v][l])
                    victim = 1 + m->list[v][l][m->len[v][l] - 1];
            model_drop(m, victim - 1);
            m->evictions++;
        }
        m->present[id] = 1;
        m->tag[id] = tag;
        m->value[id] = 0;
        m->expires[id] = 0;
        m->level[id] = 0;
        m->cls[id] = rc;
        model_push(m, id);
        m->n++;
        m->inserts++;
    }
    m->recent[m->recent_pos] = id + 1;
    m->recent_pos = (m->recent_pos + 1) % HL_SLOTS_RECENT;
    return created;
}

typedef struct {
    const model_t *m;
    uint32_t c, l, i, bad;
} order_check_t;

/* walk_slots callback: the slot must be the next key of the model's lists,
 * class by class, level by level. */
static int order_cb(const hl_slot_t *s, void *baton)
{
    order_check_t *oc = baton;
    char k[HL_KEY_MAX];
    size_t len;

    while (oc->c < oc->m->nrec && oc->i >= oc->m->len[oc->c][oc->l]) {
        oc->i = 0;
        if (++oc->l == HL_SLOT_LEVELS) {
            oc->l = 0;
            oc->c++;
        }
    }
    if (oc->c >= oc->m->nrec) {
        oc->bad++;
        return 1;
    }
    len = model_key(k, oc->m->list[oc->c][oc->l][oc->i++]);
    if (s->key_len != len || memcmp(s->key, k, len) != 0)
        oc->bad++;
    return 0;
}

/* Compares every key with the model, and the list order. Returns
 * mismatches. */
static uint32_t compare_all(hl_slots_t *t, const model_t *m)
{
    uint32_t id, bad = 0;
    order_check_t oc = { m, 0, 0, 0, 0 };

    for (id = 0; id < m->nkeys; id++) {
        char k[HL_KEY_MAX];
        size_t len = model_key(k, id);
        hl_slot_t *s = hl_slots_find(t, k, len);

        if ((s != NULL) != m->present[id])
            bad++;
        else if (s != NULL && (s->tag != m->tag[id] || s->bucket.count != m->value[id]
                               || s->expires_ms != m->expires[id]
                               || s->cls != m->cls[id]
                               || s->level != m->level[id]))
            bad++;
    }
    if (walk_slots(t, order_cb, &oc) != m->n)
        bad++;
    if (t->hdr->nclasses != m->nrec)
        bad++;
    return bad + oc.bad;
}

static void run_random(uint32_t capacity, uint32_t nkeys, uint32_t nops,
                       uint64_t seed)
{
    size_t size;
    void *mem = new_block(capacity, &size);
    hl_slots_t t;
    model_t m;
    uint32_t op, op_bad = 0, nget = 0, nrem = 0, nfind = 0, nflag = 0, c, l;
    int64_t now = 1000000;
    char name[120];

    memset(&m, 0, sizeof(m));
    m.nkeys = nkeys;
    m.capacity = capacity;
    m.present = calloc(nkeys, sizeof(int));
    m.tag = calloc(nkeys, sizeof(uint32_t));
    m.value = calloc(nkeys, sizeof(uint32_t));
    m.expires = calloc(nkeys, sizeof(int64_t));
    m.cls = calloc(nkeys, sizeof(uint32_t));
    m.level = calloc(nkeys, sizeof(int));
    m.nrec = 1;
    for (c = 0; c < MODEL_HASHES; c++) {
        for (l = 0; l < HL_SLOT_LEVELS; l++)
            m.list[c][l] = calloc(capacity + 1, sizeof(uint32_t));
    }
    rng_state = seed;
    hl_slots_attach(&t, mem, size, capacity, seed);

    for (op = 1; op <= nops; op++) {
        uint64_t r = rng();
        uint32_t hot = nkeys < 50 ? nkeys : 50;  /* a hot subset gets hits */
        uint32_t id = (uint32_t)((r >> 8) % ((r & 3) == 0 ? hot : nkeys));
        uint32_t kind = (uint32_t)((r >> 40) % 100);
        /* a key's home class, now and then another one */
        uint64_t hash = model_hashes[(r >> 32) % 20 == 0 ? (r >> 36) % MODEL_HASHES
                                                          : id % MODEL_HASHES];
        char k[HL_KEY_MAX];
        size_t len = model_key(k, id);
        hl_slot_t *s;
        int created = -1;

        now += 1;
        if (kind < 65) {            /* get, then "count" and set an expiry */
            uint32_t tag = (r >> 50) % 8 == 0 ? 2 : 1;
            int was = m.present[id];

            model_get(&m, id, tag, hash, now);
            nget++;
            s = hl_slots_get(&t, k, len, (uint8_t)tag, hash, now, &created);
            if (s == NULL || created != !was || s->tag != tag
                || s->bucket.count != m.value[id] || s->expires_ms != m.expires[id]
                || s->cls != m.cls[id] || s->key_len != len
                || memcmp(s->key, k, len) != 0) {
                if (op_bad++ < 5)
                    printf("#   op %u: get of key %u disagrees with the model\n", op, id);
                continue;
            }
            m.value[id] = s->bucket.count = (uint32_t)(rng() >> 33) + 1;
            /* mostly near future so that expired slots exist, some never */
            m.expires[id] = s->expires_ms =
                (r >> 56) % 4 == 0 ? FAR_FUTURE : now + (int64_t)((r >> 20) % 3000);
            if ((r >> 44) % 3 == 0) {    /* another fill level, full often */
                int lim = (r >> 47) & 1 ? HL_SLOT_FULL : (int)((r >> 48) % HL_SLOT_LEVELS);
                nflag++;
                hl_slots_set_level(&t, s, (uint8_t)lim);
                if (m.level[id] != lim) {
                    model_unlink(&m, id);
                    m.level[id] = lim;
                    model_push(&m, id);
                }
            }
        } else if (kind < 85) {     /* remove */
            int want = m.present[id];

            nrem++;
            if (want)
                model_drop(&m, id);
            if (hl_slots_remove(&t, k, len) != want && op_bad++ < 5)
                printf("#   op %u: remove of key %u disagrees with the model\n", op, id);
        } else {                    /* find: no change to the order */
            nfind++;
            s = hl_slots_find(&t, k, len);
            if ((s != NULL) != m.present[id]
                || (s != NULL && s->bucket.count != m.value[id])) {
                if (op_bad++ < 5)
                    printf("#   op %u: find of key %u disagrees with the model\n", op, id);
            }
        }
        if (t.hdr->used != m.n || t.hdr->evictions != m.evictions
            || t.hdr->inserts != m.inserts || t.hdr->reclaims != m.reclaims) {
            if (op_bad++ < 5)
                printf("#   op %u: used/evictions/inserts/reclaims %u/%llu/%llu/%llu, "
                       "model %u/%llu/%llu/%llu\n",
                       op, t.hdr->used, (unsigned long long)t.hdr->evictions,
                       (unsigned long long)t.hdr->inserts,
                       (unsigned long long)t.hdr->reclaims, m.n,
                       (unsigned long long)m.evictions, (unsigned long long)m.inserts,
                       (unsigned long long)m.reclaims);
        }
        if (op % 10000 == 0 || op == nops) {
            uint32_t bad = compare_all(&t, &m);

            snprintf(name, sizeof(name), "random cap %u, op %u: every key as in the model",
                     capacity, op);
            is_int(bad, 0, name);
            okf(check_structure(&t), "random cap %u, op %u: structure sound",
                capacity, op);
        }
    }
    snprintf(name, sizeof(name),
             "random cap %u: %u ops (%u get, %u flag, %u remove, %u find) agree",
             capacity, nops, nget, nflag, nrem, nfind);
    is_int(op_bad, 0, name);
    printf("# cap %u: used %u, classes %u, evictions %llu, reclaims %llu, inserts %llu\n",
           capacity, t.hdr->used, t.hdr->nclasses, (unsigned long long)t.hdr->evictions,
           (unsigned long long)m.reclaims, (unsigned long long)t.hdr->inserts);
    snprintf(name, sizeof(name), "random cap %u: both evictions and expired reuse happened",
             capacity);
    /* (a table of HL_SLOTS_RECENT slots or less protects them all) */
    ok(m.evictions > 0 && (m.reclaims > 0 || capacity <= HL_SLOTS_RECENT), name);

    {   /* a second attach keeps everything the model knows */
        hl_slots_t t2;
        snprintf(name, sizeof(name), "random cap %u: re-attach keeps the table", capacity);
        ok(hl_slots_attach(&t2, mem, size, capacity, 1) == 0 && compare_all(&t2, &m) == 0,
           name);
    }
    free(m.present);
    free(m.tag);
    free(m.value);
    free(m.expires);
    free(m.cls);
    free(m.level);
    for (c = 0; c < MODEL_HASHES; c++) {
        for (l = 0; l < HL_SLOT_LEVELS; l++)
            free(m.list[c][l]);
    }
    free(mem);
}

/* Counts the slots a scan visits. */
static int count_visit(const hl_slot_t *s, void *baton)
{
    (void)s;
    ++*(uint32_t *)baton;
    return 0;
}

/* hl_slots_scan: bounded chunks that together visit every used slot once. */
/* hl_slots_get_hinted leaves a table exactly as hl_slots_get_hashed does,
 * whatever its hints say: two tables with one seed take the same random
 * gets (keys of 3 classes and 2 tags, under eviction, some slots flagged
 * at limit, some removed), one plain, one hinted with the hints it set
 * itself, stale ones after evictions and removals, or garbage; their
 * memory must stay byte for byte the same. */
static void test_hinted(void)
{
    enum { CAP = 48, KEYS = 120, STEPS = 20000 };
    size_t size;
    void *ma = new_block(CAP, &size), *mb = tap_calloc(size);
    hl_slots_t a, b;
    uint32_t hints[KEYS];
    int step, same = 1, hinted_found = 0, agree = 1;

    memset(hints, 0, sizeof(hints));
    hl_slots_attach(&a, ma, size, CAP, 77);
    hl_slots_attach(&b, mb, size, CAP, 77);
    rng_state = 4242;
    for (step = 0; step < STEPS && same; ++step) {
        uint32_t id = (uint32_t)(rng() % KEYS), before;
        uint64_t cls = (id % 3) * 0x1000003ULL;   /* class 0 too */
        uint8_t tag = (uint8_t)(1 + (rng() % 8 == 0));
        int64_t now = step;
        char k[HL_KEY_MAX];
        size_t len = simple_key(k, id);
        uint64_t h = hl_slots_hash(&a, k, len);
        hl_slot_t *sa, *sb;

        if (rng() % 16 == 0) {
            hl_slots_remove(&a, k, len);
            hl_slots_remove(&b, k, len);
            continue;
        }
        if (rng() % 32 == 0)
            hints[id] = (uint32_t)rng() % (CAP + 3);   /* garbage */
        before = hints[id];
        sa = hl_slots_get_hashed(&a, k, len, h, tag, cls, now, NULL);
        sb = hl_slots_get_hinted(&b, k, len, h, tag, cls, now, &hints[id]);
        agree &= sa - a.slots == sb - b.slots
                 && hints[id] == (uint32_t)(sb - b.slots) + 1;
        hinted_found += before == hints[id];
        sa->expires_ms = sb->expires_ms = now + (int64_t)(rng() % 200);
        if (rng() % 4 == 0) {
            uint8_t lim = (uint8_t)(rng() % HL_SLOT_LEVELS);
            hl_slots_set_level(&a, sa, lim);
            hl_slots_set_level(&b, sb, lim);
        }
        same = memcmp(ma, mb, size) == 0;
    }
    ok(same, "hinted gets leave the table byte for byte as plain gets");
    ok(agree, "... return the same slot and set the hint to it");
    okf(hinted_found > STEPS / 4, "... and the hints were used (%d times)",
        hinted_found);
    ok(check_structure(&b), "hinted table sound");
    free(ma);
    free(mb);
}

static void test_scan_chunks(void)
{
    size_t size;
    void *mem = new_block(256, &size);
    hl_slots_t t;
    uint32_t i, next = 0, seen = 0, chunks = 0;

    hl_slots_attach(&t, mem, size, 256, 9);
    for (i = 0; i < 100; i++)
        get_id(&t, i, 1000, NULL);
    do {
        next = hl_slots_scan(&t, next, 7, count_visit, &seen);
        chunks++;
    } while (next != 0 && chunks < 1000);
    is_int(seen, 100, "scan: chunks of 7 visit the 100 used slots once");
    is_int(chunks, (256 + 6) / 7, "scan: ceil(256 / 7) chunks");
    is_int(hl_slots_scan(&t, 256, 7, count_visit, &seen), 0, "scan: past the end");
    free(mem);
}

/* Zeroing the free records for a compact copy and relinking them gives
 * back a table hl_slots_attach keeps, with every counter, and leaves the
 * free slots' pages all zero. */
static void test_zero_free_relink(void)
{
    size_t size, i, nonzero = 0;
    void *mem = new_block(4096, &size);
    hl_slots_t t, t2;
    uint32_t id, found = 0;
    hl_slot_t *s;

    hl_slots_attach(&t, mem, size, 4096, 5);
    for (id = 0; id < 300; id++) {
        s = get_id(&t, id, FAR_FUTURE, NULL);
        s->bucket.count = id + 1;
    }
    for (id = 0; id < 300; id += 3) {    /* some freed: holes in the middle */
        char k[HL_KEY_MAX];
        hl_slots_remove(&t, k, simple_key(k, id));
    }
    s = hl_slots_get(&t, "logkey", 6, HL_SLOT_TAG_LOG, 0, 1000, NULL);
    hl_slots_log(&t, s, 1000)->n = 1;
    hl_slots_zero_free(&t);
    for (i = 0; i < size; i += 4096) {   /* pages holding a nonzero byte */
        size_t j, n = size - i < 4096 ? size - i : 4096;
        for (j = 0; j < n && ((const unsigned char *)mem)[i + j] == 0; j++)
            ;
        nonzero += j < n;
    }
    okf(nonzero < (size / 4096) / 4, "zeroed free records: %zu of %zu pages "
        "nonzero", nonzero, (size + 4095) / 4096);
    hl_slots_relink_free(&t);
    is_int(hl_slots_attach(&t2, mem, size, 4096, 6), 0,
           "relinked: attach keeps the table (valid)");
    ok(check_structure(&t2), "relinked table sound");
    for (id = 0; id < 300; id++) {
        char k[HL_KEY_MAX];
        size_t len = simple_key(k, id);
        s = hl_slots_find(&t2, k, len);
        found += id % 3 ? s != NULL && s->bucket.count == id + 1 : s == NULL;
    }
    is_int(found, 300, "every counter kept with its count");
    s = hl_slots_find(&t2, "logkey", 6);
    ok(s != NULL && hl_slots_log(&t2, s, 1000)->n == 1, "the log record kept");
    for (id = 300; id < 4096 + 10; id++)
        get_id(&t2, id, FAR_FUTURE, NULL);
    ok(check_structure(&t2), "and the table fills up soundly after it");
    free(mem);
}

/* The class record each process remembers (class_intern's hint) is only
 * a guess: another process may clear the table and hand that record to
 * another class. Two views of one block stand for two processes. */
static void test_class_hint(void)
{
    size_t size;
    void *mem = new_block(64, &size);
    hl_slots_t t1, t2;
    hl_slot_t *s;
    int created;

    hl_slots_attach(&t1, mem, size, 64, 3);
    hl_slots_map(&t2, mem, 64);
    s = get_in(&t1, 1, 0xA1, 0, &created);
    ok(s != NULL && s->cls == 1, "hint: class A takes record 1");
    s = get_in(&t1, 2, 0xA1, 0, &created);
    ok(s != NULL && s->cls == 1, "hint: a second key of A finds record 1");
    hl_slots_clear(&t2);            /* the other process starts over */
    s = get_in(&t2, 3, 0xB2, 0, &created);
    ok(s != NULL && s->cls == 1, "hint: class B now has record 1");
    s = get_in(&t2, 4, 0xA1, 0, &created);
    ok(s != NULL && s->cls == 2, "hint: class A now has record 2");
    s = get_in(&t1, 5, 0xA1, 0, &created);
    ok(s != NULL && s->cls == 2 && class_record(&t1, 0xA1) == 2,
       "hint: the first process counts A in A's new record, not in B's");
    ok(t1.classes[1].count == 1 && t1.classes[2].count == 2,
       "hint: B holds 1 slot, A 2");
    ok(check_structure(&t1), "hint: structure sound");
    free(mem);
}

int main(void)
{
    test_zero_free_relink();
    test_scan_chunks();
    test_size();
    test_attach();
    test_fill_evict();
    test_expired_reuse();
    test_tags();
    test_lru_order();
    test_hinted();
    test_odd_keys();
    test_key_compact();
    test_class_flood();
    test_fill_levels();
    test_class_expiry();
    test_class_misc();
    test_class_hint();
    run_random(1000, 2500, 200000, 0xC0FFEE);
    run_random(7, 20, 20000, 12345);
    run_random(1, 3, 2000, 99);
    return done_testing();
}
