/*
 * hl_stats.h - per-route decision counters for the status page and metrics,
 * in shared memory: a fixed array searched by open addressing, pointer-free.
 * When every entry is taken, new routes are counted under "(other)".
 * Thread- and process-safe without a lock (atomic operations); a reader
 * may see a count one behind, never a torn entry.
 *
 * Each route also keeps the last HL_STATS_HISTORY ticks of HL_STATS_TICK_MS
 * (five minutes) of decisions, for the status page's chart: a ring indexed
 * by tick number, each cell holding its tick's number in the high 32 bits
 * and its count in the low 32, so that a cell from an older turn of the
 * ring reads as 0 and is restarted by a compare-and-swap (exact, no lock).
 * Ticks are counted on the caller's clock (the monotonic one, as now_ms).
 */
#ifndef HL_STATS_H
#define HL_STATS_H

#include <stdint.h>
#include "hl_banbook.h"
#include "hl_refusals.h"

#define HL_STATS_ROUTES    1024   /* distinct routes counted (entry 0 is "(other)") */
#define HL_STATS_ROUTE_MAX 88     /* bytes of route name kept, NUL included */
#define HL_STATS_PROBES    16     /* linear probes before falling back to "(other)" */
#define HL_STATS_HISTORY   30     /* ticks of history per route */
#define HL_STATS_TICK_MS   10000  /* length of a tick */

typedef enum {
    HL_DECISION_ADMITTED = 0,
    HL_DECISION_REJECTED,    /* refused by this route's own quota: a refused
                                request is counted so once, on the line
                                that refused it */
    HL_DECISION_DRY_RUN,     /* would have been rejected, admitted by HotLimitDryRun */
    HL_DECISION_BANNED       /* refused because its client is banned
                                (HotLimitBan): counted once, on the first
                                route of the request, never as a rule's */
} hl_decision_kind_t;

#define HL_DECISION_KINDS 4

typedef struct {
    uint64_t hash;                     /* 0 = free entry */
    uint64_t count[HL_DECISION_KINDS]; /* indexed by hl_decision_kind_t */
    char     route[HL_STATS_ROUTE_MAX];
    /* [tick % HL_STATS_HISTORY][kind]: tick << 32 | count; see above */
    uint64_t history[HL_STATS_HISTORY][HL_DECISION_KINDS];
    /* Refusals per rule (issue 21): */
    uint64_t refused_by;               /* requests this route's quota refused
                                          itself (= count[REJECTED]) */
    uint64_t refused_other;            /* requests of this route another
                                          quota of the request refused
                                          (not a ban: count[BANNED]) */
    /* [reserve=] How long this route's reserving requests take from
     * admission to settlement: a moving average (each new duration
     * weighs 1/4), in 1/16 ms; 0 = none settled yet. */
    uint64_t settle_x16;
} hl_route_stat_t;

typedef struct {
    hl_route_stat_t routes[HL_STATS_ROUTES];
    hl_refusals_t   refusals;   /* refusals per key (issue 21) */
    hl_banbook_t    bans;       /* why each ban was started (issue 27) */
} hl_stats_t;


/*
 * Counts one decision of `kind` for route (NUL-terminated; longer names are
 * cut) at now_ms (ms, >= 0; for the history), with the route's hash
 * computed by the caller (outside any lock); the same route must always
 * come with the same hash. Never fails: an unplaceable route is counted
 * under "(other)".
 */
void hl_stats_add_hashed(hl_stats_t *st, uint64_t hash, const char *route,
                         hl_decision_kind_t kind, int64_t now_ms);

/* hl_stats_add_hashed with the route's length given (len bytes of route,
 * which need not be NUL-terminated; longer names are cut as above). Never
 * fails. */
void hl_stats_add_named(hl_stats_t *st, uint64_t hash, const char *route,
                        size_t len, hl_decision_kind_t kind, int64_t now_ms);

/* Counts one request that route's own quota refused (hl_route_stat_t
 * refused_by); route, hash and len as in hl_stats_add_named. Never
 * fails. */
void hl_stats_refused_by(hl_stats_t *st, uint64_t hash, const char *route,
                         size_t len);

/* Counts one request of route that another quota of the request refused
 * (hl_route_stat_t refused_other: not a decision of route's, so not in
 * count[]); route, hash and len as in hl_stats_add_named. Never fails. */
void hl_stats_refused_other(hl_stats_t *st, uint64_t hash, const char *route,
                            size_t len);

/* [reserve=] Adds one request of route (hash, route, len as in
 * hl_stats_add_named) that took ms (< 0 read as 0) from admission to the
 * settlement of its reservation to the route's moving average. Lock-free
 * (compare-and-swap). Never fails. */
void hl_stats_settled(hl_stats_t *st, uint64_t hash, const char *route,
                      size_t len, int64_t ms);

/* [reserve=] Returns the moving average hl_stats_settled keeps for route,
 * in ms rounded up (>= 1), or 0 when none of its requests settled yet.
 * Never fails. */
int64_t hl_stats_settle_ms(hl_stats_t *st, uint64_t hash, const char *route,
                           size_t len);

/*
 * Fills out[0 .. HL_STATS_HISTORY) with e's decisions per tick, oldest
 * first: out[HL_STATS_HISTORY - 1] is the tick of now_ms (still running),
 * out[i] the one (HL_STATS_HISTORY - 1 - i) ticks before. A tick with no
 * record (none counted, or from an older turn of the ring) is 0. Reads e
 * with atomic loads, so it may be the live entry or a copy. Never fails.
 */
void hl_stats_history(const hl_route_stat_t *e, int64_t now_ms,
                      uint32_t out[HL_STATS_HISTORY][HL_DECISION_KINDS]);

#endif
