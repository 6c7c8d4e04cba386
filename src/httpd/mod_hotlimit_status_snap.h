/*
 * mod_hotlimit_status_snap.h - what mod_hotlimit_status_snap.c offers the
 * status page's writers: the snapshot, everything the page shows,
 * gathered (copied under the lock, looked up, decoded, summed) before a
 * byte is written, so that the writers (HTML, JSON, metrics) only format.
 */
#ifndef MOD_HOTLIMIT_STATUS_SNAP_H
#define MOD_HOTLIMIT_STATUS_SNAP_H

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_store_shm.h"
#include "mod_hotlimit_table.h"

/* The limiter at a glance, for mod_status (copied out under the lock). */
typedef struct {
    uint32_t slots_used, slots_capacity;
    uint64_t evictions;
    uint64_t table_generation;
    int64_t  table_loaded_ms;     /* wall clock of the last publication, 0 = never */
    const char *table_source;     /* "" without a quota table */
    const char *table_result;     /* "ok", "unchanged", "failed" or "none" */
    const char *table_message;    /* the last result, human readable */
    uint64_t reloads_failed;
    uint64_t decisions[HL_DECISION_KINDS];        /* summed over routes, by hl_decision_kind_t */
    int64_t  started_ms;          /* wall clock when the counters started */
    int64_t  uptime_s;            /* since then, by the monotonic clock */
} hl_status_summary_t;

/*
 * Returns a summary of the store allocated from r->pool (strings too), or
 * NULL when the store is not set up or cannot be locked (the lock logs).
 */
hl_status_summary_t *hl_status_summary(request_rec *r);

#define HL_TOP_KEYS 20
#define HL_LIMITED_KEYS 50        /* keys at their limit listed */
#define HL_TOP_REFUSED 20         /* keys listed as refused most now */

/* One of the busiest keys: its busiest window. */
typedef struct {
    char        key[HL_KEY_MAX + 1];   /* user-visible, control bytes '?' */
    uint32_t    count;
    const char *from;    /* its quota: "directive", "table" or "other" */
    int         window;  /* the counted window's index in its quota, from 0 */
    const char *name;    /* the account's name (hl_names_of), or NULL */
} hl_top_key_t;

/* A key at its limit now (one of its windows). */
typedef struct {
    char        key[HL_KEY_MAX + 1];
    uint32_t    count;
    const char *from;    /* as in hl_top_key_t */
    int         window;
    int64_t     left_ms; /* until the counter expires */
    const char *name;    /* as in hl_top_key_t */
} hl_limited_key_t;

/* Where the keys at their limit were listed from. */
enum {
    HL_LIMITED_FROM_SHM,          /* the shm store: this server's counters */
    HL_LIMITED_FROM_REDIS,        /* the Redis store: every server's */
    HL_LIMITED_FROM_FALLBACK      /* Redis could not answer: this server's
                                     local (fallback) counters */
};

/* A configured route: a HotLimitQuota line or a table rule. */
typedef struct {
    const char *name;    /* as the statistics count it */
    const char *limits;  /* hl_quota_describe */
    const char *origin;  /* "directive" or "table" */
    const hl_route_stat_t *stat;   /* its counts in the snapshot, or NULL */
    const char *where;   /* the rule: "FILE:LINE" of its HotLimitQuota,
                            "table ROUTE" for a table rule */
    const hl_quota_t *quota;       /* its quota (the account lookup) */
    apr_array_header_t *parts;     /* of const hl_route_stat_t *: the
                                      entries summed into stat (a table
                                      rule counted in each virtual host),
                                      or NULL */
} hl_conf_route_t;

/* A row of the routes the page lists: every configured route, then every
 * counted route that none of them counts. */
typedef struct {
    const char *name;
    const char *limits;  /* "" when not configured */
    const char *origin;  /* "directive", "table", "" when not configured */
    const char *rule;    /* "" when not configured */
    const hl_route_stat_t *stat;   /* NULL: no traffic yet */
    const uint32_t (*history)[HL_DECISION_KINDS];  /* HL_STATS_HISTORY ticks,
                                      oldest first,
                                      by hl_decision_kind_t; NULL with stat */
} hl_page_route_t;

/* One counter the account lookup found (?lookup=NAME). */
typedef struct {
    const char *route;    /* the configured route it counts under */
    const char *rule;     /* its rule, as hl_conf_route_t.where */
    const char *key;      /* the counted key, "ROUTE|CLIENT" */
    int         nwindows; /* its quota's windows */
    uint32_t    count[HL_MAX_WINDOWS];     /* requests counted per window */
    int64_t     left_ms[HL_MAX_WINDOWS];   /* until it clears; 0: none */
    uint32_t    refusals; /* refusals now (hl_refusals_of) */
    const char *name;     /* the name the book holds for the key (the
                             spelling last refused), or NULL */
} hl_lookup_row_t;

/* A key refused most now, as the page shows it. */
typedef struct {
    const hl_refusal_rank_t *rank; /* in hl_snapshot_t.refused */
    const char *client;   /* its client part (the whole key without '|') */
    const char *shown;    /* the client column: a ban counter's
                             "CLIENT (HOST:PORT)", else client */
    const char *rule;     /* the rule that refused it, "" when unknown */
    const char *name;     /* the account's name (hl_names_of), or NULL */
} hl_refused_row_t;

/* A copy of everything the page shows. */
typedef struct {
    hl_shared_t  shared;          /* header and per-route stats */
    hl_table_status_t table;      /* what the table's reloads did */
    uint32_t     used, capacity, classes, stripes;
    uint64_t     evictions, reclaims;
    hl_store_figures_t store;     /* the store in force's figures */
    hl_status_summary_t sum;      /* totals, computed after unlocking */
    int64_t      mono_ms;         /* hl_mono_ms() when copied */
    int64_t      counted_s;       /* how long the counters have counted */
    const server_rec *view;       /* whose page: only its counters are
                                     shown (hl_view_owns) */
    /* Who is hurting me (issue 21): */
    int          nrefused;        /* keys refused most now */
    int          refused_servers; /* other servers sharing the Redis store
                                     whose refusals are summed in (full
                                     snapshot only) */
    hl_refusal_rank_t refused[HL_TOP_REFUSED];
    uint64_t     refused_recent;  /* every key's, hl_refusals_recent */
    const char  *refusal_rate;    /* refusals per second now, "12.5" */
    const char  *eviction_rate;   /* evictions per second lately, "0.4"
                                     (eviction_rate's comment) */
    int          slots_pct;       /* used of capacity, in percent */
    /* The rest only in a full snapshot (hl_status_snap_take): */
    int          ntop;
    hl_top_key_t top[HL_TOP_KEYS];
    int          nlimited;        /* keys at limit listed */
    uint32_t     limited_total;   /* windows at their limit seen */
    hl_limited_key_t limited[HL_LIMITED_KEYS];
    int          limited_from;    /* HL_LIMITED_FROM_* */
    apr_array_header_t *routes;   /* of hl_conf_route_t */
    int          routes_cut;      /* table rules not listed */
    apr_array_header_t *rows;     /* of hl_page_route_t */
    hl_refused_row_t refused_rows[HL_TOP_REFUSED];
    apr_array_header_t *bans;     /* of hl_ban_entry_t, in force */
    int          account_routes;  /* routes counting by an account */
    const char  *lookup;          /* ?lookup=NAME, or NULL */
    const char  *lookup_route;    /* ?route=ROUTE, or NULL: every route */
    apr_array_header_t *lookups;  /* of hl_lookup_row_t */
} hl_snapshot_t;

/* post_config: records, once per httpd parent (in s's process pool), when
 * the counters started, for uptime. Never fails. */
void hl_status_snap_record_start(server_rec *s);

/*
 * Returns the header and per-route stats the page of server view shows,
 * copied into a snapshot allocated from r->pool and summed up, without
 * the busiest keys or anything after them in hl_snapshot_t (?metrics and
 * mod_status: neither walks the counter table nor asks Redis); NULL if
 * the store is not set up or can't be locked (a lock failure is logged).
 */
hl_snapshot_t *hl_status_snap_header(request_rec *r, const server_rec *view);

/*
 * Returns a full snapshot of the page of server view, allocated from
 * r->pool: the header, the busiest keys, the keys at their limit (from
 * the Redis store when it is configured), the configured routes, the
 * bans, and the account lookup of lookup (?lookup=, may be NULL) under
 * lookup_route (?route=, NULL or "": every route). NULL as for
 * hl_status_snap_header.
 */
hl_snapshot_t *hl_status_snap_take(request_rec *r, const server_rec *view,
                                   const char *lookup,
                                   const char *lookup_route);

/* Returns the name of a table reload result (hl_reload_result_t): "ok",
 * "unchanged", "failed", or "none" out of range. Static. */
const char *hl_status_result_name(int result);

#endif
