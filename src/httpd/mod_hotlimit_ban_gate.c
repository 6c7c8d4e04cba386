/*
 * mod_hotlimit_ban_gate.c - HotLimitBan in the request path (see
 * mod_hotlimit_ban_gate.h): the look at a client's ban, asked with the
 * request's quotas in one call to the store (or alone before a body is
 * read), the 429 of a banned client, and its refusals counted toward a
 * ban, which the refusal taking the last room starts. The bans in force
 * are listed by mod_hotlimit_ban.c.
 *
 * Keys: "host:port" + HL_BAN_SCOPE or HL_REJ_SCOPE + "|" + the client
 * address key, from r->pool.
 */
#include <string.h>

#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "apr_strings.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_ban_gate.h"
#include "mod_hotlimit_key.h"
#include "mod_hotlimit_respond.h"
#include "mod_hotlimit_store_shm.h"
#include "mod_hotlimit_stores.h"
#include "hl_banbook.h"
#include "hl_route.h"
#include "hl_store.h"
#include "hl_table.h"

APLOG_USE_MODULE(hotlimit);

/* Fills *it (zeroed first) for the ban counter `scope` (HL_BAN_SCOPE or
 * HL_REJ_SCOPE) of the client address of r, in server sc, with quota q:
 * key "host:port" + scope + "|" + client address key, allocated from
 * r->pool; no statistics, never leased. */
static void ban_item(request_rec *r, const hl_server_conf_t *sc,
                     const hl_client_t *cl, const char *scope,
                     const hl_quota_t *q, hl_decide_item_t *it)
{
    size_t slen = strlen(scope), klen;
    char *key = hl_key_counter(r, sc, scope, slen, cl->key, cl->key_len, &klen);

    memset(it, 0, sizeof(*it));
    it->quota = q;
    it->origin = HL_ORIGIN_DIRECTIVE;
    it->key = key;
    it->key_len = klen;
    it->cls = hl_limiter_class_of(HL_ORIGIN_DIRECTIVE, sc->tag_hash,
                                  hl_table_route_hash(scope, slen));
    it->exact = 1;   /* a refusal counted ahead would ban early */
}

/* Decides the single item it in the store at now. Returns the store's
 * answer: 1 admitted, 0 rejected, -1 when it cannot answer. */
static int decide_one(hl_decide_item_t *it)
{
    const hl_store_t *store = hl_store_get();

    store->ops->prepare(store->ctx, it);
    return store->ops->decide(store->ctx, &it, 1, hl_mono_ms());
}

/* Fills *m (zeroed first) with the question "is the client of r banned
 * from r's server under ban b?": a look at the ban counter, which counts
 * nothing and creates no counter, decided with the request's quotas. */
void hl_ban_gate_look(request_rec *r, const hl_server_conf_t *sc,
                      const hl_ban_t *b, const hl_client_t *cl,
                      hl_match_t *m)
{
    memset(m, 0, sizeof(*m));
    ban_item(r, sc, cl, HL_BAN_SCOPE, &b->ban, &m->item);
    m->item.peek = 1;
    m->route = r->uri ? r->uri : "/";
    m->scope = HL_BAN_SCOPE;
    m->banned = 1;
}

/* Returns the 429 outcome (hl_respond_reject) for a request refused
 * because its client is banned (ban check m said so), with Retry-After =
 * the time the ban has left; counted among the ban's refusals (its entry
 * in the ban book, when this server started it). */
int hl_ban_gate_refuse(request_rec *r, const hl_match_t *m)
{
    hl_stats_t *st = hl_store_shm_stats();

    if (st)
        hl_banbook_refused(&st->bans, m->item.key, m->item.key_len);
    ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r,
                  "HL00103: banned, refused client=%s key=%s retry_after=%ld",
                  r->useragent_ip, ap_escape_logitem(r->pool, m->item.key),
                  m->item.decision.retry_after_s);
    return hl_respond_reject(r, m);
}

/* Records in the ban book why the ban whose counter item is ban started:
 * the HotLimitBan line of b ("table" for the table's), and the rule of
 * match by, whose refusal started it ("FILE:LINE" of its HotLimitQuota,
 * "table ROUTE" for a table rule). */
static void record_ban(request_rec *r, const hl_server_conf_t *sc,
                       const hl_ban_t *b, const hl_decide_item_t *ban,
                       const hl_match_t *by)
{
    hl_stats_t *st = hl_store_shm_stats();
    const char *rule = by->dq ? by->dq->where
                       : apr_pstrcat(r->pool, "table ", by->route, NULL);

    if (st)
        hl_banbook_start(&st->bans, ban->key, ban->key_len,
                         b == sc->ban && sc->ban_where ? sc->ban_where : "table",
                         rule, (int64_t)(apr_time_now() / 1000));
}

/* Counts a refusal of the client of r, by match by (a quota keyed by its
 * address: refused_by_address), toward its server's ban b. The refusal
 * that takes the last room of AFTER/WITHIN (exactly one, however many run
 * at once: the store counts under its lock) starts the ban, logged once
 * (HL00102) and recorded (record_ban), and the client's refusals start
 * over. */
static void note_refusal(request_rec *r, const hl_server_conf_t *sc,
                         const hl_ban_t *b, const hl_client_t *cl,
                         const hl_match_t *by)
{
    const hl_store_t *store;
    hl_decide_item_t rej, ban;
    char within[48], span[48];

    ban_item(r, sc, cl, HL_REJ_SCOPE, &b->rejections, &rej);
    if (decide_one(&rej) != 1 || rej.decision.remaining != 0)
        return;
    ban_item(r, sc, cl, HL_BAN_SCOPE, &b->ban, &ban);
    if (decide_one(&ban) == 1) {
        record_ban(r, sc, b, &ban, by);
        ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r,
                      "HL00102: ban started client=%s key=%s after=%u "
                      "refusals within=%s for=%s retry_after=%ld",
                      r->useragent_ip, ap_escape_logitem(r->pool, ban.key),
                      (unsigned)b->rejections.windows[0].count,
                      hl_window_name(&b->rejections.windows[0], within,
                                     sizeof(within)),
                      /* "1/5s" without its "1/": the duration */
                      hl_window_name(&b->ban.windows[0], span, sizeof(span)) + 2,
                      (long)((b->ban.windows[0].window_ms + 999) / 1000));
    }
    store = hl_store_get();
    store->ops->reset(store->ctx, rej.key, rej.key_len);
}

/* Returns the match of a quota keyed by the client address (match
 * by_address) that refused the request whose matches are m (n), not in
 * dry run, or NULL: only such a refusal is the client's own doing, and
 * counts toward its ban. A refusal by a shared or account budget
 * (by=global, by=header:...) may come from someone else's spending and
 * never does. Points into m. */
static const hl_match_t *refused_by_address(const hl_match_t *m, int n)
{
    int i;

    for (i = 0; i < n; ++i)
        if (m[i].by_address && !m[i].item.decision.admit
            && !m[i].item.dry_run)
            return &m[i];
    return NULL;
}

/* Counts the refusal of the request whose matches are m (n), refused,
 * toward ban b when a quota keyed by the client address refused it (see
 * mod_hotlimit_ban_gate.h). Never fails. */
void hl_ban_gate_note_refusal(request_rec *r, const hl_server_conf_t *sc,
                              const hl_ban_t *b, const hl_client_t *cl,
                              const hl_match_t *m, int n)
{
    const hl_match_t *by = refused_by_address(m, n);

    if (by)
        note_refusal(r, sc, b, cl, by);
}

/* Request bodies: the ban is looked at before a body is read (see
 * mod_hotlimit_ban_gate.h). Returns 1 if banned, else 0. */
int hl_ban_gate_banned(request_rec *r)
{
    const hl_dir_conf_t *dc = ap_get_module_config(r->per_dir_config,
                                                   &hotlimit_module);
    const hl_server_conf_t *sc = ap_get_module_config(r->server->module_config,
                                                      &hotlimit_module);
    const hl_table_hit_t *table = NULL;
    const hl_ban_t *ban;
    hl_table_hit_t hit;
    hl_client_t *cl;
    hl_match_t m;

    if (!dc || dc->engine == 0 || dc->dry_run == 1
        || (!hl_table_configured() && !sc->ban))
        return 0;
    cl = hl_key_client_of(r, sc);
    if (hl_key_client_exempt(r, sc, cl->ok ? &cl->addr : NULL))
        return 0;
    if (hl_table_configured()) {
        char path[HL_ROUTE_MAX];   /* the ban does not depend on the route */
        hl_route_normalize(path, sizeof(path), r->uri ? r->uri : "/",
                           r->uri ? strlen(r->uri) : 1);
        hl_table_find(r, path, cl->ok ? &cl->addr : NULL, &hit);
        table = &hit;
    }
    if ((ban = hl_ban_gate_of(sc, table)) == NULL)
        return 0;
    hl_ban_gate_look(r, sc, ban, cl, &m);
    return decide_one(&m.item) == 0;
}
