/*
 * test_slots.c - unit tests of the slot table (hl_slots.c), printing TAP.
 * The table lives in calloc'd blocks here, as it lives in shm in httpd.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hl_tap.h"
#include "hl_slots.h"

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

/* Gets "k<id>" and marks it never expiring; returns the slot. */
static hl_slot_t *get_id(hl_slots_t *t, uint32_t id, int64_t now, int *created)
{
    char k[HL_KEY_MAX];
    size_t len = simple_key(k, id);
    hl_slot_t *s = hl_slots_get(t, k, len, 1, now, created);

    if (s != NULL)
        s->expires_ms = FAR_FUTURE;
    return s;
}

/* Returns 1 if "k<id>" is in the table. */
static int has_id(hl_slots_t *t, uint32_t id)
{
    char k[HL_KEY_MAX];
    size_t len = simple_key(k, id);

    return hl_slots_find(t, k, len) != NULL;
}

/* foreach callback: appends the slot's id to an array. */
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
 * Independent full structural check: walks the LRU list, the free list and
 * every bucket chain with its own bookkeeping. Returns 1 if sound, else
 * prints the reason as a TAP diagnostic and returns 0.
 */
static int check_structure(const hl_slots_t *t)
{
    const hl_slots_header_t *h = t->hdr;
    uint32_t cap = h->capacity, idx, prev, n, b, i;
    unsigned char *seen = calloc(cap + 1, 1);
    const char *why = NULL;

    if (seen == NULL)
        return 0;
    if (h->nbuckets == 0 || (h->nbuckets & (h->nbuckets - 1)) != 0
        || h->nbuckets > cap || h->nbuckets * 2 <= cap) {
        why = "nbuckets is not the largest power of two <= capacity";
        goto out;
    }
    /* LRU list: head to tail, back links, used slots only */
    for (idx = h->lru_head, prev = 0, n = 0; idx != 0; idx = t->slots[idx - 1].lru_next) {
        const hl_slot_t *s;
        if (idx > cap) { why = "LRU link out of range"; goto out; }
        if (seen[idx] & 1) { why = "LRU cycle"; goto out; }
        seen[idx] |= 1;
        s = &t->slots[idx - 1];
        if (s->lru_prev != prev) { why = "LRU back link wrong"; goto out; }
        if (s->tag == 0) { why = "free slot in LRU list"; goto out; }
        if (s->key_len > HL_KEY_MAX) { why = "key_len too big"; goto out; }
        if (s->hash != hl_hash64(s->key, s->key_len, h->seed)) {
            why = "stored hash differs from the key's hash"; goto out;
        }
        prev = idx;
        n++;
    }
    if (prev != h->lru_tail) { why = "LRU list does not end at lru_tail"; goto out; }
    if (n != h->used) { why = "LRU count != used"; goto out; }
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
    size_t hdr = (sizeof(hl_slots_header_t) + 7) / 8 * 8;
    size_t i;

    ok(sizeof(hl_slot_t) <= 120, "sizeof(hl_slot_t) <= 120");
    printf("# sizeof(hl_slot_t) = %zu, sizeof(hl_slots_header_t) = %zu\n",
           sizeof(hl_slot_t), sizeof(hl_slots_header_t));
    for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
        uint32_t c = caps[i], nb = 1;
        size_t want;
        char name[80];

        while ((uint64_t)nb * 2 <= c)
            nb *= 2;
        want = hdr + ((size_t)nb * 4 + 7) / 8 * 8 + (size_t)c * sizeof(hl_slot_t);
        snprintf(name, sizeof(name), "hl_slots_size(%u) = header + buckets + slots", c);
        is_int(hl_slots_size(c), want, name);
        snprintf(name, sizeof(name), "capacity %u: <= 124 bytes per slot + header", c);
        ok(hl_slots_size(c) <= hdr + 8 + (size_t)c * 124, name);
    }
    printf("# capacity 65536: %zu bytes, %zu per slot + %zu header\n",
           hl_slots_size(65536), (hl_slots_size(65536) - hdr) / 65536, hdr);

    {   /* the arrays start 8-aligned where the header says */
        size_t size;
        void *mem = new_block(3, &size);
        hl_slots_t t;

        is_int(hl_slots_attach(&t, mem, size, 3, 1), 1, "attach capacity 3");
        is_int(t.hdr->nbuckets, 2, "capacity 3: 2 buckets");
        is_int((char *)t.buckets - (char *)mem, hdr, "buckets right after the header");
        is_int((char *)t.slots - (char *)mem, hdr + 8, "slots after the buckets, 8-aligned");
        is_int((uintptr_t)t.slots % 8, 0, "slots 8-aligned");
        ok((char *)(t.slots + 3) == (char *)mem + size, "slots end at the end of the block");
        free(mem);
    }
}

/* ---- attach ------------------------------------------------------------- */

/* Attaches a fresh block of capacity 1024 and fills 100 keys. */
static void *populated(hl_slots_t *t, size_t *size)
{
    void *mem = new_block(1024, size);
    uint32_t i;

    hl_slots_attach(t, mem, *size, 1024, 77);
    for (i = 0; i < 100; i++)
        get_id(t, i, 1000, NULL)->bucket.count = i + 1;
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
       && check_structure(&t2), msg);
    free(mem);
}

static void bad_magic(hl_slots_t *t)     { t->hdr->magic ^= 1; }
static void bad_version(hl_slots_t *t)   { t->hdr->version = HL_SLOTS_VERSION + 1; }
static void bad_nbuckets(hl_slots_t *t)  { t->hdr->nbuckets = 512; }
static void bad_used(hl_slots_t *t)      { t->hdr->used = 1025; }
static void bad_used2(hl_slots_t *t)     { t->hdr->used = 99; }
static void bad_free_head(hl_slots_t *t) { t->hdr->free_head = 1025; }
static void bad_lru_tail(hl_slots_t *t)  { t->hdr->lru_tail = 4000; }
static void bad_lru_head(hl_slots_t *t)  { t->hdr->lru_head = 0; }
static void chain_cycle(hl_slots_t *t)
{
    uint32_t b;

    for (b = 0; t->buckets[b] == 0; b++)
        ;
    t->slots[t->buckets[b] - 1].chain = t->buckets[b];
}
static void lru_out_of_range(hl_slots_t *t) { t->slots[t->hdr->lru_head - 1].lru_next = 5000; }
static void lru_back_link(hl_slots_t *t)    { t->slots[t->hdr->lru_tail - 1].lru_prev = 0; }
static void used_slot_freed(hl_slots_t *t)  { t->slots[t->hdr->lru_head - 1].tag = 0; }
static void free_cycle(hl_slots_t *t)
{
    t->slots[t->hdr->free_head - 1].chain = t->hdr->free_head;
}
static void wrong_bucket(hl_slots_t *t)     { t->slots[t->hdr->lru_head - 1].hash ^= 1; }

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

    s = hl_slots_get(&t, "alpha", 5, 3, 1000, &created);
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
    expect_reinit(bad_lru_tail, "lru_tail > capacity");
    expect_reinit(bad_lru_head, "lru_head lost");
    expect_reinit(chain_cycle, "chain cycle");
    expect_reinit(lru_out_of_range, "LRU link out of range");
    expect_reinit(lru_back_link, "LRU back link broken");
    expect_reinit(used_slot_freed, "used slot with tag 0");
    expect_reinit(free_cycle, "free list cycle");
    expect_reinit(wrong_bucket, "slot in the wrong bucket");
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
    is_int(hl_slots_foreach(&t, collect_cb, c), 1024, "foreach visits 1024");
    for (i = 0, bad = 0; i < 1000; i++)
        bad += c->ids[i] != (long)(2023 - i);
    want = 1023;  /* then the surviving multiples of 3, newest first */
    for (i = 1000; i < 1024; i++, want -= 3)
        bad += c->ids[i] != want;
    is_int(bad, 0, "foreach order is MRU first");
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
    ok(t.hdr->lru_head == 0 && t.hdr->lru_tail == 0, "LRU empty");
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
    ok(!has_id(&t, 1) && has_id(&t, 4), "the expired slot nearest the tail goes first");
    get_id(&t, 101, now, NULL);
    ok(!has_id(&t, 4) && has_id(&t, 0), "then the next expired one");
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
        s = hl_slots_get(&t, "fresh", 5, 1, now, &created);
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
    s = hl_slots_get(&t, "ip:1", 4, 1, 10, &created);
    ok(s != NULL && created == 1 && s->tag == 1, "created with tag 1");
    ok(s->bucket.t == 0 && s->bucket.count == 0 && s->bucket.prev_count == 0,
       "new bucket zeroed");
    s->bucket.t = 99;
    s->bucket.count = 5;
    s->bucket.prev_count = 4;
    s->expires_ms = 777;

    s2 = hl_slots_get(&t, "ip:1", 4, 1, 20, &created);
    ok(s2 == s && created == 0, "same slot, not created");
    ok(s2->bucket.count == 5 && s2->bucket.t == 99 && s2->expires_ms == 777,
       "same tag: bucket kept");

    s2 = hl_slots_get(&t, "ip:1", 4, 2, 20, &created);
    ok(s2 == s && created == 0, "other tag: same slot, not created");
    ok(s2->tag == 2 && s2->bucket.t == 0 && s2->bucket.count == 0
       && s2->bucket.prev_count == 0 && s2->expires_ms == 0,
       "other tag: bucket reset, tag updated, expires_ms 0");
    is_int(t.hdr->inserts, 1, "tag change is not an insert");

    s = hl_slots_get(&t, "ip:2", 4, 0, 20, NULL);
    ok(s != NULL && s->tag == 1, "tag 0 is taken as 1 (created may be NULL)");
    s->bucket.count = 3;
    s = hl_slots_get(&t, "ip:2", 4, 1, 20, &created);
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
    is_int(hl_slots_foreach(&t, collect_cb, c), 0, "foreach on an empty table: 0");
    get_id(&t, 1, 0, NULL);
    get_id(&t, 2, 0, NULL);
    get_id(&t, 3, 0, NULL);
    get_id(&t, 4, 0, NULL);
    get_id(&t, 2, 0, NULL);
    ok(hl_slots_find(&t, "k1", 2) != NULL, "find k1 (does not touch the order)");
    c->n = 0;
    is_int(hl_slots_foreach(&t, collect_cb, c), 4, "foreach visits 4");
    ok(c->ids[0] == 2 && c->ids[1] == 4 && c->ids[2] == 3 && c->ids[3] == 1,
       "order MRU first: k2 k4 k3 k1");
    c->n = 0;
    c->stop_after = 2;
    is_int(hl_slots_foreach(&t, collect_cb, c), 2, "foreach stops when fn returns nonzero");
    hl_slots_remove(&t, "k4", 2);
    get_id(&t, 1, 0, NULL);
    c->n = 0;
    c->stop_after = 0;
    hl_slots_foreach(&t, collect_cb, c);
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
    s1 = hl_slots_get(&t, "a\0b", 3, 1, 0, NULL);
    s2 = hl_slots_get(&t, "a\0c", 3, 1, 0, NULL);
    s3 = hl_slots_get(&t, "a", 1, 1, 0, NULL);
    s4 = hl_slots_get(&t, "a\0", 2, 1, 0, NULL);
    ok(s1 && s2 && s3 && s4 && s1 != s2 && s1 != s3 && s2 != s3 && s4 != s3
       && s4 != s1, "keys with embedded NUL bytes are distinct");
    ok(hl_slots_find(&t, "a\0b", 3) == s1 && hl_slots_find(&t, "a\0c", 3) == s2
       && hl_slots_find(&t, "a\0", 2) == s4, "and found again");
    ok(hl_slots_find(&t, "a\0d", 3) == NULL, "a\\0d absent");
    ok(hl_slots_get(&t, "", 0, 1, 0, &created) != NULL && created == 1, "empty key works");
    ok(hl_slots_find(&t, "", 0) != NULL, "empty key found");

    memset(a, 'x', sizeof(a));
    memcpy(b, a, HL_KEY_MAX);
    b[HL_KEY_MAX - 1] = 'y';
    s1 = hl_slots_get(&t, a, HL_KEY_MAX, 1, 0, NULL);
    s2 = hl_slots_get(&t, b, HL_KEY_MAX, 1, 0, NULL);
    ok(s1 && s2 && s1 != s2 && s1->key_len == HL_KEY_MAX,
       "maximum-length keys differing in the last byte");
    ok(hl_slots_find(&t, a, HL_KEY_MAX) == s1 && hl_slots_find(&t, b, HL_KEY_MAX) == s2,
       "maximum-length keys found");
    ok(hl_slots_find(&t, a, HL_KEY_MAX - 1) == NULL, "a prefix is another key");
    ok(hl_slots_get(&t, a, HL_KEY_MAX + 1, 1, 0, &created) == NULL && created == 0,
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

static void test_hash_compact(void)
{
    char long1[300], long2[300], out1[HL_KEY_MAX], out2[HL_KEY_MAX];
    char (*many)[HL_KEY_MAX];
    size_t n, i;
    int hex_ok = 1, dups = 0;

    ok(hl_hash64("abc", 3, 1) == hl_hash64("abc", 3, 1), "hash deterministic");
    ok(hl_hash64("abc", 3, 1) != hl_hash64("abc", 3, 2), "seed changes the hash");
    ok(hl_hash64("abc", 3, 1) != hl_hash64("abd", 3, 1), "one byte changes the hash");
    ok(hl_hash64("a\0", 2, 1) != hl_hash64("a", 1, 1), "trailing NUL changes the hash");
    ok(hl_hash64(NULL, 0, 1) == hl_hash64("", 0, 1), "empty input");

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
        ok(hl_slots_get(&t, k, n, 1, 0, NULL) != NULL, "compacted key inserted");
        hl_key_compact(out2, long2, 300);
        ok(hl_slots_find(&t, out2, HL_KEY_MAX) == NULL, "the sibling long key is absent");
        memcpy(long2, long1, 300);
        n = hl_key_compact(long2, long2, 300);   /* out overlapping key */
        ok(n == HL_KEY_MAX && hl_slots_find(&t, long2, n) != NULL,
           "compaction in place gives the same key");
        free(mem);
    }
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

typedef struct {
    uint32_t  nkeys, capacity;
    int      *present;
    uint32_t *tag;
    uint32_t *value;
    int64_t  *expires;
    uint32_t *order;      /* present ids, most recently used first */
    uint32_t  n;
    uint64_t  evictions, inserts, reuses;
} model_t;

/* Returns the position of id in m->order (it must be there). */
static uint32_t model_pos(const model_t *m, uint32_t id)
{
    uint32_t i;

    for (i = 0; i < m->n; i++) {
        if (m->order[i] == id)
            break;
    }
    return i;
}

static void model_drop(model_t *m, uint32_t pos)
{
    m->present[m->order[pos]] = 0;
    memmove(m->order + pos, m->order + pos + 1, (m->n - pos - 1) * sizeof(uint32_t));
    m->n--;
}

static void model_push_front(model_t *m, uint32_t id)
{
    memmove(m->order + 1, m->order, m->n * sizeof(uint32_t));
    m->order[0] = id;
    m->n++;
}

/* The model's get: returns 1 if id is created. */
static int model_get(model_t *m, uint32_t id, uint32_t tag, int64_t now)
{
    uint32_t k, victim;

    if (m->present[id]) {
        if (m->tag[id] != tag) {
            m->tag[id] = tag;
            m->value[id] = 0;
            m->expires[id] = 0;
        }
        model_drop(m, model_pos(m, id));
        m->present[id] = 1;
        model_push_front(m, id);
        return 0;
    }
    if (m->n == m->capacity) {
        victim = m->n - 1;
        for (k = 0; k < HL_EVICT_SCAN && k < m->n; k++) {
            if (m->expires[m->order[m->n - 1 - k]] <= now)
                break;
        }
        if (k < HL_EVICT_SCAN && k < m->n) {
            victim = m->n - 1 - k;
            m->reuses++;
        } else
            m->evictions++;
        model_drop(m, victim);
    }
    m->present[id] = 1;
    m->tag[id] = tag;
    m->value[id] = 0;
    m->expires[id] = 0;
    model_push_front(m, id);
    m->inserts++;
    return 1;
}

typedef struct {
    const model_t *m;
    uint32_t i, bad;
} order_check_t;

static int order_cb(const hl_slot_t *s, void *baton)
{
    order_check_t *oc = baton;
    char k[HL_KEY_MAX];
    size_t len;

    if (oc->i >= oc->m->n) {
        oc->bad++;
        return 1;
    }
    len = model_key(k, oc->m->order[oc->i++]);
    if (s->key_len != len || memcmp(s->key, k, len) != 0)
        oc->bad++;
    return 0;
}

/* Compares every key with the model, and the LRU order. Returns mismatches. */
static uint32_t compare_all(hl_slots_t *t, const model_t *m)
{
    uint32_t id, bad = 0;
    order_check_t oc = { m, 0, 0 };

    for (id = 0; id < m->nkeys; id++) {
        char k[HL_KEY_MAX];
        size_t len = model_key(k, id);
        hl_slot_t *s = hl_slots_find(t, k, len);

        if ((s != NULL) != m->present[id])
            bad++;
        else if (s != NULL && (s->tag != m->tag[id] || s->bucket.count != m->value[id]
                               || s->expires_ms != m->expires[id]))
            bad++;
    }
    if (hl_slots_foreach(t, order_cb, &oc) != m->n || oc.i != m->n)
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
    uint32_t op, op_bad = 0, nget = 0, nrem = 0, nfind = 0;
    int64_t now = 1000000;
    char name[120];

    memset(&m, 0, sizeof(m));
    m.nkeys = nkeys;
    m.capacity = capacity;
    m.present = calloc(nkeys, sizeof(int));
    m.tag = calloc(nkeys, sizeof(uint32_t));
    m.value = calloc(nkeys, sizeof(uint32_t));
    m.expires = calloc(nkeys, sizeof(int64_t));
    m.order = calloc(capacity + 1, sizeof(uint32_t));
    rng_state = seed;
    hl_slots_attach(&t, mem, size, capacity, seed);

    for (op = 1; op <= nops; op++) {
        uint64_t r = rng();
        uint32_t hot = nkeys < 50 ? nkeys : 50;  /* a hot subset gets hits */
        uint32_t id = (uint32_t)((r >> 8) % ((r & 3) == 0 ? hot : nkeys));
        uint32_t kind = (uint32_t)((r >> 40) % 100);
        char k[HL_KEY_MAX];
        size_t len = model_key(k, id);
        hl_slot_t *s;
        int created = -1;

        now += 1;
        if (kind < 65) {            /* get, then "count" and set an expiry */
            uint32_t tag = (r >> 50) % 8 == 0 ? 2 : 1;
            int want_created = model_get(&m, id, tag, now);

            nget++;
            s = hl_slots_get(&t, k, len, tag, now, &created);
            if (s == NULL || created != want_created || s->tag != tag
                || s->bucket.count != m.value[id] || s->expires_ms != m.expires[id]
                || s->key_len != len || memcmp(s->key, k, len) != 0) {
                if (op_bad++ < 5)
                    printf("#   op %u: get of key %u disagrees with the model\n", op, id);
                continue;
            }
            m.value[id] = s->bucket.count = (uint32_t)(rng() >> 33) + 1;
            /* mostly near future so that expired slots exist, some never */
            m.expires[id] = s->expires_ms =
                (r >> 56) % 4 == 0 ? FAR_FUTURE : now + (int64_t)((r >> 20) % 3000);
        } else if (kind < 85) {     /* remove */
            int want = m.present[id];

            nrem++;
            if (want)
                model_drop(&m, model_pos(&m, id));
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
            || t.hdr->inserts != m.inserts) {
            if (op_bad++ < 5)
                printf("#   op %u: used/evictions/inserts %u/%llu/%llu, model %u/%llu/%llu\n",
                       op, t.hdr->used, (unsigned long long)t.hdr->evictions,
                       (unsigned long long)t.hdr->inserts, m.n,
                       (unsigned long long)m.evictions, (unsigned long long)m.inserts);
        }
        if (op % 10000 == 0 || op == nops) {
            uint32_t bad = compare_all(&t, &m);

            snprintf(name, sizeof(name), "random cap %u, op %u: every key as in the model",
                     capacity, op);
            is_int(bad, 0, name);
            snprintf(name, sizeof(name), "random cap %u, op %u: structure sound",
                     capacity, op);
            ok(check_structure(&t), name);
        }
    }
    snprintf(name, sizeof(name), "random cap %u: %u ops (%u get, %u remove, %u find) agree",
             capacity, nops, nget, nrem, nfind);
    is_int(op_bad, 0, name);
    printf("# cap %u: used %u, evictions %llu, expired reuses %llu, inserts %llu\n",
           capacity, t.hdr->used, (unsigned long long)t.hdr->evictions,
           (unsigned long long)m.reuses, (unsigned long long)t.hdr->inserts);
    snprintf(name, sizeof(name), "random cap %u: both evictions and expired reuse happened",
             capacity);
    ok(m.evictions > 0 && m.reuses > 0, name);

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
    free(m.order);
    free(mem);
}

int main(void)
{
    test_size();
    test_attach();
    test_fill_evict();
    test_expired_reuse();
    test_tags();
    test_lru_order();
    test_odd_keys();
    test_hash_compact();
    run_random(1000, 2500, 200000, 0xC0FFEE);
    run_random(7, 20, 20000, 12345);
    run_random(1, 3, 2000, 99);
    return done_testing();
}
