/*
 * hl_limiter.c - one decision over all windows of a quota.
 *
 * Each window of a quota has its own slot, keyed "<origin><index><key>".
 * The decision is made in two passes under the caller's lock: first every
 * window is checked (rolling expired windows forward), then, only if all
 * admit, every window counts the request. Slots are tagged with the
 * algorithm, so a quota whose algo changes starts fresh, while a changed
 * count or window applies to the existing counter at once.
 *
 * Every slot of a quota (all its windows and clients) is in the eviction
 * class of its origin and scope, and carries the fill level of its window
 * (how much of the window's limit is used; full while no request is left),
 * so that a flood of new keys, on this quota or any other, evicts the
 * least filled first and the keys at their limit last (hl_slots.h).
 */
#include <string.h>
#include "hl_hash.h"
#include "hl_limiter.h"
#include "hl_slots_logs.h"

/* The slot table knows which tag keeps a log (hl_slots.h). */
typedef char hl_log_tag_matches[HL_SLOT_TAG_LOG == HL_ALGO_LOG + 1 ? 1 : -1];
/* ... and the key layout the origin of a ban's counters. */
typedef char hl_ban_origin_matches[HL_SLOTKEY_BAN_ORIGIN == HL_ORIGIN_DIRECTIVE
                                   ? 1 : -1];

/* Returns the slot tag of an algorithm, offset so that 0 stays "free". */
static uint8_t slot_tag_of(hl_algo_t algo)
{
    return (uint8_t)(algo + 1);
}

/* Returns the slot tag for q. */
static uint8_t slot_tag(const hl_quota_t *q)
{
    return slot_tag_of(q->algo);
}

/* The origin is folded in, so 'd' and 't' quotas of one scope are two
 * classes; the virtual host too, so a scope in two hosts is two classes.
 * The splitmix64 finalizer (hl_hash_mix64) mixes the three; 0 is kept for
 * the shared class. */
uint64_t hl_limiter_class_of(hl_origin_t origin, uint64_t host_hash,
                             uint64_t scope_hash)
{
    uint64_t h = hl_hash_mix64(scope_hash
                               ^ (host_hash * 0x9e3779b97f4a7c15ULL)
                               ^ (uint64_t)origin);

    return h != 0 ? h : 1;
}

/*
 * Returns the fill level (hl_slots_fill_level) of a window after its check
 * said v and `counted` requests were then counted in it: full when it
 * refused; else what the check found used (its limit, or a GCRA burst,
 * less the requests left after one more), plus counted. Never fails.
 */
static uint8_t window_level(const hl_policy_t *p, const hl_verdict_t *v,
                            uint32_t counted)
{
    uint32_t cap = hl_bucket_cap(p);
    uint32_t left = v->remaining < cap ? v->remaining + 1 : cap;

    if (!v->admit || counted >= left)
        return HL_SLOT_FULL;
    return hl_slots_fill_level(cap - left + counted, cap);
}

/* ---- one window's counter: the slot's bucket, or for algo=log the log
 * record the slot names (hl_slots_log). Other algorithms pay one compare. */

/* Checks one more request in the counter of slot s (hl_bucket_check). */
static void counter_check(hl_slots_t *t, hl_slot_t *s, const hl_policy_t *p,
                          int64_t now_ms, uint32_t units, hl_verdict_t *v)
{
    if (p->algo == HL_ALGO_LOG)     /* one unit: reserve= is refused there */
        hl_log_check(hl_slots_log(t, s, now_ms), p, now_ms, v);
    else if (units <= 1)            /* the usual request: no room to work out */
        hl_bucket_check(&s->bucket, p, now_ms, v);
    else
        hl_bucket_check_n(&s->bucket, p, now_ms, units, v);
}

/* Counts n in the counter of slot s; returns its mark (hl_bucket_mark). */
static int64_t counter_commit(hl_slots_t *t, hl_slot_t *s,
                              const hl_policy_t *p, int64_t now_ms, uint32_t n)
{
    if (p->algo == HL_ALGO_LOG) {
        hl_log_commit_n(hl_slots_log(t, s, now_ms), p, now_ms, n);
        return hl_log_mark(now_ms);
    }
    hl_bucket_commit_n(&s->bucket, p, now_ms, n);
    return hl_bucket_mark(&s->bucket);
}

/* Sets the expiry of slot s from its counter; a log slot also shows its
 * length in bucket.count (for displays). */
static void counter_expiry(hl_slots_t *t, hl_slot_t *s, const hl_policy_t *p,
                           int64_t now_ms)
{
    hl_log_t *l;

    if (p->algo != HL_ALGO_LOG) {
        s->expires_ms = hl_bucket_expires_ms(&s->bucket, p);
        return;
    }
    l = hl_slots_log(t, s, now_ms);
    s->expires_ms = hl_log_expires_ms(l, p);
    s->bucket.count = hl_log_length(l);
}

/* Returns the slot of window ref (hl_limiter_refs) in class cls, created
 * if needed, looked for first where *hint says (hint NULL: no hint; else
 * updated). Never NULL. */
static hl_slot_t *ref_slot(hl_slots_t *t, const hl_quota_t *q,
                           const hl_slot_ref_t *ref, uint32_t *hint,
                           uint64_t cls, int64_t now_ms)
{
    if (hint == NULL)
        return hl_slots_get_hashed(t, ref->key, ref->len, ref->hash,
                                   slot_tag(q), cls, now_ms, NULL);
    return hl_slots_get_hinted(t, ref->key, ref->len, ref->hash, slot_tag(q),
                               cls, now_ms, hint);
}

void hl_limiter_decide_refs(hl_slots_t *t, const hl_quota_t *q,
                            hl_slot_ref_t *refs, uint64_t cls,
                            int64_t now_ms, int commit, hl_decision_t *d)
{
    hl_limiter_decide_refs_n(t, q, refs, cls, now_ms, commit, 1, d);
}

void hl_limiter_decide_refs_n(hl_slots_t *t, const hl_quota_t *q,
                              hl_slot_ref_t *refs, uint64_t cls,
                              int64_t now_ms, int commit, uint32_t units,
                              hl_decision_t *d)
{
    hl_slot_t *slots[HL_MAX_WINDOWS];
    hl_policy_t pol[HL_MAX_WINDOWS];
    int64_t retry_ms = 0;
    int i;

    /* Only the quota's windows are written (every reader stops at
     * nwindows): zeroing all HL_MAX_WINDOWS verdicts cost each request. */
    d->admit = 1;
    d->nwindows = q->nwindows;
    d->retry_after_s = 0;
    d->remaining = UINT32_MAX;
    memset(d->marks, 0, sizeof(d->marks));
    for (i = 0; i < q->nwindows; ++i) {
        memset(&d->windows[i], 0, sizeof(d->windows[i]));
        hl_policy_from_quota(q, i, &pol[i]);
        slots[i] = ref_slot(t, q, &refs[i], &refs[i].hint, cls, now_ms);
        counter_check(t, slots[i], &pol[i], now_ms, units, &d->windows[i]);
        if (!d->windows[i].admit) {
            d->admit = 0;
            if (d->windows[i].retry_ms > retry_ms)
                retry_ms = d->windows[i].retry_ms;
        }
    }
    for (i = 0; i < q->nwindows; ++i) {
        /* Full: counted up to the limit now, or full already. */
        int counted = d->admit && commit;

        if (counted)
            d->marks[i] = counter_commit(t, slots[i], &pol[i], now_ms,
                                         units ? units : 1);
        /* The expiry of what the check rolled, or of what was counted. */
        counter_expiry(t, slots[i], &pol[i], now_ms);
        hl_slots_set_level(t, slots[i],
                           window_level(&pol[i], &d->windows[i], (uint32_t)counted));
    }
    for (i = 0; i < q->nwindows; ++i) {
        /* A rejected request is counted nowhere: a window that would have
         * admitted it still has the one it reserved. */
        if (!d->admit)
            d->windows[i].remaining = d->windows[i].admit
                                      ? d->windows[i].remaining + 1 : 0;
        if (d->windows[i].remaining < d->remaining)
            d->remaining = d->windows[i].remaining;
    }
    if (q->nwindows == 0)
        d->remaining = 0;
    /* Whole seconds, rounded up: never earlier than re-admission. */
    d->retry_after_s = d->admit ? 0 : (long)((retry_ms + 999) / 1000);
    if (!d->admit && d->retry_after_s < 1)
        d->retry_after_s = 1;
}

void hl_limiter_peek_refs(hl_slots_t *t, const hl_quota_t *q,
                          hl_slot_ref_t *refs, uint64_t cls,
                          int64_t now_ms, hl_decision_t *d)
{
    int i;

    for (i = 0; i < q->nwindows; ++i)
        if (hl_slots_find_hashed(t, refs[i].key, refs[i].len, refs[i].hash) != NULL) {
            hl_limiter_decide_refs(t, q, refs, cls, now_ms, 0, d);
            return;
        }
    memset(d, 0, sizeof(*d));
    d->admit = 1;
    d->nwindows = q->nwindows;
    d->remaining = UINT32_MAX;
    for (i = 0; i < q->nwindows && i < HL_MAX_WINDOWS; ++i) {
        d->windows[i].admit = 1;
        d->windows[i].remaining = q->windows[i].count - 1;
        d->windows[i].reset_ms = q->windows[i].window_ms;
        if (d->windows[i].remaining < d->remaining)
            d->remaining = d->windows[i].remaining;
    }
    if (q->nwindows == 0)
        d->remaining = 0;
}

/* Counts n in every window of q (hl_limiter_count_refs_n), capped at each
 * window's COUNT, or with `whole` (a reservation, which the decision found
 * to fit) at what the window holds (hl_bucket_cap: a gcra burst may be
 * more); writes where each window's units sit into marks unless it is
 * NULL. */
static void count_windows(hl_slots_t *t, const hl_quota_t *q,
                          const hl_slot_ref_t *refs, uint64_t cls,
                          int64_t now_ms, uint32_t n, int whole,
                          int64_t *marks);

void hl_limiter_count_refs(hl_slots_t *t, const hl_quota_t *q,
                           const hl_slot_ref_t *refs, uint64_t cls,
                           int64_t now_ms, int64_t *marks)
{
    count_windows(t, q, refs, cls, now_ms, 1, 0, marks);
}

void hl_limiter_count_refs_n(hl_slots_t *t, const hl_quota_t *q,
                             const hl_slot_ref_t *refs, uint64_t cls,
                             int64_t now_ms, uint32_t n)
{
    count_windows(t, q, refs, cls, now_ms, n, 0, NULL);
}

/* Gives back n units in every window of q whose counter instance still
 * holds them (marks; hl_bucket_refund_n), creating no counter. Returns the
 * windows given back. */
static int refund_windows(hl_slots_t *t, const hl_quota_t *q,
                          const hl_slot_ref_t *refs, const int64_t *marks,
                          uint32_t n, int64_t now_ms)
{
    int i, refunded = 0;

    for (i = 0; i < q->nwindows && i < HL_MAX_WINDOWS; ++i) {
        hl_policy_t pol;
        hl_verdict_t v;
        hl_slot_t *s;

        if (marks[i] == 0)
            continue;
        s = hl_slots_find_hashed(t, refs[i].key, refs[i].len, refs[i].hash);
        if (s == NULL || s->tag != slot_tag(q))
            continue;
        hl_policy_from_quota(q, i, &pol);
        if (pol.algo == HL_ALGO_LOG
            ? s->bucket.prev_count == 0   /* no log: nothing to give back */
              || !hl_log_refund(hl_slots_log(t, s, now_ms), &pol, now_ms,
                                marks[i])  /* one unit: no reserve= here */
            : hl_bucket_refund_n(&s->bucket, &pol, now_ms, marks[i], n) == 0)
            continue;
        ++refunded;
        counter_expiry(t, s, &pol, now_ms);
        /* Its fill level as a check finds it now (nothing counted). */
        counter_check(t, s, &pol, now_ms, 1, &v);
        hl_slots_set_level(t, s, window_level(&pol, &v, 0));
    }
    return refunded;
}

int hl_limiter_refund_refs(hl_slots_t *t, const hl_quota_t *q,
                           const hl_slot_ref_t *refs, const int64_t *marks,
                           int64_t now_ms)
{
    return refund_windows(t, q, refs, marks, 1, now_ms);
}

void hl_limiter_reserve_refs(hl_slots_t *t, const hl_quota_t *q,
                             const hl_slot_ref_t *refs, uint64_t cls,
                             int64_t now_ms, uint32_t n, int64_t *marks)
{
    count_windows(t, q, refs, cls, now_ms, n, 1, marks);
}

/* Holds (hold nonzero: hl_bucket_hold) or releases (hl_bucket_release)
 * n units in every window of q whose counter exists and whose mark is
 * not 0. Creates no counter. */
static void hold_windows(hl_slots_t *t, const hl_quota_t *q,
                         const hl_slot_ref_t *refs, const int64_t *marks,
                         uint32_t n, int hold, int64_t now_ms)
{
    int i;

    for (i = 0; i < q->nwindows && i < HL_MAX_WINDOWS; ++i) {
        hl_policy_t pol;
        hl_slot_t *s;

        if (marks[i] == 0)
            continue;
        hl_policy_from_quota(q, i, &pol);
        if (pol.algo != HL_ALGO_FIXED)
            continue;
        s = hl_slots_find_hashed(t, refs[i].key, refs[i].len, refs[i].hash);
        if (s == NULL || s->tag != slot_tag(q))
            continue;
        if (hold)
            hl_bucket_hold(&s->bucket, &pol, now_ms, marks[i], n);
        else
            hl_bucket_release(&s->bucket, &pol, now_ms, marks[i], n);
    }
}

void hl_limiter_hold_refs(hl_slots_t *t, const hl_quota_t *q,
                          const hl_slot_ref_t *refs, const int64_t *marks,
                          uint32_t n, int64_t now_ms)
{
    hold_windows(t, q, refs, marks, n, 1, now_ms);
}

int hl_limiter_settle_refs(hl_slots_t *t, const hl_quota_t *q,
                           const hl_slot_ref_t *refs, uint64_t cls,
                           const int64_t *marks, uint32_t reserved,
                           uint32_t cost, int64_t now_ms)
{
    hold_windows(t, q, refs, marks, reserved, 0, now_ms);
    if (cost > reserved) {
        /* The excess, in the windows as they are now (capped at each
         * window's COUNT by count_windows). */
        count_windows(t, q, refs, cls, now_ms, cost - reserved, 0, NULL);
        return q->nwindows;
    }
    if (cost == reserved)
        return 0;
    return refund_windows(t, q, refs, marks, reserved - cost, now_ms);
}

static void count_windows(hl_slots_t *t, const hl_quota_t *q,
                          const hl_slot_ref_t *refs, uint64_t cls,
                          int64_t now_ms, uint32_t n, int whole,
                          int64_t *marks)
{
    int i;

    for (i = 0; n > 0 && i < q->nwindows; ++i) {
        hl_policy_t pol;
        hl_verdict_t v;
        hl_slot_t *s;
        uint32_t k, most;
        int64_t mark;

        hl_policy_from_quota(q, i, &pol);
        most = whole ? hl_bucket_cap(&pol) : pol.limit;
        k = n < most || most == 0 ? n : most;
        s = ref_slot(t, q, &refs[i], NULL, cls, now_ms);
        /* The check only rolls the counter forward; it tells whether these
         * requests take the last room the window has. */
        counter_check(t, s, &pol, now_ms, 1, &v);
        mark = counter_commit(t, s, &pol, now_ms, k);
        if (marks != NULL)
            marks[i] = mark;
        counter_expiry(t, s, &pol, now_ms);
        hl_slots_set_level(t, s, window_level(&pol, &v, k));
    }
}

void hl_limiter_follow_refs(hl_slots_t *t, const hl_quota_t *q,
                            hl_slot_ref_t *refs, uint64_t cls, int64_t now_ms,
                            const hl_verdict_t *v, uint32_t n)
{
    int i;

    for (i = 0; i < q->nwindows; ++i) {
        hl_policy_t pol;
        hl_slot_t *s;
        uint32_t k;

        hl_policy_from_quota(q, i, &pol);
        k = n < pol.limit || pol.limit == 0 ? n : pol.limit;
        if (k == 0 && v[i].admit && v[i].remaining + 1 >= hl_bucket_cap(&pol)
            && hl_slots_find_hashed(t, refs[i].key, refs[i].len, refs[i].hash) == NULL)
            continue;
        s = ref_slot(t, q, &refs[i], &refs[i].hint, cls, now_ms);
        if (pol.algo == HL_ALGO_LOG)
            hl_log_follow(hl_slots_log(t, s, now_ms), &pol, now_ms, &v[i], k);
        else
            hl_bucket_follow(&s->bucket, &pol, now_ms, &v[i], k);
        counter_expiry(t, s, &pol, now_ms);
        hl_slots_set_level(t, s, window_level(&pol, &v[i], k));
    }
}

int hl_limiter_reset_keys(char keys[HL_LIMITER_RESET_KEYS][HL_KEY_MAX],
                          size_t lens[HL_LIMITER_RESET_KEYS],
                          const char *key, size_t keylen)
{
    static const hl_origin_t origins[] = { HL_ORIGIN_DIRECTIVE, HL_ORIGIN_TABLE };
    int k = 0, i;
    size_t o;

    for (o = 0; o < sizeof(origins) / sizeof(origins[0]); ++o)
        for (i = 0; i < HL_MAX_WINDOWS; ++i, ++k)
            lens[k] = hl_limiter_slot_key(keys[k], origins[o], i, key, keylen);
    return k;
}

int hl_limiter_reset(hl_slots_t *t, const char *key, size_t keylen)
{
    char keys[HL_LIMITER_RESET_KEYS][HL_KEY_MAX];
    size_t lens[HL_LIMITER_RESET_KEYS];
    int n = hl_limiter_reset_keys(keys, lens, key, keylen), removed = 0, k;

    for (k = 0; k < n; ++k)
        removed += hl_slots_remove(t, keys[k], lens[k]);
    return removed;
}

/* Returns t + delta, pulled back to limit when later than it. */
static int64_t shifted(int64_t t, int64_t delta, int64_t limit)
{
    t += delta;
    return t > limit ? limit : t;
}

void hl_limiter_rebase(hl_slots_t *t, int64_t delta_ms, int64_t now_ms)
{
    uint32_t i;

    for (i = 0; i < t->hdr->capacity; ++i) {
        hl_slot_t *s = &t->slots[i];

        if (s->tag == 0)
            continue;
        /* A GCRA bucket keeps its time in microseconds and may be ahead of
         * now by up to one window; the bucket caps it at its next check. */
        if (s->tag == HL_SLOT_TAG_LOG && s->bucket.prev_count != 0
            && s->bucket.prev_count <= t->hdr->nlogs)
            hl_log_rebase(&t->logs[s->bucket.prev_count - 1], delta_ms, now_ms);
        else if (s->tag == slot_tag_of(HL_ALGO_GCRA))
            s->bucket.t = shifted(s->bucket.t, delta_ms * 1000,
                                  (now_ms + (int64_t)HL_MAX_WINDOW_MS) * 1000);
        else
            s->bucket.t = shifted(s->bucket.t, delta_ms, now_ms);
        s->expires_ms = shifted(s->expires_ms, delta_ms,
                                now_ms + 2 * (int64_t)HL_MAX_WINDOW_MS);
    }
}
