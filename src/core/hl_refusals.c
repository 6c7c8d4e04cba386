/*
 * hl_refusals.c - refusals counted per key (see hl_refusals.h).
 */
#include <string.h>
#include "hl_refusals.h"
#include "hl_hash.h"

#define HL_REFUSALS_CLAIMING UINT64_MAX   /* an entry being filled in */

/* Returns the minute number of now_ms (0 for a negative time). */
static uint32_t minute_of(int64_t now_ms)
{
    return now_ms > 0 ? (uint32_t)(now_ms / HL_REFUSALS_MINUTE_MS) : 0;
}

/* Returns the hash an entry of key (len bytes) carries: never 0 nor
 * HL_REFUSALS_CLAIMING. */
static uint64_t key_hash(const char *key, size_t len)
{
    uint64_t h = hl_hash64(key, len, HL_SEED_STATS) | 1;

    return h == HL_REFUSALS_CLAIMING ? 3 : h;
}

/* Returns the refusals of e in minute m and the one before. */
static uint32_t count_now(const hl_refusal_entry_t *e, uint32_t m)
{
    uint32_t n = 0;
    int i;

    for (i = 0; i < 2; ++i) {
        uint64_t v = __atomic_load_n(&e->minutes[i], __ATOMIC_RELAXED);
        uint32_t at = (uint32_t)(v >> 32);
        if (at == m || at + 1 == m)
            n += (uint32_t)v;
    }
    return n;
}

void hl_cell_add(uint64_t *cell, uint32_t m)
{
    uint64_t seen = __atomic_load_n(cell, __ATOMIC_RELAXED), next;

    do {
        if ((uint32_t)(seen >> 32) != m)
            next = (uint64_t)m << 32 | 1;
        else if ((uint32_t)seen == UINT32_MAX)
            return;
        else
            next = seen + 1;
    } while (!__atomic_compare_exchange_n(cell, &seen, next, 1,
                                          __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

/* Counts one refusal of entry e (NULL: a key without an entry) in minute
 * m, and one of every key in the second of now_ms. */
static void count_one(hl_refusals_t *rf, hl_refusal_entry_t *e, uint32_t m,
                       int64_t now_ms)
{
    uint32_t sec = now_ms > 0 ? (uint32_t)(now_ms / 1000) : 0;

    hl_cell_add(&rf->seconds[sec % HL_REFUSALS_SECONDS], sec);
    if (e)
        hl_cell_add(&e->minutes[m % 2], m);
}

uint64_t hl_refusals_recent(const hl_refusals_t *rf, int64_t now_ms)
{
    uint32_t sec = now_ms > 0 ? (uint32_t)(now_ms / 1000) : 0, want;
    uint64_t n = 0;
    int i;

    for (i = 1; i <= HL_REFUSALS_RATE_S; ++i) {
        uint64_t v;
        want = sec - (uint32_t)i;
        v = __atomic_load_n(&rf->seconds[want % HL_REFUSALS_SECONDS],
                            __ATOMIC_RELAXED);
        if ((uint32_t)(v >> 32) == want)
            n += (uint32_t)v;
    }
    return n;
}

/* Copies route (n bytes, 0: up to its NUL; NULL: "(banned)") into e
 * unless it is there already (a flood from one key by one route writes it
 * once). */
static void set_route(hl_refusal_entry_t *e, const char *route, size_t n)
{
    if (!route) {
        route = "(banned)";
        n = 0;
    }
    if (n == 0)
        n = strlen(route);
    if (n > HL_REFUSALS_ROUTE_MAX - 1)
        n = HL_REFUSALS_ROUTE_MAX - 1;
    if (strncmp(e->route, route, n) == 0 && e->route[n] == '\0')
        return;
    memcpy(e->route, route, n);
    e->route[n] = '\0';
}

/* Returns 1 if entry e (hash h) holds key (len bytes, already cut). */
static int holds(const hl_refusal_entry_t *e, uint64_t h, const char *key,
                 size_t len)
{
    return e->hash == h && strncmp(e->key, key, len) == 0
           && e->key[len] == '\0';
}

void hl_refusals_add(hl_refusals_t *rf, const char *key, size_t key_len,
                     const char *route, size_t route_len, int64_t now_ms)
{
    uint32_t m = minute_of(now_ms), least = UINT32_MAX;
    size_t len = key_len < HL_REFUSALS_KEY_MAX - 1 ? key_len
                                                   : HL_REFUSALS_KEY_MAX - 1;
    uint64_t h = key_hash(key, len), seen;
    hl_refusal_entry_t *victim = NULL, *e;
    uint32_t i = (uint32_t)h & (HL_REFUSALS_ENTRIES - 1);
    int probe;

    for (probe = 0; probe < HL_REFUSALS_PROBES; ++probe) {
        e = &rf->entries[(i + (uint32_t)probe) & (HL_REFUSALS_ENTRIES - 1)];
        seen = __atomic_load_n(&e->hash, __ATOMIC_ACQUIRE);
        if (seen == h && holds(e, h, key, len)) {
            count_one(rf, e, m, now_ms);
            __atomic_fetch_add(&e->total, 1, __ATOMIC_RELAXED);
            set_route(e, route, route_len);
            return;
        }
        if (seen != HL_REFUSALS_CLAIMING) {
            uint32_t n = seen == 0 ? 0 : count_now(e, m);
            if (n < least) {
                least = n;
                victim = e;
            }
        }
    }
    count_one(rf, NULL, m, now_ms);
    if (!victim)
        return;
    seen = __atomic_load_n(&victim->hash, __ATOMIC_ACQUIRE);
    if (seen == HL_REFUSALS_CLAIMING
        || !__atomic_compare_exchange_n(&victim->hash, &seen,
                                        HL_REFUSALS_CLAIMING, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;                       /* another process took it */
    memcpy(victim->key, key, len);
    victim->key[len] = '\0';
    victim->route[0] = '\0';
    set_route(victim, route, route_len);
    __atomic_store_n(&victim->minutes[m % 2], (uint64_t)m << 32 | 1,
                     __ATOMIC_RELAXED);
    __atomic_store_n(&victim->minutes[(m + 1) % 2], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&victim->total, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&victim->hash, h, __ATOMIC_RELEASE);
}

/* Copies entry e into *out (key and route NUL-terminated) and returns 1,
 * or 0 when it is free, being filled in, or changed while copied. */
static int copy_entry(const hl_refusal_entry_t *e, uint32_t m,
                      hl_refusal_rank_t *out)
{
    uint64_t h = __atomic_load_n(&e->hash, __ATOMIC_ACQUIRE);

    if (h == 0 || h == HL_REFUSALS_CLAIMING)
        return 0;
    memcpy(out->key, e->key, sizeof(out->key));
    memcpy(out->route, e->route, sizeof(out->route));
    out->key[sizeof(out->key) - 1] = '\0';
    out->route[sizeof(out->route) - 1] = '\0';
    out->now = count_now(e, m);
    out->total = __atomic_load_n(&e->total, __ATOMIC_RELAXED);
    return __atomic_load_n(&e->hash, __ATOMIC_ACQUIRE) == h;
}

/* Returns 1 if a ranks before b: more refusals now, then more in all. */
static int ranks_before(const hl_refusal_rank_t *a, const hl_refusal_rank_t *b)
{
    return a->now > b->now || (a->now == b->now && a->total > b->total);
}

int hl_refusals_rank(const hl_refusals_t *rf, int64_t now_ms,
                     int (*keep)(const char *key, size_t len, void *baton),
                     void *baton, hl_refusal_rank_t *out, int max)
{
    uint32_t m = minute_of(now_ms);
    hl_refusal_rank_t got;
    int i, n = 0, at;

    for (i = 0; i < HL_REFUSALS_ENTRIES && max > 0; ++i) {
        if (!copy_entry(&rf->entries[i], m, &got) || got.now == 0)
            continue;
        if (keep && !keep(got.key, strlen(got.key), baton))
            continue;
        if (n == max && !ranks_before(&got, &out[n - 1]))
            continue;
        at = n < max ? n++ : max - 1;
        while (at > 0 && ranks_before(&got, &out[at - 1])) {
            out[at] = out[at - 1];
            --at;
        }
        out[at] = got;
    }
    return n;
}

/* Returns the entry holding key (len bytes, cut), or NULL. */
static hl_refusal_entry_t *find(const hl_refusals_t *rf, const char *key,
                                size_t len)
{
    uint64_t h;
    uint32_t i;
    int probe;

    if (len > HL_REFUSALS_KEY_MAX - 1)
        len = HL_REFUSALS_KEY_MAX - 1;
    h = key_hash(key, len);
    i = (uint32_t)h & (HL_REFUSALS_ENTRIES - 1);
    for (probe = 0; probe < HL_REFUSALS_PROBES; ++probe) {
        const hl_refusal_entry_t *e =
            &rf->entries[(i + (uint32_t)probe) & (HL_REFUSALS_ENTRIES - 1)];
        if (holds(e, h, key, len))
            return (hl_refusal_entry_t *)e;
    }
    return NULL;
}

uint32_t hl_refusals_of(const hl_refusals_t *rf, const char *key,
                        size_t key_len, int64_t now_ms)
{
    const hl_refusal_entry_t *e = find(rf, key, key_len);

    return e ? count_now(e, minute_of(now_ms)) : 0;
}

int hl_refusals_forget(hl_refusals_t *rf, const char *key, size_t key_len)
{
    hl_refusal_entry_t *e = find(rf, key, key_len);
    uint64_t seen;

    if (!e)
        return 0;
    seen = __atomic_load_n(&e->hash, __ATOMIC_ACQUIRE);
    return __atomic_compare_exchange_n(&e->hash, &seen, 0, 0, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}
