/*
 * mod_hotlimit_status_metrics.c - the status page as Prometheus text
 * (?metrics): formats a header snapshot (hl_status_snap_header: a scrape
 * neither walks the counter table nor asks Redis) and gathers nothing
 * itself; the concurrency and ban gauges are written by their own files.
 */
#include <string.h>

#include "httpd.h"
#include "http_protocol.h"
#include "apr_strings.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_ban.h"
#include "mod_hotlimit_conc.h"
#include "mod_hotlimit_status_metrics.h"

#define HL_METRIC_REFUSED 10      /* keys listed as refused most now */

static const char *const decision_names[HL_DECISION_KINDS] = {
    "admitted", "rejected", "dry_run", "banned"
};

/* Returns a Prometheus label value with \ " and newline escaped. */
static const char *prom_escape(apr_pool_t *p, const char *s)
{
    char *out = apr_palloc(p, strlen(s) * 2 + 1), *o = out;
    for (; *s; ++s) {
        if (*s == '\\' || *s == '"') {
            *o++ = '\\';
            *o++ = *s;
        }
        else if (*s == '\n') {
            *o++ = '\\';
            *o++ = 'n';
        }
        else
            *o++ = *s;
    }
    *o = '\0';
    return out;
}

/* Writes the remote store's metrics: whether it answers, and how many
 * decisions it made, fell back to HotLimitStoreFailure, or failed (with
 * local counters: up, and zeros, so that alerts can name them anyway). */
static void write_store_metrics(request_rec *r, const hl_snapshot_t *snap)
{
    hl_store_figures_t f = snap->store;

    if (!f.configured)
        f.up = 1;
    ap_rprintf(r, "# HELP hotlimit_store_up 1 while the Redis store answers, 0 while its breaker is open.\n"
               "# TYPE hotlimit_store_up gauge\n"
               "hotlimit_store_up %d\n"
               "# HELP hotlimit_store_decisions_total Decisions the Redis store answered.\n"
               "# TYPE hotlimit_store_decisions_total counter\n"
               "hotlimit_store_decisions_total %" APR_UINT64_T_FMT "\n"
               "# HELP hotlimit_store_fallbacks_total Decisions made by HotLimitStoreFailure while Redis could not answer.\n"
               "# TYPE hotlimit_store_fallbacks_total counter\n"
               "hotlimit_store_fallbacks_total %" APR_UINT64_T_FMT "\n"
               "# HELP hotlimit_store_errors_total Round trips to Redis that failed.\n"
               "# TYPE hotlimit_store_errors_total counter\n"
               "hotlimit_store_errors_total %" APR_UINT64_T_FMT "\n"
               "# HELP hotlimit_store_leased_total Requests admitted by a lease of the Redis store (HotLimitStoreLease), without a round trip.\n"
               "# TYPE hotlimit_store_leased_total counter\n"
               "hotlimit_store_leased_total %" APR_UINT64_T_FMT "\n",
               f.up, (apr_uint64_t)f.decisions, (apr_uint64_t)f.fallbacks,
               (apr_uint64_t)f.errors, (apr_uint64_t)f.leased);
}

/* Returns ms (wall clock) as Prometheus seconds, "0" for 0 (never);
 * allocated from p. */
static const char *prom_seconds(apr_pool_t *p, int64_t ms)
{
    if (ms <= 0)
        return "0";
    return apr_psprintf(p, "%" APR_INT64_T_FMT ".%03d", (apr_int64_t)(ms / 1000),
                        (int)(ms % 1000));
}

void hl_status_write_metrics(request_rec *r, const hl_snapshot_t *snap)
{
    int i, k;

    ap_set_content_type(r, "text/plain; version=0.0.4; charset=utf-8");
    ap_rputs("# HELP hotlimit_requests_total Decisions per route: a refused request once, on the quota line that refused it; refused because its client is banned once, as banned, on the request's first route.\n"
             "# TYPE hotlimit_requests_total counter\n", r);
    for (i = 0; i < HL_STATS_ROUTES; ++i) {
        const hl_route_stat_t *e = &snap->shared.stats.routes[i];
        if (!e->hash)
            continue;
        for (k = 0; k < HL_DECISION_KINDS; ++k)
            ap_rprintf(r, "hotlimit_requests_total{route=\"%s\",decision=\"%s\"} %"
                       APR_UINT64_T_FMT "\n", prom_escape(r->pool, e->route),
                       decision_names[k], (apr_uint64_t)e->count[k]);
    }
    ap_rputs("# HELP hotlimit_route_refusals_total Requests refused by the route's own quota (a quota line or table rule), as hotlimit_requests_total{decision=\"rejected\"}.\n"
             "# TYPE hotlimit_route_refusals_total counter\n", r);
    for (i = 0; i < HL_STATS_ROUTES; ++i) {
        const hl_route_stat_t *e = &snap->shared.stats.routes[i];
        if (e->hash)
            ap_rprintf(r, "hotlimit_route_refusals_total{route=\"%s\"} %"
                       APR_UINT64_T_FMT "\n", prom_escape(r->pool, e->route),
                       (apr_uint64_t)e->refused_by);
    }
    ap_rprintf(r, "# HELP hotlimit_key_refusals Refusals in this minute and the one before of the %d keys refused most now, with the route that refused them.\n"
               "# TYPE hotlimit_key_refusals gauge\n", HL_METRIC_REFUSED);
    for (i = 0; i < snap->nrefused && i < HL_METRIC_REFUSED; ++i)
        ap_rprintf(r, "hotlimit_key_refusals{key=\"%s\",route=\"%s\"} %u\n",
                   prom_escape(r->pool, snap->refused[i].key),
                   prom_escape(r->pool, snap->refused[i].route),
                   snap->refused[i].now);
    ap_rprintf(r, "# HELP hotlimit_refusals_per_second Refusals per second over the last %d whole seconds.\n"
               "# TYPE hotlimit_refusals_per_second gauge\n"
               "hotlimit_refusals_per_second %s\n"
               "# HELP hotlimit_counters_start_time_seconds When the counters started (Unix time): kept across full restarts when HotLimitPersist keeps them.\n"
               "# TYPE hotlimit_counters_start_time_seconds gauge\n"
               "hotlimit_counters_start_time_seconds %s\n",
               HL_REFUSALS_RATE_S, snap->refusal_rate,
               prom_seconds(r->pool, snap->shared.counters_started_ms));
    ap_rputs("# HELP hotlimit_table_reloads_total Quota table reloads by result.\n"
             "# TYPE hotlimit_table_reloads_total counter\n", r);
    for (k = 0; k < HL_RELOAD_RESULTS; ++k)
        ap_rprintf(r, "hotlimit_table_reloads_total{result=\"%s\"} %"
                   APR_UINT64_T_FMT "\n", hl_status_result_name(k),
                   (apr_uint64_t)snap->table.reloads[k]);
    ap_rprintf(r, "# HELP hotlimit_table_generation Generation of the quota table in force.\n"
               "# TYPE hotlimit_table_generation gauge\n"
               "hotlimit_table_generation %" APR_UINT64_T_FMT "\n"
               "# HELP hotlimit_table_skipped_entries Entries skipped as invalid in the quota table in force.\n"
               "# TYPE hotlimit_table_skipped_entries gauge\n"
               "hotlimit_table_skipped_entries %u\n"
               "# HELP hotlimit_table_last_reload_timestamp_seconds When the quota table in force was published (Unix time; 0: never).\n"
               "# TYPE hotlimit_table_last_reload_timestamp_seconds gauge\n"
               "hotlimit_table_last_reload_timestamp_seconds %s\n"
               "# HELP hotlimit_table_last_reload_successful 0 while the last reload result is failed (a source that stays broken keeps it), else 1.\n"
               "# TYPE hotlimit_table_last_reload_successful gauge\n"
               "hotlimit_table_last_reload_successful %d\n"
               "# HELP hotlimit_slots_used Counter slots in use.\n"
               "# TYPE hotlimit_slots_used gauge\n"
               "hotlimit_slots_used %u\n"
               "# HELP hotlimit_slots_capacity Counter slots available.\n"
               "# TYPE hotlimit_slots_capacity gauge\n"
               "hotlimit_slots_capacity %u\n"
               "# HELP hotlimit_evictions_total Counters reused while still live.\n"
               "# TYPE hotlimit_evictions_total counter\n"
               "hotlimit_evictions_total %" APR_UINT64_T_FMT "\n"
               "# HELP hotlimit_reclaims_total Expired counters freed for new keys.\n"
               "# TYPE hotlimit_reclaims_total counter\n"
               "hotlimit_reclaims_total %" APR_UINT64_T_FMT "\n"
               "# HELP hotlimit_slot_classes Eviction classes (quotas) with a record.\n"
               "# TYPE hotlimit_slot_classes gauge\n"
               "hotlimit_slot_classes %u\n"
               "# HELP hotlimit_start_time_seconds When the counters started: the start of the httpd parent, kept across restarts (Unix time).\n"
               "# TYPE hotlimit_start_time_seconds gauge\n"
               "hotlimit_start_time_seconds %s\n",
               (apr_uint64_t)snap->table.table_generation,
               snap->table.table_skipped,
               prom_seconds(r->pool, snap->table.table_loaded_ms),
               snap->table.table_last_result != HL_RELOAD_FAILED, snap->used,
               snap->capacity, (apr_uint64_t)snap->evictions,
               (apr_uint64_t)snap->reclaims, snap->classes,
               prom_seconds(r->pool, snap->sum.started_ms));
    write_store_metrics(r, snap);
    hl_ban_write_metrics(r, snap->view);
    hl_conc_write_metrics(r);
}

