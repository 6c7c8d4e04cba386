/*
 * mod_hotlimit_modstatus.c - a "mod_hotlimit" section in mod_status's
 * server-status page, and "HotLimit...: value" lines in server-status?auto,
 * through mod_status's optional status_hook (registered in mod_hotlimit.c;
 * without mod_status it is never called).
 *
 * The figures come from hl_status_summary: copied out of shared memory
 * under the lock, written here after unlocking. The full picture (routes,
 * busiest keys, JSON, Prometheus) stays on the hotlimit-status handler.
 */
#include "httpd.h"
#include "http_config.h"
#include "http_protocol.h"
#include "apr_strings.h"
#include "mod_status.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_modstatus.h"
#include "mod_hotlimit_status_snap.h"
#include "mod_hotlimit_status_html.h"
#include "hl_render.h"

/* Writes the ?auto lines: one "Key: value" each, no spaces in keys,
 * values without newlines. */
static void write_auto(request_rec *r, const hl_status_summary_t *sum)
{
    ap_rprintf(r, "HotLimitSlotsUsed: %u\n"
               "HotLimitSlotsCapacity: %u\n"
               "HotLimitEvictionsTotal: %" APR_UINT64_T_FMT "\n"
               "HotLimitTableGeneration: %" APR_UINT64_T_FMT "\n"
               "HotLimitTableLastResult: %s\n"
               "HotLimitTableLastReloadTimestamp: %" APR_INT64_T_FMT "\n"
               "HotLimitTableReloadsFailedTotal: %" APR_UINT64_T_FMT "\n"
               "HotLimitAdmittedTotal: %" APR_UINT64_T_FMT "\n"
               "HotLimitRejectedTotal: %" APR_UINT64_T_FMT "\n"
               "HotLimitDryRunTotal: %" APR_UINT64_T_FMT "\n"
               "HotLimitUptimeSeconds: %" APR_INT64_T_FMT "\n",
               sum->slots_used, sum->slots_capacity,
               (apr_uint64_t)sum->evictions,
               (apr_uint64_t)sum->table_generation, sum->table_result,
               (apr_int64_t)(sum->table_loaded_ms / 1000),
               (apr_uint64_t)sum->reloads_failed,
               (apr_uint64_t)sum->decisions[HL_DECISION_ADMITTED],
               (apr_uint64_t)sum->decisions[HL_DECISION_REJECTED],
               (apr_uint64_t)sum->decisions[HL_DECISION_DRY_RUN],
               (apr_int64_t)sum->uptime_s);
}

/* Writes the HTML section, in mod_status's own <dl><dt> style. */
static void write_html(request_rec *r, const hl_status_summary_t *sum)
{
    apr_pool_t *p = r->pool;
    char when[APR_RFC822_DATE_LEN] = "never";
    const char *table;
    double full = sum->slots_capacity
                  ? 100.0 * sum->slots_used / sum->slots_capacity : 0.0;

    if (sum->table_loaded_ms)
        apr_rfc822_date(when, (apr_time_t)sum->table_loaded_ms * 1000);
    if (sum->table_source[0])
        table = apr_psprintf(p, "%s, generation %" APR_UINT64_T_FMT
                             ", published %s; last reload: %s (%s), %"
                             APR_UINT64_T_FMT " failed in all",
                             hl_html_escape(p, sum->table_source),
                             (apr_uint64_t)sum->table_generation, when,
                             sum->table_result,
                             hl_html_escape(p, sum->table_message),
                             (apr_uint64_t)sum->reloads_failed);
    else
        table = "none (HotLimitQuota directives only)";
    ap_rprintf(r, "<hr><h2 id=\"hotlimit\">mod_hotlimit</h2>\n<dl>\n"
               "<dt>Counter slots: %u used of %u (%.1f%%), %" APR_UINT64_T_FMT
               " evictions</dt>\n"
               "<dt>Decisions: %" APR_UINT64_T_FMT " admitted, %"
               APR_UINT64_T_FMT " rejected, %" APR_UINT64_T_FMT
               " dry run</dt>\n"
               "<dt>Quota table: %s</dt>\n"
               "<dt>Counting for: %s</dt>\n</dl>\n",
               sum->slots_used, sum->slots_capacity, full,
               (apr_uint64_t)sum->evictions,
               (apr_uint64_t)sum->decisions[HL_DECISION_ADMITTED],
               (apr_uint64_t)sum->decisions[HL_DECISION_REJECTED],
               (apr_uint64_t)sum->decisions[HL_DECISION_DRY_RUN],
               table, hl_status_duration(p, sum->uptime_s));
}

int hl_modstatus_hook(request_rec *r, int flags)
{
    const hl_status_summary_t *sum = hl_status_summary(r);

    if (!sum) {
        /* No store (or its lock failed, logged): say so on the page;
         * ?auto readers get no HotLimit lines rather than wrong ones. */
        if (!(flags & AP_STATUS_SHORT))
            ap_rputs("<hr><h2 id=\"hotlimit\">mod_hotlimit</h2>\n"
                     "<p>Counters unavailable.</p>\n", r);
        return OK;
    }
    if (flags & AP_STATUS_SHORT)
        write_auto(r, sum);
    else
        write_html(r, sum);
    return OK;
}
