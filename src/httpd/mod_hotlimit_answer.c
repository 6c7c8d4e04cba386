/*
 * mod_hotlimit_answer.c - the quota table's answer for a request (the
 * check room, see mod_hotlimit_answer.h): the route it is looked up by
 * (HotLimitRouteFrom), the answer a keep-alive connection keeps for the
 * path it last asked, the plan a rule's selector names, and a rule's
 * "concurrency" for mod_hotlimit_conc.c.
 *
 * Memory: strings and quotas returned come from r->pool, or point into
 * the client record or the caller's hit.
 */
#include <string.h>

#include "httpd.h"
#include "http_config.h"
#include "apr_strings.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_answer.h"
#include "mod_hotlimit_key.h"
#include "mod_hotlimit_body.h"
#include "mod_hotlimit_table.h"
#include "hl_php.h"
#include "hl_route.h"
#include "hl_table.h"

APLOG_USE_MODULE(hotlimit);

/* Writes the route of r used for table lookups into buf (HL_ROUTE_MAX
 * bytes): the normalised path, or a query argument, a request parameter
 * (lowercased; an array's first key), a JSON body's value (lowercased) or
 * PATH_INFO when HotLimitRouteFrom says so and it is present. */
static void request_route(request_rec *r, const hl_dir_conf_t *dc, char *buf)
{
    if (dc->route_from == HL_ROUTE_FROM_PARAM
        || dc->route_from == HL_ROUTE_FROM_JSON) {
        apr_size_t n = 0;
        char *v = dc->route_from == HL_ROUTE_FROM_JSON
                  ? hl_request_json(r, dc->route_arg, &n)
                  : hl_request_param(r, dc->route_arg, 1, &n);
        if (v && n > 0) {
            ap_str_tolower(v);
            hl_route_from_name(buf, HL_ROUTE_MAX, v, strlen(v));
            return;
        }
    }
    else if (dc->route_from == HL_ROUTE_FROM_QUERY && r->args) {
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

/* Returns the quota table's answer for r, whose client is cl: the one cl
 * keeps when r's route comes from its path and r asks for the same path as
 * the request it was found for, and no table was published since (a
 * keep-alive client asking again costs a comparison); else the answer
 * looked up now, kept in cl when r's route comes from its path, the path
 * fits and r is the client's request itself (not an internal redirect to
 * a front controller, which would take the place of the URL the client
 * asks for at every request), else written into *hit. Points into cl or
 * at hit. */
const hl_table_hit_t *hl_answer_of(request_rec *r, const hl_dir_conf_t *dc,
                                   hl_client_t *cl, hl_table_hit_t *hit)
{
    const char *uri = r->uri ? r->uri : "/";
    const hl_cidr_t *ip = cl->ok ? &cl->addr : NULL;
    uint32_t version = hl_table_version();
    int from_path = dc->route_from == HL_ROUTE_FROM_PATH;
    char route[HL_ROUTE_MAX];
    size_t len;

    if (from_path && cl->table_kept && cl->table_version == version
        && strcmp(cl->table_uri, uri) == 0)
        return &cl->table_hit;
    request_route(r, dc, route);
    len = strlen(uri);
    if (!from_path || r->prev || len >= sizeof(cl->table_uri)) {
        hl_table_find(r, route, ip, hit);
        return hit;
    }
    cl->table_kept = hl_table_find(r, route, ip, &cl->table_hit);
    cl->table_version = version;
    memcpy(cl->table_uri, uri, len + 1);
    return &cl->table_hit;
}

/*
 * Returns the quota a request r of table rule hit counts under when the
 * rule's "plan" selector names one of the table's plans: the rule's quota
 * with the plan's limits, allocated from r->pool, and sets *scope to the
 * counted scope "ROUTE plan=NAME" (so counters of one key in one plan
 * carry over when the plan's limits change, and never mix with another
 * plan's). Returns NULL (the rule's own limits and scope) when the rule has
 * no selector, the request does not carry it, or it names no plan: an
 * unknown name is no way to fresh counters.
 */
const hl_quota_t *hl_answer_plan_quota(request_rec *r,
                                       const hl_table_hit_t *hit,
                                       const char **scope)
{
    const char *name = NULL;
    hl_quota_t *q;
    hl_plan_t plan;

    if (hit->plan.from == HL_PLAN_FROM_ENV)
        name = apr_table_get(r->subprocess_env, hit->plan.name);
    else if (hit->plan.from == HL_PLAN_FROM_HEADER)
        name = apr_table_get(r->headers_in, hit->plan.name);
    if (!name || !*name || !hl_table_find_plan(r, name, strlen(name), &plan))
        return NULL;
    q = apr_palloc(r->pool, sizeof(*q));
    hl_table_plan_quota(&hit->rule, &plan, q);
    *scope = apr_pstrcat(r->pool, hit->route, " plan=", plan.name, NULL);
    return q;
}

/* The table's "concurrency" for r (see mod_hotlimit_answer.h). Returns 1,
 * 0 or -1. */
int hl_answer_concurrency(request_rec *r, hl_quota_t *rule,
                          const char **route)
{
    const hl_dir_conf_t *dc = ap_get_module_config(r->per_dir_config,
                                                   &hotlimit_module);
    const hl_server_conf_t *sc = ap_get_module_config(r->server->module_config,
                                                      &hotlimit_module);
    const hl_table_hit_t *hit;
    const hl_quota_t *q, *pq;
    const char *scope, *pscope = NULL;
    hl_table_hit_t local;

    if (!hl_table_configured() || !dc || dc->engine == 0)
        return 0;
    /* The connection's cached answer: the decision asks for it next. */
    hit = hl_answer_of(r, dc, hl_key_client_of(r, sc), &local);
    if (!hit->enabled || hit->exempt)
        return -1;
    if (!hit->has_rule)
        return 0;
    q = &hit->rule;
    scope = hit->route;
    /* A plan's "concurrency" counts under the plan's own scope. */
    if (hit->plan.from && (pq = hl_answer_plan_quota(r, hit, &pscope)) != NULL) {
        q = pq;
        scope = pscope;
    }
    if (!q->concurrency)
        return 0;
    *rule = *q;
    *route = apr_pstrdup(r->pool, scope);
    return 1;
}
