/*
 * mod_hotlimit_settle.h - honest Retry-After for reserve= (issue 26 item
 * 2): how long the reserving requests of a route take from admission to
 * settlement (a moving average per route, in the shared statistics:
 * hl_stats_settled), and a refusal that units held by running requests
 * alone cause pointed at that time instead of the window's end
 * (hl_decide_settle_hint). Works the same over either store: both say
 * which refused windows only their held units block (hl_verdict_t held).
 */
#ifndef MOD_HOTLIMIT_SETTLE_H
#define MOD_HOTLIMIT_SETTLE_H

#include "mod_hotlimit_respond.h"

/*
 * After the decision on the n matches m at now_ms (hl_mono_ms): notes the
 * admission time of each admitted reservation (m[i].admitted_ms), and
 * gives each refused match whose refusal held units cause the route's
 * settle estimate (hl_decide_settle_hint; logged HL02700). Never fails.
 */
void hl_settle_after_decision(request_rec *r, hl_match_t *m, int n,
                              int64_t now_ms);

/*
 * Adds the time match m (an admitted reservation) took from admission to
 * settlement at now_ms to its route's estimate. Never fails; a match
 * without a route in the statistics or an admission time adds nothing.
 */
void hl_settle_note(const hl_match_t *m, int64_t now_ms);

#endif
