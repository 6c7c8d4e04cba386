/*
 * mod_hotlimit_status_json.c - the status page as JSON (?json): formats a
 * full snapshot (mod_hotlimit_status_snap.h) and gathers nothing itself;
 * the concurrency and ban sections are written by their own files.
 */
#include <string.h>

#include "httpd.h"
#include "http_protocol.h"
#include "apr_strings.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_ban.h"
#include "mod_hotlimit_conc.h"
#include "mod_hotlimit_spool.h"
#include "mod_hotlimit_status_json.h"
#include "hl_render.h"

/* Returns the JSON value of an account's name (HotLimitStatusNames): a
 * string, or null. From p. */
static const char *json_name(apr_pool_t *p, const char *name)
{
    return name ? apr_pstrcat(p, "\"", hl_json_escape(p, name), "\"", NULL)
                : "null";
}

/* Writes the ?json field "lookup":{"name":...,"keys":[...]} (nothing
 * without ?lookup=). */
static void write_lookup_json(request_rec *r, const hl_snapshot_t *snap)
{
    apr_pool_t *p = r->pool;
    int i, w;

    if (!snap->lookup || !snap->lookups)
        return;
    ap_rprintf(r, "\"lookup\":{\"name\":\"%s\",\"keys\":[",
               hl_json_escape(p, snap->lookup));
    for (i = 0; i < snap->lookups->nelts; ++i) {
        const hl_lookup_row_t *row = &APR_ARRAY_IDX(snap->lookups, i,
                                                    hl_lookup_row_t);
        ap_rprintf(r, "%s{\"route\":\"%s\",\"rule\":\"%s\",\"key\":\"%s\","
                   "\"name\":%s,\"refusals\":%u,\"windows\":[", i ? "," : "",
                   hl_json_escape(p, row->route), hl_json_escape(p, row->rule),
                   hl_json_escape(p, row->key), json_name(p, row->name),
                   row->refusals);
        for (w = 0; w < row->nwindows; ++w)
            ap_rprintf(r, "%s{\"count\":%u,\"left_ms\":%" APR_INT64_T_FMT "}",
                       w ? "," : "", row->count[w], (apr_int64_t)row->left_ms[w]);
        ap_rputs("]}", r);
    }
    ap_rputs("]},", r);
}

/* Writes one route of the JSON answer: its configured limits ("" when
 * none), its counts (none yet without stats: rejected by its own quota,
 * refused by another rule of the request, banned) and its history, oldest
 * tick first, each [admitted, rejected, dry_run, banned] (zeros without
 * stats). */
static void json_route(request_rec *r, const hl_page_route_t *row, int first)
{
    const hl_route_stat_t *e = row->stat;
    int i;

    ap_rprintf(r, "%s{\"route\":\"%s\",\"limits\":\"%s\",\"origin\":\"%s\","
               "\"rule\":\"%s\",\"refused_by_rule\":%" APR_UINT64_T_FMT ","
               "\"admitted\":%" APR_UINT64_T_FMT ",\"rejected\":%"
               APR_UINT64_T_FMT ",\"dry_run\":%" APR_UINT64_T_FMT
               ",\"refused_by_other\":%" APR_UINT64_T_FMT ",\"banned\":%"
               APR_UINT64_T_FMT ",\"history_tick_s\":%d,\"history\":[",
               first ? "" : ",",
               hl_json_escape(r->pool, row->name),
               hl_json_escape(r->pool, row->limits), row->origin,
               hl_json_escape(r->pool, row->rule),
               (apr_uint64_t)(e ? e->refused_by : 0),
               (apr_uint64_t)(e ? e->count[0] : 0),
               (apr_uint64_t)(e ? e->count[1] : 0),
               (apr_uint64_t)(e ? e->count[2] : 0),
               (apr_uint64_t)(e ? e->refused_other : 0),
               (apr_uint64_t)(e ? e->count[HL_DECISION_BANNED] : 0),
               HL_STATS_TICK_MS / 1000);
    for (i = 0; i < HL_STATS_HISTORY; ++i)
        ap_rprintf(r, "%s[%u,%u,%u,%u]", i ? "," : "",
                   row->history ? row->history[i][0] : 0,
                   row->history ? row->history[i][1] : 0,
                   row->history ? row->history[i][2] : 0,
                   row->history ? row->history[i][3] : 0);
    ap_rputs("]}", r);
}

void hl_status_write_json(request_rec *r, const hl_snapshot_t *snap)
{
    apr_pool_t *p = r->pool;
    int i;

    ap_set_content_type(r, "application/json");
    ap_rprintf(r, "{\"table\":{\"source\":\"%s\",\"generation\":%" APR_UINT64_T_FMT
               ",\"enabled\":%s,\"routes\":%u,\"skipped\":%u,\"loaded_ms\":%" APR_INT64_T_FMT
               ",\"checked_ms\":%" APR_INT64_T_FMT ",\"last_result\":\"%s\","
               "\"message\":\"%s\",\"reloads\":{\"ok\":%" APR_UINT64_T_FMT
               ",\"unchanged\":%" APR_UINT64_T_FMT ",\"failed\":%" APR_UINT64_T_FMT "}},",
               hl_json_escape(p, snap->table.table_source),
               (apr_uint64_t)snap->table.table_generation,
               snap->table.table_enabled ? "true" : "false",
               snap->table.table_routes, snap->table.table_skipped,
               (apr_int64_t)snap->table.table_loaded_ms,
               (apr_int64_t)snap->table.table_checked_ms, snap->sum.table_result,
               hl_json_escape(p, snap->table.table_message),
               (apr_uint64_t)snap->table.reloads[HL_RELOAD_OK],
               (apr_uint64_t)snap->table.reloads[HL_RELOAD_UNCHANGED],
               (apr_uint64_t)snap->table.reloads[HL_RELOAD_FAILED]);
    ap_rprintf(r, "\"slots\":{\"used\":%u,\"capacity\":%u,\"evictions\":%"
               APR_UINT64_T_FMT ",\"reclaims\":%" APR_UINT64_T_FMT
               ",\"classes\":%u},\"started_ms\":%" APR_INT64_T_FMT
               ",\"uptime_s\":%" APR_INT64_T_FMT ",\"totals\":{\"admitted\":%"
               APR_UINT64_T_FMT ",\"rejected\":%" APR_UINT64_T_FMT
               ",\"dry_run\":%" APR_UINT64_T_FMT "},\"routes\":[",
               snap->used, snap->capacity,
               (apr_uint64_t)snap->evictions, (apr_uint64_t)snap->reclaims,
               snap->classes, (apr_int64_t)snap->sum.started_ms,
               (apr_int64_t)snap->sum.uptime_s,
               (apr_uint64_t)snap->sum.decisions[HL_DECISION_ADMITTED],
               (apr_uint64_t)snap->sum.decisions[HL_DECISION_REJECTED],
               (apr_uint64_t)snap->sum.decisions[HL_DECISION_DRY_RUN]);
    for (i = 0; i < snap->rows->nelts; ++i)
        json_route(r, &APR_ARRAY_IDX(snap->rows, i, hl_page_route_t), !i);
    ap_rprintf(r, "],\"routes_not_listed\":%d,\"store\":{\"kind\":\"%s\","
               "\"stripes\":%u,\"up\":%s,\"fallbacks\":%" APR_UINT64_T_FMT
               "},\"limited_keys_from\":\"%s\",\"limited_keys_total\":%u,"
               "\"limited_keys\":[", snap->routes_cut,
               snap->store.configured ? "redis" : "shared memory",
               snap->stripes,
               !snap->store.configured || snap->store.up ? "true" : "false",
               (apr_uint64_t)snap->store.fallbacks,
               snap->limited_from == HL_LIMITED_FROM_REDIS ? "redis" : "local",
               snap->limited_total);
    for (i = 0; i < snap->nlimited; ++i)
        ap_rprintf(r, "%s{\"key\":\"%s\",\"name\":%s,\"count\":%u,"
                   "\"quota\":\"%s\",\"window\":%d,\"left_ms\":%"
                   APR_INT64_T_FMT "}",
                   i ? "," : "", hl_json_escape(p, snap->limited[i].key),
                   json_name(p, snap->limited[i].name),
                   snap->limited[i].count, snap->limited[i].from,
                   snap->limited[i].window + 1,
                   (apr_int64_t)snap->limited[i].left_ms);
    ap_rputs("],\"top_keys\":[", r);
    for (i = 0; i < snap->ntop; ++i)
        ap_rprintf(r, "%s{\"key\":\"%s\",\"name\":%s,\"count\":%u,"
                   "\"quota\":\"%s\",\"window\":%d}", i ? "," : "",
                   hl_json_escape(p, snap->top[i].key),
                   json_name(p, snap->top[i].name), snap->top[i].count,
                   snap->top[i].from, snap->top[i].window + 1);
    ap_rprintf(r, "],\"top_refused_servers\":%d,\"top_refused\":[",
               snap->refused_servers + 1);
    for (i = 0; i < snap->nrefused; ++i) {
        const hl_refused_row_t *row = &snap->refused_rows[i];
        const hl_refusal_rank_t *k = row->rank;
        ap_rprintf(r, "%s{\"key\":\"%s\",\"client\":\"%s\",\"name\":%s,"
                   "\"route\":\"%s\",\"rule\":\"%s\",\"refusals\":%u,"
                   "\"total\":%" APR_UINT64_T_FMT "}", i ? "," : "",
                   hl_json_escape(p, k->key), hl_json_escape(p, row->client),
                   json_name(p, row->name),
                   hl_json_escape(p, k->route), hl_json_escape(p, row->rule),
                   k->now,
                   (apr_uint64_t)k->total);
    }
    ap_rprintf(r, "],\"summary\":{\"refusals_per_s\":%s,\"bans_active\":%d,"
               "\"table_state\":\"%s\",\"store_health\":\"%s\","
               "\"slots_used\":%u,\"slots_capacity\":%u,\"slots_pct\":%d,"
               "\"evictions_per_s\":%s},\"counters_started_ms\":%"
               APR_INT64_T_FMT ",", snap->refusal_rate, snap->bans->nelts,
               snap->sum.table_result,
               !snap->store.configured || snap->store.up ? "up" : "down",
               snap->used, snap->capacity, snap->slots_pct, snap->eviction_rate,
               (apr_int64_t)snap->shared.counters_started_ms);
    write_lookup_json(r, snap);
    hl_conc_write_json(r);      /* HotLimitConcurrency */
    ap_rputs(",", r);
    hl_spool_write_json(r);     /* HotLimitSpoolLimit */
    ap_rputs(",", r);
    hl_ban_write_json(r, snap->bans);
    ap_rputs("}\n", r);
}

