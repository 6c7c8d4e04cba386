/*
 * hl_delay.h - HotLimitQuota ... algo=gcra delay=N (nginx limit_req's
 * delay=): how long an admitted request is held before it conforms to
 * the rate. Pure: reads a decision, no locks, no time of its own.
 */
#ifndef HL_DELAY_H
#define HL_DELAY_H

#include <stdint.h>

#include "hl_quota.h"
#include "hl_limiter.h"

/*
 * Returns how long (ms, >= 0) a request that d admitted under q is held:
 * in each GCRA window, how far ahead of now the theoretical arrival time
 * lay before this request (its reset_ms less one emission interval: the
 * requests over the steady rate ahead of it, in time) less delay=
 * intervals (those pass at once); the most of q's windows. 0 when q has
 * no delay=, is not GCRA, or d did not admit. Under delay=0 and 2/1s,
 * requests at once are held 0, 500, 1000, 1500 ms. Never fails.
 */
int64_t hl_delay_ms(const hl_quota_t *q, const hl_decision_t *d);

#endif
