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
 * A GET first gathers everything the answer shows into a snapshot
 * (mod_hotlimit_status_snap.c: copied out of shared memory under the lock,
 * then looked up and summed after unlocking), then one writer formats it:
 * mod_hotlimit_status_html.c, _json.c or _metrics.c. The same copy,
 * summed up, feeds mod_status's section (mod_hotlimit_modstatus.c).
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
#include "mod_hotlimit_ban.h"
#include "mod_hotlimit_status.h"
#include "mod_hotlimit_status_html.h"
#include "mod_hotlimit_status_json.h"
#include "mod_hotlimit_status_metrics.h"
#include "mod_hotlimit_status_snap.h"
#include "mod_hotlimit_stores.h"
#include "mod_hotlimit_view.h"
#include "hl_render.h"
#include "hl_slotkey.h"

APLOG_USE_MODULE(hotlimit);

#define HL_REFRESH_MAX 3600       /* ?refresh=N seconds, at most */

int hl_status_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                          apr_pool_t *ptemp, server_rec *s)
{
    (void)pconf;
    (void)plog;
    (void)ptemp;
    hl_status_snap_record_start(s);
    return OK;
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
 * Returns 1 if referer (a Referer header) is a page of origin own
 * ("scheme://host[:port]"): own followed by the end, '/', '?' or '#'.
 * Else 0 (another site, another port, a userinfo "own@evil", garbage).
 */
static int referer_is_own(const char *referer, const char *own)
{
    size_t n = strlen(own);

    return !strncasecmp(referer, own, n)
           && (referer[n] == '\0' || referer[n] == '/' || referer[n] == '?'
               || referer[n] == '#');
}

/*
 * Returns NULL if r may be a same-site request, else why it is cross-site:
 * a Sec-Fetch-Site other than same-origin or none (typed or bookmarked), an
 * Origin other than this server's scheme://Host, or an Origin whose host
 * is not one of this server's (host_is_ours: a same-origin request of a
 * page that reached this server by DNS rebinding); without an Origin, a
 * Referer that is not a page of this server's scheme://Host (browsers that
 * send no Origin on a same-origin POST still send a Referer). A request
 * with none of these headers (curl, scripts) is not a browser's
 * cross-site request. The reason is allocated from r->pool.
 */
static const char *cross_site(request_rec *r)
{
    const char *site = apr_table_get(r->headers_in, "Sec-Fetch-Site");
    const char *origin = apr_table_get(r->headers_in, "Origin");
    const char *referer = apr_table_get(r->headers_in, "Referer");
    const char *host = apr_table_get(r->headers_in, "Host");
    const char *own;

    if (site && strcasecmp(site, "same-origin") && strcasecmp(site, "none"))
        return apr_pstrcat(r->pool, "Sec-Fetch-Site: ", site, NULL);
    if (!origin && !referer)
        return NULL;
    if (!host)
        host = apr_psprintf(r->pool, "%s:%u", r->hostname ? r->hostname : "",
                            (unsigned)ap_get_server_port(r));
    own = apr_pstrcat(r->pool, ap_http_scheme(r), "://", host, NULL);
    if (!origin)
        return referer_is_own(referer, own)
               ? NULL : apr_pstrcat(r->pool, "Referer: ", referer, NULL);
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
    return hl_slotkey_is_bare(key, len) || hl_view_owns(view, key, len);
}

/* Answers a POST that changed counters: 303 back to the page when the
 * form's "back" field was present (back), else JSON body json. Returns
 * the handler's status. */
static int answer_post(request_rec *r, int back, const char *json)
{
    if (back) {
        /* The page's buttons: back to the page (POST-redirect-GET). */
        apr_table_setn(r->headers_out, "Location",
                       ap_construct_url(r->pool, r->uri, r));
        return HTTP_SEE_OTHER;
    }
    ap_set_content_type(r, "application/json");
    ap_rputs(json, r);
    return OK;
}

/* Handles POST lift=all: lifts every ban the page of r shows. Returns the
 * handler's status (answer_post; 503 when the store cannot answer). */
static int lift_all(request_rec *r, int back)
{
    int lifted = hl_ban_lift_all(page_view(r), r->pool);

    if (lifted < 0)
        return HTTP_SERVICE_UNAVAILABLE;
    ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r,
                  "HL02600: every ban lifted by %s (%d counters)",
                  r->useragent_ip, lifted);
    return answer_post(r, back, apr_psprintf(r->pool, "{\"lifted\":%d}\n",
                                             lifted));
}

/* Handles POST reset=KEY (and lift=all: lift_all): answers JSON, or 303
 * back to the page when the form's "back" field is present. Returns the
 * handler's status. */
static int handle_reset(request_rec *r)
{
    const server_rec *view = page_view(r);
    const char *why = cross_site(r);
    apr_array_header_t *pairs = NULL;
    const hl_store_t *store;
    const char *key = NULL;
    int removed, i, back = 0, all = 0;

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
        else if (!strcmp(pair->name, "lift"))
            all = 1;     /* lift=all: its only value */
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
    if (all && !key)
        return lift_all(r, back);
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
    if (removed >= 0 && hl_store_shm_stats())   /* its place in the ranking */
        hl_refusals_forget(&hl_store_shm_stats()->refusals, key, strlen(key));
    /* A client address: its bans too. */
    if (removed >= 0 && hl_slotkey_is_bare(key, strlen(key))) {
        int lifted = hl_ban_reset_client(view, r->pool, key);
        removed = lifted < 0 ? -1 : removed + lifted;
    }
    if (removed < 0)
        return HTTP_SERVICE_UNAVAILABLE;
    ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r,
                  "HL00300: counters of key '%s' reset by %s (%d slots)",
                  ap_escape_logitem(r->pool, key), r->useragent_ip, removed);
    return answer_post(r, back, apr_psprintf(r->pool,
                       "{\"reset\":\"%s\",\"removed\":%d}\n",
                       hl_json_escape(r->pool, key), removed));
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
    ((hl_dir_conf_t *)dconf)->set |= HL_DIR_SET_STATUS;
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

/* hl_status_handler for a request whose handler is hotlimit-status. */
static __attribute__((noinline)) int status_handler(request_rec *r)
{
    const hl_dir_conf_t *dc;
    const server_rec *view;
    const char *host;
    hl_snapshot_t *snap;
    int metrics;

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
    /* ?metrics takes the header alone: a scrape neither walks the counter
     * table nor asks Redis. */
    snap = metrics ? hl_status_snap_header(r, view)
         : r->header_only ? hl_status_snap_take(r, view, NULL, NULL)
         : hl_status_snap_take(r, view, query_param(r, "lookup"),
                               query_param(r, "route"));
    if (!snap)
        return HTTP_SERVICE_UNAVAILABLE;
    apr_table_setn(r->headers_out, "Cache-Control", "no-store");
    if (r->header_only)
        return OK;
    if (metrics)
        hl_status_write_metrics(r, snap);
    else if (query_is(r->args, "json") || query_param(r, "json"))
        hl_status_write_json(r, snap);
    else {
        const char *refresh = query_param(r, "refresh");
        int every = refresh ? atoi(refresh) : 0;
        hl_status_write_html(r, snap, every < 0 ? 0 : every > HL_REFRESH_MAX
                                                 ? HL_REFRESH_MAX : every);
    }
    return OK;
}

/* Runs for every request: the first letter spares most a strcmp, and the
 * page's own frame is built only for the page. */
int hl_status_handler(request_rec *r)
{
    if (!r->handler || r->handler[0] != 'h'
        || strcmp(r->handler, "hotlimit-status"))
        return DECLINED;
    return status_handler(r);
}
