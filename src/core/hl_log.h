/*
 * hl_log.h - the arithmetic of one sliding log (algo=log): the times of
 * the requests admitted in the last WINDOW, so that never more than COUNT
 * are admitted in any WINDOW-long span. Exact, at most HL_LOG_MAX entries
 * (so COUNT at most HL_LOG_MAX). Integers only (it lives in shared memory,
 * in the slot table's log pool, hl_slots.h), time passed in as now_ms.
 * Pure: no locks, no I/O; the caller owns the record.
 */
#ifndef HL_LOG_H
#define HL_LOG_H

#include <stdint.h>
#include "hl_bucket.h"

#define HL_LOG_MAX 64    /* entries of one log: the largest COUNT */

/* One log: entries base + off[0 .. n), oldest first. All zero is empty. */
typedef struct {
    uint32_t owner;      /* slot table: slot index + 1 of its owner, 0 free */
    uint32_t next;       /* slot table: next free record, index + 1 */
    int64_t  base;       /* ms: the time of the oldest entry */
    uint32_t n;          /* entries, <= HL_LOG_MAX */
    uint32_t reserved;
    uint32_t off[HL_LOG_MAX];  /* ms after base, ascending */
} hl_log_t;

/*
 * Decides whether one more request fits in *l at now_ms, without counting
 * it (drops the entries that left the window first). Admits when fewer
 * than COUNT entries lie in (now - WINDOW, now]; a rejection's retry_ms is
 * when enough of the oldest have left for one more (>= 1), reset_ms when
 * the newest has. An entry after now (clock stepped back) counts as in
 * the window. Never fails.
 */
void hl_log_check(hl_log_t *l, const hl_policy_t *p, int64_t now_ms,
                  hl_verdict_t *v);

/*
 * Counts n requests at now_ms. Only the newest HL_LOG_MAX entries are
 * kept: older ones can never decide anything with COUNT <= HL_LOG_MAX.
 * Never fails.
 */
void hl_log_commit_n(hl_log_t *l, const hl_policy_t *p, int64_t now_ms,
                     uint32_t n);

/* Returns the mark of the entry a commit at now_ms just made: now_ms
 * (never 0, which means "not counted"). */
int64_t hl_log_mark(int64_t now_ms);

/*
 * Gives back the newest entry at time mark, if it is still in the log.
 * Returns 1 if given back, 0 if gone (never an error). Never fails.
 */
int hl_log_refund(hl_log_t *l, const hl_policy_t *p, int64_t now_ms,
                  int64_t mark);

/*
 * Sets *l to what another store reported (see hl_bucket_follow): the used
 * entries are all placed at the latest time they can have (when the newest
 * leaves, reset_ms from now), so room comes back no sooner than there;
 * then n requests are counted at now_ms. Conservative; never fails.
 */
void hl_log_follow(hl_log_t *l, const hl_policy_t *p, int64_t now_ms,
                   const hl_verdict_t *v, uint32_t n);

/* Returns the ms since epoch from which *l holds nothing in its window
 * (the newest entry + WINDOW); 0 when empty. */
int64_t hl_log_expires_ms(const hl_log_t *l, const hl_policy_t *p);

/* Returns the entries of *l (for a fill level or a display). */
uint32_t hl_log_length(const hl_log_t *l);

/* Moves every entry by delta_ms, pulling any that lands after now_ms back
 * to now_ms (hl_limiter_rebase). Never fails. */
void hl_log_rebase(hl_log_t *l, int64_t delta_ms, int64_t now_ms);

#endif
