/*
 * hl_tightest.h - which of a request's quota windows binds: the one its
 * RateLimit header and HOTLIMIT_REMAINING describe. One rule, read by the
 * decision (hl_decide_tightest, over a decision's windows) and by the
 * renderer (hl_render_tightest, over the views of several quotas). Pure: no
 * allocation, no APR, no httpd headers.
 */
#ifndef HL_TIGHTEST_H
#define HL_TIGHTEST_H

#include <stdint.h>

/*
 * Returns 1 if a window with `remaining` requests left, which resets in
 * reset_s seconds, binds tighter than the best window found so far
 * (best_remaining left, resetting in best_reset_s): fewer requests left,
 * or as many and a longer wait. 0 otherwise, so that among equals the
 * first one found stays the tightest. Never fails.
 */
int hl_tightest_beats(uint32_t remaining, int64_t reset_s,
                      uint32_t best_remaining, int64_t best_reset_s);

#endif
