/*
 * mod_hotlimit_ban.c - the bans in force (HotLimitBan), for the status
 * page: listed from the counters themselves (hl_ban.h), so every child and
 * every generation sees the same list, and a reset of "ban|CLIENT" (with
 * the vhost's "host:port" before it) lifts a ban.
 *
 * The decision side (is a client banned, does a refusal start a ban) is in
 * mod_hotlimit_access.c.
 */
#include <string.h>

#include "httpd.h"
#include "http_protocol.h"
#include "apr_strings.h"

#include "mod_hotlimit.h"
#include "mod_hotlimit_ban.h"
#include "mod_hotlimit_store.h"
#include "hl_render.h"

/* What the scan collects (from the request's pool). */
typedef struct {
    apr_pool_t          *pool;
    int64_t              now_ms;
    apr_array_header_t  *bans;    /* of hl_ban_entry_t */
} hl_ban_scan_t;

/* hl_store_scan callback: keeps s when it is a ban in force. Returns 0
 * (go on). */
static int collect_ban(const hl_slot_t *s, void *baton)
{
    hl_ban_scan_t *c = baton;
    const char *client;
    size_t client_len;
    hl_ban_entry_t *e;

    if (s->key_len <= HL_SLOT_KEY_PREFIX || s->key[0] != HL_ORIGIN_DIRECTIVE
        || s->key[1] != '0' || s->bucket.count == 0 || s->expires_ms <= c->now_ms
        || !hl_ban_key_client(s->key + HL_SLOT_KEY_PREFIX,
                              s->key_len - HL_SLOT_KEY_PREFIX, &client,
                              &client_len))
        return 0;
    e = apr_array_push(c->bans);
    e->key = apr_pstrmemdup(c->pool, s->key + HL_SLOT_KEY_PREFIX,
                            s->key_len - HL_SLOT_KEY_PREFIX);
    e->left_ms = s->expires_ms - c->now_ms;
    return 0;
}

apr_array_header_t *hl_ban_list(apr_pool_t *p, int64_t now_ms)
{
    hl_ban_scan_t c;

    c.pool = p;
    c.now_ms = now_ms;
    c.bans = apr_array_make(p, 4, sizeof(hl_ban_entry_t));
    hl_store_scan(collect_ban, &c);
    return c.bans;
}

void hl_ban_write_json(request_rec *r)
{
    apr_array_header_t *bans = hl_ban_list(r->pool, hl_mono_ms());
    int i;

    ap_rputs("\"bans\":[", r);
    for (i = 0; i < bans->nelts; ++i) {
        const hl_ban_entry_t *e = &APR_ARRAY_IDX(bans, i, hl_ban_entry_t);
        ap_rprintf(r, "%s{\"key\":\"%s\",\"left_s\":%" APR_INT64_T_FMT "}",
                   i ? "," : "", hl_json_escape(r->pool, e->key),
                   (apr_int64_t)((e->left_ms + 999) / 1000));
    }
    ap_rputs("]", r);
}

void hl_ban_write_metrics(request_rec *r)
{
    apr_array_header_t *bans = hl_ban_list(r->pool, hl_mono_ms());

    ap_rprintf(r, "# HELP hotlimit_bans_active Clients banned now (HotLimitBan).\n"
               "# TYPE hotlimit_bans_active gauge\n"
               "hotlimit_bans_active %d\n", bans->nelts);
}

int hl_ban_reset_client(apr_pool_t *p, const char *client)
{
    apr_array_header_t *bans = hl_ban_list(p, hl_mono_ms());
    const hl_store_t *store = hl_store_get();
    size_t len = strlen(client);
    int i, removed = 0;

    for (i = 0; i < bans->nelts; ++i) {
        const hl_ban_entry_t *e = &APR_ARRAY_IDX(bans, i, hl_ban_entry_t);
        const char *c;
        size_t clen;
        int n;

        if (!hl_ban_key_client(e->key, strlen(e->key), &c, &clen)
            || clen != len || memcmp(c, client, len) != 0)
            continue;
        n = store->ops->reset(store->ctx, e->key, strlen(e->key));
        if (n < 0)
            return -1;
        removed += n;
    }
    return removed;
}
