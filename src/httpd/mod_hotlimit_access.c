/*
 * mod_hotlimit_access.c - the decision, at the access-checker stage
 * (before Require, authentication and any handler), for every request of
 * the chain a client request goes through.
 *
 * 1. Skip what is never limited: subrequests, the ErrorDocument of our own
 *    429, HotLimitEngine Off and HotLimitStatus On scopes, exempt clients
 *    (HotLimitExempt, the table's "exempt", env hotlimit-exempt).
 * 2. Look the route up in the quota table (the connection keeps the
 *    answer for the path it last asked: mod_hotlimit_answer.c) and
 *    collect the quotas that apply: the table's rule (with its plan's
 *    limits when its selector names one) and global bucket, and the
 *    scope's HotLimitQuota lines.
 * 3. Build each key "host:port" + scope + "|" + client part (the address,
 *    or an account value folded by norm= and hashed; a device cookie's
 *    holder gets a key of its own; mod_hotlimit_key.c); drop the quotas
 *    this client request was already decided on.
 * 4. In one call to the store (mod_hotlimit_stores.c: the shared memory
 *    under its stripes' mutexes, or one Redis round trip) decide them all
 *    and look at the client's ban (HotLimitBan, mod_hotlimit_ban_gate.c):
 *    the request is counted (a reserve= quota takes its reservation) only
 *    if the client is not banned and every non-dry-run quota admits it;
 *    the per-route and per-key statistics are updated there.
 * 5. After the store: environment, RateLimit headers for every quota,
 *    the refusal log, a ban's count (refusals of address keys only), and
 *    the 429.
 *
 * Which requests are decided. A client request may become several
 * request_recs: internal redirects (mod_rewrite in .htaccess, ErrorDocument
 * 404 to a front controller, CGI Location) are new requests with r->prev
 * set; DirectoryIndex and MultiViews copy a subrequest into the request
 * (a "fast redirect") during fixups. Every quota any of them reaches is
 * decided, and none twice, so:
 *  - the access checker decides initial requests and internal redirects
 *    (never subrequests: lookups are not served; never the ErrorDocument
 *    of our own 429);
 *  - the fixups hook, after mod_dir, decides again whenever the request's
 *    configuration, path or query changed since the last decision (a fast
 *    redirect, or a redirect httpd did not re-check because its
 *    configuration is the same), and decides by=user quotas, which need
 *    REMOTE_USER;
 *  - the keys already decided are kept on the client's first request_rec
 *    (r walked up through prev and main) and skipped afterwards.
 * count=failures|status quotas are decided and counted like the others,
 * and give their unit back in the log_transaction hook when the final
 * status is not one they count (exact however many are in flight);
 * cost=header: quotas are counted there, once the cost is known.
 */
#include <string.h>

#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "apr_strings.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_access.h"
#include "mod_hotlimit_answer.h"
#include "mod_hotlimit_ban_gate.h"
#include "mod_hotlimit_key.h"
#include "mod_hotlimit_body.h"
#include "mod_hotlimit_delay.h"
#include "mod_hotlimit_refusal_log.h"
#include "mod_hotlimit_names.h"
#include "mod_hotlimit_device.h"
#include "mod_hotlimit_respond.h"
#include "mod_hotlimit_shape.h"
#include "mod_hotlimit_settle.h"
#include "mod_hotlimit_stores.h"
#include "mod_hotlimit_table.h"
#include "mod_hotlimit_upgrade.h"
#include "mod_hotlimit_usage.h"
#include "hl_reserve.h"
#include "hl_route.h"
#include "hl_store.h"
#include "hl_table.h"

APLOG_USE_MODULE(hotlimit);

#define HL_MAX_MATCHES (HL_DECIDE_MAX - 1)  /* quotas; the ban's look goes
                                               before them */

typedef enum { HL_STAGE_ACCESS, HL_STAGE_FIXUPS } hl_stage_t;

#define HL_MAX_DECIDED 12  /* quotas remembered per client request */

/* A quota already decided for this client request. */
typedef struct {
    char        origin;
    const char *key;               /* in the client request's pool */
} hl_decided_t;

/* Per client request state, on its first request_rec: what later requests
 * of the chain, fixups and log_transaction need. */
typedef struct {
    int          ndecided;
    hl_decided_t decided[HL_MAX_DECIDED];
    const void  *conf;             /* what the last decision looked at: */
    const char  *uri, *args, *path_info;  /* per_dir_config, path, query */
    int          user_pending;     /* a by=user quota waits for fixups */
    int          nmatches;         /* admitted count=failures|status */
    hl_match_t  *matches;          /* HL_MAX_MATCHES, for log_transaction;
                                      made on first need (4 KiB) */
} hl_request_state_t;



/* Returns a new state for the client request top, from its pool, and
 * sets it as top's. Not inlined on purpose: its frame would cost the
 * lookups of request_state, which mostly find one. Never fails. */
static __attribute__((noinline)) hl_request_state_t *
new_request_state(request_rec *top)
{
    hl_request_state_t *state = apr_palloc(top->pool, sizeof(*state));

    state->ndecided = 0;
    state->user_pending = 0;
    state->nmatches = 0;
    state->matches = NULL;
    ap_set_module_config(top->request_config, &hotlimit_module, state);
    return state;
}

/* Returns the state of the client request r belongs to, created on first
 * use (from that request's pool), or NULL when create is 0 and there is
 * none yet. */
static hl_request_state_t *request_state(request_rec *r, int create)
{
    request_rec *top = hl_client_request(r);
    hl_request_state_t *state = ap_get_module_config(top->request_config,
                                                     &hotlimit_module);

    return state || !create ? state : new_request_state(top);
}


/* Returns 1 if a and b (either may be NULL) hold the same text: mostly
 * the very same pointer, which costs no comparison. */
static int same_text(const char *a, const char *b)
{
    if (a == b)
        return 1;
    return a && b && !strcmp(a, b);
}

/* Returns 1 if r looks at what the last decision of its client request
 * looked at (same configuration, path, query and PATH_INFO). */
static int same_as_decided(const hl_request_state_t *state,
                           const request_rec *r)
{
    return state->conf == (const void *)r->per_dir_config
           && same_text(state->uri, r->uri)
           && same_text(state->args, r->args)
           && same_text(state->path_info, r->path_info);
}

/* Records what r looks at as the last decision of its client request. */
static void remember_decided_request(hl_request_state_t *state,
                                     const request_rec *r)
{
    state->conf = r->per_dir_config;
    state->uri = r->uri;
    state->args = r->args;
    state->path_info = r->path_info;
}

/* Returns 1 if match m was already decided for this client request. */
static int already_decided(const hl_request_state_t *state,
                           const hl_match_t *m)
{
    int i;

    for (i = 0; i < state->ndecided; ++i)
        if (state->decided[i].origin == (char)m->item.origin
            && !strcmp(state->decided[i].key, m->item.key))
            return 1;
    return 0;
}

/* Remembers that match m was decided for this client request. */
static void remember_decided(hl_request_state_t *state, const hl_match_t *m)
{
    if (state->ndecided < HL_MAX_DECIDED) {
        state->decided[state->ndecided].origin = (char)m->item.origin;
        state->decided[state->ndecided].key = m->item.key;
        state->ndecided++;
    }
}



/* Returns 1 if quota q may be decided at this stage: by=user quotas wait
 * for fixups, when authentication has set REMOTE_USER; the others are
 * decided at the access checker, or at fixups when the request changed
 * (fast redirect) or the access checker did not run. */
static int decided_at(const hl_quota_t *q, hl_stage_t stage)
{
    return !q->by_user || stage == HL_STAGE_FIXUPS;
}

/* Sets the eviction class and statistics hash of match m, of origin,
 * whose scope hashes to scope_hash, counted in server sc: from dq (a
 * directive quota, NULL for table rules) in the main server, where they
 * were computed at configuration time, else computed here. */
static void match_classes(hl_match_t *m, const hl_server_conf_t *sc,
                          hl_origin_t origin, uint64_t scope_hash,
                          const hl_dir_quota_t *dq)
{
    if (dq && sc->tag_hash == 0) {
        m->item.cls = dq->main_cls;
        m->item.stats_hash = dq->main_stats_hash;
        return;
    }
    m->item.cls = hl_limiter_class_of(origin, sc->tag_hash, scope_hash);
    m->item.stats_hash = hl_limiter_class_of(0, sc->tag_hash, scope_hash);
}


/*
 * Fills match m for quota q (not copied: it must outlive the decision)
 * counted under scope (scope_len bytes, hash scope_hash) in r's server,
 * shown to clients as route; dq is the directive quota q belongs to, NULL
 * for a table rule. Builds the key "host:port" + scope + "|" + client in
 * one allocation from r->pool.
 */
static void add_match(request_rec *r, const hl_server_conf_t *sc,
                      const hl_client_t *cl, hl_match_t *m, const hl_quota_t *q,
                      const char *scope, size_t scope_len, uint64_t scope_hash,
                      const char *route, hl_origin_t origin, int dry_run,
                      const hl_dir_quota_t *dq)
{
    const hl_last_counter_t *last = &cl->last_counter;
    size_t clen, klen;
    char *key;

    m->admitted_ms = 0;
    m->refs_reused = dq && last->dq == dq && last->sc == sc;
    m->name_id = NULL;
    if (m->refs_reused) {
        /* The same client under the same quota: the same counter (kept
         * by its quota only for by=ip, keep_last_counter). */
        m->by_address = 1;
        klen = last->key_len;
        key = apr_pstrmemdup(r->pool, last->key, klen);
    }
    else {
        const char *raw = NULL;
        size_t rawlen = 0;
        const char *client = hl_key_client_part(r, q, cl, &clen, &raw, &rawlen);

        m->by_address = client == cl->key;
        /* HotLimitStatusNames: an account key (A+B keys hold more) */
        m->name_id = raw && q->by_join != HL_BY_JOIN_ALL ? client : NULL;
        m->name_value = raw;
        m->name_len = rawlen;
        /* A browser holding a device cookie for this account, earned
         * under this quota by this very spelling, counts under a key of
         * its own (mod_hotlimit_device.c); not the client address (by=ip,
         * or an absent account). */
        if (raw)
            client = hl_device_client_part(r,
                         ap_get_module_config(r->per_dir_config, &hotlimit_module),
                         sc, q, scope, scope_len, raw, rawlen, client, &clen);

        key = dq && sc->tag_len == 0
              ? hl_key_from_prefix(r, dq->main_key_prefix,
                                dq->main_key_prefix_len, client, clen, &klen)
              : hl_key_counter(r, sc, scope, scope_len, client, clen, &klen);
        /* The same counter as the one kept (a table rule, or a key from
         * a header): its text says so. */
        m->refs_reused = last->key_len == klen && last->origin == origin
                         && last->nwindows >= q->nwindows
                         && memcmp(last->key, key, klen) == 0;
    }
    if (m->refs_reused) {
        m->item.stripe = last->stripe;
        memcpy(m->item.refs, last->refs,
               sizeof(last->refs[0]) * (size_t)q->nwindows);
    }

    m->dq = dq;
    m->route = route;
    /* The key starts with the counted scope: "host:port/login|..." */
    m->scope = sc->tag_len ? apr_pstrmemdup(r->pool, key, sc->tag_len + scope_len)
                           : scope;
    m->item.quota = q;
    m->item.origin = origin;
    m->item.dry_run = dry_run;
    m->item.key = key;
    m->item.key_len = klen;
    match_classes(m, sc, origin, scope_hash, dq);
    m->item.stats_name = m->scope;
    m->item.stats_name_len = sc->tag_len + scope_len;
    m->item.peek = 0;
    m->item.exact = 0;
    m->item.reserve = 0;  /* set_reservations sets reserve= quotas' */
    m->counted_by_upgrade = 0;
    m->banned = 0;        /* set only by ban_check */
}

/* Collects the quotas applying to r at this stage into m: the table's rule
 * for it and its global bucket (hit NULL without a table), and the scope's
 * HotLimitQuota lines. The table's matches point at quotas in hit, which must
 * outlive them. Returns their number, or -1 when the table's kill switch
 * or exempt list says to admit the request untouched. */
static int collect_matches(request_rec *r, const hl_dir_conf_t *dc,
                           const hl_server_conf_t *sc, const hl_client_t *cl,
                           const hl_table_hit_t *hit, hl_stage_t stage,
                           hl_match_t *m)
{
    static uint64_t global_hash;
    const char *path_shown = NULL;
    int n = 0, i;

    if (hit) {
        if (!hit->enabled || hit->exempt)
            return -1;
        if (hit->has_rule && !decided_at(&hit->rule, stage))
            request_state(r, 1)->user_pending = 1;
        if (hit->has_rule && decided_at(&hit->rule, stage)) {
            size_t len = strlen(hit->route);
            const char *route = apr_pstrmemdup(r->pool, hit->route, len);
            const char *scope = route;
            const hl_quota_t *q = hit->plan.from
                                  ? hl_answer_plan_quota(r, hit, &scope) : NULL;
            uint64_t scope_hash = hit->route_hash;

            if (q) {
                len = strlen(scope);
                scope_hash = hl_table_route_hash(scope, len);
            }
            add_match(r, sc, cl, &m[n], q ? q : &hit->rule, scope, len,
                      scope_hash, route, HL_ORIGIN_TABLE,
                      hit->rule.dry_run >= 0 ? hit->rule.dry_run
                                             : dc->dry_run == 1, NULL);
            ++n;
        }
        if (hit->has_global && stage == HL_STAGE_ACCESS) {
            if (!global_hash)
                global_hash = hl_table_route_hash(HL_TABLE_GLOBAL_ROUTE,
                                                  strlen(HL_TABLE_GLOBAL_ROUTE));
            add_match(r, sc, cl, &m[n], &hit->global, HL_TABLE_GLOBAL_ROUTE,
                      strlen(HL_TABLE_GLOBAL_ROUTE), global_hash,
                      HL_TABLE_GLOBAL_ROUTE, HL_ORIGIN_TABLE, dc->dry_run == 1,
                      NULL);
            ++n;
        }
    }
    for (i = 0; i < dc->nquotas; ++i) {
        const hl_dir_quota_t *dq = dc->quotas[i];
        const char *shown = dq->scope;

        if (!decided_at(&dq->quota, stage)) {
            request_state(r, 1)->user_pending = 1;
            continue;
        }
        if (!dq->url_scope) {
            if (!path_shown) {
                char path[HL_ROUTE_MAX];
                hl_route_normalize(path, sizeof(path), r->uri ? r->uri : "/",
                                   r->uri ? strlen(r->uri) : 1);
                path_shown = apr_pstrdup(r->pool, path);
            }
            shown = path_shown;
        }
        add_match(r, sc, cl, &m[n], &dq->quota, dq->count_scope,
                  dq->scope_len, dq->scope_hash, shown, HL_ORIGIN_DIRECTIVE,
                  dc->dry_run == 1, dq);
        ++n;
    }
    return n;
}

/* hl_body_feed_fn over an hl_reserve_reader_t. */
static void reserve_feed(void *ctx, const char *data, size_t n)
{
    hl_reserve_reader_feed(ctx, data, n);
}

/* [reserve=] Returns the length r's Content-Length announces (0 when
 * none or invalid): the prompt of a body that was not read (not JSON, or
 * over HotLimitBodyLimit) still counts. */
static apr_off_t announced_length(request_rec *r)
{
    const char *cl = apr_table_get(r->headers_in, "Content-Length");
    apr_off_t len = 0;

    if (!cl || ap_parse_strict_length(&len, cl) != 1)
        return 0;
    return len;
}

/* [reserve=] Sets the reservation of each cost= match whose quota has
 * reserve= (hl_reserve_units; the others' stays 0, from add_match), reading a JSON body for max_tokens once,
 * all of it (mod_hotlimit_body.c: bounded memory, the spool read in
 * pieces), the prompt estimated by dc's HotLimitPromptEstimate (from the
 * announced length when the body was not read). A look (a replay counted
 * by its upgrade) reserves nothing. Never fails. */
static void set_reservations(request_rec *r, const hl_dir_conf_t *dc,
                             hl_match_t *m, int n)
{
    hl_reserve_reader_t rd;
    apr_off_t body_len = 0;
    int i, body = -1;

    for (i = 0; i < n; ++i) {
        const hl_quota_t *q = m[i].item.quota;

        if (!hl_quota_reserves(q) || m[i].item.peek)
            continue;
        if (q->reserve_max_tokens && body < 0) {
            hl_reserve_reader_init(&rd);
            body = hl_request_json_feed(r, reserve_feed, &rd, &body_len);
            if (body <= 0)
                body_len = announced_length(r);
        }
        m[i].item.reserve = hl_reserve_units(q, body > 0 ? &rd : NULL,
                                             (uint64_t)body_len,
                                             (unsigned)dc->prompt_estimate);
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r,
                      "HL01651: reserve: key=%s reserves %u",
                      ap_escape_logitem(r->pool, m[i].item.key),
                      (unsigned)m[i].item.reserve);
    }
}

/* Remembers in state the admitted count=failures|status (to give back)
 * and cost=header: (to count) matches of r's client request for
 * log_transaction; a table rule's quota is copied with its match. One
 * that does not fit is logged (HL00104), not counted. */
static void remember_after_response(request_rec *r, hl_request_state_t *state,
                                    const hl_match_t *m, int n)
{
    int i;

    for (i = 0; i < n; ++i) {
        hl_match_t *copy;

        if ((!hl_quota_after_response(m[i].item.quota)
             && !hl_quota_refunds(m[i].item.quota))
            || !m[i].item.decision.admit)
            continue;
        if (state->nmatches >= HL_MAX_MATCHES) {
            ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                          "HL00104: more than %d quotas counted after the "
                          "response in one client request: route=%s not "
                          "counted", HL_MAX_MATCHES, m[i].route);
            continue;
        }
        if (!state->matches)
            state->matches = apr_palloc(hl_client_request(r)->pool,
                                        sizeof(*state->matches) * HL_MAX_MATCHES);
        copy = &state->matches[state->nmatches++];
        *copy = m[i];
        if (!m[i].dq) {         /* a table rule's, in the caller's frame */
            copy->quota_copy = *m[i].item.quota;
            copy->item.quota = &copy->quota_copy;
        }
        if (m[i].item.quota->cost_usage)
            hl_usage_wanted(r);   /* its answer's body is read */
    }
}

/* Drops from m (n entries) the matches this client request was already
 * decided on. Returns how many are left. */
static int drop_decided(const hl_request_state_t *state, hl_match_t *m, int n)
{
    int i, kept = 0;

    for (i = 0; i < n; ++i) {
        if (already_decided(state, &m[i]))
            continue;
        if (kept != i)
            m[kept] = m[i];
        ++kept;
    }
    return kept;
}

/* The steps of a decision only some quotas need (steps_needed): the
 * usual request, under count-1 quotas keyed by the client address, takes
 * none of them. */
enum {
    HL_STEP_RESERVE = 1,   /* reserve=: units taken at admission
                              (set_reservations, hl_settle_after_decision) */
    HL_STEP_DELAY   = 2,   /* delay=: held until it conforms (hl_delay_hold) */
    HL_STEP_AFTER   = 4,   /* counted or given back after the response
                              (remember_after_response) */
    HL_STEP_NAMES   = 8    /* an account key's name (hl_names_note) */
};

/* Returns the HL_STEP_* bits the n matches of m need. Reads only. */
static unsigned steps_needed(const hl_match_t *m, int n)
{
    unsigned steps = 0;
    int i;

    for (i = 0; i < n; ++i) {
        const hl_quota_t *q = m[i].item.quota;

        if (hl_quota_reserves(q))
            steps |= HL_STEP_RESERVE;
        if (q->has_delay)
            steps |= HL_STEP_DELAY;
        if (hl_quota_after_response(q) || hl_quota_refunds(q))
            steps |= HL_STEP_AFTER;
        if (m[i].name_id)
            steps |= HL_STEP_NAMES;
    }
    return steps;
}

/* Keeps the counter of match m, just prepared, as cl's for the next
 * request, if its key fits, unless the connection's client changed at this
 * request (a proxy's connection carries many clients: keeping each would
 * cost every request and serve none). It may be found by its quota's
 * address only for a directive quota of the configuration files (an
 * .htaccess quota's address may be another's at the next request) keyed
 * by the client address alone (a header, cookie, user or parameter key
 * may differ from one request to the next); else by its key text.
 * Returns 1 if kept, else 0. */
static int keep_last_counter(hl_client_t *cl, const hl_server_conf_t *sc,
                             const hl_match_t *m)
{
    hl_last_counter_t *kept = &cl->last_counter;
    const hl_quota_t *q = m->item.quota;

    if (cl->switched || m->item.key_len >= sizeof(kept->key))
        return 0;
    kept->dq = m->dq && m->dq->lasting && q->by == HL_BY_IP ? m->dq : NULL;
    kept->sc = sc;
    kept->key_len = m->item.key_len;
    memcpy(kept->key, m->item.key, m->item.key_len);
    kept->origin = m->item.origin;
    kept->nwindows = q->nwindows;
    kept->stripe = m->item.stripe;
    memcpy(kept->refs, m->item.refs, sizeof(kept->refs[0]) * (size_t)q->nwindows);
    return 1;
}

/* Copies into cl's kept counter where the decision of match m, the kept
 * one, found its slots: the next decision looks there first. */
static void keep_hints(hl_client_t *cl, const hl_match_t *m)
{
    int w;

    for (w = 0; w < m->item.quota->nwindows && w < cl->last_counter.nwindows;
         ++w)
        cl->last_counter.refs[w].hint = m->item.refs[w].hint;
}

/* Marks counted_by_upgrade the matches of m (n) that the HTTP/1.1
 * request r replays as an HTTP/2 stream was counted under (h2c upgrade):
 * the note is on the master connection's client record. */
static void claim_counted_by_upgrade(request_rec *r, hl_match_t *m, int n)
{
    const conn_rec *c1 = r->connection->master;
    const hl_client_t *master = ap_get_module_config(c1->conn_config,
                                                     &hotlimit_module);

    if (master)
        hl_upgrade_claim(c1, master->upgrade, m, n);
}

/* What limit_request's kept holds when it is no match's index (the
 * match whose counter the connection keeps, keep_last_counter). */
enum {
    HL_KEPT_NONE_YET = -1,     /* no match reuses the kept counter: the
                                  first one prepared is offered */
    HL_KEPT_DECLINED = -2      /* that one was not kept (too long a key,
                                  or the client switched): no other is
                                  offered at this request */
};

/* Runs the whole decision for r at one stage. Returns DECLINED, or the
 * 429 outcome (DONE / HTTP_TOO_MANY_REQUESTS). */
static int limit_request(request_rec *r, hl_stage_t stage)
{
    const hl_dir_conf_t *dc;
    const hl_server_conf_t *sc;
    hl_client_t *cl;
    const hl_store_t *store;
    hl_match_t m[HL_MAX_MATCHES], banned, *ban_m = NULL;
    hl_decide_item_t *all[HL_MAX_MATCHES + 1], **items;
    hl_table_hit_t hit;
    const hl_table_hit_t *table = NULL;
    const hl_ban_t *ban;
    hl_request_state_t *state;
    int n, i, admit, primary, kept;
    unsigned steps;
    int64_t now_ms;

    /* Subrequests are lookups, not served (a fast redirect is decided at
     * fixups); the ErrorDocument of our own 429 is not a new attempt. */
    if (r->main || (r->prev && r->prev->status == HTTP_TOO_MANY_REQUESTS))
        return DECLINED;
    if ((n = hl_body_refusal(r)) != DECLINED)
        return n;            /* a body read by <If> or SetEnvIfExpr */
    dc = ap_get_module_config(r->per_dir_config, &hotlimit_module);
    sc = ap_get_module_config(r->server->module_config, &hotlimit_module);
    /* HotLimitStatus On: the status handler's scope is never limited or
     * banned (an operator under attack must reach it). */
    if (!dc || dc->engine == 0 || dc->status > 0
        || (dc->nquotas == 0 && !hl_table_configured() && !sc->ban))
        return DECLINED;
    state = request_state(r, 1);
    remember_decided_request(state, r);
    state->user_pending = 0;
    cl = hl_key_client_of(r, sc);
    if (hl_key_client_exempt(r, sc, cl->ok ? &cl->addr : NULL))
        return DECLINED;
    if (hl_table_configured())
        table = hl_answer_of(r, dc, cl, &hit);
    ban = hl_ban_gate_of(sc, table);
    if (ban && stage == HL_STAGE_ACCESS && dc->dry_run != 1)
        ban_m = &banned;
    n = collect_matches(r, dc, sc, cl, table, stage, m);
    if ((i = hl_body_refusal(r)) != DECLINED)
        return i;            /* a body read for a param: route or key */
    if (n > 0 && state->ndecided > 0)   /* none yet at the first decision */
        n = drop_decided(state, m, n);
    if (n < 0 || (n == 0 && !ban_m))
        return DECLINED;
    if (n > 0 && r->connection->master)
        claim_counted_by_upgrade(r, m, n);
    steps = steps_needed(m, n);
    if (steps & HL_STEP_RESERVE) {
        set_reservations(r, dc, m, n);
        if ((i = hl_body_refusal(r)) != DECLINED)
            return i;        /* a body read for reserve=max_tokens */
    }

    /* Everything is built; the store's critical section only counts. The
     * look at the client's ban, if any, goes first: a banned client's
     * request is refused by it before any quota is asked (hl_decide.h). */
    store = hl_store_get();
    items = ban_m ? all + 1 : all;
    for (i = 0, kept = HL_KEPT_NONE_YET; i < n; ++i)
        if (m[i].refs_reused && kept < 0)
            kept = i;
    for (i = 0; i < n; ++i) {
        items[i] = &m[i].item;
        if (!m[i].refs_reused) {
            store->ops->prepare(store->ctx, items[i]);
            /* One counter is kept: the first, unless one was found kept
             * (two would take each other's place at every request). */
            if (kept == HL_KEPT_NONE_YET)
                kept = keep_last_counter(cl, sc, &m[i]) ? i
                                                        : HL_KEPT_DECLINED;
        }
    }
    if (ban_m) {
        /* Asked with the quotas, in the same call (one round trip to a
         * remote store). */
        hl_ban_gate_look(r, sc, ban, cl, ban_m);
        store->ops->prepare(store->ctx, &ban_m->item);
        all[0] = &ban_m->item;
    }
    now_ms = hl_mono_ms();
    admit = store->ops->decide(store->ctx, all, n + (ban_m != NULL), now_ms);
    if (admit == -2 && n > 0)
        return HTTP_SERVICE_UNAVAILABLE;  /* HotLimitStoreFailure closed */
    if (admit < 0)
        return DECLINED;     /* the store could not answer: logged, admit
                                (a route without a quota: never a 503) */
    if (ban_m && !ban_m->item.decision.admit)
        return hl_ban_gate_refuse(r, ban_m);
    if (n == 0)
        return DECLINED;     /* only the ban was asked about */

    if (kept >= 0)
        keep_hints(cl, &m[kept]);
    if (cl->fresh) {            /* with the hints just found */
        hl_key_client_keep(cl, sc);
        cl->fresh = 0;
    }
    for (i = 0; i < n; ++i) {
        remember_decided(state, &m[i]);
        hl_upgrade_settle(&m[i]);
    }
    if (steps & HL_STEP_RESERVE)
        hl_settle_after_decision(r, m, n, now_ms);
    primary = n == 1 ? 0 : hl_decide_primary(items, n);  /* one is its own */
    hl_respond_annotate(r, m, n, primary,
                        (dc->headers & HL_HEADERS_DRAFT) != 0);
    if (dc->headers & HL_HEADERS_PROVIDERS)
        hl_shape_put_headers(r, m, n, (unsigned)dc->headers);
    for (i = 0; i < n; ++i)
        if (!m[i].item.decision.admit)
            hl_refusal_log(r, &m[i], dc->log_refusals, m[i].by_address);
    if (steps & HL_STEP_NAMES)  /* the accounts refused or at their limit */
        hl_names_note(r, m, n);
    if (!admit) {
        if (ban)
            hl_ban_gate_note_refusal(r, sc, ban, cl, m, n);
        return hl_respond_reject(r, &m[primary]);
    }
    if ((steps & HL_STEP_DELAY) && (i = hl_delay_hold(r, m, n)) != DECLINED)
        return i;            /* delay=: held until it conforms (issue 26) */
    if (steps & HL_STEP_AFTER)
        remember_after_response(r, state, m, n);
    hl_upgrade_note(r, &cl->upgrade, m, n);
    return DECLINED;
}

/* Gives an internal redirect (mod_rewrite to a front controller,
 * ErrorDocument) the variables of the request it came from, without
 * REDIRECT_, once: a decision of its own replaces them. httpd skips the
 * access checker of a redirect whose configuration is the same, so the
 * fixups hook calls this too. */
static void inherit_variables(request_rec *r)
{
    static const char *const names[] = {
        "HOTLIMIT_ROUTE", "HOTLIMIT_LIMIT", "HOTLIMIT_REMAINING", NULL };
    int i;

    if (!r->prev || r->main || apr_table_get(r->subprocess_env, names[0]))
        return;
    for (i = 0; names[i]; ++i) {
        const char *v = apr_table_get(r->subprocess_env,
                        apr_pstrcat(r->pool, "REDIRECT_", names[i], NULL));
        if (v)
            apr_table_setn(r->subprocess_env, names[i], v);
    }
}

int hl_access_checker(request_rec *r)
{
    inherit_variables(r);
    return limit_request(r, HL_STAGE_ACCESS);
}

/* Returns 1 if the fixups hook has nothing to decide for r: its client
 * request was decided on what r looks at now (no fast redirect since) and
 * no by=user quota waits for REMOTE_USER. Reads no configuration, so the
 * usual request leaves fixups at once. */
static int decided_as_is(request_rec *r)
{
    const hl_request_state_t *state = request_state(r, 0);

    return state && same_as_decided(state, r) && !state->user_pending;
}

int hl_fixups(request_rec *r)
{
    inherit_variables(r);
    if (decided_as_is(r))
        return DECLINED;
    return limit_request(r, HL_STAGE_FIXUPS);
}

/* Returns what the response of last (the final request of the chain)
 * costs under the quota of match m: 1, or for cost=header:NAME the
 * integer its header NAME carries (headers_out, then err_headers_out;
 * capped at HL_COST_MAX), or for cost=usage the tokens its body reported
 * (hl_usage_response_cost). A missing or invalid cost charges the
 * reservation: m's reserve= units, else 1. */
static uint32_t response_cost(request_rec *last, const hl_match_t *m)
{
    const hl_quota_t *q = m->item.quota;
    uint32_t missing = m->item.reserve ? m->item.reserve : 1;
    const char *v;

    if (q->cost_usage)          /* cost=usage (issue 19) */
        return hl_usage_response_cost(last, missing);
    if (!q->cost_name[0])
        return 1;
    v = apr_table_get(last->headers_out, q->cost_name);
    if (!v)
        v = apr_table_get(last->err_headers_out, q->cost_name);
    return hl_cost_parse_or(v, missing);
}

/* Gives back the unit match m took when r was admitted, its final status
 * (status) not being one its quota counts. A store that cannot answer has
 * logged why; the unit then stays counted (a refusal too many, never an
 * attempt too many). */
static void refund(request_rec *r, const hl_store_t *store,
                   const hl_match_t *m, int status)
{
    int given = store->ops->refund(store->ctx, &m->item, hl_mono_ms());

    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r,
                  "HL01300: status %d not counted: %s key=%s given back "
                  "in %d of %d windows", status,
                  given < 0 ? "store unavailable," : "unit",
                  ap_escape_logitem(r->pool, m->item.key), given < 0 ? 0 : given,
                  m->item.quota->nwindows);
}

/* [reserve=] Settles the reservation match m took when r was admitted to
 * the request's real cost (0 when its final status is not counted). A
 * store that cannot answer has logged why; the reservation then stays
 * charged (never an overspend). */
static void settle(request_rec *r, const hl_store_t *store,
                   const hl_match_t *m, uint32_t cost)
{
    int64_t now_ms = hl_mono_ms();
    int touched = store->ops->settle(store->ctx, &m->item, cost, now_ms);

    hl_settle_note(m, now_ms);

    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r,
                  "HL01652: reserve settled: key=%s reserved %u, cost %u%s "
                  "(%d of %d windows)",
                  ap_escape_logitem(r->pool, m->item.key),
                  (unsigned)m->item.reserve, (unsigned)cost,
                  touched < 0 ? ", store unavailable" : "",
                  touched < 0 ? 0 : touched, m->item.quota->nwindows);
}

/* Counts, gives back or settles the matches state kept for r's client
 * request (remember_after_response) by the final status of its chain.
 * Not inlined on purpose: its frame would cost every request, most of
 * which keep none. Never fails (a store that cannot answer has logged
 * why). */
static __attribute__((noinline)) void count_after_response(
    request_rec *r, const hl_request_state_t *state)
{
    request_rec *last = r;
    const hl_store_t *store;
    int i;

    while (last->next)
        last = last->next;
    /* A 101 to h2c: the HTTP/2 replay of this request has the response,
     * and counts it. */
    if (hl_upgrade_switched(last))
        return;
    store = hl_store_get();
    for (i = 0; i < state->nmatches; ++i) {
        hl_match_t *m = &state->matches[i];
        int counted = hl_quota_counts_status(m->item.quota, last->status);

        if (hl_quota_refunds(m->item.quota)) {
            /* Its unit was taken at admission: kept if counted. */
            if (!counted)
                refund(r, store, m, last->status);
        }
        else if (m->item.reserve > 0)
            settle(r, store, m, counted ? response_cost(last, m) : 0);
        else if (counted)
            store->ops->count(store->ctx, &m->item,
                              response_cost(last, m), hl_mono_ms());
    }
}

int hl_log_transaction(request_rec *r)
{
    const hl_request_state_t *state = ap_get_module_config(r->request_config,
                                                           &hotlimit_module);

    if (state && state->nmatches > 0)
        count_after_response(r, state);
    return DECLINED;
}
