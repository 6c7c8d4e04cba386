/* test_stats.c - per-route decision counters. */
#include <stdlib.h>
#include "hl_tap.h"
#include "hl_stats.h"
#include "hl_hash.h"
#include "hl_core_calls.h"

#define NOW 1000000000LL   /* a monotonic clock reading, ms */

/* Counts one decision of kind for route (NUL-terminated) at now_ms, under
 * the hash of its name as kept (cut to HL_STATS_ROUTE_MAX - 1 bytes). */
static void stats_add(hl_stats_t *st, const char *route,
                      hl_decision_kind_t kind, int64_t now_ms)
{
    hl_stats_add_hashed(st, hl_hash64(route,
                                      strnlen(route, HL_STATS_ROUTE_MAX - 1),
                                      HL_SEED_STATS),
                        route, kind, now_ms);
}

static const hl_route_stat_t *find(const hl_stats_t *st, const char *route)
{
    int i;
    for (i = 0; i < HL_STATS_ROUTES; ++i)
        if (st->routes[i].hash && !strcmp(st->routes[i].route, route))
            return &st->routes[i];
    return NULL;
}

int main(void)
{
    hl_stats_t *st = calloc(1, sizeof(*st));
    char route[200];
    const hl_route_stat_t *e;
    uint64_t total = 0;
    int i;

    stats_add(st, "/user/login", HL_DECISION_ADMITTED, NOW);
    stats_add(st, "/user/login", HL_DECISION_ADMITTED, NOW);
    stats_add(st, "/user/login", HL_DECISION_REJECTED, NOW);
    stats_add(st, "/api", HL_DECISION_DRY_RUN, NOW);
    e = find(st, "/user/login");
    ok(e != NULL, "route entry created");
    is_int(e ? e->count[HL_DECISION_ADMITTED] : 0, 2, "two admitted");
    is_int(e ? e->count[HL_DECISION_REJECTED] : 0, 1, "one rejected");
    e = find(st, "/api");
    is_int(e ? e->count[HL_DECISION_DRY_RUN] : 0, 1, "dry run counted apart");
    stats_add(st, "/user/login", (hl_decision_kind_t)7, NOW);
    e = find(st, "/user/login");
    is_int(e->count[0] + e->count[1] + e->count[2] + e->count[3], 3, "unknown kind ignored");

    /* Long names are cut, never overflow. */
    memset(route, 'x', sizeof(route) - 1);
    route[sizeof(route) - 1] = '\0';
    stats_add(st, route, HL_DECISION_ADMITTED, NOW);
    route[HL_STATS_ROUTE_MAX - 1] = '\0';
    ok(find(st, route) != NULL, "long route kept, cut to HL_STATS_ROUTE_MAX-1");

    /* More routes than entries: nothing is lost, the rest is "(other)". */
    hl_stats_clear(st);
    for (i = 0; i < 3 * HL_STATS_ROUTES; ++i) {
        snprintf(route, sizeof(route), "/r/%d", i);
        stats_add(st, route, HL_DECISION_ADMITTED, NOW);
    }
    for (i = 0; i < HL_STATS_ROUTES; ++i)
        total += st->routes[i].count[HL_DECISION_ADMITTED];
    is_int(total, 3 * HL_STATS_ROUTES, "every decision counted somewhere");
    ok(find(st, "(other)") != NULL, "overflow goes to (other)");

    /* History: ticks of HL_STATS_TICK_MS, oldest first, the last running. */
    {
        uint32_t h[HL_STATS_HISTORY][HL_DECISION_KINDS];
        int64_t t0 = NOW - NOW % HL_STATS_TICK_MS;   /* start of a tick */

        hl_stats_clear(st);
        stats_add(st, "/h", HL_DECISION_ADMITTED, t0);
        stats_add(st, "/h", HL_DECISION_ADMITTED, t0 + HL_STATS_TICK_MS - 1);
        stats_add(st, "/h", HL_DECISION_REJECTED, t0 + HL_STATS_TICK_MS);
        stats_add(st, "/h", HL_DECISION_DRY_RUN, t0 + 3 * HL_STATS_TICK_MS);
        e = find(st, "/h");
        hl_stats_history(e, t0 + 3 * HL_STATS_TICK_MS + 5, h);
        is_int(h[HL_STATS_HISTORY - 1][HL_DECISION_DRY_RUN], 1,
               "history: the running tick last");
        is_int(h[HL_STATS_HISTORY - 3][HL_DECISION_REJECTED], 1,
               "history: the tick before the last but one");
        is_int(h[HL_STATS_HISTORY - 4][HL_DECISION_ADMITTED], 2,
               "history: two admitted in one tick");
        is_int(h[HL_STATS_HISTORY - 2][0] + h[HL_STATS_HISTORY - 2][1]
               + h[HL_STATS_HISTORY - 2][2], 0, "history: an empty tick is 0");
        /* Later, the same cells hold other ticks: old counts read as 0. */
        hl_stats_history(e, t0 + (HL_STATS_HISTORY + 3) * HL_STATS_TICK_MS, h);
        for (total = 0, i = 0; i < HL_STATS_HISTORY; ++i)
            total += h[i][0] + h[i][1] + h[i][2];
        is_int(total, 0, "history: a whole ring later, nothing left");
        hl_stats_history(e, t0 + HL_STATS_HISTORY * HL_STATS_TICK_MS, h);
        is_int(h[2][HL_DECISION_DRY_RUN], 1,
               "history: a tick still in the window is kept as the ring turns");
        is_int(h[HL_STATS_HISTORY - 1][HL_DECISION_ADMITTED], 0,
               "history: the cell of a tick one turn back reads 0");
        /* A cell reused one turn later restarts at 1. */
        stats_add(st, "/h", HL_DECISION_ADMITTED,
                     t0 + HL_STATS_HISTORY * HL_STATS_TICK_MS);
        hl_stats_history(e, t0 + HL_STATS_HISTORY * HL_STATS_TICK_MS, h);
        is_int(h[HL_STATS_HISTORY - 1][HL_DECISION_ADMITTED], 1,
               "history: a reused cell restarts at 1");
        hl_stats_history(e, -5, h);
        ok(1, "history: a negative time does not crash");
    }
    {
        /* The per-process hint of where a route's entry is: a second
         * table, and a table cleared and filled in another order, each
         * count in their own entries. */
        hl_stats_t *other = calloc(1, sizeof(*other));
        const hl_route_stat_t *a, *b;

        hl_stats_clear(st);
        stats_add(st, "/hint/a", HL_DECISION_ADMITTED, NOW);
        stats_add(other, "/hint/b", HL_DECISION_ADMITTED, NOW);
        stats_add(other, "/hint/a", HL_DECISION_REJECTED, NOW);
        stats_add(st, "/hint/a", HL_DECISION_ADMITTED, NOW);
        a = find(st, "/hint/a");
        b = find(other, "/hint/a");
        ok(a && a->count[HL_DECISION_ADMITTED] == 2
           && a->count[HL_DECISION_REJECTED] == 0
           && b && b->count[HL_DECISION_REJECTED] == 1
           && b->count[HL_DECISION_ADMITTED] == 0 && !find(st, "/hint/b"),
           "two tables: each route counted in its own table's entry");
        hl_stats_clear(st);
        stats_add(st, "/hint/b", HL_DECISION_ADMITTED, NOW);
        stats_add(st, "/hint/a", HL_DECISION_DRY_RUN, NOW);
        a = find(st, "/hint/a");
        b = find(st, "/hint/b");
        ok(a && b && a != b && a->count[HL_DECISION_DRY_RUN] == 1
           && a->count[HL_DECISION_ADMITTED] == 0
           && b->count[HL_DECISION_ADMITTED] == 1,
           "cleared and refilled in another order: counted where each is now");
        free(other);
    }
    free(st);
    return done_testing();
}
