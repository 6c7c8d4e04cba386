/*
 * mod_hotlimit_delay.c - HotLimitQuota ... algo=gcra delay=N: holds an
 * admitted request over the steady rate until it conforms (see
 * mod_hotlimit_delay.h). The hold itself (a place among the requests
 * HotLimitMaxWaiting counts, a sleep watching the client) is
 * HotLimitConcurrency's (hl_conc_hold): one account of held requests.
 *
 * A held request was counted at its admission, as nginx's is: a refusal
 * for HotLimitMaxWaiting, or a client gone meanwhile, does not give its
 * unit back.
 */
#include "httpd.h"
#include "http_log.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_conc.h"
#include "mod_hotlimit_delay.h"
#include "mod_hotlimit_respond.h"
#include "mod_hotlimit_wait.h"
#include "hl_delay.h"

APLOG_USE_MODULE(hotlimit);

/* hl_delay_hold once a match has delay=: returns the same. */
static __attribute__((noinline)) int hold(request_rec *r, hl_match_t *m,
                                          int n)
{
    int64_t most = 0, ms;
    int i, k = -1, rc;

    for (i = 0; i < n; ++i) {
        if (m[i].item.dry_run || !m[i].item.quota->has_delay)
            continue;
        ms = hl_delay_ms(m[i].item.quota, &m[i].item.decision);
        if (ms > most) {
            most = ms;
            k = i;
        }
    }
    if (k < 0)
        return DECLINED;
    rc = hl_conc_hold(r, most);
    if (rc == 0) {
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r,
                      "HL02660: delay=: held %ld ms route=%s", (long)most,
                      m[k].route);
        return DECLINED;
    }
    if (rc < 0) {
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                      "HL02662: delay=: the client went away while held "
                      "route=%s", m[k].route);
        return DONE;
    }
    ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                  "HL02661: HotLimitMaxWaiting (%u) reached: refused instead "
                  "of held %ld ms route=%s", hl_wait_max(), (long)most,
                  m[k].route);
    m[k].item.decision.admit = 0;
    m[k].item.decision.retry_after_s = (long)((most + 999) / 1000);
    if (m[k].item.decision.retry_after_s < 1)
        m[k].item.decision.retry_after_s = 1;
    return hl_respond_reject(r, &m[k]);
}

/* The usual request has no delay=: one look per match, no frame (the
 * hold's own loop costs ~30 instructions of entry and exit). */
int hl_delay_hold(request_rec *r, hl_match_t *m, int n)
{
    int i;

    for (i = 0; i < n; ++i)
        if (m[i].item.quota->has_delay && !m[i].item.dry_run)
            return hold(r, m, n);
    return DECLINED;
}
