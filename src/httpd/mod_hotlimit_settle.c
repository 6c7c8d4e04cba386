/*
 * mod_hotlimit_settle.c - honest Retry-After for reserve= (see
 * mod_hotlimit_settle.h).
 */
#include "httpd.h"
#include "http_log.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_settle.h"
#include "mod_hotlimit_store_shm.h"
#include "hl_decide.h"
#include "hl_stats.h"

APLOG_USE_MODULE(hotlimit);

/* Returns 1 if the item of m settles a reservation after its response. */
static int reserves(const hl_match_t *m)
{
    return m->item.reserve > 0 && !m->item.peek && m->item.stats_name
           && hl_quota_after_response(m->item.quota);
}

void hl_settle_after_decision(request_rec *r, hl_match_t *m, int n,
                              int64_t now_ms)
{
    int i;

    for (i = 0; i < n; ++i) {
        hl_decision_t *d = &m[i].item.decision;
        long before = d->retry_after_s;
        int64_t est;

        if (!reserves(&m[i]))
            continue;
        if (d->admit) {
            m[i].admitted_ms = now_ms > 0 ? now_ms : 1;
            continue;
        }
        est = hl_stats_settle_ms(hl_store_shm_stats(), m[i].item.stats_hash,
                                 m[i].item.stats_name,
                                 m[i].item.stats_name_len);
        if (hl_decide_settle_hint(d, est))
            ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r,
                          "HL02700: reserved units of running requests fill "
                          "the window: key=%s Retry-After %lds (window: %lds), "
                          "they settle in %" APR_INT64_T_FMT " ms on average",
                          ap_escape_logitem(r->pool, m[i].item.key),
                          d->retry_after_s, before, est);
    }
}

void hl_settle_note(const hl_match_t *m, int64_t now_ms)
{
    if (!reserves(m) || m->admitted_ms <= 0)
        return;
    hl_stats_settled(hl_store_shm_stats(), m->item.stats_hash,
                     m->item.stats_name, m->item.stats_name_len,
                     now_ms - m->admitted_ms);
}
