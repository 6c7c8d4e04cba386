/*
 * hl_limiter.h - one rate-limit decision over every window of a quota,
 * using the slot table. A request is admitted only if every window admits
 * it, and then it is counted in every window; a rejected request is not
 * counted anywhere.
 *
 * The caller holds the global mutex around each call (the slot table has
 * no lock of its own). Pure: time is passed in as now_ms.
 */
#ifndef HL_LIMITER_H
#define HL_LIMITER_H

#include <stddef.h>
#include <stdint.h>
#include "hl_quota.h"
#include "hl_bucket.h"
#include "hl_slots.h"
#include "hl_slotkey.h"

/* Where a quota comes from; part of the counter key so that a directive
 * quota and a table rule on the same route never share a counter. */
typedef enum {
    HL_ORIGIN_DIRECTIVE = 'd',
    HL_ORIGIN_TABLE     = 't'
} hl_origin_t;

typedef struct {
    int          admit;                     /* 1 if every window admits */
    int          nwindows;
    hl_verdict_t windows[HL_MAX_WINDOWS];   /* one verdict per window;
                                               past nwindows: undefined */
    long         retry_after_s;             /* rejected: whole seconds, >= 1,
                                               never before re-admission */
    uint32_t     remaining;                 /* least remaining over windows */
    int64_t      marks[HL_MAX_WINDOWS];     /* counted: where each window's
                                               unit sits (hl_bucket_mark),
                                               for a refund; 0: not counted */
} hl_decision_t;

/* One window's slot key ("<origin><window><key>", compacted) and its hash
 * in the table, computed before the lock is taken (the table's seed never
 * changes once attached), so the critical section hashes nothing; and
 * where its slot was last found (hl_slots_get_hinted), which a caller that
 * keeps the ref for the same key's next decision saves a lookup with. */
typedef struct {
    uint64_t hash;
    uint32_t hint;         /* slot index + 1 last found; 0 unknown */
    uint16_t len;
    char     key[HL_KEY_MAX];
} hl_slot_ref_t;

/*
 * Fills refs[0 .. nwindows) with the slot keys and hashes of the windows of
 * `key` ("scope|client", any length) for origin, in table t. Reads only t's
 * seed: no lock needed. Never fails. Inline (below, after
 * hl_limiter_slot_key): a new client's keys are built at every request.
 */
static inline void hl_limiter_refs(const hl_slots_t *t, hl_origin_t origin,
                                   int nwindows, const char *key,
                                   size_t keylen, hl_slot_ref_t *refs);

/*
 * Decides on one request against every window of q at now_ms, its slot
 * keys computed by hl_limiter_refs and its eviction class given
 * (hl_limiter_class_of: keys of one quota never evict the live counters of
 * another, hl_slots.h): nothing is hashed or formatted here. When commit
 * is nonzero and every window admits, counts the request in every window.
 * Sets each window's fill level (full when it has no request left) and
 * updates each ref's hint. Never fails: a full table frees or evicts
 * (see hl_slots_get).
 */
void hl_limiter_decide_refs(hl_slots_t *t, const hl_quota_t *q,
                            hl_slot_ref_t *refs, uint64_t cls,
                            int64_t now_ms, int commit, hl_decision_t *d);

/*
 * hl_limiter_decide_refs without counting and without creating counters:
 * a key that has no counter in any window is admitted with its whole quota
 * (so asking "is this client banned?" on every request costs no slot).
 * Never fails.
 */
void hl_limiter_peek_refs(hl_slots_t *t, const hl_quota_t *q,
                          hl_slot_ref_t *refs, uint64_t cls,
                          int64_t now_ms, hl_decision_t *d);

/* hl_limiter_decide_refs deciding whether `units` fit in every window
 * (hl_bucket_check_n) and, with commit, counting them all (reserve=); a
 * verdict's remaining is then what is left after the units. units 0 or 1
 * is hl_limiter_decide_refs. Never fails. */
void hl_limiter_decide_refs_n(hl_slots_t *t, const hl_quota_t *q,
                              hl_slot_ref_t *refs, uint64_t cls,
                              int64_t now_ms, int commit, uint32_t units,
                              hl_decision_t *d);

/* Counts a reservation of n units in every window of q (capped at what
 * each window holds: its COUNT, or a gcra burst, which the decision
 * found it to fit), writing where they sit into marks (for
 * hl_limiter_settle_refs). For a request decided with several quotas,
 * counted once all admitted it. Never fails. */
void hl_limiter_reserve_refs(hl_slots_t *t, const hl_quota_t *q,
                             const hl_slot_ref_t *refs, uint64_t cls,
                             int64_t now_ms, uint32_t n, int64_t *marks);

/* Notes the reservation of n units just counted in every window of q
 * (marks from that count) as held by a request still running
 * (hl_bucket_hold), until hl_limiter_settle_refs. Creates no counter.
 * Never fails. */
void hl_limiter_hold_refs(hl_slots_t *t, const hl_quota_t *q,
                          const hl_slot_ref_t *refs, const int64_t *marks,
                          uint32_t n, int64_t now_ms);

/*
 * Settles a reservation of `reserved` units (counted at the decision,
 * marks from it) to the request's real cost: a cost below it gives back
 * reserved - cost in every window whose counter instance still holds the
 * reservation (hl_bucket_refund_n: never in a window that started since,
 * never below 0; creates no counter); a cost above it counts the excess
 * now (capped at each window's COUNT). Whatever the cost, the units are
 * no longer held (hl_bucket_release). Returns the windows given back or
 * charged. Never fails.
 */
int hl_limiter_settle_refs(hl_slots_t *t, const hl_quota_t *q,
                           const hl_slot_ref_t *refs, uint64_t cls,
                           const int64_t *marks, uint32_t reserved,
                           uint32_t cost, int64_t now_ms);

/* Counts one finished request in every window of q, its slot keys and
 * class as for hl_limiter_decide_refs (count=failures|status: the
 * decision was made before the handler, the counting happens once the
 * status is known); writes where each window's unit sits into
 * marks[0 .. nwindows) unless marks is NULL (for hl_limiter_refund_refs).
 * Never fails. */
void hl_limiter_count_refs(hl_slots_t *t, const hl_quota_t *q,
                           const hl_slot_ref_t *refs, uint64_t cls,
                           int64_t now_ms, int64_t *marks);

/*
 * Gives back one unit counted at admission in every window of q whose
 * counter still holds it (marks from the decision that counted it:
 * hl_bucket_refund_n; a mark of 0 was never counted). Creates no counter:
 * one evicted since has nothing to give back. Returns the number of
 * windows given back. Never fails.
 */
int hl_limiter_refund_refs(hl_slots_t *t, const hl_quota_t *q,
                           const hl_slot_ref_t *refs, const int64_t *marks,
                           int64_t now_ms);

/*
 * Counts one finished request of cost n (cost=header:) in every window:
 * each window is charged n, capped at that window's COUNT, so one request
 * may empty a window (and push it over its limit) but its debt never
 * outlives the window (hl_bucket_commit_n). n = 0 counts nothing. Never
 * fails.
 */
void hl_limiter_count_refs_n(hl_slots_t *t, const hl_quota_t *q,
                             const hl_slot_ref_t *refs, uint64_t cls,
                             int64_t now_ms, uint32_t n);

/*
 * Makes the local counters of every window of q follow what another store
 * (Redis) answered at now_ms: v[i] is its check of window i (admit,
 * remaining after one more, reset_ms), after which it counted n requests
 * in every window (0: none), capped at each window's COUNT as there
 * (hl_bucket_follow). A window that store reports unused and that has no
 * local counter gets none (a look at a ban costs no slot). Sets each
 * window's fill level. Never fails.
 */
void hl_limiter_follow_refs(hl_slots_t *t, const hl_quota_t *q,
                            hl_slot_ref_t *refs, uint64_t cls, int64_t now_ms,
                            const hl_verdict_t *v, uint32_t n);

/*
 * Returns the eviction class of a quota from precomputed hashes: the hash
 * of its scope and of the virtual host it counts in (hl_table_route_hash
 * of each; 0 for the main server). Never 0.
 */
uint64_t hl_limiter_class_of(hl_origin_t origin, uint64_t host_hash,
                             uint64_t scope_hash);

/* How many slot keys one user-visible key has: every window of both
 * origins (hl_limiter_reset_keys). */
#define HL_LIMITER_RESET_KEYS (2 * HL_MAX_WINDOWS)

/*
 * Writes the slot keys of `key` ("route|client") for every window and
 * origin, what a reset removes from any store, into keys and their lengths
 * into lens (HL_LIMITER_RESET_KEYS each). Returns HL_LIMITER_RESET_KEYS.
 * Never fails.
 */
int hl_limiter_reset_keys(char keys[HL_LIMITER_RESET_KEYS][HL_KEY_MAX],
                          size_t lens[HL_LIMITER_RESET_KEYS],
                          const char *key, size_t keylen);

/*
 * Removes the counters of `key` ("route|client") for every window and
 * origin (hl_limiter_reset_keys). Returns the number of slots removed (0
 * if none existed).
 */
int hl_limiter_reset(hl_slots_t *t, const char *key, size_t keylen);

/*
 * Moves every stored time of the table by delta_ms (counters saved under
 * another clock base: a previous boot's monotonic clock), then pulls any
 * time that lands after now_ms back to now_ms, so no counter is ahead of
 * the clock it is read with. Never fails.
 */
void hl_limiter_rebase(hl_slots_t *t, int64_t delta_ms, int64_t now_ms);

/*
 * Writes the slot key of window i of `key` under origin into out
 * (HL_KEY_MAX bytes): hl_slotkey_slot, the one writer of that layout.
 * Returns its length. Never fails.
 */
static inline size_t hl_limiter_slot_key(char out[HL_KEY_MAX],
                                         hl_origin_t origin, int i,
                                         const char *key, size_t keylen)
{
    return hl_slotkey_slot(out, (char)origin, i, key, keylen);
}

/* See above. */
static inline void hl_limiter_refs(const hl_slots_t *t, hl_origin_t origin,
                                   int nwindows, const char *key,
                                   size_t keylen, hl_slot_ref_t *refs)
{
    int i;

    for (i = 0; i < nwindows && i < HL_MAX_WINDOWS; ++i) {
        size_t len = hl_limiter_slot_key(refs[i].key, origin, i, key, keylen);
        refs[i].len = (uint16_t)len;
        refs[i].hash = hl_slots_hash(t, refs[i].key, len);
        refs[i].hint = 0;
    }
}

#endif
