/*
 * hl_stats.h - per-route decision counters for the status page and metrics,
 * in shared memory: a fixed array searched by open addressing, pointer-free.
 * When every entry is taken, new routes are counted under "(other)".
 * Thread- and process-safe without a lock (atomic operations); a reader
 * may see a count one behind, never a torn entry.
 */
#ifndef HL_STATS_H
#define HL_STATS_H

#include <stdint.h>

#define HL_STATS_ROUTES    1024   /* distinct routes counted (entry 0 is "(other)") */
#define HL_STATS_ROUTE_MAX 88     /* bytes of route name kept, NUL included */
#define HL_STATS_PROBES    16     /* linear probes before falling back to "(other)" */

typedef enum {
    HL_DECISION_ADMITTED = 0,
    HL_DECISION_REJECTED,
    HL_DECISION_DRY_RUN      /* would have been rejected, admitted by HotLimitDryRun */
} hl_decision_kind_t;

typedef struct {
    uint64_t hash;                     /* 0 = free entry */
    uint64_t count[3];                 /* indexed by hl_decision_kind_t */
    char     route[HL_STATS_ROUTE_MAX];
} hl_route_stat_t;

typedef struct {
    hl_route_stat_t routes[HL_STATS_ROUTES];
} hl_stats_t;

/* Empties *st. */
void hl_stats_clear(hl_stats_t *st);

/*
 * Counts one decision of `kind` for route (NUL-terminated; longer names are
 * cut). Never fails: an unplaceable route is counted under "(other)".
 */
void hl_stats_add(hl_stats_t *st, const char *route, hl_decision_kind_t kind);

/*
 * hl_stats_add with the route's hash computed by the caller (outside any
 * lock); the same route must always come with the same hash. Never fails.
 */
void hl_stats_add_hashed(hl_stats_t *st, uint64_t hash, const char *route,
                         hl_decision_kind_t kind);

#endif
