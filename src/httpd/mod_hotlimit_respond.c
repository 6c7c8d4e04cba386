/*
 * mod_hotlimit_respond.c - what a limited route's responses carry: the
 * environment for CustomLog and PHP, the RateLimit headers, and the 429
 * itself with its body chosen by content negotiation.
 */
#include <string.h>
#include <strings.h>

#include "httpd.h"
#include "http_config.h"
#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "mod_core.h"
#include "apr_strings.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_respond.h"
#include "hl_negotiate.h"
#include "hl_render.h"
#include "hl_shape.h"
#include "mod_hotlimit_shape.h"
#include "hl_fmt.h"

APLOG_USE_MODULE(hotlimit);

/* Returns the views of m's windows, allocated from r->pool: the 429 body
 * and a table rule's headers (no precomputed texts) need them. */
static hl_policy_view_t *policy_views(request_rec *r, const hl_match_t *m)
{
    const hl_quota_t *q = m->item.quota;
    const hl_decision_t *d = &m->item.decision;
    hl_policy_view_t *v = apr_pcalloc(r->pool, sizeof(*v) * HL_MAX_WINDOWS);
    int i;

    hl_render_quota_views(r->pool, q, m->dq ? m->dq->names : NULL, v);
    for (i = 0; i < q->nwindows; ++i) {
        v[i].remaining = d->windows[i].remaining;
        v[i].reset_s = hl_decide_reset_s(d, i);
        v[i].reset_ms = d->windows[i].admit ? d->windows[i].reset_ms
                                            : d->windows[i].retry_ms;
        if (v[i].reset_ms < 0)
            v[i].reset_ms = 0;
        v[i].violated = !d->windows[i].admit;
    }
    return v;
}

hl_policy_view_t *hl_respond_views(request_rec *r, const hl_match_t *m)
{
    return policy_views(r, m);
}

/*
 * The texts of a table rule's quota (RateLimit-Policy, each window's
 * RateLimit start and COUNT), rendered once per thread and quota shape: a
 * directive quota has them from configuration time, a table rule would
 * otherwise render them at every request. Per thread, so no lock; a
 * request copies what it keeps into its pool.
 */
#define HL_RENDER_CACHE 8

typedef struct {
    uint64_t key;                           /* quota_key, 0 = empty */
    char     policy[HL_MAX_WINDOWS * 64];
    char     prefix[HL_MAX_WINDOWS][48];
    size_t   prefix_len[HL_MAX_WINDOWS];
    char     limit[HL_MAX_WINDOWS][HL_FMT_U64_MAX];
} hl_rendered_t;

static __thread hl_rendered_t rendered[HL_RENDER_CACHE];

/* Returns a nonzero key naming what the texts of q depend on: its
 * windows' counts and lengths. */
static uint64_t quota_key(const hl_quota_t *q)
{
    uint64_t k = (uint64_t)q->nwindows * 0x9e3779b97f4a7c15ULL;
    int i;

    for (i = 0; i < q->nwindows; ++i)
        k = (k ^ (((uint64_t)q->windows[i].count << 32)
                  | q->windows[i].window_ms)) * 0xbf58476d1ce4e5b9ULL;
    return k | 1;
}

/* Returns the rendered texts of q (this thread's cache; valid until this
 * thread renders another quota into the same entry), rendering them from
 * r->pool when missing; NULL when a text does not fit the entry. */
static const hl_rendered_t *rendered_texts(request_rec *r, const hl_quota_t *q)
{
    uint64_t key = quota_key(q);
    hl_rendered_t *e = &rendered[key % HL_RENDER_CACHE];
    hl_policy_view_t v[HL_MAX_WINDOWS];
    const char *text;
    int i;

    if (e->key == key)
        return e;
    e->key = 0;
    hl_render_quota_views(r->pool, q, NULL, v);
    for (i = 0; i < q->nwindows; ++i) {
        text = hl_render_ratelimit_prefix(r->pool, v[i].name);
        if (strlen(text) >= sizeof(e->prefix[i]))
            return NULL;
        strcpy(e->prefix[i], text);
        e->prefix_len[i] = strlen(text);
        apr_cpystrn(e->limit[i], hl_render_count(r->pool, v[i].limit),
                    sizeof(e->limit[i]));
    }
    text = hl_render_policy_header(r->pool, v, q->nwindows);
    if (strlen(text) >= sizeof(e->policy))
        return NULL;
    strcpy(e->policy, text);
    e->key = key;
    return e;
}

/* How a table entry is stored: apr_table_setn replaces, apr_table_addn
 * appends without looking. */
typedef void (*table_put_t)(apr_table_t *t, const char *key, const char *val);

/* Returns 1 if table t holds a key starting with prefix (len bytes, upper
 * case; compared without case). One pass over t's entries, which at the
 * access checker are few. */
static int holds_prefixed(const apr_table_t *t, const char *prefix, size_t len)
{
    const apr_array_header_t *a = apr_table_elts(t);
    const apr_table_entry_t *e = (const apr_table_entry_t *)a->elts;
    int i;

    for (i = 0; i < a->nelts; ++i)
        if (e[i].key && (e[i].key[0] & ~0x20) == prefix[0]
            && !strncasecmp(e[i].key, prefix, len))
            return 1;
    return 0;
}

/* Returns how to store our variables in r->subprocess_env: appended when
 * the table cannot hold them yet, which spares apr_table_setn's search of
 * the usual request; replaced when it may (SetEnvIf, an internal
 * redirect, an earlier decision of this request), so a later value never
 * hides behind an earlier one. */
static table_put_t env_put_for(request_rec *r)
{
    return holds_prefixed(r->subprocess_env, "HOTLIMIT_", 9) ? apr_table_setn
                                                            : apr_table_addn;
}

/* Returns how to store our headers in r->err_headers_out, as env_put_for:
 * appended when it is empty. */
static table_put_t header_put_for(request_rec *r)
{
    return apr_is_empty_table(r->err_headers_out) ? apr_table_addn
                                                  : apr_table_setn;
}

/*
 * Sets RateLimit-Policy to every window of the n matches m (several quota
 * lines, table rules, token budgets), each a policy with a name of its own,
 * and RateLimit to the one with the least remaining (header_put stores
 * them). Allocates from r->pool; never fails.
 */
static void put_all_policies(request_rec *r, const hl_match_t *m, int n,
                             table_put_t header_put)
{
    hl_policy_view_t *all = apr_palloc(r->pool, sizeof(*all) * HL_MAX_WINDOWS
                                                * (size_t)n);
    int i, count = 0;

    for (i = 0; i < n; ++i) {
        int w = m[i].item.quota->nwindows;

        memcpy(all + count, policy_views(r, &m[i]), sizeof(*all) * (size_t)w);
        count += w;
    }
    hl_render_distinct_names(r->pool, all, count);
    header_put(r->err_headers_out, "RateLimit-Policy",
               hl_render_policy_header(r->pool, all, count));
    header_put(r->err_headers_out, "RateLimit",
               hl_render_ratelimit_header(r->pool, all, count));
}

void hl_respond_annotate(request_rec *r, const hl_match_t *all, int n,
                         int primary, int headers)
{
    const hl_match_t *m = &all[primary];
    const hl_decision_t *d = &m->item.decision;
    const hl_quota_t *q = m->item.quota;
    int t = d->nwindows > 1 ? hl_decide_tightest(d) : 0;
    const hl_rendered_t *texts = m->dq ? NULL : rendered_texts(r, q);
    const char *policy = NULL, *prefix = NULL, *remaining, *value;
    size_t prefix_len = 0;
    table_put_t env_put, header_put;
    /* One quota: its texts, mostly rendered ahead. Several: every
     * quota's policies, rendered below (put_all_policies). */
    int one = headers && n == 1;

    if (one && m->dq) {
        /* A directive quota: everything but two numbers was rendered at
         * configuration time. */
        policy = m->dq->policy_header;
        prefix = m->dq->rl_prefix[t];
        prefix_len = m->dq->rl_prefix_len[t];
    }
    else if (one && texts) {
        policy = apr_pstrdup(r->pool, texts->policy);
        prefix = texts->prefix[t];
        prefix_len = texts->prefix_len[t];
    }
    else if (one) {
        hl_policy_view_t *v = policy_views(r, m);
        policy = hl_render_policy_header(r->pool, v, q->nwindows);
        prefix = hl_render_ratelimit_prefix(r->pool, v[t].name);
        prefix_len = strlen(prefix);
    }
    remaining = hl_render_remaining(r->pool, d->windows[t].remaining, prefix,
                                    prefix_len,
                                    prefix ? hl_decide_reset_s(d, t) : 0,
                                    &value);

    env_put = env_put_for(r);
    env_put(r->subprocess_env, "HOTLIMIT_ROUTE", m->route);
    env_put(r->subprocess_env, "HOTLIMIT_LIMIT",
        m->dq ? m->dq->limits[t]
              : texts ? apr_pstrdup(r->pool, texts->limit[t])
                      : hl_render_count(r->pool, q->windows[t].count));
    env_put(r->subprocess_env, "HOTLIMIT_REMAINING", remaining);
    if (!headers)
        return;
    header_put = header_put_for(r);
    if (!one) {
        put_all_policies(r, all, n, header_put);
        return;
    }
    header_put(r->err_headers_out, "RateLimit-Policy", policy);
    header_put(r->err_headers_out, "RateLimit", value);
}

/* Returns 1 if the administrator configured ErrorDocument 429 here. */
static int has_error_document(request_rec *r)
{
    return ap_response_code_string(r, ap_index_of_response(
                                          HTTP_TOO_MANY_REQUESTS)) != NULL;
}

/* Returns the body the 429 of r takes (dc: r's configuration): what
 * Accept (and X-Requested-With) prefer, unless HotLimitErrorFormat fixes
 * it; a fixed form yields to an explicit Accept that prefers
 * application/problem+json (a client that names it reads it). */
/* The 429 bodies beyond the negotiated ones (hl_body_kind_t): a
 * provider's shape, only ever fixed by HotLimitErrorFormat. */
enum { HL_BODY_OPENAI = HL_BODY_PROBLEM + 1, HL_BODY_ANTHROPIC };

static int body_kind(request_rec *r, const hl_dir_conf_t *dc)
{
    const char *accept = apr_table_get(r->headers_in, "Accept");
    int format = dc ? dc->error_format : HL_ERROR_FORMAT_AUTO;

    if (format == HL_ERROR_FORMAT_AUTO)
        return hl_negotiate_body(accept, apr_table_get(r->headers_in,
                                                       "X-Requested-With"));
    if (accept && hl_negotiate_body(accept, NULL) == HL_BODY_PROBLEM)
        return HL_BODY_PROBLEM;
    switch (format) {
    case HL_ERROR_FORMAT_HTML:      return HL_BODY_HTML;
    case HL_ERROR_FORMAT_JSON:      return HL_BODY_JSON;
    case HL_ERROR_FORMAT_OPENAI:    return HL_BODY_OPENAI;
    case HL_ERROR_FORMAT_ANTHROPIC: return HL_BODY_ANTHROPIC;
    default:                        return HL_BODY_PROBLEM;
    }
}

int hl_respond_reject(request_rec *r, const hl_match_t *m)
{
    hl_server_conf_t *sc = ap_get_module_config(r->server->module_config,
                                                &hotlimit_module);
    const hl_dir_conf_t *dc = ap_get_module_config(r->per_dir_config,
                                                   &hotlimit_module);
    const hl_quota_t *q = m->item.quota;
    int kind = body_kind(r, dc);
    hl_reject_info_t info;
    const char *body;

    apr_table_setn(r->err_headers_out, "Retry-After",
                   apr_psprintf(r->pool, "%ld", m->item.decision.retry_after_s));
    apr_table_setn(r->err_headers_out, "Cache-Control", "no-store");
    apr_table_mergen(r->err_headers_out, "Vary", "Accept");
    apr_table_setn(r->subprocess_env, "hotlimit-limited", "1");
    if (dc && (dc->headers & HL_HEADERS_OPENAI))
        hl_shape_put_retry_ms(r, m);

    if (kind == HL_BODY_HTML && has_error_document(r))
        return HTTP_TOO_MANY_REQUESTS;   /* ap_die serves ErrorDocument */

    memset(&info, 0, sizeof(info));
    info.route = m->route;
    info.retry_after = m->item.decision.retry_after_s;
    info.npolicies = q->nwindows;
    info.policies = policy_views(r, m);
    info.lang = hl_negotiate_lang(apr_table_get(r->headers_in,
                                                "Accept-Language"));
    info.banned = m->banned;
    info.tokens = q->cost_usage || q->cost_name[0] != '\0';
    if (kind == HL_BODY_OPENAI || kind == HL_BODY_ANTHROPIC) {
        body = kind == HL_BODY_OPENAI ? hl_shape_openai_json(r->pool, &info)
                                      : hl_shape_anthropic_json(r->pool, &info);
        ap_set_content_type(r, "application/json");
    }
    else if (kind == HL_BODY_PROBLEM || kind == HL_BODY_JSON) {
        body = hl_render_problem_json(r->pool, &info);
        ap_set_content_type(r, kind == HL_BODY_PROBLEM
                               ? "application/problem+json"
                               : "application/json");
    }
    else {
        body = sc->error_template
               ? hl_render_template(r->pool, sc->error_template, &info)
               : hl_render_html(r->pool, &info);
        ap_set_content_type(r, "text/html; charset=utf-8");
        apr_table_setn(r->err_headers_out, "Content-Language", info.lang);
    }
    r->status = HTTP_TOO_MANY_REQUESTS;
    ap_set_content_length(r, (apr_off_t)strlen(body));
    ap_rputs(body, r);
    return DONE;
}
