/* test_stats.c - per-route decision counters. */
#include <stdlib.h>
#include "hl_tap.h"
#include "hl_stats.h"

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

    hl_stats_add(st, "/user/login", HL_DECISION_ADMITTED);
    hl_stats_add(st, "/user/login", HL_DECISION_ADMITTED);
    hl_stats_add(st, "/user/login", HL_DECISION_REJECTED);
    hl_stats_add(st, "/api", HL_DECISION_DRY_RUN);
    e = find(st, "/user/login");
    ok(e != NULL, "route entry created");
    is_int(e ? e->count[HL_DECISION_ADMITTED] : 0, 2, "two admitted");
    is_int(e ? e->count[HL_DECISION_REJECTED] : 0, 1, "one rejected");
    e = find(st, "/api");
    is_int(e ? e->count[HL_DECISION_DRY_RUN] : 0, 1, "dry run counted apart");
    hl_stats_add(st, "/user/login", (hl_decision_kind_t)7);
    e = find(st, "/user/login");
    is_int(e->count[0] + e->count[1] + e->count[2], 3, "unknown kind ignored");

    /* Long names are cut, never overflow. */
    memset(route, 'x', sizeof(route) - 1);
    route[sizeof(route) - 1] = '\0';
    hl_stats_add(st, route, HL_DECISION_ADMITTED);
    route[HL_STATS_ROUTE_MAX - 1] = '\0';
    ok(find(st, route) != NULL, "long route kept, cut to HL_STATS_ROUTE_MAX-1");

    /* More routes than entries: nothing is lost, the rest is "(other)". */
    hl_stats_clear(st);
    for (i = 0; i < 3 * HL_STATS_ROUTES; ++i) {
        snprintf(route, sizeof(route), "/r/%d", i);
        hl_stats_add(st, route, HL_DECISION_ADMITTED);
    }
    for (i = 0; i < HL_STATS_ROUTES; ++i)
        total += st->routes[i].count[HL_DECISION_ADMITTED];
    is_int(total, 3 * HL_STATS_ROUTES, "every decision counted somewhere");
    ok(find(st, "(other)") != NULL, "overflow goes to (other)");
    free(st);
    return done_testing();
}
