/*
 * hl_decide.h - the decision over every quota that applies to one request:
 * a request is admitted only if every quota that is not in dry run admits
 * it, and only then is it counted, in every window of every quota at cost
 * 1 (cost=header: quotas are counted after the response,
 * hl_decide_count_locked). A rejected request is counted nowhere.
 * count=failures|status quotas take their unit here too, like count=all,
 * and give it back once the final status is known not to count
 * (hl_decide_refund_locked): so no more than COUNT counted requests are
 * ever admitted in a window, however many are in flight at once.
 *
 * Two steps, so that the caller's critical section does only the counting:
 * hl_decide_prepare (slot keys and their hashes: before the lock) and
 * hl_decide_locked (under the lock: slots and buckets), then
 * hl_decide_stats (the per-route statistics, after the lock). Pure: no
 * httpd, no allocation, time passed in as now_ms.
 */
#ifndef HL_DECIDE_H
#define HL_DECIDE_H

#include <stddef.h>
#include <stdint.h>
#include "hl_limiter.h"
#include "hl_stats.h"

#define HL_DECIDE_MAX 6     /* quotas one request can meet: the scope's
                               (up to three HotLimitQuota lines), a table
                               rule and the table's global bucket; and the
                               look at its client's ban */

/* One quota meeting one request. */
typedef struct {
    const hl_quota_t *quota;       /* not owned; valid during the calls */
    hl_origin_t       origin;
    int               dry_run;     /* never rejects; would-be rejections
                                      counted as dry run */
    const char       *key;         /* "scope|client", not owned */
    size_t            key_len;
    uint64_t          cls;         /* eviction class (hl_limiter_class_of) */
    uint64_t          stats_hash;  /* hash of stats_name, never changing */
    const char       *stats_name;  /* what the statistics count it under;
                                      NULL: not counted in statistics */
    size_t            stats_name_len;  /* its length; 0: measured */
    int               peek;        /* decided but never counted (whether a
                                      client is banned) */
    int               exact;       /* each decision asks the store itself
                                      (never a lease: ban counters) */
    unsigned          stripe;      /* the store's own: which of its tables */
    hl_slot_ref_t     refs[HL_MAX_WINDOWS];  /* from hl_decide_prepare */
    hl_decision_t     decision;    /* from hl_decide_locked */
    uint32_t          reserve;     /* reserve= (issue 19): the units a cost=
                                      quota's request takes at its decision
                                      (admitted only if they fit every
                                      window), settled after the response
                                      (hl_decide_settle_locked); 0: none */
} hl_decide_item_t;

/* Fills it->refs for table t (reads only t's seed: no lock). Never fails.
 * Inline: every new key's item is prepared at its request. */
static inline void hl_decide_prepare(const hl_slots_t *t, hl_decide_item_t *it)
{
    hl_limiter_refs(t, it->origin, it->quota->nwindows, it->key, it->key_len,
                    it->refs);
}

/*
 * Decides *items[0 .. n) at now_ms, item i in table tables[i] (a store may
 * keep keys in several tables, each with its own lock); the caller holds
 * the locks of every table named. Fills each item's decision and counts
 * the request as described above. A look (peek) not in dry run that
 * refuses ends the decision: the items after it are not asked (no slot is
 * looked up, created or evicted for them; hl_decide_not_asked), so a
 * caller puts its looks (a ban) first. Returns 1 if the request is
 * admitted, 0 if rejected. Never fails: a full table evicts
 * (hl_slots_get).
 */
int hl_decide_locked(hl_slots_t *const *tables,
                     hl_decide_item_t *const *items, int n, int64_t now_ms);

/* Sets the decision of it to "not asked": refused, no window (an item
 * after a look that refused; the request is counted as banned in the
 * statistics, hl_decide_stats). Never fails. */
void hl_decide_not_asked(hl_decide_item_t *it);

/*
 * Adds the outcome of the request to st, after hl_decide_locked, so that
 * a request is counted once per kind: refused by a quota not in dry run,
 * as rejected at that item only (the other items count it as refused by
 * another rule: hl_stats_refused_other, not a decision of theirs);
 * refused by a look (a ban), as banned at the first item with a
 * stats_name only; else admitted at every item, or dry run at an item in
 * dry run that would have refused it. st is lock-free (hl_stats.h), so
 * the caller calls this after letting go of its locks. Never fails.
 */
void hl_decide_stats(hl_stats_t *st, hl_decide_item_t *const *items, int n,
                     int64_t now_ms);

/* Counts one finished request of it, of cost n, in every window
 * (count=failures|status once the status is known, cost=header: once the
 * response carries its cost; hl_limiter_count_refs_n); the caller holds
 * the lock. */
void hl_decide_count_locked(hl_slots_t *t, const hl_decide_item_t *it,
                            uint32_t n, int64_t now_ms);

/* Gives back the unit a count=failures|status item (hl_quota_refunds)
 * took when its request was admitted, now that its final status is known
 * not to count: in every window whose counter instance still holds it
 * (it->decision.marks; hl_limiter_refund_refs), never in a window that
 * started since. The caller holds the lock. Returns the windows given
 * back; 0 for an item of another kind. */
int hl_decide_refund_locked(hl_slots_t *t, const hl_decide_item_t *it,
                            int64_t now_ms);

/* Returns the units the decision of it counts when admitted: 0 for a
 * look, or a cost= quota without a reservation (counted after the
 * response); its reservation (it->reserve) for one with reserve=; else
 * 1. */
uint32_t hl_decide_units(const hl_decide_item_t *it);

/* Settles the reservation (it->reserve units, taken when its request was
 * admitted) of a cost= item to the request's real cost
 * (hl_limiter_settle_refs: the rest given back where it still sits, or
 * the excess counted). The caller holds the lock. Returns the windows
 * touched; 0 for an item without a reservation. */
int hl_decide_settle_locked(hl_slots_t *t, const hl_decide_item_t *it,
                            uint32_t cost, int64_t now_ms);

/*
 * [reserve=] Makes the refusal d tell when units held by running requests
 * typically come back: each refused window whose refusal they alone cause
 * (hl_verdict_t held) gets retry_ms = settle_ms when that is sooner than
 * its own (never later than the window's end), at least 1; retry_after_s
 * is then the longest retry of the refused windows in whole seconds,
 * rounded up, at least 1 (a window refused for good keeps its wait).
 * settle_ms <= 0 (no estimate yet) changes nothing. Returns 1 if d
 * changed, else 0. Never fails.
 */
int hl_decide_settle_hint(hl_decision_t *d, int64_t settle_ms);

/*
 * Returns the index of the item whose headers and environment describe the
 * request: the first that rejected it (dry run aside), else the one with
 * the least remaining (ties: the first). 0 when n <= 1.
 */
int hl_decide_primary(hl_decide_item_t *const *items, int n);

/*
 * Returns the index of the window of d that binds (hl_tightest_beats: the
 * least remaining; ties: the one that takes longer to reset, then the
 * first): the window RateLimit and HOTLIMIT_REMAINING describe. 0 when d
 * has no window.
 */
int hl_decide_tightest(const hl_decision_t *d);

/* Returns the seconds until window i of d resets (admitted) or admits again
 * (rejected), rounded up; >= 0. */
int64_t hl_decide_reset_s(const hl_decision_t *d, int i);

#endif
