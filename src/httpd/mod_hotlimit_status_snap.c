/*
 * mod_hotlimit_status_snap.c - the status page's snapshot: everything the
 * page shows, gathered before a byte is written (the writers,
 * mod_hotlimit_status_html.c, _json.c and _metrics.c, only format).
 *
 * The header and per-route statistics are copied out of shared memory
 * under the lock into a snapshot allocated from r->pool, then summed up
 * after unlocking (the same copy feeds mod_status's section,
 * mod_hotlimit_modstatus.c). A full snapshot then walks the counters
 * stripe by stripe for the busiest keys and the keys at their limit (or
 * asks Redis), lists the configured routes with their counts and charts'
 * history, the keys refused most with their rules, the bans, and the
 * account lookup. Counter keys are taken apart by hl_slotkey.
 *
 * Uptime: the counters live as long as the httpd parent (see
 * mod_hotlimit_store_shm.c), so their start is recorded once per parent, in
 * the process pool, and measured on the monotonic clock (a clock step
 * does not change it).
 */
#include <string.h>

#include "httpd.h"
#include "http_config.h"
#include "http_main.h"
#include "apr_strings.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_key.h"
#include "mod_hotlimit_ban.h"
#include "mod_hotlimit_fleet.h"
#include "mod_hotlimit_names.h"
#include "mod_hotlimit_status_snap.h"
#include "mod_hotlimit_store_shm.h"
#include "mod_hotlimit_stores.h"
#include "mod_hotlimit_table.h"
#include "mod_hotlimit_view.h"
#include "hl_quota_text.h"
#include "hl_slotkey.h"

APLOG_USE_MODULE(hotlimit);

#define HL_TABLE_ROUTES_LISTED 1000  /* table rules listed with limits */
#define HL_STARTED_KEY "hotlimit-started"

/* When the counters started: once per httpd parent, in its process pool. */
typedef struct {
    int64_t wall_ms;    /* hl_now_ms() then */
    int64_t mono_ms;    /* hl_mono_ms() then */
} hl_started_t;

/* This generation's pointer to the process pool's record (the DSO's
 * statics are new each generation; the record is not). */
static const hl_started_t *started;

void hl_status_snap_record_start(server_rec *s)
{
    apr_pool_t *pp = s->process->pool;
    void *found = NULL;

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

/* Returns the refusals per second now (hl_refusals_recent) as a decimal
 * with one digit after the point, allocated from p. */
static const char *refusal_rate(apr_pool_t *p, const hl_snapshot_t *snap)
{
    uint64_t tenths = snap->refused_recent * 10 / HL_REFUSALS_RATE_S;

    return apr_psprintf(p, "%" APR_UINT64_T_FMT ".%d",
                        (apr_uint64_t)(tenths / 10), (int)(tenths % 10));
}

/* This process's last look at the eviction count, for evictions per
 * second: the words are read and written atomically, one at a time (a
 * look racing another may pair one's time with the other's count: one
 * rate shown off, never a crash). */
static int64_t evict_seen_ms;
static uint64_t evict_seen;

/* Returns the evictions per second (one digit after the point) since this
 * process last looked, when that was 1 s to 5 min ago, else since httpd
 * started, and keeps this look when the last is over 1 s old; allocated
 * from p. */
static const char *eviction_rate(apr_pool_t *p, const hl_snapshot_t *snap)
{
    int64_t then = __atomic_load_n(&evict_seen_ms, __ATOMIC_RELAXED);
    uint64_t was = __atomic_load_n(&evict_seen, __ATOMIC_RELAXED);
    int64_t dt = snap->mono_ms - then;
    uint64_t tenths;

    if (!then || dt < 1000 || dt > 300000 || was > snap->evictions) {
        then = started ? started->mono_ms : snap->mono_ms;
        was = 0;
        dt = snap->mono_ms - then;
    }
    if (snap->mono_ms - __atomic_load_n(&evict_seen_ms, __ATOMIC_RELAXED)
        >= 1000) {
        __atomic_store_n(&evict_seen, snap->evictions, __ATOMIC_RELAXED);
        __atomic_store_n(&evict_seen_ms, snap->mono_ms, __ATOMIC_RELAXED);
    }
    tenths = dt > 0 ? (snap->evictions - was) * 10000 / (uint64_t)dt : 0;
    return apr_psprintf(p, "%" APR_UINT64_T_FMT ".%d",
                        (apr_uint64_t)(tenths / 10), (int)(tenths % 10));
}

/* Copies the user-visible key of k into out (HL_KEY_MAX + 1 bytes),
 * NUL-terminated, control characters shown as '?'. Never fails. */
static void copy_shown(char *out, const hl_slotkey_t *k)
{
    size_t i;

    memcpy(out, k->key, k->key_len);
    out[k->key_len] = '\0';
    for (i = 0; i < k->key_len; ++i)
        if ((unsigned char)out[i] < 0x20)
            out[i] = '?';
}

/* Keeps the HL_TOP_KEYS busiest keys (fixed and sliding windows); a key
 * with several windows shows its busiest one. */
static int collect_top(const hl_slot_t *s, void *baton)
{
    hl_snapshot_t *snap = baton;
    hl_slotkey_t sk;
    int i, at;

    if (s->bucket.count == 0 || s->key_len <= HL_SLOTKEY_PREFIX)
        return 0;
    hl_slotkey_decode_slot(s->key, s->key_len, &sk);
    if (!hl_view_owns(snap->view, sk.key, sk.key_len)
        || hl_slotkey_is_ban_counter(sk.key, sk.key_len))
        return 0;
    for (i = 0; i < snap->ntop; ++i) {
        if (strlen(snap->top[i].key) == sk.key_len
            && !memcmp(snap->top[i].key, sk.key, sk.key_len)) {
            /* Seen through another window: keep the larger count, in order. */
            if (s->bucket.count > snap->top[i].count) {
                hl_top_key_t k = snap->top[i];
                k.count = s->bucket.count;
                k.from = origin_name(sk.origin);
                k.window = sk.window;
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
    copy_shown(snap->top[at].key, &sk);
    snap->top[at].count = s->bucket.count;
    snap->top[at].from = origin_name(sk.origin);
    snap->top[at].window = sk.window;
    if (snap->ntop < HL_TOP_KEYS)
        snap->ntop++;
    return 0;
}

/* Returns 1 if the page of snap shows the slot key (skey, len bytes;
 * len <= HL_KEY_MAX) among the keys at their limit, decoded into *k:
 * one of its view's, not a ban's own counter (listed as a ban). */
static int limited_shown(const hl_snapshot_t *snap, const char *skey,
                         size_t len, hl_slotkey_t *k)
{
    if (len <= HL_SLOTKEY_PREFIX)
        return 0;
    hl_slotkey_decode_slot(skey, len, k);
    return hl_view_owns(snap->view, k->key, k->key_len)
           && !hl_slotkey_is_ban_counter(k->key, k->key_len);
}

/* Fills e from the decoded slot key k, its count and the time its counter
 * has left. Never fails. */
static void limited_set(hl_limited_key_t *e, const hl_slotkey_t *k,
                        uint32_t count, int64_t left_ms)
{
    copy_shown(e->key, k);
    e->count = count;
    e->from = origin_name(k->origin);
    e->window = k->window;
    e->left_ms = left_ms;
}

/* Keeps the first HL_LIMITED_KEYS windows at their limit that have not
 * expired, and counts them all. */
static int collect_limited(const hl_slot_t *s, void *baton)
{
    hl_snapshot_t *snap = baton;
    hl_slotkey_t k;

    if (s->level != HL_SLOT_FULL || s->key_len > HL_KEY_MAX
        || s->expires_ms <= snap->mono_ms
        || !limited_shown(snap, s->key, s->key_len, &k))
        return 0;   /* ban counters are listed as bans, not as keys */
    snap->limited_total++;
    if (snap->nlimited == HL_LIMITED_KEYS)
        return 0;
    limited_set(&snap->limited[snap->nlimited++], &k, s->bucket.count,
                s->expires_ms - snap->mono_ms);
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
        hl_slotkey_t k;

        if (got[i].len <= HL_SLOTKEY_PREFIX)
            continue;
        if (!limited_shown(snap, got[i].key, got[i].len, &k)) {
            snap->limited_total--;   /* another host's: not ours to count */
            continue;
        }
        limited_set(&snap->limited[snap->nlimited++], &k, got[i].count,
                    got[i].left_ms);
    }
}

/* hl_store_shm_scan callback: the busiest keys and the keys at their limit. */
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
    for (k = 0; k < HL_DECISION_KINDS; ++k)
        sum->count[k] += e->count[k];
    sum->refused_by += e->refused_by;
    sum->refused_other += e->refused_other;
    for (i = 0; i < HL_STATS_HISTORY; ++i)
        for (k = 0; k < HL_DECISION_KINDS; ++k)
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

/* Returns the rule of a ban counter key refused most now: "HotLimitBan"
 * and its "FILE:LINE" (or "of the quota table") from the ban book
 * (snap's copy; else the one another server sharing the Redis store
 * published), "HotLimitBan" alone when no book has an entry for it.
 * From p. */
static const char *ban_rule_of(apr_pool_t *p, const hl_snapshot_t *snap,
                               const char *key)
{
    const hl_banbook_entry_t *b = hl_banbook_find(&snap->shared.stats.bans,
                                                  key, strlen(key));

    if (!b)
        b = hl_fleet_ban_of(p, key);

    if (!b || !b->line[0])
        return "HotLimitBan";
    return apr_pstrcat(p, "HotLimitBan ", !strcmp(b->line, "table")
                       ? "of the quota table"
                       : apr_pstrndup(p, b->line, sizeof(b->line)), NULL);
}

/* Fills snap->refused_rows: each key refused most now with its client
 * (after its first '|', the whole key without one), the client column (a
 * ban counter "HOST:PORTban|CLIENT" as "CLIENT (HOST:PORT)", the main
 * server's as "CLIENT") and its rule (a ban counter's: its HotLimitBan
 * line). Strings from p or the keys. */
static void collect_refused_rows(apr_pool_t *p, hl_snapshot_t *snap)
{
    int i;

    for (i = 0; i < snap->nrefused; ++i) {
        hl_refused_row_t *row = &snap->refused_rows[i];
        const char *key = snap->refused[i].key;
        hl_slotkey_t k;
        int ok = hl_slotkey_decode(key, strlen(key), &k) == 0;

        row->rank = &snap->refused[i];
        row->client = ok ? k.client : key;
        row->shown = row->client;
        if (ok && k.kind == HL_SLOTKEY_BAN && k.client_len && k.tag_len)
            row->shown = apr_psprintf(p, "%s (%.*s)", k.client,
                                      (int)k.tag_len, key);
        row->rule = ok && k.kind == HL_SLOTKEY_BAN
                    ? ban_rule_of(p, snap, key)
                    : rule_of(snap, snap->refused[i].route);
    }
}

const char *hl_status_result_name(int result)
{
    static const char *const names[HL_RELOAD_RESULTS] = {
        "ok", "unchanged", "failed"
    };

    return result >= 0 && result < HL_RELOAD_RESULTS ? names[result] : "none";
}

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
    sum->table_result = hl_status_result_name(v);
    sum->reloads_failed = snap->table.reloads[HL_RELOAD_FAILED];
    for (i = 0; i < HL_STATS_ROUTES; ++i)
        if (snap->shared.stats.routes[i].hash)
            for (k = 0; k < HL_DECISION_KINDS; ++k)
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

hl_snapshot_t *hl_status_snap_header(request_rec *r, const server_rec *view)
{
    hl_snapshot_t *snap = apr_pcalloc(r->pool, sizeof(*snap));
    hl_store_shm_totals_t totals;
    hl_shared_t *shared;

    if (hl_store_shm_lock(r->server, &shared) != APR_SUCCESS)
        return NULL;
    memcpy(&snap->shared, shared, sizeof(*shared));
    hl_store_shm_unlock(r->server);
    snap->view = view;
    hide_foreign_routes(snap);
    snap->nrefused = hl_refusals_rank(&snap->shared.stats.refusals,
                                      hl_mono_ms(), view_keeps, (void *)view,
                                      snap->refused, HL_TOP_REFUSED);
    snap->refused_recent = hl_refusals_recent(&snap->shared.stats.refusals,
                                              hl_mono_ms());
    hl_table_status(r->server, &snap->table);
    hl_store_shm_totals(&totals);
    snap->used = totals.used;
    snap->capacity = totals.capacity;
    snap->evictions = totals.evictions;
    snap->reclaims = totals.reclaims;
    snap->classes = totals.classes;
    snap->stripes = totals.stripes;
    snap->mono_ms = hl_mono_ms();
    store_figures(&snap->store);
    snap->refusal_rate = refusal_rate(r->pool, snap);
    snap->eviction_rate = eviction_rate(r->pool, snap);
    snap->slots_pct = snap->capacity
                      ? (int)((uint64_t)snap->used * 100 / snap->capacity) : 0;
    snap->counted_s = snap->shared.counters_started_ms > 0
                      ? (hl_now_ms() - snap->shared.counters_started_ms) / 1000
                      : 0;
    summarize(snap);
    return snap;
}

hl_status_summary_t *hl_status_summary(request_rec *r)
{
    /* mod_status's page shows every server's totals, as it shows every
     * server's workers. */
    hl_snapshot_t *snap = hl_status_snap_header(r, ap_server_conf);
    return snap ? &snap->sum : NULL;
}

/* Adds to snap->lookups the key of account snap->lookup under route
 * (a statistics name) of configured route c. */
static void lookup_add(apr_pool_t *p, hl_snapshot_t *snap,
                       const hl_conf_route_t *c, const char *route,
                       const char *client)
{
    hl_lookup_row_t *row = apr_array_push(snap->lookups);
    size_t len = hl_slotkey_encode(NULL, 0, "", 0, route, strlen(route),
                                   client, strlen(client));
    char *key = apr_palloc(p, len + 1);

    /* route is the statistics name: the tag is in it already. */
    hl_slotkey_encode(key, len + 1, "", 0, route, strlen(route), client,
                      strlen(client));
    memset(row, 0, sizeof(*row));
    row->route = route;
    row->rule = c->where;
    row->key = key;
    row->nwindows = c->quota->nwindows;
    row->refusals = hl_refusals_of(&snap->shared.stats.refusals, row->key,
                                   strlen(row->key), hl_mono_ms());
}

/* hl_store_shm_scan callback: the windows of the looked-up keys. */
static int collect_lookup(const hl_slot_t *s, void *baton)
{
    hl_snapshot_t *snap = baton;
    hl_slotkey_t k;
    int i, w;

    if (s->key_len <= HL_SLOTKEY_PREFIX || s->expires_ms <= snap->mono_ms)
        return 0;
    hl_slotkey_decode_slot(s->key, s->key_len, &k);
    w = k.window;
    for (i = 0; i < snap->lookups->nelts; ++i) {
        hl_lookup_row_t *row = &APR_ARRAY_IDX(snap->lookups, i, hl_lookup_row_t);
        if (strlen(row->key) == k.key_len && w >= 0 && w < HL_MAX_WINDOWS
            && !memcmp(row->key, k.key, k.key_len)) {
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
        hl_store_shm_scan(collect_lookup, snap);
}

/* Adds a row for the route name to snap->rows: its limits, origin and
 * rule ("" when not configured), its counts e (NULL: none yet) and, with
 * counts, its history (allocated from p). */
static void add_row(apr_pool_t *p, hl_snapshot_t *snap, const char *name,
                    const char *limits, const char *origin, const char *rule,
                    const hl_route_stat_t *e)
{
    hl_page_route_t *row = apr_array_push(snap->rows);

    row->name = name;
    row->limits = limits;
    row->origin = origin;
    row->rule = rule;
    row->stat = e;
    row->history = NULL;
    if (e) {
        uint32_t (*h)[HL_DECISION_KINDS] =
            apr_pcalloc(p, sizeof(uint32_t[HL_STATS_HISTORY][HL_DECISION_KINDS]));
        hl_stats_history(e, snap->mono_ms, h);
        row->history = (const uint32_t (*)[HL_DECISION_KINDS])h;
    }
}

/* Fills snap->rows: every configured route, then every counted route
 * none of them counts. Never fails. */
static void collect_rows(apr_pool_t *p, hl_snapshot_t *snap)
{
    int i;

    snap->rows = apr_array_make(p, snap->routes->nelts + 8,
                                sizeof(hl_page_route_t));
    for (i = 0; i < snap->routes->nelts; ++i) {
        const hl_conf_route_t *c = &APR_ARRAY_IDX(snap->routes, i,
                                                  hl_conf_route_t);
        add_row(p, snap, c->name, c->limits, c->origin, c->where, c->stat);
        if (c->quota->by != HL_BY_IP && c->quota->by != HL_BY_GLOBAL)
            snap->account_routes++;
    }
    for (i = 0; i < HL_STATS_ROUTES; ++i) {
        const hl_route_stat_t *e = &snap->shared.stats.routes[i];
        if (e->hash && !is_configured(snap, e))
            add_row(p, snap, e->route, "", "", "", e);
    }
}

/* Sets the name (HotLimitStatusNames) of every account key snap lists:
 * the keys refused most, at their limit, busiest, and looked up. Strings
 * from p. Never fails. */
static void attach_names(apr_pool_t *p, hl_snapshot_t *snap)
{
    int i;

    for (i = 0; i < snap->nrefused; ++i)
        snap->refused_rows[i].name = hl_names_of(p, snap->view,
                                                 snap->refused[i].key);
    for (i = 0; i < snap->nlimited; ++i)
        snap->limited[i].name = hl_names_of(p, snap->view,
                                            snap->limited[i].key);
    for (i = 0; i < snap->ntop; ++i)
        snap->top[i].name = hl_names_of(p, snap->view, snap->top[i].key);
    for (i = 0; i < snap->lookups->nelts; ++i) {
        hl_lookup_row_t *row = &APR_ARRAY_IDX(snap->lookups, i,
                                              hl_lookup_row_t);
        row->name = hl_names_of(p, snap->view, row->key);
    }
}

hl_snapshot_t *hl_status_snap_take(request_rec *r, const server_rec *view,
                                   const char *lookup,
                                   const char *lookup_route)
{
    hl_snapshot_t *snap = hl_status_snap_header(r, view);

    if (!snap)
        return NULL;
    /* The busiest keys, stripe by stripe in chunks: requests wait for one
     * chunk at most, never for the whole table (HotLimitSlots may be 16
     * million). */
    hl_store_shm_scan(collect, snap);
    /* With a Redis store: the other servers' refusals too (issue 28). */
    snap->nrefused = hl_fleet_add_refused(r->pool, snap->refused,
                                          snap->nrefused, HL_TOP_REFUSED,
                                          view_keeps, (void *)view,
                                          &snap->refused_servers);
    limited_from_redis(snap);
    collect_routes(r, snap);
    collect_rows(r->pool, snap);
    collect_refused_rows(r->pool, snap);
    snap->bans = hl_ban_list(view, r->pool, hl_mono_ms());
    snap->lookup = lookup;
    snap->lookup_route = lookup_route;
    lookup_account(r, snap);
    attach_names(r->pool, snap);
    return snap;
}
