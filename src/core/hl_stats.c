/*
 * hl_stats.c - per-route decision counters (see hl_stats.h). Lock-free:
 * entries are claimed with a compare-and-swap and counted with atomic
 * additions, so the statistics need no lock of their own and no stripe of
 * the counter store has to hold one for them.
 */
#include <string.h>
#include "hl_stats.h"

#define HL_STATS_CLAIMING UINT64_MAX   /* an entry being filled in */
#define HL_STATS_SPINS    64           /* waits for a claim being filled */

/* Returns 1 if entry e (whose hash is h) names route (len bytes). */
static int names(const hl_route_stat_t *e, const char *route, size_t len)
{
    return strncmp(e->route, route, len) == 0 && e->route[len] == '\0';
}

/*
 * Returns the entry of route (len bytes, < HL_STATS_ROUTE_MAX; hash h:
 * never 0 nor HL_STATS_CLAIMING),
 * claiming a free one; entry 0 ("(other)") when the probes find neither.
 * Never NULL. Lock-free: a free entry is claimed with a compare-and-swap,
 * filled in, then published with its hash, so two processes never fill
 * one entry and a reader never takes a half-written name for a match.
 */
static hl_route_stat_t *stats_entry(hl_stats_t *st, const char *route,
                                    size_t len, uint64_t h)
{
    uint32_t i = (uint32_t)(h % (HL_STATS_ROUTES - 1)) + 1;
    uint64_t free_hash, seen;
    int probe, spin;

    for (probe = 0; probe < HL_STATS_PROBES; ++probe) {
        hl_route_stat_t *e = &st->routes[i];

        seen = __atomic_load_n(&e->hash, __ATOMIC_ACQUIRE);
        for (spin = 0; seen == HL_STATS_CLAIMING && spin < HL_STATS_SPINS; ++spin)
            seen = __atomic_load_n(&e->hash, __ATOMIC_ACQUIRE);
        if (seen == 0) {
            free_hash = 0;
            if (__atomic_compare_exchange_n(&e->hash, &free_hash,
                                            HL_STATS_CLAIMING, 0,
                                            __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                memcpy(e->route, route, len);
                e->route[len] = '\0';
                __atomic_store_n(&e->hash, h, __ATOMIC_RELEASE);
                return e;
            }
            seen = free_hash;   /* another process claimed it meanwhile */
            for (spin = 0; seen == HL_STATS_CLAIMING && spin < HL_STATS_SPINS; ++spin)
                seen = __atomic_load_n(&e->hash, __ATOMIC_ACQUIRE);
        }
        if (seen == h && names(e, route, len))
            return e;
        i = i + 1 < HL_STATS_ROUTES ? i + 1 : 1;
    }
    free_hash = 0;
    if (__atomic_compare_exchange_n(&st->routes[0].hash, &free_hash,
                                    HL_STATS_CLAIMING, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        strcpy(st->routes[0].route, "(other)");
        __atomic_store_n(&st->routes[0].hash, 1, __ATOMIC_RELEASE);
    }
    return &st->routes[0];
}

/* Returns the tick number of now_ms (0 for a negative time). */
static uint32_t tick_of(int64_t now_ms)
{
    return now_ms > 0 ? (uint32_t)(now_ms / HL_STATS_TICK_MS) : 0;
}

/* Where this process last found the entry of a hash, by the hash's low
 * bits: an index into routes[], 0 for none. A hint only: it is used when
 * the entry there still holds the same hash (entries are published with
 * their hash and never move; a 64-bit hash names one route), so a stale
 * or raced value costs a full lookup, never a wrong entry. Per process,
 * written and read with relaxed atomics by every thread: the usual
 * request finds its route's entry without the probe and the name compare
 * (~45 instructions). */
#define HL_STATS_HINTS 64
static uint32_t entry_hint[HL_STATS_HINTS];

/* entry_of when the hint (*hint) did not name the entry of h, the
 * entry's hash: looks it up (stats_entry) and hints it. Not inlined on
 * purpose: its frame would cost the usual request, which the hint
 * serves. Never NULL. */
static __attribute__((noinline)) hl_route_stat_t *
entry_of_unhinted(hl_stats_t *st, uint64_t h, uint32_t *hint,
                  const char *route, size_t len)
{
    hl_route_stat_t *e;

    if (len == 0)
        len = strnlen(route, HL_STATS_ROUTE_MAX - 1);
    if (len > HL_STATS_ROUTE_MAX - 1)
        len = HL_STATS_ROUTE_MAX - 1;
    e = stats_entry(st, route, len, h);
    if (e != &st->routes[0])
        __atomic_store_n(hint, (uint32_t)(e - st->routes), __ATOMIC_RELAXED);
    return e;
}

/* Returns the entry of route (len bytes, 0: measured; cut as in
 * hl_stats_add_named) whose caller-computed hash is hash: where the hint
 * says, else entry_of_unhinted. Never NULL. */
static inline hl_route_stat_t *entry_of(hl_stats_t *st, uint64_t hash,
                                        const char *route, size_t len)
{
    uint64_t h = hash | 1;
    uint32_t *hint, i;

    if (h == HL_STATS_CLAIMING)
        h = 3;
    hint = &entry_hint[(h >> 1) % HL_STATS_HINTS];
    i = __atomic_load_n(hint, __ATOMIC_RELAXED);
    if (i > 0 && i < HL_STATS_ROUTES
        && __atomic_load_n(&st->routes[i].hash, __ATOMIC_ACQUIRE) == h)
        return &st->routes[i];
    return entry_of_unhinted(st, h, hint, route, len);
}

void hl_stats_add_hashed(hl_stats_t *st, uint64_t hash, const char *route,
                         hl_decision_kind_t kind, int64_t now_ms)
{
    hl_stats_add_named(st, hash, route,
                       strnlen(route, HL_STATS_ROUTE_MAX - 1), kind, now_ms);
}

void hl_stats_add_named(hl_stats_t *st, uint64_t hash, const char *route,
                        size_t len, hl_decision_kind_t kind, int64_t now_ms)
{
    uint32_t tick = tick_of(now_ms);
    hl_route_stat_t *e;

    if ((unsigned)kind >= HL_DECISION_KINDS)
        return;
    e = entry_of(st, hash, route, len);
    __atomic_fetch_add(&e->count[kind], 1, __ATOMIC_RELAXED);
    hl_cell_add(&e->history[tick % HL_STATS_HISTORY][kind], tick);
}

void hl_stats_refused_by(hl_stats_t *st, uint64_t hash, const char *route,
                         size_t len)
{
    __atomic_fetch_add(&entry_of(st, hash, route, len)->refused_by, 1,
                       __ATOMIC_RELAXED);
}

void hl_stats_refused_other(hl_stats_t *st, uint64_t hash, const char *route,
                            size_t len)
{
    __atomic_fetch_add(&entry_of(st, hash, route, len)->refused_other, 1,
                       __ATOMIC_RELAXED);
}

#define HL_SETTLE_MS_MAX (INT64_C(1) << 40)   /* a duration kept at most */

void hl_stats_settled(hl_stats_t *st, uint64_t hash, const char *route,
                      size_t len, int64_t ms)
{
    hl_route_stat_t *e = entry_of(st, hash, route, len);
    uint64_t x = (uint64_t)(ms < 0 ? 0 : ms > HL_SETTLE_MS_MAX
                                         ? HL_SETTLE_MS_MAX : ms) * 16 + 1;
    uint64_t old = __atomic_load_n(&e->settle_x16, __ATOMIC_RELAXED), next;

    /* x is never 0 (0 means "none yet"): 1/16 ms more at most. */
    do {
        next = old == 0 ? x : old - old / 4 + x / 4;
        if (next == 0)
            next = 1;
    } while (!__atomic_compare_exchange_n(&e->settle_x16, &old, next, 1,
                                          __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

int64_t hl_stats_settle_ms(hl_stats_t *st, uint64_t hash, const char *route,
                           size_t len)
{
    uint64_t x = __atomic_load_n(&entry_of(st, hash, route, len)->settle_x16,
                                 __ATOMIC_RELAXED);

    return x == 0 ? 0 : (int64_t)((x + 15) / 16);
}

void hl_stats_history(const hl_route_stat_t *e, int64_t now_ms,
                      uint32_t out[HL_STATS_HISTORY][HL_DECISION_KINDS])
{
    uint32_t now_tick = tick_of(now_ms);
    int i, k;

    for (i = 0; i < HL_STATS_HISTORY; ++i) {
        uint32_t tick = now_tick - (uint32_t)(HL_STATS_HISTORY - 1 - i);
        for (k = 0; k < HL_DECISION_KINDS; ++k) {
            uint64_t v = __atomic_load_n(&e->history[tick % HL_STATS_HISTORY][k],
                                         __ATOMIC_RELAXED);
            out[i][k] = (uint32_t)(v >> 32) == tick ? (uint32_t)v : 0;
        }
    }
}
