/*
 * mod_hotlimit_delay.h - HotLimitQuota ... algo=gcra delay=N (nginx
 * limit_req's delay=): what mod_hotlimit_delay.c offers the access
 * checker.
 */
#ifndef MOD_HOTLIMIT_DELAY_H
#define MOD_HOTLIMIT_DELAY_H

#include "mod_hotlimit_match.h"

/*
 * Holds r, just admitted by the quotas m[0 .. n), until it conforms to
 * the rate of every one with delay= (hl_delay_ms; dry-run quotas never
 * hold), among the requests HotLimitMaxWaiting counts, watching its
 * client. Returns DECLINED (passed, held or not), the 429 outcome when
 * the server holds its most already (HL02661), or DONE when the client
 * went away while held (HL02662).
 */
int hl_delay_hold(request_rec *r, hl_match_t *m, int n);

#endif
