/*
 * hl_stats.c - per-route decision counters (see hl_stats.h).
 */
#include <string.h>
#include "hl_stats.h"
#include "hl_hash.h"

void hl_stats_clear(hl_stats_t *st)
{
    memset(st, 0, sizeof(*st));
}

/* Returns the entry of route (hash h, never 0), claiming a free one; entry
 * 0 ("(other)") when the probes find neither. Never NULL. */
static hl_route_stat_t *stats_entry(hl_stats_t *st, const char *route,
                                    uint64_t h)
{
    size_t len = strnlen(route, HL_STATS_ROUTE_MAX - 1);
    uint32_t i = (uint32_t)(h % (HL_STATS_ROUTES - 1)) + 1;
    int probe;

    for (probe = 0; probe < HL_STATS_PROBES; ++probe) {
        hl_route_stat_t *e = &st->routes[i];
        if (e->hash == 0) {
            e->hash = h;
            memcpy(e->route, route, len);
            e->route[len] = '\0';
            return e;
        }
        if (e->hash == h && strncmp(e->route, route, len) == 0
            && e->route[len] == '\0')
            return e;
        i = i + 1 < HL_STATS_ROUTES ? i + 1 : 1;
    }
    if (st->routes[0].hash == 0) {
        st->routes[0].hash = 1;
        strcpy(st->routes[0].route, "(other)");
    }
    return &st->routes[0];
}

void hl_stats_add(hl_stats_t *st, const char *route, hl_decision_kind_t kind)
{
    if ((unsigned)kind > HL_DECISION_DRY_RUN)
        return;
    hl_stats_add_hashed(st, hl_hash64(route, strnlen(route, HL_STATS_ROUTE_MAX - 1),
                                      HL_SEED_STATS), route, kind);
}

void hl_stats_add_hashed(hl_stats_t *st, uint64_t hash, const char *route,
                         hl_decision_kind_t kind)
{
    if ((unsigned)kind > HL_DECISION_DRY_RUN)
        return;
    stats_entry(st, route, hash | 1)->count[kind]++;
}
