/*
 * mod_hotlimit_ban.c - the bans in force (HotLimitBan), for the status
 * page: listed from the counters themselves (hl_ban.h), so every child and
 * every generation sees the same list, and a reset of "ban|CLIENT" (with
 * the vhost's "host:port" before it) lifts a ban. With the Redis store the
 * list comes from Redis (the store's `limited` call), so every server sharing it
 * shows and lifts the same bans.
 *
 * The decision side (is a client banned, does a refusal start a ban) is in
 * mod_hotlimit_access.c.
 */
#include <stdlib.h>
#include <string.h>

#include "httpd.h"
#include "http_protocol.h"
#include "apr_strings.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_ban.h"
#include "mod_hotlimit_fleet.h"
#include "mod_hotlimit_store_shm.h"
#include "mod_hotlimit_stores.h"
#include "mod_hotlimit_view.h"
#include "hl_banbook.h"
#include "hl_render.h"
#include "hl_slotkey.h"

/* With the Redis store, the most bans listed (those with the most time
 * left first). */
#define HL_BAN_REDIS_LISTED 200

/* What the scan collects (from the request's pool). */
typedef struct {
    const server_rec    *view;    /* whose page: its bans only */
    int                  redis;   /* listed from the Redis store */
    apr_pool_t          *pool;
    int64_t              now_ms;
    apr_array_header_t  *bans;    /* of hl_ban_entry_t */
} hl_ban_scan_t;

/* Fills the why of ban e from the ban book (this server's; with the
 * Redis store, else the one another server published), its texts copied
 * from p; unknown ("", 0) when no book has an entry for it. With the Redis
 * store (redis: the bans were listed from it), an unknown ban was
 * started by another server. */
static void explain_ban(hl_ban_entry_t *e, apr_pool_t *p, int redis)
{
    const hl_stats_t *st = hl_store_shm_stats();
    const hl_banbook_entry_t *b = st ? hl_banbook_find(&st->bans, e->key,
                                                       strlen(e->key)) : NULL;

    e->by = b ? "this server" : redis ? "another server" : "";
    if (!b && redis)
        b = hl_fleet_ban_of(p, e->key);

    e->line = b ? apr_pstrndup(p, b->line, sizeof(b->line)) : "";
    e->rule = b ? apr_pstrndup(p, b->rule, sizeof(b->rule)) : "";
    e->since_ms = b ? b->since_ms : 0;
    e->refusals = b ? __atomic_load_n(&b->refusals, __ATOMIC_RELAXED) : 0;
}

/* qsort order of bans: newest first, then (unknown start) most time left
 * first, then by key (a stable page). */
static int newest_first(const void *a, const void *b)
{
    const hl_ban_entry_t *x = a, *y = b;

    if (x->since_ms != y->since_ms)
        return x->since_ms > y->since_ms ? -1 : 1;
    if (x->left_ms != y->left_ms)
        return x->left_ms > y->left_ms ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* Keeps the counter whose slot key is key (len bytes) when it is a ban in
 * force (hl_slotkey_is_ban_slot, with a client): count > 0 and
 * left_ms > 0; its key, client and host copied from c->pool. */
static void keep_ban(hl_ban_scan_t *c, const char *key, size_t len,
                     uint32_t count, int64_t left_ms)
{
    hl_slotkey_t k;
    hl_ban_entry_t *e;

    if (count == 0 || left_ms <= 0 || !hl_slotkey_is_ban_slot(key, len)
        || hl_slotkey_decode_slot(key, len, &k) != 0 || k.client_len == 0
        || !hl_view_owns(c->view, k.key, k.key_len))
        return;
    e = apr_array_push(c->bans);
    e->key = apr_pstrmemdup(c->pool, k.key, k.key_len);
    e->client = e->key + (k.client - k.key);
    e->host = apr_pstrmemdup(c->pool, k.key, k.tag_len);
    e->left_ms = left_ms;
    explain_ban(e, c->pool, c->redis);
}

/* hl_store_shm_scan callback: keeps s when it is a ban in force. Returns 0
 * (go on). */
static int collect_ban(const hl_slot_t *s, void *baton)
{
    hl_ban_scan_t *c = baton;

    keep_ban(c, s->key, s->key_len, s->bucket.count, s->expires_ms - c->now_ms);
    return 0;
}

/* With the Redis store, fills c->bans from Redis' list of ban counters
 * (PREFIX{hl}:bans: every server sharing it; apart from the other counters
 * at their limit, so that none can push a ban out). Returns 1, or 0 when
 * Redis is not the store or cannot answer (the caller then scans this
 * server's counters). */
static int bans_from_redis(hl_ban_scan_t *c)
{
    const hl_store_t *store = hl_store_get();
    hl_store_limited_t *got;
    uint32_t total = 0;
    int i, n;

    if (!store->ops->limited)
        return 0;
    got = apr_palloc(c->pool, sizeof(*got) * HL_BAN_REDIS_LISTED);
    n = store->ops->limited(store->ctx, got, HL_BAN_REDIS_LISTED, 1, &total);
    if (n < 0)
        return 0;
    c->redis = 1;
    for (i = 0; i < n; ++i)
        keep_ban(c, got[i].key, got[i].len, got[i].count, got[i].left_ms);
    return 1;
}

apr_array_header_t *hl_ban_list(const server_rec *view, apr_pool_t *p,
                                int64_t now_ms)
{
    hl_ban_scan_t c;

    c.view = view;
    c.pool = p;
    c.now_ms = now_ms;
    c.redis = 0;
    c.bans = apr_array_make(p, 4, sizeof(hl_ban_entry_t));
    if (!bans_from_redis(&c))
        hl_store_shm_scan(collect_ban, &c);
    if (c.bans->nelts > 1)
        qsort(c.bans->elts, (size_t)c.bans->nelts, sizeof(hl_ban_entry_t),
              newest_first);
    return c.bans;
}

uint64_t hl_ban_total(void)
{
    const hl_stats_t *st = hl_store_shm_stats();

    return st ? hl_banbook_total(&st->bans) : 0;
}

void hl_ban_write_json(request_rec *r, const apr_array_header_t *bans)
{
    int i;

    ap_rputs("\"bans\":[", r);
    for (i = 0; i < bans->nelts; ++i) {
        const hl_ban_entry_t *e = &APR_ARRAY_IDX(bans, i, hl_ban_entry_t);
        ap_rprintf(r, "%s{\"key\":\"%s\",\"client\":\"%s\",\"host\":\"%s\","
                   "\"left_s\":%" APR_INT64_T_FMT ",\"line\":\"%s\","
                   "\"rule\":\"%s\",\"since_ms\":%" APR_INT64_T_FMT ","
                   "\"refusals\":%" APR_UINT64_T_FMT ",\"by\":\"%s\"}",
                   i ? "," : "", hl_json_escape(r->pool, e->key),
                   hl_json_escape(r->pool, e->client),
                   hl_json_escape(r->pool, e->host),
                   (apr_int64_t)((e->left_ms + 999) / 1000),
                   hl_json_escape(r->pool, e->line),
                   hl_json_escape(r->pool, e->rule), (apr_int64_t)e->since_ms,
                   (apr_uint64_t)e->refusals, e->by);
    }
    ap_rprintf(r, "],\"bans_total\":%" APR_UINT64_T_FMT, (apr_uint64_t)hl_ban_total());
}

void hl_ban_write_metrics(request_rec *r, const server_rec *view)
{
    apr_array_header_t *bans = hl_ban_list(view, r->pool, hl_mono_ms());

    ap_rprintf(r, "# HELP hotlimit_bans_active Clients banned now (HotLimitBan).\n"
               "# TYPE hotlimit_bans_active gauge\n"
               "hotlimit_bans_active %d\n"
               "# HELP hotlimit_bans_total Bans this server started since the counters started (HotLimitBan).\n"
               "# TYPE hotlimit_bans_total counter\n"
               "hotlimit_bans_total %" APR_UINT64_T_FMT "\n", bans->nelts,
               (apr_uint64_t)hl_ban_total());
}

/* Lifts the bans of list bans (of hl_ban_entry_t) whose client is client,
 * or every one when client is NULL. Returns the counters removed, or -1
 * when the store cannot answer. */
static int lift(const apr_array_header_t *bans, const char *client)
{
    const hl_store_t *store = hl_store_get();
    int i, removed = 0;

    for (i = 0; i < bans->nelts; ++i) {
        const hl_ban_entry_t *e = &APR_ARRAY_IDX(bans, i, hl_ban_entry_t);
        int n;

        if (client && strcmp(e->client, client) != 0)
            continue;
        n = store->ops->reset(store->ctx, e->key, strlen(e->key));
        if (n < 0)
            return -1;
        removed += n;
    }
    return removed;
}

int hl_ban_reset_client(const server_rec *view, apr_pool_t *p,
                        const char *client)
{
    return lift(hl_ban_list(view, p, hl_mono_ms()), client);
}

int hl_ban_lift_all(const server_rec *view, apr_pool_t *p)
{
    return lift(hl_ban_list(view, p, hl_mono_ms()), NULL);
}
