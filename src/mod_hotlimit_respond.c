/*
 * mod_hotlimit_respond.c - what a limited route's responses carry: the
 * environment for CustomLog and PHP, the RateLimit headers, and the 429
 * itself with its body chosen by content negotiation.
 */
#include <string.h>

#include "httpd.h"
#include "http_config.h"
#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "mod_core.h"
#include "apr_strings.h"

#include "mod_hotlimit.h"
#include "hl_negotiate.h"
#include "hl_render.h"
#include "hl_fmt.h"

APLOG_USE_MODULE(hotlimit);

/* Returns the views of m's windows, allocated from r->pool. */
static hl_policy_view_t *policy_views(request_rec *r, const hl_match_t *m)
{
    hl_policy_view_t *v = apr_pcalloc(r->pool, sizeof(*v) * HL_MAX_WINDOWS);
    int i;

    for (i = 0; i < m->quota.nwindows; ++i) {
        const hl_window_t *w = &m->quota.windows[i];
        const hl_verdict_t *vd = &m->decision.windows[i];
        if (m->names)
            v[i].name = m->names[i];
        else {
            char name[48];
            v[i].name = apr_pstrdup(r->pool, hl_window_name(w, name, sizeof(name)));
        }
        v[i].limit = w->count;
        v[i].window_s = (w->window_ms + 999) / 1000;
        v[i].remaining = vd->remaining;
        v[i].reset_s = (vd->admit ? vd->reset_ms : vd->retry_ms) / 1000;
        if ((vd->admit ? vd->reset_ms : vd->retry_ms) % 1000)
            v[i].reset_s++;
        v[i].violated = !vd->admit;
    }
    return v;
}

/* Returns the index of the window with the least remaining (ties: the
 * longer reset), the one the environment describes. */
static int tightest_window(const hl_policy_view_t *v, int n)
{
    int i, best = 0;
    for (i = 1; i < n; ++i)
        if (v[i].remaining < v[best].remaining
            || (v[i].remaining == v[best].remaining
                && v[i].reset_s > v[best].reset_s))
            best = i;
    return best;
}

/* Returns v in decimal, allocated from r->pool. */
static const char *number(request_rec *r, uint32_t v)
{
    char *out = apr_palloc(r->pool, HL_FMT_U64_MAX);
    hl_fmt_u64(out, v);
    return out;
}

void hl_respond_annotate(request_rec *r, const hl_match_t *m, int headers)
{
    hl_policy_view_t *v = policy_views(r, m);
    int n = m->quota.nwindows;
    int t = tightest_window(v, n);

    apr_table_setn(r->subprocess_env, "HOTLIMIT_ROUTE", m->route);
    apr_table_setn(r->subprocess_env, "HOTLIMIT_LIMIT", number(r, v[t].limit));
    apr_table_setn(r->subprocess_env, "HOTLIMIT_REMAINING",
                   number(r, v[t].remaining));
    if (headers) {
        apr_table_setn(r->err_headers_out, "RateLimit-Policy",
                       m->policy_header ? m->policy_header
                                        : hl_render_policy_header(r->pool, v, n));
        apr_table_setn(r->err_headers_out, "RateLimit",
                       hl_render_ratelimit_header(r->pool, v, n));
    }
}

/* Returns 1 if the administrator configured ErrorDocument 429 here. */
static int has_error_document(request_rec *r)
{
    return ap_response_code_string(r, ap_index_of_response(
                                          HTTP_TOO_MANY_REQUESTS)) != NULL;
}

int hl_respond_reject(request_rec *r, const hl_match_t *m)
{
    hl_server_conf_t *sc = ap_get_module_config(r->server->module_config,
                                                &hotlimit_module);
    hl_body_kind_t kind = hl_negotiate_body(
        apr_table_get(r->headers_in, "Accept"),
        apr_table_get(r->headers_in, "X-Requested-With"));
    hl_reject_info_t info;
    const char *body;

    apr_table_setn(r->err_headers_out, "Retry-After",
                   apr_psprintf(r->pool, "%ld", m->decision.retry_after_s));
    apr_table_setn(r->err_headers_out, "Cache-Control", "no-store");
    apr_table_mergen(r->err_headers_out, "Vary", "Accept");
    apr_table_setn(r->subprocess_env, "hotlimit-limited", "1");

    if (kind == HL_BODY_HTML && has_error_document(r))
        return HTTP_TOO_MANY_REQUESTS;   /* ap_die serves ErrorDocument */

    memset(&info, 0, sizeof(info));
    info.route = m->route;
    info.retry_after = m->decision.retry_after_s;
    info.npolicies = m->quota.nwindows;
    info.policies = policy_views(r, m);
    info.lang = hl_negotiate_lang(apr_table_get(r->headers_in,
                                                "Accept-Language"));
    if (kind == HL_BODY_PROBLEM || kind == HL_BODY_JSON) {
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
