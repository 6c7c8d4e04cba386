/*
 * mod_hotlimit_status.c - "SetHandler hotlimit-status": the limiter's state
 * as an HTML page, as JSON (?json) or as Prometheus text (?metrics), and
 * "POST reset=KEY" to clear one client's counters.
 *
 * Scope: it answers only where the server configuration says
 * HotLimitStatus On (never settable from .htaccess), else 404; it refuses
 * a Host that is not a name of the server (421) on every method, and
 * every answer forbids framing. A virtual host's page (HotLimitStatus On
 * set inside its <VirtualHost>) shows and resets only that host's
 * counters (mod_hotlimit_view.h); the main server's page, and a page the
 * main server's configuration enables, show them all (page_view).
 *
 * Everything is copied out of shared memory under the lock into a snapshot
 * allocated from r->pool, and written to the client after unlocking. The
 * same copy, summed up, feeds mod_status's section
 * (mod_hotlimit_modstatus.c).
 *
 * The HTML page is for an operator: every configured route (HotLimitQuota
 * lines of the configuration files and the published table's rules) with
 * its limits from the start, its counts and an inline SVG chart of the
 * last five minutes drawn here (no script, no external asset); the keys
 * at their limit now, each with a reset button (a same-origin form POST,
 * answered with a 303 back to the page); bans; the table; store health.
 *
 * Uptime: the counters live as long as the httpd parent (see
 * mod_hotlimit_store.c), so their start is recorded once per parent, in
 * the process pool, and shown as a wall-clock time and as an uptime
 * measured on the monotonic clock (a clock step does not change it).
 */
#include <string.h>
#include <stdlib.h>
#include <arpa/inet.h>

#include "httpd.h"
#include "http_config.h"
#include "http_core.h"
#include "http_log.h"
#include "http_main.h"
#include "http_protocol.h"
#include "util_script.h"
#include "apr_strings.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_access.h"
#include "mod_hotlimit_ban.h"
#include "mod_hotlimit_status.h"
#include "mod_hotlimit_conc.h"
#include "mod_hotlimit_store.h"
#include "mod_hotlimit_stores.h"
#include "mod_hotlimit_table.h"
#include "mod_hotlimit_view.h"
#include "hl_render.h"

APLOG_USE_MODULE(hotlimit);

#define HL_TOP_KEYS 20
#define HL_LIMITED_KEYS 50        /* keys at their limit listed */
#define HL_TABLE_ROUTES_LISTED 1000  /* table rules listed with limits */
#define HL_STARTED_KEY "hotlimit-started"
#define HL_TOP_REFUSED 20         /* keys listed as refused most now */
#define HL_METRIC_REFUSED 10      /* ... and in ?metrics */
#define HL_REFRESH_MAX 3600       /* ?refresh=N seconds, at most */

/* When the counters started: once per httpd parent, in its process pool. */
typedef struct {
    int64_t wall_ms;    /* hl_now_ms() then */
    int64_t mono_ms;    /* hl_mono_ms() then */
} hl_started_t;

/* This generation's pointer to the process pool's record (the DSO's
 * statics are new each generation; the record is not). */
static const hl_started_t *started;

typedef struct {
    char     key[HL_KEY_MAX + 1];
    uint32_t count;
    char     origin;     /* hl_origin_t: 'd' directive quota, 't' table rule */
    int      window;     /* the counted window's index in its quota, from 0 */
} hl_top_key_t;

/* A key at its limit now (one of its windows). */
typedef struct {
    char     key[HL_KEY_MAX + 1];
    uint32_t count;
    char     origin;     /* as in hl_top_key_t */
    int      window;
    int64_t  left_ms;    /* until the counter expires */
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

/* One counter the account lookup found (?lookup=NAME). */
typedef struct {
    const char *route;    /* the configured route it counts under */
    const char *rule;     /* its rule, as hl_conf_route_t.where */
    const char *key;      /* the counted key, "ROUTE|CLIENT" */
    int         nwindows; /* its quota's windows */
    uint32_t    count[HL_MAX_WINDOWS];     /* requests counted per window */
    int64_t     left_ms[HL_MAX_WINDOWS];   /* until it clears; 0: none */
    uint32_t    refusals; /* refusals now (hl_refusals_of) */
} hl_lookup_row_t;

/* A copy of everything the page shows. */
typedef struct {
    hl_shared_t  shared;          /* header and per-route stats */
    hl_table_status_t table;      /* what the table's reloads did */
    uint32_t     used, capacity, classes, stripes;
    uint64_t     evictions, reclaims;
    hl_status_summary_t sum;      /* totals, computed after unlocking */
    int          ntop;
    hl_top_key_t top[HL_TOP_KEYS];
    int64_t      mono_ms;         /* hl_mono_ms() when copied */
    int          nlimited;        /* keys at limit listed */
    uint32_t     limited_total;   /* windows at their limit seen */
    hl_limited_key_t limited[HL_LIMITED_KEYS];
    int          limited_from;    /* HL_LIMITED_FROM_* */
    apr_array_header_t *routes;   /* of hl_conf_route_t */
    int          routes_cut;      /* table rules not listed */
    const server_rec *view;       /* whose page: only its counters are
                                     shown (hl_view_owns) */
    /* Who is hurting me (issue 21): */
    int          nrefused;        /* keys refused most now */
    hl_refusal_rank_t refused[HL_TOP_REFUSED];
    uint64_t     refused_recent;  /* every key's, hl_refusals_recent */
    const char  *lookup;          /* ?lookup=NAME, or NULL */
    const char  *lookup_route;    /* ?route=ROUTE, or NULL: every route */
    apr_array_header_t *lookups;  /* of hl_lookup_row_t */
} hl_snapshot_t;

int hl_status_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                          apr_pool_t *ptemp, server_rec *s)
{
    apr_pool_t *pp = s->process->pool;
    void *found = NULL;
    (void)pconf;
    (void)plog;
    (void)ptemp;

    apr_pool_userdata_get(&found, HL_STARTED_KEY, pp);
    if (!found) {
        hl_started_t *st = apr_palloc(pp, sizeof(*st));
        st->wall_ms = hl_now_ms();
        st->mono_ms = hl_mono_ms();
        /* userdata_set copies the key: the DSO (and its literal) goes
         * away at the next restart, the process pool does not. */
        apr_pool_userdata_set(st, HL_STARTED_KEY, apr_pool_cleanup_null, pp);
        found = st;
    }
    started = found;
    return OK;
}

/* Records in top entry k which counter of its key it shows: the slot
 * key's prefix is the origin and the window index ('0' + i). */
static void top_set_window(hl_top_key_t *k, const hl_slot_t *s)
{
    k->origin = s->key[0];
    k->window = s->key[1] >= '0' && s->key[1] <= '9' ? s->key[1] - '0' : -1;
}

/* Keeps the HL_TOP_KEYS busiest keys (fixed and sliding windows); a key
 * with several windows shows its busiest one. */
static int collect_top(const hl_slot_t *s, void *baton)
{
    hl_snapshot_t *snap = baton;
    size_t klen = s->key_len - HL_SLOT_KEY_PREFIX;
    int i, at;

    if (s->bucket.count == 0 || s->key_len <= HL_SLOT_KEY_PREFIX
        || !hl_view_owns(snap->view, s->key + HL_SLOT_KEY_PREFIX, klen)
        || hl_ban_key_is_counter(s->key + HL_SLOT_KEY_PREFIX, klen))
        return 0;
    for (i = 0; i < snap->ntop; ++i) {
        if (strlen(snap->top[i].key) == klen
            && !memcmp(snap->top[i].key, s->key + HL_SLOT_KEY_PREFIX, klen)) {
            /* Seen through another window: keep the larger count, in order. */
            if (s->bucket.count > snap->top[i].count) {
                hl_top_key_t k = snap->top[i];
                k.count = s->bucket.count;
                top_set_window(&k, s);
                for (at = i; at > 0 && snap->top[at - 1].count < k.count; --at)
                    snap->top[at] = snap->top[at - 1];
                snap->top[at] = k;
            }
            return 0;
        }
    }
    at = snap->ntop < HL_TOP_KEYS ? snap->ntop : HL_TOP_KEYS - 1;
    if (snap->ntop == HL_TOP_KEYS && snap->top[at].count >= s->bucket.count)
        return 0;
    /* Insertion into a short sorted array. */
    while (at > 0 && snap->top[at - 1].count < s->bucket.count) {
        snap->top[at] = snap->top[at - 1];
        --at;
    }
    memcpy(snap->top[at].key, s->key + HL_SLOT_KEY_PREFIX,
           s->key_len - HL_SLOT_KEY_PREFIX);
    snap->top[at].key[s->key_len - HL_SLOT_KEY_PREFIX] = '\0';
    snap->top[at].count = s->bucket.count;
    top_set_window(&snap->top[at], s);
    for (i = 0; snap->top[at].key[i]; ++i)
        if ((unsigned char)snap->top[at].key[i] < 0x20)
            snap->top[at].key[i] = '?';
    if (snap->ntop < HL_TOP_KEYS)
        snap->ntop++;
    return 0;
}

/* Fills k from a slot key (skey, len bytes: the origin, the window digit,
 * then "scope|client"; HL_SLOT_KEY_PREFIX < len <= HL_KEY_MAX), control
 * characters shown as '?'. Never fails. */
static void limited_set(hl_limited_key_t *k, const char *skey, size_t len,
                        uint32_t count, int64_t left_ms)
{
    size_t klen = len - HL_SLOT_KEY_PREFIX, i;

    memcpy(k->key, skey + HL_SLOT_KEY_PREFIX, klen);
    k->key[klen] = '\0';
    for (i = 0; i < klen; ++i)
        if ((unsigned char)k->key[i] < 0x20)
            k->key[i] = '?';
    k->count = count;
    k->origin = skey[0];
    k->window = skey[1] >= '0' && skey[1] <= '9' ? skey[1] - '0' : -1;
    k->left_ms = left_ms;
}

/* Keeps the first HL_LIMITED_KEYS windows at their limit that have not
 * expired, and counts them all. */
static int collect_limited(const hl_slot_t *s, void *baton)
{
    hl_snapshot_t *snap = baton;

    if (s->level != HL_SLOT_FULL || s->key_len <= HL_SLOT_KEY_PREFIX
        || s->key_len > HL_KEY_MAX || s->expires_ms <= snap->mono_ms
        || !hl_view_owns(snap->view, s->key + HL_SLOT_KEY_PREFIX,
                         s->key_len - HL_SLOT_KEY_PREFIX)
        || hl_ban_key_is_counter(s->key + HL_SLOT_KEY_PREFIX,
                                 s->key_len - HL_SLOT_KEY_PREFIX))
        return 0;   /* ban counters are listed as bans, not as keys */
    snap->limited_total++;
    if (snap->nlimited == HL_LIMITED_KEYS)
        return 0;
    limited_set(&snap->limited[snap->nlimited++], s->key, s->key_len,
                s->bucket.count, s->expires_ms - snap->mono_ms);
    return 0;
}

/* With the Redis store, replaces the keys at their limit that the scan
 * found in this server's (fallback) counters by Redis' list, that of every
 * server sharing it; keeps them when Redis cannot answer (bounded by
 * HotLimitStoreTimeout). Sets snap->limited_from. Never fails. */
static void limited_from_redis(hl_snapshot_t *snap)
{
    const hl_store_t *store = hl_store_get();
    hl_store_limited_t got[HL_LIMITED_KEYS];
    uint32_t total = 0;
    int i, n;

    snap->limited_from = HL_LIMITED_FROM_SHM;
    if (!store->ops->limited)
        return;
    snap->limited_from = HL_LIMITED_FROM_FALLBACK;
    n = store->ops->limited(store->ctx, got, HL_LIMITED_KEYS, 0, &total);
    if (n < 0)
        return;
    snap->limited_from = HL_LIMITED_FROM_REDIS;
    snap->limited_total = total;
    snap->nlimited = 0;
    for (i = 0; i < n; ++i) {
        if (got[i].len <= HL_SLOT_KEY_PREFIX)
            continue;
        if (!hl_view_owns(snap->view, got[i].key + HL_SLOT_KEY_PREFIX,
                          got[i].len - HL_SLOT_KEY_PREFIX)
            || hl_ban_key_is_counter(got[i].key + HL_SLOT_KEY_PREFIX,
                                     got[i].len - HL_SLOT_KEY_PREFIX)) {
            snap->limited_total--;   /* another host's: not ours to count */
            continue;
        }
        limited_set(&snap->limited[snap->nlimited++], got[i].key,
                    got[i].len, got[i].count, got[i].left_ms);
    }
}

/* hl_store_scan callback: the busiest keys and the keys at their limit. */
static int collect(const hl_slot_t *s, void *baton)
{
    collect_top(s, baton);
    return collect_limited(s, baton);
}

/* Returns the stats entry named name in snap, or NULL. */
static const hl_route_stat_t *stat_named(const hl_snapshot_t *snap,
                                         const char *name)
{
    int i;

    for (i = 0; i < HL_STATS_ROUTES; ++i)
        if (snap->shared.stats.routes[i].hash
            && !strcmp(snap->shared.stats.routes[i].route, name))
            return &snap->shared.stats.routes[i];
    return NULL;
}

/* Adds a configured route to snap->routes unless already listed, the
 * rule labelled where. Returns its entry, or NULL when it was listed. */
static hl_conf_route_t *add_conf_route(apr_pool_t *p, hl_snapshot_t *snap,
                                       const char *name, const hl_quota_t *q,
                                       const char *origin, const char *where)
{
    hl_conf_route_t *c;
    char buf[256];
    int i;

    for (i = 0; i < snap->routes->nelts; ++i)
        if (!strcmp(APR_ARRAY_IDX(snap->routes, i, hl_conf_route_t).name, name))
            return NULL;
    c = apr_array_push(snap->routes);
    c->name = name;
    c->limits = apr_pstrdup(p, hl_quota_describe(q, buf, sizeof(buf)));
    c->origin = origin;
    c->stat = stat_named(snap, name);
    c->where = where;
    c->quota = q;
    c->parts = NULL;
    return c;
}

/* Returns history cell a and b (tick << 32 | count) merged: summed when of
 * one tick, else the newer. */
static uint64_t merge_cell(uint64_t a, uint64_t b)
{
    uint64_t n;

    if ((a >> 32) != (b >> 32))
        return (b >> 32) > (a >> 32) ? b : a;
    n = (a & 0xffffffffu) + (b & 0xffffffffu);
    return (a & ~(uint64_t)0xffffffffu) | (n > 0xffffffffu ? 0xffffffffu : n);
}

/* Sums the statistics entry e into c's counts (a copy allocated from p
 * the first time), and remembers it among c's parts. */
static void add_part(apr_pool_t *p, hl_conf_route_t *c,
                     const hl_route_stat_t *e)
{
    hl_route_stat_t *sum;
    int i, k;

    if (!c->parts)
        c->parts = apr_array_make(p, 4, sizeof(const hl_route_stat_t *));
    APR_ARRAY_PUSH(c->parts, const hl_route_stat_t *) = e;
    if (!c->stat) {
        c->stat = e;
        return;
    }
    sum = apr_pmemdup(p, c->stat, sizeof(*sum));
    for (k = 0; k < 3; ++k)
        sum->count[k] += e->count[k];
    sum->refused_by += e->refused_by;
    for (i = 0; i < HL_STATS_HISTORY; ++i)
        for (k = 0; k < 3; ++k)
            sum->history[i][k] = merge_cell(sum->history[i][k],
                                            e->history[i][k]);
    c->stat = sum;
}

/* On the main server's page, sums into c (the table rule route) what
 * every virtual host counted for it (under its tag): one row per rule. */
static void add_vhost_parts(apr_pool_t *p, hl_snapshot_t *snap,
                            hl_conf_route_t *c, const char *route)
{
    server_rec *s;

    for (s = ap_server_conf; s; s = s->next) {
        const hl_server_conf_t *sc = ap_get_module_config(s->module_config,
                                                          &hotlimit_module);
        const hl_route_stat_t *e;
        if (!sc || !sc->tag || !*sc->tag)
            continue;
        e = stat_named(snap, apr_pstrcat(p, sc->tag, route, NULL));
        if (e && e != c->stat)
            add_part(p, c, e);
    }
}

/* Fills snap->routes: each server's HotLimitQuota lines (named as the
 * statistics count them: the vhost tag, then the scope), then the
 * published table's rules, at most HL_TABLE_ROUTES_LISTED; on a virtual
 * host's page, its own lines and the table's rules as it counts them.
 * Never fails. */
static void collect_routes(request_rec *r, hl_snapshot_t *snap)
{
    const server_rec *view = snap->view;
    const hl_server_conf_t *own = ap_get_module_config(view->module_config,
                                                       &hotlimit_module);
    const char *tag = view->is_virtual && own->tag ? own->tag : "";
    hl_table_route_t *rules;
    server_rec *s;
    int i, n;

    snap->routes = apr_array_make(r->pool, 16, sizeof(hl_conf_route_t));
    for (s = ap_server_conf; s; s = s->next) {
        const hl_server_conf_t *sc = ap_get_module_config(s->module_config,
                                                          &hotlimit_module);
        if (!sc || !sc->quotas || (view->is_virtual && s != view))
            continue;
        for (i = 0; i < sc->quotas->nelts; ++i) {
            const hl_dir_quota_t *dq = APR_ARRAY_IDX(sc->quotas, i,
                                                     const hl_dir_quota_t *);
            add_conf_route(r->pool, snap,
                           apr_pstrcat(r->pool, sc->tag ? sc->tag : "",
                                       dq->count_scope, NULL),
                           &dq->quota, "directive",
                           dq->where && *dq->where ? dq->where : dq->scope);
        }
    }
    n = hl_table_routes(r, HL_TABLE_ROUTES_LISTED, &rules);
    for (i = 0; i < n; ++i) {  /* a virtual host counts them after its tag */
        hl_conf_route_t *c = add_conf_route(r->pool, snap,
                       *tag ? apr_pstrcat(r->pool, tag, rules[i].route, NULL)
                            : rules[i].route, &rules[i].quota, "table",
                       apr_pstrcat(r->pool, "table ", rules[i].route, NULL));
        if (c && !view->is_virtual)
            add_vhost_parts(r->pool, snap, c, rules[i].route);
    }
    snap->routes_cut = snap->table.table_routes > (uint32_t)n
                       ? (int)(snap->table.table_routes - (uint32_t)n) : 0;
}

/* Returns the configured route whose counts include stats entry e (its
 * own, or summed into it), or NULL. */
static const hl_conf_route_t *configured_as(const hl_snapshot_t *snap,
                                            const hl_route_stat_t *e)
{
    int i, j;

    for (i = 0; i < snap->routes->nelts; ++i) {
        const hl_conf_route_t *c = &APR_ARRAY_IDX(snap->routes, i,
                                                  hl_conf_route_t);
        if (c->stat == e)
            return c;
        for (j = 0; c->parts && j < c->parts->nelts; ++j)
            if (APR_ARRAY_IDX(c->parts, j, const hl_route_stat_t *) == e)
                return c;
    }
    return NULL;
}

/* Returns 1 if stats entry e is counted in one of snap->routes. */
static int is_configured(const hl_snapshot_t *snap, const hl_route_stat_t *e)
{
    return configured_as(snap, e) != NULL;
}

/* Returns the rule that counts under route (a statistics name): "FILE:LINE"
 * or "table ROUTE", or "" when none is configured (or no routes were
 * collected: ?metrics). */
static const char *rule_of(const hl_snapshot_t *snap, const char *route)
{
    const hl_route_stat_t *e = stat_named(snap, route);
    const hl_conf_route_t *c;
    int i;

    if (!snap->routes)
        return "";
    c = e ? configured_as(snap, e) : NULL;
    if (c)
        return c->where;
    for (i = 0; i < snap->routes->nelts; ++i)
        if (!strcmp(APR_ARRAY_IDX(snap->routes, i, hl_conf_route_t).name, route))
            return APR_ARRAY_IDX(snap->routes, i, hl_conf_route_t).where;
    return "";
}

/* hl_refusals_rank keep callback: the keys the page of server baton
 * shows. */
static int view_keeps(const char *key, size_t len, void *baton)
{
    return hl_view_owns(baton, key, len);
}

/* Returns the client of a key "[HOST:PORT]SCOPE|CLIENT": after its first
 * '|' (the whole key without one). Points into key. */
static const char *key_client(const char *key)
{
    const char *bar = strchr(key, '|');

    return bar ? bar + 1 : key;
}

/* Returns key as the page shows a ban counter's: "CLIENT (HOST:PORT)" for
 * "HOST:PORTban|CLIENT" (the tag glued to the scope), "CLIENT" for the
 * main server's; other keys as they are. Allocated from p or key. */
static const char *key_shown(apr_pool_t *p, const char *key)
{
    const char *client;
    size_t clen, len = strlen(key), host;

    if (!hl_ban_key_client(key, len, &client, &clen))
        return key;
    host = (size_t)(client - key) - (sizeof(HL_BAN_SCOPE "|") - 1);
    return host ? apr_psprintf(p, "%s (%.*s)", client, (int)host, key)
                : client;
}

static const char *const result_names[HL_RELOAD_RESULTS] = {
    "ok", "unchanged", "failed"
};
static const char *const decision_names[3] = {
    "admitted", "rejected", "dry_run"
};

/* Fills snap->sum from the copy in snap (no lock needed: it is ours).
 * Strings point into snap. Never fails. */
static void summarize(hl_snapshot_t *snap)
{
    hl_status_summary_t *sum = &snap->sum;
    int v = snap->table.table_last_result;
    int i, k;

    sum->slots_used = snap->used;
    sum->slots_capacity = snap->capacity;
    sum->evictions = snap->evictions;
    sum->table_generation = snap->table.table_generation;
    sum->table_loaded_ms = snap->table.table_loaded_ms;
    snap->table.table_source[HL_TEXT_MAX - 1] = '\0';
    snap->table.table_message[HL_TEXT_MAX - 1] = '\0';
    sum->table_source = snap->table.table_source;
    sum->table_message = snap->table.table_message;
    sum->table_result = v >= 0 && v < HL_RELOAD_RESULTS ? result_names[v]
                                                        : "none";
    sum->reloads_failed = snap->table.reloads[HL_RELOAD_FAILED];
    for (i = 0; i < HL_STATS_ROUTES; ++i)
        if (snap->shared.stats.routes[i].hash)
            for (k = 0; k < 3; ++k)
                sum->decisions[k] += snap->shared.stats.routes[i].count[k];
    if (started) {
        int64_t up = hl_mono_ms() - started->mono_ms;
        sum->started_ms = started->wall_ms;
        sum->uptime_s = up > 0 ? up / 1000 : 0;
    }
}

/* Drops from the copy in snap the per-route statistics that snap->view's
 * page does not show (another virtual host's). */
static void hide_foreign_routes(hl_snapshot_t *snap)
{
    int i;

    for (i = 0; i < HL_STATS_ROUTES; ++i) {
        hl_route_stat_t *e = &snap->shared.stats.routes[i];
        if (e->hash && !hl_view_owns(snap->view, e->route,
                                       strnlen(e->route, sizeof(e->route))))
            e->hash = 0;
    }
}

/* Returns the header and per-route stats copied into a snapshot allocated
 * from r->pool, summed up, without the busiest keys; NULL if the store is
 * not set up or can't be locked (a lock failure is logged). */
static hl_snapshot_t *copy_header(request_rec *r, const server_rec *view)
{
    hl_snapshot_t *snap = apr_pcalloc(r->pool, sizeof(*snap));
    hl_store_totals_t totals;
    hl_shared_t *shared;

    if (hl_store_lock(r->server, &shared) != APR_SUCCESS)
        return NULL;
    memcpy(&snap->shared, shared, sizeof(*shared));
    hl_store_unlock(r->server);
    snap->view = view;
    hide_foreign_routes(snap);
    snap->nrefused = hl_refusals_rank(&snap->shared.stats.refusals,
                                      hl_mono_ms(), view_keeps, (void *)view,
                                      snap->refused, HL_TOP_REFUSED);
    snap->refused_recent = hl_refusals_recent(&snap->shared.stats.refusals,
                                              hl_mono_ms());
    hl_table_status(r->server, &snap->table);
    hl_store_totals(&totals);
    snap->used = totals.used;
    snap->capacity = totals.capacity;
    snap->evictions = totals.evictions;
    snap->reclaims = totals.reclaims;
    snap->classes = totals.classes;
    snap->stripes = totals.stripes;
    snap->mono_ms = hl_mono_ms();
    summarize(snap);
    return snap;
}

hl_status_summary_t *hl_status_summary(request_rec *r)
{
    /* mod_status's page shows every server's totals, as it shows every
     * server's workers. */
    hl_snapshot_t *snap = copy_header(r, ap_server_conf);
    return snap ? &snap->sum : NULL;
}

/* Adds to snap->lookups the key of account snap->lookup under route
 * (a statistics name) of configured route c. */
static void lookup_add(apr_pool_t *p, hl_snapshot_t *snap,
                       const hl_conf_route_t *c, const char *route,
                       const char *client)
{
    hl_lookup_row_t *row = apr_array_push(snap->lookups);

    memset(row, 0, sizeof(*row));
    row->route = route;
    row->rule = c->where;
    row->key = apr_pstrcat(p, route, "|", client, NULL);
    row->nwindows = c->quota->nwindows;
    row->refusals = hl_refusals_of(&snap->shared.stats.refusals, row->key,
                                   strlen(row->key), hl_mono_ms());
}

/* hl_store_scan callback: the windows of the looked-up keys. */
static int collect_lookup(const hl_slot_t *s, void *baton)
{
    hl_snapshot_t *snap = baton;
    size_t klen = s->key_len - HL_SLOT_KEY_PREFIX;
    int i, w;

    if (s->key_len <= HL_SLOT_KEY_PREFIX || s->expires_ms <= snap->mono_ms)
        return 0;
    w = s->key[1] - '0';
    for (i = 0; i < snap->lookups->nelts; ++i) {
        hl_lookup_row_t *row = &APR_ARRAY_IDX(snap->lookups, i, hl_lookup_row_t);
        if (strlen(row->key) == klen && w >= 0 && w < HL_MAX_WINDOWS
            && !memcmp(row->key, s->key + HL_SLOT_KEY_PREFIX, klen)) {
            row->count[w] = s->bucket.count;
            row->left_ms[w] = s->expires_ms - snap->mono_ms;
        }
    }
    return 0;
}

/* Fills snap->lookups for ?lookup=NAME (&route=ROUTE): the key NAME gets
 * under each configured route counting by an account (by=header, cookie,
 * param, user or env: hashed and folded as a request's,
 * hl_account_client_part), with its counters and refusals. Never fails. */
static void lookup_account(request_rec *r, hl_snapshot_t *snap)
{
    int i, j;

    snap->lookups = apr_array_make(r->pool, 4, sizeof(hl_lookup_row_t));
    if (!snap->lookup || !*snap->lookup)
        return;
    for (i = 0; i < snap->routes->nelts; ++i) {
        const hl_conf_route_t *c = &APR_ARRAY_IDX(snap->routes, i,
                                                  hl_conf_route_t);
        const char *client = hl_account_client_part(r->pool, c->quota,
                                                     snap->lookup,
                                                     strlen(snap->lookup));
        if (!client || (snap->lookup_route && *snap->lookup_route
                        && strcmp(snap->lookup_route, c->name)))
            continue;
        lookup_add(r->pool, snap, c, c->name, client);
        for (j = 0; c->parts && j < c->parts->nelts; ++j) {
            const hl_route_stat_t *e = APR_ARRAY_IDX(c->parts, j,
                                                     const hl_route_stat_t *);
            if (strcmp(e->route, c->name))
                lookup_add(r->pool, snap, c,
                           apr_pstrdup(r->pool, e->route), client);
        }
    }
    if (snap->lookups->nelts)
        hl_store_scan(collect_lookup, snap);
}

/* Writes the ?json field "lookup":{"name":...,"keys":[...]} (nothing
 * without ?lookup=). */
static void write_lookup_json(request_rec *r, const hl_snapshot_t *snap)
{
    apr_pool_t *p = r->pool;
    int i, w;

    if (!snap->lookup || !snap->lookups)
        return;
    ap_rprintf(r, "\"lookup\":{\"name\":\"%s\",\"keys\":[",
               hl_json_escape(p, snap->lookup));
    for (i = 0; i < snap->lookups->nelts; ++i) {
        const hl_lookup_row_t *row = &APR_ARRAY_IDX(snap->lookups, i,
                                                    hl_lookup_row_t);
        ap_rprintf(r, "%s{\"route\":\"%s\",\"rule\":\"%s\",\"key\":\"%s\","
                   "\"refusals\":%u,\"windows\":[", i ? "," : "",
                   hl_json_escape(p, row->route), hl_json_escape(p, row->rule),
                   hl_json_escape(p, row->key), row->refusals);
        for (w = 0; w < row->nwindows; ++w)
            ap_rprintf(r, "%s{\"count\":%u,\"left_ms\":%" APR_INT64_T_FMT "}",
                       w ? "," : "", row->count[w], (apr_int64_t)row->left_ms[w]);
        ap_rputs("]}", r);
    }
    ap_rputs("]},", r);
}

/* Returns a snapshot allocated from r->pool, with the busiest keys, the
 * keys at their limit (from the Redis store when it is configured) and
 * the configured routes, or NULL if the store can't be locked (logged).
 * ?metrics shows none of these and takes copy_header alone: a scrape
 * neither walks the counter table nor asks Redis. */
static hl_snapshot_t *take_snapshot(request_rec *r, const server_rec *view)
{
    hl_snapshot_t *snap = copy_header(r, view);

    if (!snap)
        return NULL;
    /* The busiest keys, stripe by stripe in chunks: requests wait for one
     * chunk at most, never for the whole table (HotLimitSlots may be 16
     * million). */
    hl_store_scan(collect, snap);
    limited_from_redis(snap);
    collect_routes(r, snap);
    return snap;
}


/* Returns a Prometheus label value with \ " and newline escaped. */
static const char *prom_escape(apr_pool_t *p, const char *s)
{
    char *out = apr_palloc(p, strlen(s) * 2 + 1), *o = out;
    for (; *s; ++s) {
        if (*s == '\\' || *s == '"') {
            *o++ = '\\';
            *o++ = *s;
        }
        else if (*s == '\n') {
            *o++ = '\\';
            *o++ = 'n';
        }
        else
            *o++ = *s;
    }
    *o = '\0';
    return out;
}

/* Returns what the origin byte of a slot key means: "directive" for a
 * HotLimitQuota, "table" for a quota table rule, "other". Static. */
static const char *origin_name(char origin)
{
    return origin == HL_ORIGIN_DIRECTIVE ? "directive"
           : origin == HL_ORIGIN_TABLE ? "table" : "other";
}

/* Fills *f with the figures of the store in force (none for the shared
 * memory). Never fails. */
static void store_figures(hl_store_figures_t *f)
{
    const hl_store_t *store = hl_store_get();

    store->ops->figures(store->ctx, f);
}

/* Writes the remote store's metrics: whether it answers, and how many
 * decisions it made, fell back to HotLimitStoreFailure, or failed (with
 * local counters: up, and zeros, so that alerts can name them anyway). */
static void write_store_metrics(request_rec *r)
{
    hl_store_figures_t f;

    store_figures(&f);
    if (!f.configured)
        f.up = 1;
    ap_rprintf(r, "# HELP hotlimit_store_up 1 while the Redis store answers, 0 while its breaker is open.\n"
               "# TYPE hotlimit_store_up gauge\n"
               "hotlimit_store_up %d\n"
               "# HELP hotlimit_store_decisions_total Decisions the Redis store answered.\n"
               "# TYPE hotlimit_store_decisions_total counter\n"
               "hotlimit_store_decisions_total %" APR_UINT64_T_FMT "\n"
               "# HELP hotlimit_store_fallbacks_total Decisions made by HotLimitStoreFailure while Redis could not answer.\n"
               "# TYPE hotlimit_store_fallbacks_total counter\n"
               "hotlimit_store_fallbacks_total %" APR_UINT64_T_FMT "\n"
               "# HELP hotlimit_store_errors_total Round trips to Redis that failed.\n"
               "# TYPE hotlimit_store_errors_total counter\n"
               "hotlimit_store_errors_total %" APR_UINT64_T_FMT "\n"
               "# HELP hotlimit_store_leased_total Requests admitted by a lease of the Redis store (HotLimitStoreLease), without a round trip.\n"
               "# TYPE hotlimit_store_leased_total counter\n"
               "hotlimit_store_leased_total %" APR_UINT64_T_FMT "\n",
               f.up, (apr_uint64_t)f.decisions, (apr_uint64_t)f.fallbacks,
               (apr_uint64_t)f.errors, (apr_uint64_t)f.leased);
}

/* Returns the refusals per second now (hl_refusals_recent) as a decimal
 * with one digit after the point, allocated from p. */
static const char *refusal_rate(apr_pool_t *p, const hl_snapshot_t *snap)
{
    uint64_t tenths = snap->refused_recent * 10 / HL_REFUSALS_RATE_S;

    return apr_psprintf(p, "%" APR_UINT64_T_FMT ".%d",
                        (apr_uint64_t)(tenths / 10), (int)(tenths % 10));
}

/* Returns ms (wall clock) as Prometheus seconds, "0" for 0 (never);
 * allocated from p. */
static const char *prom_seconds(apr_pool_t *p, int64_t ms)
{
    if (ms <= 0)
        return "0";
    return apr_psprintf(p, "%" APR_INT64_T_FMT ".%03d", (apr_int64_t)(ms / 1000),
                        (int)(ms % 1000));
}

static void write_metrics(request_rec *r, const hl_snapshot_t *snap)
{
    int i, k;

    ap_set_content_type(r, "text/plain; version=0.0.4; charset=utf-8");
    ap_rputs("# HELP hotlimit_requests_total Decisions per route.\n"
             "# TYPE hotlimit_requests_total counter\n", r);
    for (i = 0; i < HL_STATS_ROUTES; ++i) {
        const hl_route_stat_t *e = &snap->shared.stats.routes[i];
        if (!e->hash)
            continue;
        for (k = 0; k < 3; ++k)
            ap_rprintf(r, "hotlimit_requests_total{route=\"%s\",decision=\"%s\"} %"
                       APR_UINT64_T_FMT "\n", prom_escape(r->pool, e->route),
                       decision_names[k], (apr_uint64_t)e->count[k]);
    }
    ap_rputs("# HELP hotlimit_route_refusals_total Requests refused by the route's own quota (a quota line or table rule); hotlimit_requests_total{decision=\"rejected\"} also counts those another quota of the request refused.\n"
             "# TYPE hotlimit_route_refusals_total counter\n", r);
    for (i = 0; i < HL_STATS_ROUTES; ++i) {
        const hl_route_stat_t *e = &snap->shared.stats.routes[i];
        if (e->hash)
            ap_rprintf(r, "hotlimit_route_refusals_total{route=\"%s\"} %"
                       APR_UINT64_T_FMT "\n", prom_escape(r->pool, e->route),
                       (apr_uint64_t)e->refused_by);
    }
    ap_rprintf(r, "# HELP hotlimit_key_refusals Refusals in this minute and the one before of the %d keys refused most now, with the route that refused them.\n"
               "# TYPE hotlimit_key_refusals gauge\n", HL_METRIC_REFUSED);
    for (i = 0; i < snap->nrefused && i < HL_METRIC_REFUSED; ++i)
        ap_rprintf(r, "hotlimit_key_refusals{key=\"%s\",route=\"%s\"} %u\n",
                   prom_escape(r->pool, snap->refused[i].key),
                   prom_escape(r->pool, snap->refused[i].route),
                   snap->refused[i].now);
    ap_rprintf(r, "# HELP hotlimit_refusals_per_second Refusals per second over the last %d whole seconds.\n"
               "# TYPE hotlimit_refusals_per_second gauge\n"
               "hotlimit_refusals_per_second %s\n"
               "# HELP hotlimit_counters_start_time_seconds When the counters started (Unix time): kept across full restarts when HotLimitPersist keeps them.\n"
               "# TYPE hotlimit_counters_start_time_seconds gauge\n"
               "hotlimit_counters_start_time_seconds %s\n",
               HL_REFUSALS_RATE_S, refusal_rate(r->pool, snap),
               prom_seconds(r->pool, snap->shared.counters_started_ms));
    ap_rputs("# HELP hotlimit_table_reloads_total Quota table reloads by result.\n"
             "# TYPE hotlimit_table_reloads_total counter\n", r);
    for (k = 0; k < HL_RELOAD_RESULTS; ++k)
        ap_rprintf(r, "hotlimit_table_reloads_total{result=\"%s\"} %"
                   APR_UINT64_T_FMT "\n", result_names[k],
                   (apr_uint64_t)snap->table.reloads[k]);
    ap_rprintf(r, "# HELP hotlimit_table_generation Generation of the quota table in force.\n"
               "# TYPE hotlimit_table_generation gauge\n"
               "hotlimit_table_generation %" APR_UINT64_T_FMT "\n"
               "# HELP hotlimit_table_skipped_entries Entries skipped as invalid in the quota table in force.\n"
               "# TYPE hotlimit_table_skipped_entries gauge\n"
               "hotlimit_table_skipped_entries %u\n"
               "# HELP hotlimit_table_last_reload_timestamp_seconds When the quota table in force was published (Unix time; 0: never).\n"
               "# TYPE hotlimit_table_last_reload_timestamp_seconds gauge\n"
               "hotlimit_table_last_reload_timestamp_seconds %s\n"
               "# HELP hotlimit_table_last_reload_successful 0 while the last reload result is failed (a source that stays broken keeps it), else 1.\n"
               "# TYPE hotlimit_table_last_reload_successful gauge\n"
               "hotlimit_table_last_reload_successful %d\n"
               "# HELP hotlimit_slots_used Counter slots in use.\n"
               "# TYPE hotlimit_slots_used gauge\n"
               "hotlimit_slots_used %u\n"
               "# HELP hotlimit_slots_capacity Counter slots available.\n"
               "# TYPE hotlimit_slots_capacity gauge\n"
               "hotlimit_slots_capacity %u\n"
               "# HELP hotlimit_evictions_total Counters reused while still live.\n"
               "# TYPE hotlimit_evictions_total counter\n"
               "hotlimit_evictions_total %" APR_UINT64_T_FMT "\n"
               "# HELP hotlimit_reclaims_total Expired counters freed for new keys.\n"
               "# TYPE hotlimit_reclaims_total counter\n"
               "hotlimit_reclaims_total %" APR_UINT64_T_FMT "\n"
               "# HELP hotlimit_slot_classes Eviction classes (quotas) with a record.\n"
               "# TYPE hotlimit_slot_classes gauge\n"
               "hotlimit_slot_classes %u\n"
               "# HELP hotlimit_start_time_seconds When the counters started: the start of the httpd parent, kept across restarts (Unix time).\n"
               "# TYPE hotlimit_start_time_seconds gauge\n"
               "hotlimit_start_time_seconds %s\n",
               (apr_uint64_t)snap->table.table_generation,
               snap->table.table_skipped,
               prom_seconds(r->pool, snap->table.table_loaded_ms),
               snap->table.table_last_result != HL_RELOAD_FAILED, snap->used,
               snap->capacity, (apr_uint64_t)snap->evictions,
               (apr_uint64_t)snap->reclaims, snap->classes,
               prom_seconds(r->pool, snap->sum.started_ms));
    write_store_metrics(r);
    hl_ban_write_metrics(r, snap->view);
    hl_conc_write_metrics(r);
}

/* Writes one route of the JSON answer: its configured limits ("" when
 * none), its counts (e may be NULL: none yet) and its history, oldest
 * tick first, each [admitted, rejected, dry_run]. */
static void json_route(request_rec *r, const hl_snapshot_t *snap,
                       const char *name, const char *limits,
                       const char *origin, const char *rule,
                       const hl_route_stat_t *e, int first)
{
    uint32_t h[HL_STATS_HISTORY][3];
    int i;

    memset(h, 0, sizeof(h));
    if (e)
        hl_stats_history(e, snap->mono_ms, h);
    ap_rprintf(r, "%s{\"route\":\"%s\",\"limits\":\"%s\",\"origin\":\"%s\","
               "\"rule\":\"%s\",\"refused_by_rule\":%" APR_UINT64_T_FMT ","
               "\"admitted\":%" APR_UINT64_T_FMT ",\"rejected\":%"
               APR_UINT64_T_FMT ",\"dry_run\":%" APR_UINT64_T_FMT
               ",\"history_tick_s\":%d,\"history\":[", first ? "" : ",",
               hl_json_escape(r->pool, name), hl_json_escape(r->pool, limits),
               origin, hl_json_escape(r->pool, rule),
               (apr_uint64_t)(e ? e->refused_by : 0),
               (apr_uint64_t)(e ? e->count[0] : 0),
               (apr_uint64_t)(e ? e->count[1] : 0),
               (apr_uint64_t)(e ? e->count[2] : 0), HL_STATS_TICK_MS / 1000);
    for (i = 0; i < HL_STATS_HISTORY; ++i)
        ap_rprintf(r, "%s[%u,%u,%u]", i ? "," : "", h[i][0], h[i][1], h[i][2]);
    ap_rputs("]}", r);
}

static void write_json(request_rec *r, const hl_snapshot_t *snap)
{
    apr_pool_t *p = r->pool;
    int i, first = 1;

    ap_set_content_type(r, "application/json");
    ap_rprintf(r, "{\"table\":{\"source\":\"%s\",\"generation\":%" APR_UINT64_T_FMT
               ",\"enabled\":%s,\"routes\":%u,\"skipped\":%u,\"loaded_ms\":%" APR_INT64_T_FMT
               ",\"checked_ms\":%" APR_INT64_T_FMT ",\"last_result\":\"%s\","
               "\"message\":\"%s\",\"reloads\":{\"ok\":%" APR_UINT64_T_FMT
               ",\"unchanged\":%" APR_UINT64_T_FMT ",\"failed\":%" APR_UINT64_T_FMT "}},",
               hl_json_escape(p, snap->table.table_source),
               (apr_uint64_t)snap->table.table_generation,
               snap->table.table_enabled ? "true" : "false",
               snap->table.table_routes, snap->table.table_skipped,
               (apr_int64_t)snap->table.table_loaded_ms,
               (apr_int64_t)snap->table.table_checked_ms, snap->sum.table_result,
               hl_json_escape(p, snap->table.table_message),
               (apr_uint64_t)snap->table.reloads[HL_RELOAD_OK],
               (apr_uint64_t)snap->table.reloads[HL_RELOAD_UNCHANGED],
               (apr_uint64_t)snap->table.reloads[HL_RELOAD_FAILED]);
    ap_rprintf(r, "\"slots\":{\"used\":%u,\"capacity\":%u,\"evictions\":%"
               APR_UINT64_T_FMT ",\"reclaims\":%" APR_UINT64_T_FMT
               ",\"classes\":%u},\"started_ms\":%" APR_INT64_T_FMT
               ",\"uptime_s\":%" APR_INT64_T_FMT ",\"totals\":{\"admitted\":%"
               APR_UINT64_T_FMT ",\"rejected\":%" APR_UINT64_T_FMT
               ",\"dry_run\":%" APR_UINT64_T_FMT "},\"routes\":[",
               snap->used, snap->capacity,
               (apr_uint64_t)snap->evictions, (apr_uint64_t)snap->reclaims,
               snap->classes, (apr_int64_t)snap->sum.started_ms,
               (apr_int64_t)snap->sum.uptime_s,
               (apr_uint64_t)snap->sum.decisions[HL_DECISION_ADMITTED],
               (apr_uint64_t)snap->sum.decisions[HL_DECISION_REJECTED],
               (apr_uint64_t)snap->sum.decisions[HL_DECISION_DRY_RUN]);
    for (i = 0; i < snap->routes->nelts; ++i) {
        const hl_conf_route_t *c = &APR_ARRAY_IDX(snap->routes, i, hl_conf_route_t);
        json_route(r, snap, c->name, c->limits, c->origin, c->where, c->stat,
                   first);
        first = 0;
    }
    for (i = 0; i < HL_STATS_ROUTES; ++i) {
        const hl_route_stat_t *e = &snap->shared.stats.routes[i];
        if (!e->hash || is_configured(snap, e))
            continue;
        json_route(r, snap, e->route, "", "", "", e, first);
        first = 0;
    }
    {
        hl_store_figures_t f;
        store_figures(&f);
        ap_rprintf(r, "],\"routes_not_listed\":%d,\"store\":{\"kind\":\"%s\","
                   "\"stripes\":%u,\"up\":%s,\"fallbacks\":%" APR_UINT64_T_FMT
                   "},\"limited_keys_from\":\"%s\",\"limited_keys_total\":%u,"
                   "\"limited_keys\":[", snap->routes_cut,
                   f.configured ? "redis" : "shared memory", snap->stripes,
                   !f.configured || f.up ? "true" : "false",
                   (apr_uint64_t)f.fallbacks,
                   snap->limited_from == HL_LIMITED_FROM_REDIS ? "redis" : "local",
                   snap->limited_total);
    }
    for (i = 0; i < snap->nlimited; ++i)
        ap_rprintf(r, "%s{\"key\":\"%s\",\"count\":%u,\"quota\":\"%s\","
                   "\"window\":%d,\"left_ms\":%" APR_INT64_T_FMT "}",
                   i ? "," : "", hl_json_escape(p, snap->limited[i].key),
                   snap->limited[i].count, origin_name(snap->limited[i].origin),
                   snap->limited[i].window + 1,
                   (apr_int64_t)snap->limited[i].left_ms);
    ap_rputs("],\"top_keys\":[", r);
    for (i = 0; i < snap->ntop; ++i)
        ap_rprintf(r, "%s{\"key\":\"%s\",\"count\":%u,\"quota\":\"%s\","
                   "\"window\":%d}", i ? "," : "",
                   hl_json_escape(p, snap->top[i].key), snap->top[i].count,
                   origin_name(snap->top[i].origin), snap->top[i].window + 1);
    ap_rputs("],\"top_refused\":[", r);
    for (i = 0; i < snap->nrefused; ++i) {
        const hl_refusal_rank_t *k = &snap->refused[i];
        ap_rprintf(r, "%s{\"key\":\"%s\",\"client\":\"%s\",\"route\":\"%s\","
                   "\"rule\":\"%s\",\"refusals\":%u,\"total\":%"
                   APR_UINT64_T_FMT "}", i ? "," : "",
                   hl_json_escape(p, k->key), hl_json_escape(p, key_client(k->key)),
                   hl_json_escape(p, k->route),
                   hl_json_escape(p, rule_of(snap, k->route)), k->now,
                   (apr_uint64_t)k->total);
    }
    ap_rprintf(r, "],\"summary\":{\"refusals_per_s\":%s,\"bans_active\":%d,"
               "\"table_state\":\"%s\"},\"counters_started_ms\":%"
               APR_INT64_T_FMT ",", refusal_rate(p, snap),
               hl_ban_list(snap->view, p, hl_mono_ms())->nelts,
               snap->sum.table_result,
               (apr_int64_t)snap->shared.counters_started_ms);
    write_lookup_json(r, snap);
    hl_conc_write_json(r);      /* HotLimitConcurrency */
    ap_rputs(",", r);
    hl_ban_write_json(r, snap->view);
    ap_rputs("}\n", r);
}

const char *hl_status_duration(apr_pool_t *p, int64_t secs)
{
    int64_t d, h, m;

    if (secs < 0)
        secs = 0;
    d = secs / 86400;
    h = secs / 3600 % 24;
    m = secs / 60 % 60;
    secs %= 60;
    if (d)
        return apr_psprintf(p, "%" APR_INT64_T_FMT " d %" APR_INT64_T_FMT
                            " h %" APR_INT64_T_FMT " min", (apr_int64_t)d,
                            (apr_int64_t)h, (apr_int64_t)m);
    if (h)
        return apr_psprintf(p, "%" APR_INT64_T_FMT " h %" APR_INT64_T_FMT
                            " min", (apr_int64_t)h, (apr_int64_t)m);
    if (m)
        return apr_psprintf(p, "%" APR_INT64_T_FMT " min %" APR_INT64_T_FMT
                            " s", (apr_int64_t)m, (apr_int64_t)secs);
    return apr_psprintf(p, "%" APR_INT64_T_FMT " s", (apr_int64_t)secs);
}

/* Returns 16 * log2(1 + n), its fraction by linear interpolation between
 * powers of two (integers only: no libm in the module). */
static uint64_t log2_16(uint64_t n)
{
    uint64_t x = n + 1;
    int b;

    if (n == UINT64_MAX)
        return 64 * 16;
    b = 63 - __builtin_clzll(x);
    return (uint64_t)b * 16 + (b >= 4 ? (x >> (b - 4)) - 16
                                      : (x << (4 - b)) - 16);
}

/* Returns the height in pixels of a bar of n on a log scale where max
 * (>= n) fills full: log(1 + n) / log(1 + max) of it, at least 1 for n > 0
 * (one admitted request stays visible next to a flood). */
static int log_height(uint64_t n, uint64_t max, int full)
{
    uint64_t ln = log2_16(n), lmax = log2_16(max);
    int h;

    if (!n || !lmax)
        return 0;
    h = (int)((ln * (uint64_t)full + lmax / 2) / lmax);
    return h < 1 ? 1 : h > full ? full : h;
}

/* Writes the chart of the last HL_STATS_HISTORY ticks of e (NULL: no
 * traffic yet) as inline SVG, readable when refusals dwarf admissions:
 * admitted requests rise above the axis, refused ones (dry run stacked on
 * them) hang below it, both on one log scale whose top is labelled; then
 * the totals of the period in words. */
static void html_chart(request_rec *r, const hl_snapshot_t *snap,
                       const hl_route_stat_t *e)
{
    uint32_t h[HL_STATS_HISTORY][3];
    uint64_t max = 0, sum[3] = { 0, 0, 0 };
    const int bar = 5, half = 28, axis = half + 2, width = bar * HL_STATS_HISTORY;
    const int minutes = HL_STATS_HISTORY * HL_STATS_TICK_MS / 60000;
    int i, k;

    memset(h, 0, sizeof(h));
    if (e)
        hl_stats_history(e, snap->mono_ms, h);
    for (i = 0; i < HL_STATS_HISTORY; ++i) {
        uint64_t down = (uint64_t)h[i][HL_DECISION_REJECTED]
                        + h[i][HL_DECISION_DRY_RUN];
        if (h[i][HL_DECISION_ADMITTED] > max)
            max = h[i][HL_DECISION_ADMITTED];
        if (down > max)
            max = down;
        for (k = 0; k < 3; ++k)
            sum[k] += h[i][k];
    }
    ap_rprintf(r, "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" "
               "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
               "aria-label=\"last %d min: %" APR_UINT64_T_FMT " admitted, %"
               APR_UINT64_T_FMT " rejected, %" APR_UINT64_T_FMT " dry run\">"
               "<title>last %d min (bars of %d s, log scale; admitted above "
               "the line, refused below): %" APR_UINT64_T_FMT " admitted, %"
               APR_UINT64_T_FMT " rejected, %" APR_UINT64_T_FMT " dry run"
               "</title><line x1=\"0\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
               "stroke=\"#888\"/><text x=\"%d\" y=\"9\" font-size=\"9\">%"
               APR_UINT64_T_FMT "</text><text x=\"%d\" y=\"%d\" "
               "font-size=\"9\">0</text><text x=\"%d\" y=\"%d\" "
               "font-size=\"9\">%" APR_UINT64_T_FMT "</text>",
               width + 40, 2 * axis, width + 40, 2 * axis, minutes,
               (apr_uint64_t)sum[0], (apr_uint64_t)sum[1], (apr_uint64_t)sum[2],
               minutes, HL_STATS_TICK_MS / 1000,
               (apr_uint64_t)sum[0], (apr_uint64_t)sum[1], (apr_uint64_t)sum[2],
               axis, width, axis, width + 3, (apr_uint64_t)max, width + 3,
               axis + 3, width + 3, 2 * axis - 1, (apr_uint64_t)max);
    for (i = 0; max && i < HL_STATS_HISTORY; ++i) {
        uint32_t ok = h[i][HL_DECISION_ADMITTED];
        uint64_t down = (uint64_t)h[i][HL_DECISION_REJECTED]
                        + h[i][HL_DECISION_DRY_RUN];
        int up_h = log_height(ok, max, half), down_h = log_height(down, max, half);
        int dry_h = down ? (int)((uint64_t)down_h * h[i][HL_DECISION_DRY_RUN]
                                 / down) : 0;
        if (up_h)
            ap_rprintf(r, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                       "fill=\"#3a3\"/>", i * bar, axis - up_h, bar - 1, up_h);
        if (down_h - dry_h > 0)
            ap_rprintf(r, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                       "fill=\"#d22\"/>", i * bar, axis + 1, bar - 1,
                       down_h - dry_h);
        if (dry_h > 0)
            ap_rprintf(r, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                       "fill=\"#e90\"/>", i * bar, axis + 1 + down_h - dry_h,
                       bar - 1, dry_h);
    }
    ap_rprintf(r, "</svg><span class=\"totals\">%" APR_UINT64_T_FMT
               " admitted, %" APR_UINT64_T_FMT " refused, %" APR_UINT64_T_FMT
               " dry run in %d min</span>", (apr_uint64_t)sum[0],
               (apr_uint64_t)sum[1], (apr_uint64_t)sum[2], minutes);
}

/* Writes one row of the routes table (e may be NULL: no traffic yet):
 * the rule (FILE:LINE or table route), the requests it admitted, those it
 * refused itself, those another quota of the request refused. */
static void html_route(request_rec *r, const hl_snapshot_t *snap,
                       const char *name, const char *limits,
                       const char *origin, const char *rule,
                       const hl_route_stat_t *e)
{
    apr_pool_t *p = r->pool;
    uint64_t by = e ? e->refused_by : 0, rejected = e ? e->count[1] : 0;

    ap_rprintf(r, "<tr class=\"route\"><td class=\"name\">%s</td>"
               "<td class=\"rule\">%s</td>"
               "<td class=\"limits\">%s</td><td>%s</td><td class=\"num\">%"
               APR_UINT64_T_FMT "</td><td class=\"num refused\">%"
               APR_UINT64_T_FMT "</td><td class=\"num\">%" APR_UINT64_T_FMT
               "</td><td class=\"num\">%" APR_UINT64_T_FMT "</td><td>",
               hl_html_escape(p, name),
               *rule ? hl_html_escape(p, rule) : "&mdash;",
               *limits ? hl_html_escape(p, limits) : "&mdash;",
               *origin ? origin : "not configured here",
               (apr_uint64_t)(e ? e->count[0] : 0), (apr_uint64_t)by,
               (apr_uint64_t)(rejected > by ? rejected - by : 0),
               (apr_uint64_t)(e ? e->count[2] : 0));
    html_chart(r, snap, e);
    ap_rputs("</td></tr>", r);
}

/* Writes where the keys at their limit were listed from, with the Redis
 * store (nothing with the shm store). */
static void html_limited_from(request_rec *r, int from)
{
    if (from == HL_LIMITED_FROM_REDIS)
        ap_rputs("<p id=\"limited-from\">Listed from the Redis store: the "
                 "keys at their limit on every server that shares it.</p>", r);
    else if (from == HL_LIMITED_FROM_FALLBACK)
        ap_rputs("<p id=\"limited-from\" class=\"warn\">The Redis store is "
                 "not answering: listed from this server's own counters (its "
                 "fallback while Redis is down).</p>", r);
}

/* Returns the cells of a ban key "HOST:PORTban|CLIENT": the client
 * address, then the virtual host ("all hosts" for the main server's),
 * escaped, allocated from p. */
static const char *html_ban_cells(apr_pool_t *p, const char *key)
{
    const char *client = key;
    size_t clen = strlen(key), host = 0;

    if (hl_ban_key_client(key, strlen(key), &client, &clen))
        host = (size_t)(client - key) - (sizeof(HL_BAN_SCOPE "|") - 1);
    return apr_psprintf(p, "<td class=\"client key\">%s</td><td class=\"host\">"
                        "%s</td>", hl_html_escape(p, client),
                        host ? hl_html_escape(p, apr_pstrmemdup(p, key, host))
                             : "all hosts");
}

/* Writes the line at the top: refusals per second now, active bans, the
 * table's state (red, with its message, when its last reload failed). */
static void html_summary(request_rec *r, const hl_snapshot_t *snap)
{
    apr_pool_t *p = r->pool;
    int bans = hl_ban_list(snap->view, p, hl_mono_ms())->nelts;
    int failed = snap->table.table_last_result == HL_RELOAD_FAILED;

    ap_rprintf(r, "<p id=\"summary\"><span id=\"rate\"%s>%s refusals/s "
               "now</span> &middot; <span id=\"bans-active\">%d active "
               "ban%s</span> &middot; ",
               snap->refused_recent ? " class=\"warn\"" : "",
               refusal_rate(p, snap), bans, bans == 1 ? "" : "s");
    if (!snap->table.table_source[0])
        ap_rputs("<span id=\"table-state\">no quota table</span>", r);
    else if (failed)
        ap_rprintf(r, "<span id=\"table-state\" class=\"warn\"><b>quota "
                   "table: last reload FAILED</b>: %s (generation %"
                   APR_UINT64_T_FMT " stays in force)</span>",
                   hl_html_escape(p, snap->table.table_message),
                   (apr_uint64_t)snap->table.table_generation);
    else
        ap_rprintf(r, "<span id=\"table-state\">quota table %s, generation %"
                   APR_UINT64_T_FMT "</span>", snap->sum.table_result,
                   (apr_uint64_t)snap->table.table_generation);
    ap_rputs("</p>", r);
}

/* Writes "Refused most (now)": the keys with the most refusals in this
 * minute and the one before, the route and rule that refused them, each
 * with a reset button (form posting to self). */
static void html_refused(request_rec *r, const hl_snapshot_t *snap,
                         const char *self)
{
    apr_pool_t *p = r->pool;
    int i;

    ap_rputs("<h2>Refused most (now)</h2>", r);
    if (!snap->nrefused) {
        ap_rputs("<p id=\"refused-none\">No refusals in the last minutes.</p>",
                 r);
        return;
    }
    ap_rputs("<table id=\"refused\"><tr><th>client</th><th>key</th>"
             "<th>refused by route</th><th>rule</th><th>refusals now (this "
             "minute and the last)</th><th>refusals in all</th><th></th></tr>",
             r);
    for (i = 0; i < snap->nrefused; ++i) {
        const hl_refusal_rank_t *k = &snap->refused[i];
        const char *key = hl_html_escape(p, k->key);
        const char *client = key_shown(p, k->key);

        if (client == k->key)           /* not a ban counter */
            client = key_client(k->key);
        ap_rprintf(r, "<tr class=\"refused%s\"><td class=\"client key\">%s</td>"
                   "<td class=\"key\">%s</td><td>%s</td><td class=\"rule\">%s"
                   "</td><td class=\"num\">%u</td><td class=\"num\">%"
                   APR_UINT64_T_FMT "</td><td><form class=\"reset\" "
                   "method=\"post\" action=\"%s\"><input type=\"hidden\" "
                   "name=\"reset\" value=\"%s\"><input type=\"hidden\" "
                   "name=\"back\" value=\"1\"><button type=\"submit\">"
                   "reset</button></form></td></tr>", i ? "" : " first",
                   hl_html_escape(p, client), key, hl_html_escape(p, k->route),
                   hl_html_escape(p, rule_of(snap, k->route)), k->now,
                   (apr_uint64_t)k->total, self, key);
    }
    ap_rputs("</table>", r);
}

/* Writes the account lookup: a GET form (works without script) and, for
 * ?lookup=NAME, the counters of that account's keys with reset buttons. */
static void html_lookup(request_rec *r, const hl_snapshot_t *snap,
                        const char *self)
{
    apr_pool_t *p = r->pool;
    int i, w, any = 0;

    for (i = 0; i < snap->routes->nelts; ++i) {
        const hl_quota_t *q = APR_ARRAY_IDX(snap->routes, i,
                                            hl_conf_route_t).quota;
        if (q->by != HL_BY_IP && q->by != HL_BY_GLOBAL)
            any = 1;
    }
    ap_rprintf(r, "<h2>Account lookup</h2><form id=\"lookup-form\" "
               "method=\"get\" action=\"%s\"><label>account (user name, "
               "e-mail, header or cookie value) <input name=\"lookup\" "
               "value=\"%s\"></label> <label>route <select name=\"route\">"
               "<option value=\"\">every route</option>", self,
               snap->lookup ? hl_html_escape(p, snap->lookup) : "");
    for (i = 0; i < snap->routes->nelts; ++i) {
        const hl_conf_route_t *c = &APR_ARRAY_IDX(snap->routes, i,
                                                  hl_conf_route_t);
        if (c->quota->by == HL_BY_IP || c->quota->by == HL_BY_GLOBAL)
            continue;
        ap_rprintf(r, "<option value=\"%s\"%s>%s (%s)</option>",
                   hl_html_escape(p, c->name),
                   snap->lookup_route && !strcmp(snap->lookup_route, c->name)
                   ? " selected" : "", hl_html_escape(p, c->name),
                   hl_html_escape(p, c->where));
    }
    ap_rputs("</select></label> <button type=\"submit\">look up</button>"
             "</form>", r);
    if (!any)
        ap_rputs("<p>No route counts by account (by=header, cookie, param, "
                 "user or env).</p>", r);
    if (!snap->lookup || !*snap->lookup)
        return;
    if (!snap->lookups->nelts) {
        ap_rprintf(r, "<p id=\"lookup-none\">No route counts <b>%s</b> as an "
                   "account.</p>", hl_html_escape(p, snap->lookup));
        return;
    }
    ap_rputs("<table id=\"lookup\"><tr><th>route</th><th>rule</th><th>key</th>"
             "<th>requests per window</th><th>refusals now</th><th></th></tr>",
             r);
    for (i = 0; i < snap->lookups->nelts; ++i) {
        const hl_lookup_row_t *row = &APR_ARRAY_IDX(snap->lookups, i,
                                                    hl_lookup_row_t);
        const char *key = hl_html_escape(p, row->key);
        ap_rprintf(r, "<tr class=\"lookup\"><td>%s</td><td class=\"rule\">%s"
                   "</td><td class=\"key\">%s</td><td class=\"windows\">",
                   hl_html_escape(p, row->route), hl_html_escape(p, row->rule),
                   key);
        for (w = 0; w < row->nwindows; ++w)
            ap_rprintf(r, "%s<span class=\"count\">%u</span>%s", w ? " / " : "",
                       row->count[w], row->left_ms[w] > 0
                       ? apr_psprintf(p, " (clears in %s)", hl_status_duration(
                                      p, (row->left_ms[w] + 999) / 1000)) : "");
        ap_rprintf(r, "</td><td class=\"num\">%u</td><td><form class=\"reset\" "
                   "method=\"post\" action=\"%s\"><input type=\"hidden\" "
                   "name=\"reset\" value=\"%s\"><input type=\"hidden\" "
                   "name=\"back\" value=\"1\"><button type=\"submit\">"
                   "reset</button></form></td></tr>", row->refusals, self, key);
    }
    ap_rputs("</table>", r);
}

/* Writes how long the counters have been counting (they outlive full
 * restarts when persisted) and how long this httpd has been up. */
static void html_uptime(request_rec *r, const hl_snapshot_t *snap)
{
    apr_pool_t *p = r->pool;
    char since[APR_RFC822_DATE_LEN] = "?", counting[APR_RFC822_DATE_LEN] = "?";
    int64_t counted_s = snap->shared.counters_started_ms > 0
                        ? (hl_now_ms() - snap->shared.counters_started_ms) / 1000
                        : 0;

    if (snap->sum.started_ms)
        apr_rfc822_date(since, (apr_time_t)snap->sum.started_ms * 1000);
    if (snap->shared.counters_started_ms)
        apr_rfc822_date(counting,
                        (apr_time_t)snap->shared.counters_started_ms * 1000);
    ap_rprintf(r, "<p id=\"uptime\">Counters counting for %s (since %s); "
               "this httpd up for %s (since %s; a graceful restart keeps "
               "both, a full restart keeps only persisted counters).</p>",
               hl_status_duration(p, counted_s), counting,
               hl_status_duration(p, snap->sum.uptime_s), since);
}

static void write_html(request_rec *r, const hl_snapshot_t *snap, int refresh)
{
    apr_pool_t *p = r->pool;
    char when[APR_RFC822_DATE_LEN] = "never";
    const char *self = hl_html_escape(p, r->uri);
    int i;

    if (snap->table.table_loaded_ms)
        apr_rfc822_date(when, (apr_time_t)snap->table.table_loaded_ms * 1000);
    ap_set_content_type(r, "text/html; charset=utf-8");
    ap_rputs("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
             "<meta name=\"robots\" content=\"noindex, nofollow\">"
             "<title>mod_hotlimit status</title><style>body{font-family:sans-serif;"
             "margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
             "padding:.2em .6em;text-align:left;vertical-align:middle}"
             "td.num{text-align:right}form{margin:0}svg.chart{display:block}"
             ".key{font-family:monospace}.legend span{padding:0 .5em}.warn{color:#b00}"
             ".totals{font-size:.8em;color:#555}"
             "#summary{font-size:1.2em;padding:.4em;background:#f4f4f4}"
             "td.refused{font-weight:bold}tr.first td{background:#fdd}"
             "</style>", r);
    if (refresh > 0)
        ap_rprintf(r, "<meta http-equiv=\"refresh\" content=\"%d\">", refresh);
    ap_rputs("</head><body><h1>mod_hotlimit status</h1>", r);
    html_summary(r, snap);
    html_refused(r, snap, self);

    ap_rprintf(r, "<h2>Routes</h2><p class=\"legend\">Counts since the start; "
               "the chart shows the last %d minutes in bars of %d s, on a log "
               "scale (its top labelled), admitted above the line, refused "
               "below: "
               "<span style=\"color:#3a3\">&#9632; admitted</span>"
               "<span style=\"color:#e90\">&#9632; dry run (would have been "
               "rejected)</span><span style=\"color:#d22\">&#9632; "
               "rejected</span></p>"
               "<table id=\"routes\"><tr><th>route</th><th>rule</th>"
               "<th>limits</th><th>from</th><th>admitted</th>"
               "<th>refused by this rule</th><th>refused by another rule "
               "of the request</th><th>dry run</th>"
               "<th>last %d min</th></tr>",
               HL_STATS_HISTORY * HL_STATS_TICK_MS / 60000,
               HL_STATS_TICK_MS / 1000,
               HL_STATS_HISTORY * HL_STATS_TICK_MS / 60000);
    for (i = 0; i < snap->routes->nelts; ++i) {
        const hl_conf_route_t *c = &APR_ARRAY_IDX(snap->routes, i, hl_conf_route_t);
        html_route(r, snap, c->name, c->limits,
                   !strcmp(c->origin, "table") ? "quota table" : "HotLimitQuota",
                   c->where, c->stat);
    }
    for (i = 0; i < HL_STATS_ROUTES; ++i) {
        const hl_route_stat_t *e = &snap->shared.stats.routes[i];
        if (e->hash && !is_configured(snap, e))
            html_route(r, snap, e->route, "", "", "", e);
    }
    ap_rputs("</table>", r);
    if (snap->routes_cut)
        ap_rprintf(r, "<p>%d more quota table routes not listed.</p>",
                   snap->routes_cut);
    if (!snap->routes->nelts)
        ap_rputs("<p>No HotLimitQuota in the configuration files and no quota "
                 "table routes.</p>", r);

    ap_rputs("<h2>Keys at their limit now</h2>", r);
    html_limited_from(r, snap->limited_from);
    if (!snap->limited_total)
        ap_rputs("<p id=\"limited-none\">None.</p>", r);
    else {
        ap_rprintf(r, "<p>%u counter windows at their limit%s. Reset clears "
                   "every window of the key.</p><table id=\"limited\"><tr>"
                   "<th>key (route|client)</th><th>quota from</th><th>window</th>"
                   "<th>requests</th><th>counter clears in</th><th></th></tr>",
                   snap->limited_total,
                   snap->limited_total > (uint32_t)snap->nlimited
                   ? apr_psprintf(p, " (the first %d listed)", snap->nlimited) : "");
        for (i = 0; i < snap->nlimited; ++i) {
            const hl_limited_key_t *k = &snap->limited[i];
            const char *key = hl_html_escape(p, k->key);
            ap_rprintf(r, "<tr class=\"limited\"><td class=\"key\">%s</td>"
                       "<td>%s</td><td>%d</td><td class=\"num\">%u</td>"
                       "<td class=\"left\">%s</td><td><form class=\"reset\" "
                       "method=\"post\" action=\"%s\"><input type=\"hidden\" "
                       "name=\"reset\" value=\"%s\"><input type=\"hidden\" "
                       "name=\"back\" value=\"1\"><button type=\"submit\">"
                       "reset</button></form></td></tr>", key,
                       origin_name(k->origin), k->window + 1, k->count,
                       hl_status_duration(p, (k->left_ms + 999) / 1000), self,
                       key);
        }
        ap_rputs("</table>", r);
    }

    {
        /* Bans in force (HotLimitBan), each with a button that lifts it. */
        apr_array_header_t *bans = hl_ban_list(snap->view, p, hl_mono_ms());
        ap_rputs("<h2>Bans</h2>", r);
        if (!bans->nelts)
            ap_rputs("<p id=\"bans\">No client is banned now.</p>", r);
        else {
            ap_rputs("<table id=\"bans\"><tr><th>client</th><th>host</th>"
                     "<th>lifted in</th><th></th></tr>", r);
            for (i = 0; i < bans->nelts; ++i) {
                const hl_ban_entry_t *b = &APR_ARRAY_IDX(bans, i, hl_ban_entry_t);
                const char *key = hl_html_escape(p, b->key);
                ap_rprintf(r, "<tr class=\"ban\">%s"
                           "<td class=\"left\">%s</td><td><form class=\"reset\" "
                           "method=\"post\" action=\"%s\"><input type=\"hidden\" "
                           "name=\"reset\" value=\"%s\"><input type=\"hidden\" "
                           "name=\"back\" value=\"1\"><button type=\"submit\">"
                           "lift</button></form></td></tr>",
                           html_ban_cells(p, b->key),
                           hl_status_duration(p, (b->left_ms + 999) / 1000),
                           self, key);
            }
            ap_rputs("</table>", r);
        }
    }

    html_lookup(r, snap, self);
    ap_rprintf(r, "<h2>Quota table</h2><table id=\"table\">"
               "<tr><th>source</th><td>%s</td></tr>"
               "<tr><th>enabled</th><td>%s</td></tr>"
               "<tr><th>generation</th><td>%" APR_UINT64_T_FMT "</td></tr>"
               "<tr><th>routes</th><td>%u</td></tr>"
               "<tr><th>entries skipped (invalid)</th><td>%u</td></tr>"
               "<tr><th>last reload</th><td>%s</td></tr>"
               "<tr><th>last result</th><td>%s: %s</td></tr>"
               "<tr><th>reloads ok / unchanged / failed</th><td>%" APR_UINT64_T_FMT
               " / %" APR_UINT64_T_FMT " / %" APR_UINT64_T_FMT "</td></tr></table>",
               snap->table.table_source[0]
                   ? hl_html_escape(p, snap->table.table_source) : "(none)",
               snap->table.table_enabled ? "yes" : "no (kill switch)",
               (apr_uint64_t)snap->table.table_generation,
               snap->table.table_routes, snap->table.table_skipped, when,
               snap->sum.table_result,
               hl_html_escape(p, snap->table.table_message),
               (apr_uint64_t)snap->table.reloads[HL_RELOAD_OK],
               (apr_uint64_t)snap->table.reloads[HL_RELOAD_UNCHANGED],
               (apr_uint64_t)snap->table.reloads[HL_RELOAD_FAILED]);
    {
        hl_store_figures_t f;
        store_figures(&f);
        if (f.configured)
            ap_rprintf(r, "<h2>Redis store</h2><p id=\"redis\">%s: %"
                       APR_UINT64_T_FMT " decisions answered, %" APR_UINT64_T_FMT
                       " decided by HotLimitStoreFailure while it could not "
                       "answer, %" APR_UINT64_T_FMT " failed round trips. The "
                       "shared memory below is its local fallback.</p>",
                       f.up ? "answering" : "NOT ANSWERING (breaker open)",
                       (apr_uint64_t)f.decisions, (apr_uint64_t)f.fallbacks,
                       (apr_uint64_t)f.errors);
    }
    ap_rprintf(r, "<h2>Store</h2><p id=\"store\">Shared memory, %u stripes "
               "(each with its own lock): %u counter slots used of %u, %"
               APR_UINT64_T_FMT " evictions (live counters reused: raise "
               "HotLimitSlots if this grows), %" APR_UINT64_T_FMT " expired "
               "reused, %u eviction classes.</p>", snap->stripes, snap->used,
               snap->capacity, (apr_uint64_t)snap->evictions,
               (apr_uint64_t)snap->reclaims, snap->classes);
    ap_rputs("<h2>Busiest keys</h2><p>Each key's busiest window: "
             "window 1 is the first of its quota (<code>5/1m</code> in "
             "<code>HotLimitQuota 5/1m 30/1h</code>), 2 the second.</p>"
             "<table><tr><th>key</th><th>quota from</th><th>window</th>"
             "<th>requests in that window</th></tr>", r);
    for (i = 0; i < snap->ntop; ++i)
        ap_rprintf(r, "<tr><td class=\"key\">%s</td><td>%s</td><td>%d</td>"
                   "<td class=\"num\">%u</td></tr>",
                   hl_html_escape(p, snap->top[i].key),
                   origin_name(snap->top[i].origin), snap->top[i].window + 1,
                   snap->top[i].count);
    ap_rputs("</table>", r);
    html_uptime(r, snap);
    ap_rputs("<p><a href=\"?json\">JSON</a> &middot; "
             "<a href=\"?metrics\">metrics</a> &middot; "
             "<a href=\"?refresh=5\">refresh every 5 s</a></p></body></html>\n", r);
}

/*
 * Returns 1 if host (len bytes, from an Origin) cannot be a name someone
 * else's DNS points at this server for a while (DNS rebinding: a page of
 * evil.example, whose name then resolves to 127.0.0.1, is same-origin with
 * the status page it reaches): an IP address, localhost, or a name of r's
 * virtual host (ServerName, ServerAlias). Else 0.
 */
static int host_is_ours(request_rec *r, const char *host, size_t len)
{
    const server_rec *s = r->server;
    char name[256];
    struct in6_addr a6;
    struct in_addr a4;
    int i;

    if (len == 0 || len >= sizeof(name))
        return 0;
    memcpy(name, host, len);
    name[len] = '\0';
    if (name[0] == '[' && name[len - 1] == ']') {       /* [IPv6] */
        name[len - 1] = '\0';
        return inet_pton(AF_INET6, name + 1, &a6) == 1;
    }
    if (inet_pton(AF_INET, name, &a4) == 1 || !strcasecmp(name, "localhost")
        || (s->server_hostname && !strcasecmp(name, s->server_hostname)))
        return 1;
    for (i = 0; s->names && i < s->names->nelts; ++i)
        if (!strcasecmp(name, APR_ARRAY_IDX(s->names, i, const char *)))
            return 1;
    for (i = 0; s->wild_names && i < s->wild_names->nelts; ++i)
        if (!ap_strcasecmp_match(name, APR_ARRAY_IDX(s->wild_names, i,
                                                     const char *)))
            return 1;
    return 0;
}

/*
 * Returns NULL if r may be a same-site request, else why it is cross-site:
 * a Sec-Fetch-Site other than same-origin or none (typed or bookmarked), an
 * Origin other than this server's scheme://Host, or an Origin whose host
 * is not one of this server's (host_is_ours: a same-origin request of a
 * page that reached this server by DNS rebinding). A request with neither
 * header (curl, scripts) is not a browser's cross-site request.
 */
static const char *cross_site(request_rec *r)
{
    const char *site = apr_table_get(r->headers_in, "Sec-Fetch-Site");
    const char *origin = apr_table_get(r->headers_in, "Origin");
    const char *host = apr_table_get(r->headers_in, "Host");
    const char *own;

    if (site && strcasecmp(site, "same-origin") && strcasecmp(site, "none"))
        return apr_pstrcat(r->pool, "Sec-Fetch-Site: ", site, NULL);
    if (!origin)
        return NULL;
    if (!host)
        host = apr_psprintf(r->pool, "%s:%u", r->hostname ? r->hostname : "",
                            (unsigned)ap_get_server_port(r));
    own = apr_pstrcat(r->pool, ap_http_scheme(r), "://", host, NULL);
    if (strcasecmp(origin, own))
        return apr_pstrcat(r->pool, "Origin: ", origin, NULL);
    {
        const char *h = strstr(origin, "://") + 3;   /* origin == own */
        size_t n = h[0] == '[' ? strcspn(h, "]") + 1 : strcspn(h, ":/");

        if (!host_is_ours(r, h, n))
            return apr_pstrcat(r->pool, "Origin: ", origin,
                               " (not a name of this server)", NULL);
    }
    return NULL;
}

/* Returns the server whose counters r's page shows and resets
 * (hl_view_owns): every server's (the main server) when r is the main
 * server's, or when the HotLimitStatus On in force was set in the main
 * server's configuration (a <Location> there applies to every virtual
 * host: on Debian, where every site is a virtual host, that is the
 * packaged page); r's virtual host only when its own configuration
 * (inside <VirtualHost>) set it. */
static const server_rec *page_view(request_rec *r)
{
    const hl_dir_conf_t *dc = ap_get_module_config(r->per_dir_config,
                                                   &hotlimit_module);

    if (!r->server->is_virtual || (dc && dc->status == HL_STATUS_ON_MAIN))
        return ap_server_conf;
    return r->server;
}

/* Returns 1 if the page of view may reset key (len bytes): on a virtual
 * host's page, only that host's counters (hl_view_owns); a bare client
 * address lifts only its bans in this host (hl_ban_reset_client). */
static int reset_allowed(const server_rec *view, const char *key, size_t len)
{
    return !strchr(key, '|') || hl_view_owns(view, key, len);
}

/* Handles POST reset=KEY: answers JSON, or 303 back to the page when the
 * form's "back" field is present. Returns the handler's status. */
static int handle_reset(request_rec *r)
{
    const server_rec *view = page_view(r);
    const char *why = cross_site(r);
    apr_array_header_t *pairs = NULL;
    const hl_store_t *store;
    const char *key = NULL;
    int removed, i, back = 0;

    if (why) {
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                      "HL00301: cross-site reset refused (%s) from %s",
                      ap_escape_logitem(r->pool, why), r->useragent_ip);
        return HTTP_FORBIDDEN;
    }
    if (ap_parse_form_data(r, NULL, &pairs, -1, 8192) != OK || !pairs)
        return HTTP_BAD_REQUEST;
    for (i = 0; i < pairs->nelts; ++i) {
        ap_form_pair_t *pair = &APR_ARRAY_IDX(pairs, i, ap_form_pair_t);
        if (!strcmp(pair->name, "back"))
            back = 1;
        else if (!strcmp(pair->name, "reset")) {
            apr_off_t len;
            apr_size_t size;
            char *buf;
            apr_brigade_length(pair->value, 1, &len);
            size = (apr_size_t)len;
            buf = apr_palloc(r->pool, size + 1);
            apr_brigade_flatten(pair->value, buf, &size);
            buf[size] = '\0';
            key = buf;
        }
    }
    if (!key || !*key)
        return HTTP_BAD_REQUEST;
    if (!reset_allowed(view, key, strlen(key))) {
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                      "HL01182: reset of '%s' refused: not a counter of this "
                      "virtual host (reset it from the main server's page)",
                      ap_escape_logitem(r->pool, key));
        return HTTP_FORBIDDEN;
    }
    store = hl_store_get();
    removed = store->ops->reset(store->ctx, key, strlen(key));
    if (removed >= 0 && hl_store_stats())   /* its place in the ranking */
        hl_refusals_forget(&hl_store_stats()->refusals, key, strlen(key));
    if (removed >= 0 && !strchr(key, '|')) {   /* a client address: its bans */
        int lifted = hl_ban_reset_client(view, r->pool, key);
        removed = lifted < 0 ? -1 : removed + lifted;
    }
    if (removed < 0)
        return HTTP_SERVICE_UNAVAILABLE;
    ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r,
                  "HL00300: counters of key '%s' reset by %s (%d slots)",
                  ap_escape_logitem(r->pool, key), r->useragent_ip, removed);
    if (back) {
        /* The page's reset button: back to the page (POST-redirect-GET). */
        apr_table_setn(r->headers_out, "Location",
                       ap_construct_url(r->pool, r->uri, r));
        return HTTP_SEE_OTHER;
    }
    ap_set_content_type(r, "application/json");
    ap_rprintf(r, "{\"reset\":\"%s\",\"removed\":%d}\n",
               hl_json_escape(r->pool, key), removed);
    return OK;
}

/* Returns 1 if the query string args (may be NULL) is "name" or "name=":
 * Prometheus sends "?metrics=" for a scrape config's
 * `params: {metrics: [""]}`, and cannot send a bare "?metrics". */
static int query_is(const char *args, const char *name)
{
    size_t n = strlen(name);

    return args && !strncmp(args, name, n)
           && (args[n] == '\0' || (args[n] == '=' && args[n + 1] == '\0'));
}

/* Returns the value of query parameter name in r's query string, decoded
 * ("" for a bare "name"), allocated from r->pool; NULL when absent or
 * undecodable. */
static const char *query_param(request_rec *r, const char *name)
{
    size_t n = strlen(name);
    char *args, *pair, *last;

    if (!r->args)
        return NULL;
    args = apr_pstrdup(r->pool, r->args);
    for (pair = apr_strtok(args, "&", &last); pair;
         pair = apr_strtok(NULL, "&", &last)) {
        if (strncmp(pair, name, n) || (pair[n] != '=' && pair[n] != '\0'))
            continue;
        if (pair[n] == '\0')
            return "";
        pair += n + 1;
        return ap_unescape_urlencoded(pair) == OK ? pair : NULL;
    }
    return NULL;
}

const char *hl_status_set(cmd_parms *cmd, void *dconf, int on)
{
    ((hl_dir_conf_t *)dconf)->status = !on ? 0
        : cmd->server->is_virtual ? HL_STATUS_ON_VHOST : HL_STATUS_ON_MAIN;
    /* Outside a section it covers the whole server, which is then never
     * limited or banned: allowed (spec: S), but said. */
    if (on && !cmd->path)
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, cmd->server,
                     "HL01183: HotLimitStatus On outside a <Location> or "
                     "<Directory> (%s:%d): no request of this server is "
                     "limited or banned; put it in the status page's "
                     "<Location>",
                     cmd->directive ? cmd->directive->filename : "?",
                     cmd->directive ? cmd->directive->line_num : 0);
    return NULL;
}

/*
 * Returns NULL if the Host r was asked for is a name of r's server
 * (host_is_ours: ServerName, ServerAlias, localhost, an IP literal), or
 * when the request has no Host (HTTP/1.0: not a browser's); else the Host,
 * allocated from r->pool. A page of evil.example that DNS rebinding points
 * at this server sends "Host: evil.example": refused, on every method.
 */
static const char *foreign_host(request_rec *r)
{
    const char *host = apr_table_get(r->headers_in, "Host");
    const char *name = r->hostname;
    struct in6_addr a6;

    if (!host)
        return NULL;
    if (name && strchr(name, ':') && inet_pton(AF_INET6, name, &a6) == 1)
        return NULL;                 /* an IPv6 literal, brackets dropped */
    if (name && host_is_ours(r, name, strlen(name)))
        return NULL;
    return host;
}

int hl_status_handler(request_rec *r)
{
    const hl_dir_conf_t *dc;
    const server_rec *view;
    const char *host;
    hl_snapshot_t *snap;
    int metrics;

    /* Runs for every request: the first letter spares most a strcmp. */
    if (!r->handler || r->handler[0] != 'h' || strcmp(r->handler, "hotlimit-status"))
        return DECLINED;
    /* Never framed (clickjacking of the reset buttons), whatever the
     * answer: err_headers_out survive error responses. */
    apr_table_setn(r->err_headers_out, "Content-Security-Policy",
                   "frame-ancestors 'none'");
    apr_table_setn(r->err_headers_out, "X-Frame-Options", "DENY");
    /* Only where the server configuration says HotLimitStatus On: a
     * "SetHandler hotlimit-status" in a tenant's .htaccess finds nothing. */
    dc = ap_get_module_config(r->per_dir_config, &hotlimit_module);
    if (!dc || dc->status <= 0) {
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                      "HL01180: hotlimit-status handler outside a "
                      "HotLimitStatus On scope: 404 for %s",
                      ap_escape_logitem(r->pool, r->uri));
        return HTTP_NOT_FOUND;
    }
    host = foreign_host(r);
    if (host) {
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                      "HL01181: status request for Host '%s', not a name of "
                      "this server (DNS rebinding?), refused from %s",
                      ap_escape_logitem(r->pool, host), r->useragent_ip);
        return HTTP_MISDIRECTED_REQUEST;
    }
    if (r->method_number == M_POST)
        return handle_reset(r);
    r->allowed = (AP_METHOD_BIT << M_GET) | (AP_METHOD_BIT << M_POST);
    if (r->method_number != M_GET)
        return HTTP_METHOD_NOT_ALLOWED;
    metrics = query_is(r->args, "metrics");
    view = page_view(r);
    snap = metrics ? copy_header(r, view) : take_snapshot(r, view);
    if (!snap)
        return HTTP_SERVICE_UNAVAILABLE;
    apr_table_setn(r->headers_out, "Cache-Control", "no-store");
    if (r->header_only)
        return OK;
    if (metrics) {
        write_metrics(r, snap);
        return OK;
    }
    snap->lookup = query_param(r, "lookup");
    snap->lookup_route = query_param(r, "route");
    lookup_account(r, snap);
    if (query_is(r->args, "json") || query_param(r, "json"))
        write_json(r, snap);
    else {
        const char *refresh = query_param(r, "refresh");
        int every = refresh ? atoi(refresh) : 0;
        write_html(r, snap, every < 0 ? 0 : every > HL_REFRESH_MAX
                                      ? HL_REFRESH_MAX : every);
    }
    return OK;
}
