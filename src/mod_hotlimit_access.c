/*
 * mod_hotlimit_access.c - the decision, at the access-checker stage
 * (before Require, authentication and any handler), for every request of
 * the chain a client request goes through.
 *
 * 1. Collect the quotas that apply: the scope's HotLimitQuota and the
 *    quota table's rule for the request's route and its global bucket.
 * 2. Skip exempt clients (HotLimitExempt, env hotlimit-exempt).
 * 3. Build each key "scope|client".
 * 4. Under the global mutex, taken once: look the route up in the quota
 *    table, drop the quotas this client request has already been decided
 *    on, decide the rest, count the request only if every non-dry-run
 *    quota admits it, update the per-route statistics.
 * 5. After unlocking: environment, RateLimit headers, logging, the 429.
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
 * count=failures|status quotas are decided like the others but counted in
 * the log_transaction hook, once the final status is known.
 */
#include <string.h>

#include "httpd.h"
#include "http_config.h"
#include "http_core.h"
#include "http_log.h"
#include "http_request.h"
#include "httpd.h"
#include "apr_strings.h"

#include "mod_hotlimit.h"
#include "hl_php.h"
#include "hl_route.h"
#include "hl_table.h"

APLOG_USE_MODULE(hotlimit);

#define HL_MAX_MATCHES 3
#define HL_HASH_SEED   0x686f746c696d6974ULL  /* "hotlimit": keys stay stable */

typedef enum { HL_STAGE_ACCESS, HL_STAGE_FIXUPS } hl_stage_t;

/* Per client request state, on its first request_rec: what later requests
 * of the chain, fixups and log_transaction need. */
typedef struct {
    apr_array_header_t *decided;   /* of const char *: origin + key of every
                                      quota decided for this client request */
    const void *conf;              /* what the last decision looked at: */
    const char *uri, *args, *path_info;  /* per_dir_config, path, query */
    int         user_pending;      /* a by=user quota waits for fixups */
    int         nmatches;          /* admitted count=failures|status */
    hl_match_t  matches[HL_MAX_MATCHES];  /* matches, for log_transaction */
} hl_pending_t;

/* Returns the request the client sent: r walked up through internal
 * redirects (prev) and subrequests (main). Never NULL. */
static request_rec *client_request(request_rec *r)
{
    while (r->main || r->prev)
        r = r->main ? r->main : r->prev;
    return r;
}

/* Returns the state of the client request r belongs to, created on first
 * use (from that request's pool), or NULL when create is 0 and there is
 * none yet. */
static hl_pending_t *request_state(request_rec *r, int create)
{
    request_rec *top = client_request(r);
    hl_pending_t *p = ap_get_module_config(top->request_config,
                                           &hotlimit_module);
    if (!p && create) {
        p = apr_pcalloc(top->pool, sizeof(*p));
        p->decided = apr_array_make(top->pool, 4, sizeof(const char *));
        ap_set_module_config(top->request_config, &hotlimit_module, p);
    }
    return p;
}

/* Returns 1 if r looks at what the last decision of its client request
 * looked at (same configuration, path, query and PATH_INFO). */
static int same_as_decided(const hl_pending_t *p, const request_rec *r)
{
    return p->conf == (const void *)r->per_dir_config
           && !strcmp(p->uri, r->uri ? r->uri : "")
           && !strcmp(p->args, r->args ? r->args : "")
           && !strcmp(p->path_info, r->path_info ? r->path_info : "");
}

/* Records what r looks at as the last decision of its client request. */
static void remember_decided_request(hl_pending_t *p, const request_rec *r)
{
    p->conf = r->per_dir_config;
    p->uri = r->uri ? r->uri : "";
    p->args = r->args ? r->args : "";
    p->path_info = r->path_info ? r->path_info : "";
}

/* Returns the identity of match m for the decided list: origin + key,
 * allocated from pool. */
static const char *decided_id(apr_pool_t *pool, const hl_match_t *m)
{
    char origin[2] = { (char)m->origin, 0 };
    return apr_pstrcat(pool, origin, m->key, NULL);
}

/* Returns 1 if match m was already decided for this client request. */
static int already_decided(const hl_pending_t *p, const hl_match_t *m)
{
    int i;

    for (i = 0; i < p->decided->nelts; ++i) {
        const char *id = APR_ARRAY_IDX(p->decided, i, const char *);
        if (id[0] == (char)m->origin && !strcmp(id + 1, m->key))
            return 1;
    }
    return 0;
}

/* Returns 1 if the client of r (address ip, NULL if unparsable) is exempt
 * from every limit: env hotlimit-exempt, or HotLimitExempt. */
static int client_exempt(request_rec *r, const hl_server_conf_t *sc,
                         const hl_cidr_t *ip)
{
    int i;

    if (apr_table_get(r->subprocess_env, "hotlimit-exempt"))
        return 1;
    if (!sc->exempt || !ip)
        return 0;
    for (i = 0; i < sc->exempt->nelts; ++i)
        if (hl_cidr_match(&APR_ARRAY_IDX(sc->exempt, i, hl_cidr_t), ip))
            return 1;
    return 0;
}

/* Returns "<prefix>:" and 16 hex digits of a hash of value: secrets such
 * as Authorization headers or session cookies never reach shared memory,
 * logs or the status page in clear. Allocated from r->pool. */
static const char *hashed_value(request_rec *r, char prefix, const char *value,
                                size_t len)
{
    return apr_psprintf(r->pool, "%c:%016" APR_UINT64_T_HEX_FMT, prefix,
                        (apr_uint64_t)hl_hash64(value, len, HL_HASH_SEED));
}

/* Returns the client part of the key for quota q, falling back to the
 * client address when the named header, cookie, user or variable is
 * absent. Allocated from r->pool; never NULL. */
static const char *client_part(request_rec *r, const hl_quota_t *q,
                               const hl_server_conf_t *sc, const hl_cidr_t *ip)
{
    int prefix = sc->ipv6_prefix != HL_UNSET ? sc->ipv6_prefix : 64;
    const char *v;
    char buf[HL_KEY_MAX + 1];
    long n;

    switch (q->by) {
    case HL_BY_GLOBAL:
        return "*";
    case HL_BY_USER:
        if (r->user && *r->user)
            return apr_pstrcat(r->pool, "u:", r->user, NULL);
        break;
    case HL_BY_HEADER:
        v = apr_table_get(r->headers_in, q->by_name);
        if (v && *v)
            return hashed_value(r, 'h', v, strlen(v));
        break;
    case HL_BY_COOKIE:
        v = apr_table_get(r->headers_in, "Cookie");
        if (v) {
            size_t size = strlen(v) + 1;
            char *val = apr_palloc(r->pool, size);
            n = hl_cookie_value(val, size, v, q->by_name);
            if (n > 0)
                return hashed_value(r, 'c', val, (size_t)n);
        }
        break;
    case HL_BY_ENV:
        v = apr_table_get(r->subprocess_env, q->by_name);
        if (v && *v)
            return apr_pstrcat(r->pool, "e:", v, NULL);
        break;
    case HL_BY_IP:
    default:
        break;
    }
    if (ip)
        hl_client_key_of(buf, ip, prefix);
    else
        hl_client_key(buf, r->useragent_ip ? r->useragent_ip : "-", prefix);
    return apr_pstrdup(r->pool, buf);
}

/* Returns 1 if quota q may be decided at this stage: by=user quotas wait
 * for fixups, when authentication has set REMOTE_USER; the others are
 * decided at the access checker, or at fixups when the request changed
 * (fast redirect) or the access checker did not run. */
static int decided_at(const hl_quota_t *q, hl_stage_t stage)
{
    return q->by != HL_BY_USER || stage == HL_STAGE_FIXUPS;
}

/* Writes the route of r used for table lookups into buf (HL_ROUTE_MAX
 * bytes): the normalised path, or a query argument or PATH_INFO when
 * HotLimitRouteFrom says so and it is present. */
static void request_route(request_rec *r, const hl_dir_conf_t *dc, char *buf)
{
    if (dc->route_from == HL_ROUTE_FROM_QUERY && r->args) {
        char arg[HL_ROUTE_MAX];
        long n = hl_query_arg(arg, sizeof(arg), r->args, dc->route_arg);
        if (n > 0) {
            hl_route_from_name(buf, HL_ROUTE_MAX, arg, (size_t)n);
            return;
        }
    }
    else if (dc->route_from == HL_ROUTE_FROM_PATH_INFO && r->path_info
             && r->path_info[0] && strcmp(r->path_info, "/")) {
        hl_route_normalize(buf, HL_ROUTE_MAX, r->path_info, strlen(r->path_info));
        return;
    }
    hl_route_normalize(buf, HL_ROUTE_MAX, r->uri ? r->uri : "/",
                       r->uri ? strlen(r->uri) : 1);
}

/* Returns "host:port" of a virtual host, "" for the main server: the
 * prefix that keeps two sites' counters apart. Allocated from r->pool. */
static const char *server_tag(request_rec *r)
{
    if (!r->server->is_virtual)
        return "";
    return apr_psprintf(r->pool, "%s:%u",
                        r->server->server_hostname ? r->server->server_hostname : "",
                        r->server->addrs ? (unsigned)r->server->addrs->host_port
                                         : (unsigned)r->server->port);
}

/* Adds a match for quota q to m[*n]: counted under scope, shown as route. */
static void add_match(request_rec *r, hl_match_t *m, int *n,
                      const hl_quota_t *q, const char *scope,
                      const char *route, hl_origin_t origin, int dry_run)
{
    const char *tag = server_tag(r);

    memset(&m[*n], 0, sizeof(m[*n]));
    m[*n].quota = *q;
    m[*n].route = route;
    m[*n].scope = *tag ? apr_pstrcat(r->pool, tag, scope, NULL) : scope;
    m[*n].origin = origin;
    m[*n].dry_run = dry_run;
    ++*n;
}

/* Collects the quotas applying to r at this stage into m (the scope's
 * HotLimitQuota, the table's rule for route and its global bucket; route is
 * NULL without a table); the caller holds the store lock. Returns their number, or -1 when the table's kill switch
 * or exempt list says to admit the request untouched. */
static int collect_matches(request_rec *r, const hl_dir_conf_t *dc,
                           const char *route, const hl_cidr_t *ip,
                           hl_stage_t stage, hl_match_t *m)
{
    int n = 0;

    if (route) {
        hl_table_hit_t hit;

        if (hl_table_find(r, route, ip, &hit)) {
            if (!hit.enabled || hit.exempt)
                return -1;
            if (hit.has_rule && !decided_at(&hit.rule, stage))
                request_state(r, 1)->user_pending = 1;
            if (hit.has_rule && decided_at(&hit.rule, stage))
                add_match(r, m, &n, &hit.rule, hit.route, hit.route,
                          HL_ORIGIN_TABLE, hit.rule.dry_run >= 0
                          ? hit.rule.dry_run : dc->dry_run == 1);
            if (hit.has_global && stage == HL_STAGE_ACCESS)
                add_match(r, m, &n, &hit.global, HL_TABLE_GLOBAL_ROUTE,
                          HL_TABLE_GLOBAL_ROUTE, HL_ORIGIN_TABLE,
                          dc->dry_run == 1);
        }
    }
    if (dc->quota && !decided_at(&dc->quota->quota, stage))
        request_state(r, 1)->user_pending = 1;
    if (dc->quota && decided_at(&dc->quota->quota, stage)) {
        const char *shown = dc->quota->scope;
        if (!dc->quota->url_scope) {
            char path[HL_ROUTE_MAX];
            hl_route_normalize(path, sizeof(path), r->uri ? r->uri : "/",
                               r->uri ? strlen(r->uri) : 1);
            shown = apr_pstrdup(r->pool, path);
        }
        add_match(r, m, &n, &dc->quota->quota, dc->quota->scope, shown,
                  HL_ORIGIN_DIRECTIVE, dc->dry_run == 1);
        m[n - 1].names = dc->quota->names;
        m[n - 1].policy_header = dc->quota->policy_header;
    }
    return n;
}

/* Logs the rejection (or would-be rejection under dry run) of match m. */
static void log_rejection(request_rec *r, const hl_match_t *m)
{
    const char *ua = apr_table_get(r->headers_in, "User-Agent");
    char name[48];
    int i, w = 0;

    for (i = 0; i < m->decision.nwindows; ++i)
        if (!m->decision.windows[i].admit) {
            w = i;
            break;
        }
    ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                  "%s: %s client=%s route=%s key=%s limit=%s "
                  "retry_after=%ld user_agent=\"%s\"",
                  m->dry_run ? "HL00101" : "HL00100",
                  m->dry_run ? "dry run, would reject" : "rejected",
                  r->useragent_ip, m->route, ap_escape_logitem(r->pool, m->key),
                  hl_window_name(&m->quota.windows[w], name, sizeof(name)),
                  m->decision.retry_after_s,
                  ua ? ap_escape_logitem(r->pool, ua) : "-");
}

/* Returns the match whose headers and environment describe the request:
 * a rejecting one first, else the one with the least remaining. */
static const hl_match_t *primary_match(const hl_match_t *m, int n)
{
    int i, best = 0;
    for (i = 0; i < n; ++i) {
        if (!m[i].decision.admit && !m[i].dry_run)
            return &m[i];
        if (m[i].decision.remaining < m[best].decision.remaining)
            best = i;
    }
    return &m[best];
}

/* Decides the matches; the caller holds the store lock. Returns 1 if the
 * request is admitted (dry-run matches never reject), 0 if rejected. */
static int decide_locked(hl_slots_t *slots, hl_shared_t *shared,
                         hl_match_t *m, int n, int64_t now)
{
    int admit = 1, i;

    for (i = 0; i < n; ++i) {
        /* One quota that counts every request: decide and count at once. */
        int commit = n == 1 && m[i].quota.count == HL_COUNT_ALL;
        hl_limiter_decide(slots, &m[i].quota, m[i].origin, m[i].key,
                          strlen(m[i].key), strlen(m[i].scope), now, commit,
                          &m[i].decision);
        if (!m[i].decision.admit && !m[i].dry_run)
            admit = 0;
    }
    if (n > 1 && admit) {
        for (i = 0; i < n; ++i)
            if (m[i].decision.admit && m[i].quota.count == HL_COUNT_ALL)
                hl_limiter_count(slots, &m[i].quota, m[i].origin, m[i].key,
                                 strlen(m[i].key), strlen(m[i].scope), now);
    }
    for (i = 0; i < n; ++i)
        hl_stats_add(&shared->stats, m[i].scope,
                     m[i].decision.admit ? HL_DECISION_ADMITTED
                     : m[i].dry_run ? HL_DECISION_DRY_RUN
                     : HL_DECISION_REJECTED);
    return admit;
}

/* Remembers admitted count=failures|status matches for log_transaction. */
static void remember_pending(request_rec *r, const hl_match_t *m, int n)
{
    hl_pending_t *p;
    int i;

    for (i = 0; i < n; ++i) {
        if (m[i].quota.count == HL_COUNT_ALL || !m[i].decision.admit)
            continue;
        p = request_state(r, 1);
        if (p->nmatches < HL_MAX_MATCHES)
            p->matches[p->nmatches++] = m[i];
    }
}

/* Drops from m (n entries) the matches this client request was already
 * decided on. Returns how many are left. */
static int drop_decided(const hl_pending_t *p, hl_match_t *m, int n)
{
    int i, kept = 0;

    for (i = 0; i < n; ++i)
        if (!already_decided(p, &m[i]))
            m[kept++] = m[i];
    return kept;
}

/* Runs the whole decision for r at one stage. Returns DECLINED, or the
 * 429 outcome (DONE / HTTP_TOO_MANY_REQUESTS). */
static int limit_request(request_rec *r, hl_stage_t stage)
{
    const hl_dir_conf_t *dc;
    const hl_server_conf_t *sc;
    hl_match_t m[HL_MAX_MATCHES];
    const hl_match_t *primary;
    hl_pending_t *state;
    hl_cidr_t addr, *ip = &addr;
    hl_slots_t *slots;
    hl_shared_t *shared;
    char route_buf[HL_ROUTE_MAX], *route = NULL;
    int n, i, admit;

    /* Subrequests are lookups, not served (a fast redirect is decided at
     * fixups); the ErrorDocument of our own 429 is not a new attempt. */
    if (r->main || (r->prev && r->prev->status == HTTP_TOO_MANY_REQUESTS))
        return DECLINED;
    dc = ap_get_module_config(r->per_dir_config, &hotlimit_module);
    if (!dc || dc->engine == 0 || (!dc->quota && !hl_table_configured()))
        return DECLINED;
    state = request_state(r, stage == HL_STAGE_ACCESS);
    if (stage == HL_STAGE_FIXUPS && state && same_as_decided(state, r)
        && !state->user_pending)
        return DECLINED;
    if (!state)
        state = request_state(r, 1);
    remember_decided_request(state, r);
    state->user_pending = 0;
    sc = ap_get_module_config(r->server->module_config, &hotlimit_module);
    if (!r->useragent_ip || hl_ip_parse(r->useragent_ip, &addr) != 0)
        ip = NULL;
    if (client_exempt(r, sc, ip))
        return DECLINED;
    if (hl_table_configured())
        request_route(r, dc, route = route_buf);
    /* One critical section per request: table lookup, keys, decision. A
     * store that cannot be locked admits (logged by the store). */
    if (hl_store_lock(r->server, &slots, &shared) != APR_SUCCESS)
        return DECLINED;
    n = collect_matches(r, dc, route, ip, stage, m);
    for (i = 0; i < n; ++i)
        m[i].key = apr_pstrcat(r->pool, m[i].scope, "|",
                               client_part(r, &m[i].quota, sc, ip), NULL);
    if (n > 0)
        n = drop_decided(state, m, n);
    if (n <= 0) {
        hl_store_unlock(r->server);
        return DECLINED;
    }
    admit = decide_locked(slots, shared, m, n, hl_mono_ms());
    hl_store_unlock(r->server);

    for (i = 0; i < n; ++i)
        APR_ARRAY_PUSH(state->decided, const char *) =
            decided_id(client_request(r)->pool, &m[i]);
    primary = primary_match(m, n);
    hl_respond_annotate(r, primary, dc->headers != 0);
    for (i = 0; i < n; ++i)
        if (!m[i].decision.admit)
            log_rejection(r, &m[i]);
    if (!admit)
        return hl_respond_reject(r, primary);
    remember_pending(r, m, n);
    return DECLINED;
}

int hl_access_checker(request_rec *r)
{
    /* An internal redirect (mod_rewrite to a front controller, ErrorDocument)
     * gets the variables of the request it came from without REDIRECT_;
     * its own decision below replaces them if it has quotas left. */
    if (r->prev && !r->main) {
        static const char *const names[] = {
            "HOTLIMIT_ROUTE", "HOTLIMIT_LIMIT", "HOTLIMIT_REMAINING", NULL };
        int i;
        for (i = 0; names[i]; ++i) {
            const char *v = apr_table_get(r->subprocess_env,
                            apr_pstrcat(r->pool, "REDIRECT_", names[i], NULL));
            if (v)
                apr_table_setn(r->subprocess_env, names[i], v);
        }
    }
    return limit_request(r, HL_STAGE_ACCESS);
}

int hl_fixups(request_rec *r)
{
    return limit_request(r, HL_STAGE_FIXUPS);
}

int hl_log_transaction(request_rec *r)
{
    hl_pending_t *p = ap_get_module_config(r->request_config, &hotlimit_module);
    const request_rec *last = r;
    hl_slots_t *slots;
    hl_shared_t *shared;
    int i, counted = 0;

    if (!p || p->nmatches == 0)
        return DECLINED;
    while (last->next)
        last = last->next;
    for (i = 0; i < p->nmatches; ++i)
        counted |= hl_quota_counts_status(&p->matches[i].quota, last->status);
    if (!counted || hl_store_lock(r->server, &slots, &shared) != APR_SUCCESS)
        return DECLINED;
    for (i = 0; i < p->nmatches; ++i) {
        hl_match_t *m = &p->matches[i];
        if (hl_quota_counts_status(&m->quota, last->status))
            hl_limiter_count(slots, &m->quota, m->origin, m->key,
                             strlen(m->key), strlen(m->scope), hl_mono_ms());
    }
    hl_store_unlock(r->server);
    return DECLINED;
}
