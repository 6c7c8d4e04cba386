/*
 * hl_bucket.h - the arithmetic of one counter: fixed window, sliding window
 * counter and GCRA. Integers only (it lives in shared memory), time passed in
 * as now_ms (milliseconds since the epoch). Pure: no locks, no I/O.
 */
#ifndef HL_BUCKET_H
#define HL_BUCKET_H

#include <stdint.h>
#include "hl_quota.h"

/* The state of one counter; all zero is a fresh counter. */
typedef struct {
    int64_t  t;          /* fixed: window start (ms); sliding: start of the
                            current epoch-aligned window (ms); gcra: theoretical
                            arrival time in MICROseconds */
    uint32_t count;      /* fixed/sliding: admitted in the current window */
    uint32_t prev_count; /* sliding: admitted in the previous window;
                            fixed: how many of count are held by
                            reservations still running (hl_bucket_hold) */
} hl_bucket_t;

/* What one counter needs to know about its limit. */
typedef struct {
    hl_algo_t algo;
    uint32_t  limit;     /* COUNT of the window, >= 1 */
    uint32_t  window_ms; /* WINDOW, >= 1 */
    uint32_t  burst;     /* gcra only: 0 means limit */
} hl_policy_t;

/* Returns how many requests window policy p holds: a gcra burst when set,
 * else its limit (1 when 0, as every counter reads it). The Redis script's
 * cap_of is the same rule. Never fails. */
static inline uint32_t hl_bucket_cap(const hl_policy_t *p)
{
    if (p->algo == HL_ALGO_GCRA && p->burst)
        return p->burst;
    return p->limit ? p->limit : 1;
}

typedef struct {
    int      admit;      /* 1: this request fits; 0: reject */
    uint32_t remaining;  /* requests left after this one if admitted,
                            or left now if rejected (0) */
    int64_t  reset_ms;   /* ms until the counter is back to its full quota
                            (RateLimit "t"), >= 0 */
    int64_t  retry_ms;   /* rejected: ms until a request would be admitted,
                            >= 1; admitted: 0 */
    int      held;       /* rejected, and the request would fit without the
                            units reserved by requests still running
                            (hl_bucket_hold): they may give some back when
                            they settle, before retry_ms. 0 otherwise */
} hl_verdict_t;

/*
 * Decides whether one more request fits in *b at now_ms, without counting it.
 * Rolls *b forward first (an expired window becomes fresh), which does not
 * change its meaning. Never fails. A clock that went backwards is treated as
 * no time having passed.
 */
void hl_bucket_check(hl_bucket_t *b, const hl_policy_t *p, int64_t now_ms,
                     hl_verdict_t *v);

/*
 * Counts n admitted requests in *b at now_ms (rolling it forward first),
 * in O(1). Call it only after hl_bucket_check said admit (count=all) or,
 * for count=failures, when the request is over; it may then exceed the
 * limit. Fixed and sliding add n, saturating at UINT32_MAX; GCRA moves the
 * TAT n intervals on, no further than n commits of one would: now + tau +
 * 2 intervals. n = 0 only rolls *b forward.
 */
void hl_bucket_commit_n(hl_bucket_t *b, const hl_policy_t *p, int64_t now_ms,
                        uint32_t n);

/*
 * Sets *b to what another store, on its own clock, reported of this window
 * at now_ms: *v is that store's check of one more request (as
 * hl_bucket_check fills it: admit, remaining after one more, reset_ms),
 * after which n requests were counted there (hl_bucket_commit_n). A check
 * of *b at now_ms then finds as much used as that store had, and the room
 * comes back no sooner than there: fixed - the window ends reset_ms from
 * now; gcra - the theoretical arrival time is now + reset_ms (less one
 * interval when *v admitted); sliding - everything used counts in the
 * current local window (the windows are aligned on different clocks).
 * Used to keep local counters following Redis (HotLimitStoreFailure
 * local). Never fails.
 */
void hl_bucket_follow(hl_bucket_t *b, const hl_policy_t *p, int64_t now_ms,
                      const hl_verdict_t *v, uint32_t n);

/*
 * Returns the mark of *b right after a commit: the counter instance the
 * committed unit sits in (fixed: the window start; sliding: the aligned
 * window start; gcra: the theoretical arrival time the commit produced).
 * Opaque: only hl_bucket_refund_n reads it.
 */
int64_t hl_bucket_mark(const hl_bucket_t *b);

/*
 * Gives back at now_ms n units committed when *b had mark (the request
 * turned out not to count: count=failures|status; or reserve=: the part
 * of a reservation the request did not use). Returns the units given
 * back, 0 when they are gone, which is never an error:
 *   fixed   - at most n, only while the window they were counted in lasts,
 *             and never below 0;
 *   sliding - from the window they were counted in, the current or, once
 *             that ended, the previous one (its weight), never below 0;
 *   gcra    - only while no other request was counted since (the TAT is
 *             still the one its commit produced) and the units have not
 *             drained (the TAT is still ahead of now_ms): the TAT moves
 *             back n intervals, the state the bucket would have had
 *             without them.
 * So a refund never frees room in a window instance it was not counted
 * in: after a rollover (or a counter evicted and made again) nothing
 * happens. Never fails.
 */
uint32_t hl_bucket_refund_n(hl_bucket_t *b, const hl_policy_t *p,
                            int64_t now_ms, int64_t mark, uint32_t n);

/*
 * hl_bucket_check for n units at once (reserve=): admits only if n units
 * fit now (fixed/sliding: n more stay within the limit; gcra: n commits
 * stay within the burst); remaining is then what is left after the n.
 * n over the window's COUNT (or burst) never fits: rejected, retry after
 * one window. n <= 1 is hl_bucket_check. Never fails.
 */
void hl_bucket_check_n(hl_bucket_t *b, const hl_policy_t *p, int64_t now_ms,
                       uint32_t n, hl_verdict_t *v);

/*
 * [reserve=] Notes that n of the units just committed in *b, whose mark
 * (hl_bucket_mark) was mark, are a reservation held by a request still
 * running, until hl_bucket_release. Only algo=fixed keeps them: in
 * prev_count, which a fixed window does not use otherwise, never more
 * than its count, and gone with the window; a check that refuses then
 * says whether the held units are what stands in the way (hl_verdict_t
 * held). Other algorithms keep nothing (held stays 0). Never fails.
 */
void hl_bucket_hold(hl_bucket_t *b, const hl_policy_t *p, int64_t now_ms,
                    int64_t mark, uint32_t n);

/*
 * [reserve=] The request that held n units counted when *b had mark has
 * settled: they are no longer held (whatever its cost), in the counter
 * instance the mark names only (a window that started since holds none of
 * them). Never below 0. Never fails.
 */
void hl_bucket_release(hl_bucket_t *b, const hl_policy_t *p, int64_t now_ms,
                       int64_t mark, uint32_t n);

/*
 * Returns the time (ms since epoch) from which *b is equivalent to a fresh
 * counter, so its slot may be reused first.
 */
int64_t hl_bucket_expires_ms(const hl_bucket_t *b, const hl_policy_t *p);

/*
 * Fills *p from window i of q (algo, count, window, burst). An i outside
 * 0..nwindows-1 gives limit 0 and window 0, which buckets read as 1.
 * Inline: every decision builds one per window.
 */
static inline void hl_policy_from_quota(const hl_quota_t *q, int i,
                                        hl_policy_t *p)
{
    p->algo = q->algo;
    p->burst = hl_quota_burst(q);
    p->limit = 0;
    p->window_ms = 0;
    if (i >= 0 && i < q->nwindows && i < HL_MAX_WINDOWS) {
        p->limit = q->windows[i].count;
        p->window_ms = q->windows[i].window_ms;
    }
}

#endif
