/*
 * hl_decide.c - the decision over every quota of one request (see
 * hl_decide.h). The policy lives here, apart from httpd and from where the
 * counters are kept, so that it is unit-tested (t/unit/test_decide.c) and a
 * remote store can keep the same semantics.
 */
#include <string.h>
#include "hl_decide.h"
#include "hl_tightest.h"

/* Adds to st, under it's stats_name, what became of the request at item
 * it: kind. */
static void count_decision(hl_stats_t *st, const hl_decide_item_t *it,
                           hl_decision_kind_t kind, int64_t now_ms)
{
    if (it->stats_name_len > 0)
        hl_stats_add_named(st, it->stats_hash, it->stats_name,
                           it->stats_name_len, kind, now_ms);
    else
        hl_stats_add_hashed(st, it->stats_hash, it->stats_name, kind, now_ms);
}

/* Returns the length of it's stats_name (measured when not given). */
static size_t stats_len(const hl_decide_item_t *it)
{
    return it->stats_name_len > 0 ? it->stats_name_len
                                  : strnlen(it->stats_name, HL_STATS_ROUTE_MAX - 1);
}

void hl_decide_not_asked(hl_decide_item_t *it)
{
    memset(&it->decision, 0, sizeof(it->decision));
}

/* [reserve=] Notes the reservation an admitted item of a cost= quota
 * just took as held until its request settles (hl_limiter_hold_refs);
 * nothing for other items. */
static void hold(hl_slots_t *t, const hl_decide_item_t *it, int64_t now_ms)
{
    if (it->reserve == 0 || it->peek || !hl_quota_after_response(it->quota))
        return;
    hl_limiter_hold_refs(t, it->quota, it->refs, it->decision.marks,
                         it->reserve, now_ms);
}

int hl_decide_locked(hl_slots_t *const *tables,
                     hl_decide_item_t *const *items, int n, int64_t now_ms)
{
    int admit = 1, i, j;

    for (i = 0; i < n; ++i) {
        hl_decide_item_t *it = items[i];
        /* One quota that counts every request: decide and count at once. */
        uint32_t units = hl_decide_units(it);

        if (it->peek)
            hl_limiter_peek_refs(tables[i], it->quota, it->refs, it->cls,
                                 now_ms, &it->decision);
        else
            hl_limiter_decide_refs_n(tables[i], it->quota, it->refs, it->cls,
                                     now_ms, n == 1 && units > 0,
                                     units ? units : 1, &it->decision);
        if (n == 1 && units > 0 && it->decision.admit)
            hold(tables[i], it, now_ms);
        if (!it->decision.admit && !it->dry_run) {
            admit = 0;
            if (it->peek) {
                /* A banned client's request touches no other counter:
                 * creating one could evict the ban itself. */
                for (j = i + 1; j < n; ++j)
                    hl_decide_not_asked(items[j]);
                return 0;
            }
        }
    }
    if (n > 1 && admit) {
        for (i = 0; i < n; ++i)
            if (items[i]->decision.admit && hl_decide_units(items[i]) > 0)
                hl_limiter_reserve_refs(tables[i], items[i]->quota,
                                        items[i]->refs, items[i]->cls, now_ms,
                                        hl_decide_units(items[i]),
                                        items[i]->decision.marks);
        for (i = 0; i < n; ++i)
            if (items[i]->decision.admit)
                hold(tables[i], items[i], now_ms);
    }
    return admit;
}

/* hl_decide_stats for any request (the usual one is handled there). */
static __attribute__((noinline)) void stats_of(hl_stats_t *st,
                                               hl_decide_item_t *const *items,
                                               int n, int64_t now_ms)
{
    const hl_decide_item_t *by = NULL;   /* the item that refused */
    int i, banned_counted = 0;

    for (i = 0; i < n && !by; ++i)
        if (!items[i]->decision.admit && !items[i]->dry_run)
            by = items[i];
    for (i = 0; i < n; ++i) {
        const hl_decide_item_t *it = items[i];
        int asked = it->decision.nwindows > 0;

        if (it->stats_name == NULL)
            continue;
        if (by && by->peek) {
            /* Banned: once, on the request's first route; no rule's. */
            if (!banned_counted++)
                count_decision(st, it, HL_DECISION_BANNED, now_ms);
        }
        else if (!it->decision.admit && it->dry_run && asked)
            count_decision(st, it, HL_DECISION_DRY_RUN, now_ms);
        else if (it == by)
            count_decision(st, it, HL_DECISION_REJECTED, now_ms);
        else if (by)
            hl_stats_refused_other(st, it->stats_hash, it->stats_name,
                                   stats_len(it));
        else
            count_decision(st, it, HL_DECISION_ADMITTED, now_ms);
    }
    if (!by)
        return;
    /* Who was refused, and by which rule (issue 21). */
    if (by->stats_name != NULL)
        hl_stats_refused_by(st, by->stats_hash, by->stats_name,
                            by->stats_name_len);
    if (by->key)
        hl_refusals_add(&st->refusals, by->key, by->key_len, by->stats_name,
                        by->stats_name_len, now_ms);
}

void hl_decide_stats(hl_stats_t *st, hl_decide_item_t *const *items, int n,
                     int64_t now_ms)
{
    /* The usual request: one quota, admitted (what stats_of would count,
     * without its frame and loops). */
    if (n == 1 && items[0]->decision.admit && items[0]->stats_name != NULL)
        count_decision(st, items[0], HL_DECISION_ADMITTED, now_ms);
    else
        stats_of(st, items, n, now_ms);
}

void hl_decide_count_locked(hl_slots_t *t, const hl_decide_item_t *it,
                            uint32_t n, int64_t now_ms)
{
    hl_limiter_count_refs_n(t, it->quota, it->refs, it->cls, now_ms, n);
}

int hl_decide_refund_locked(hl_slots_t *t, const hl_decide_item_t *it,
                            int64_t now_ms)
{
    /* Marks say what was counted: none for a look, a refusal or a store
     * that admitted without counting. */
    if (!hl_quota_refunds(it->quota))
        return 0;
    return hl_limiter_refund_refs(t, it->quota, it->refs, it->decision.marks,
                                  now_ms);
}

uint32_t hl_decide_units(const hl_decide_item_t *it)
{
    if (it->peek)
        return 0;
    if (hl_quota_after_response(it->quota))
        return it->reserve;
    return 1;
}

int hl_decide_settle_locked(hl_slots_t *t, const hl_decide_item_t *it,
                            uint32_t cost, int64_t now_ms)
{
    if (it->reserve == 0 || !hl_quota_after_response(it->quota))
        return 0;
    return hl_limiter_settle_refs(t, it->quota, it->refs, it->cls,
                                  it->decision.marks, it->reserve, cost,
                                  now_ms);
}

int hl_decide_settle_hint(hl_decision_t *d, int64_t settle_ms)
{
    int64_t retry_ms = 0;
    int i, changed = 0;

    if (d->admit || settle_ms <= 0)
        return 0;
    for (i = 0; i < d->nwindows && i < HL_MAX_WINDOWS; ++i) {
        hl_verdict_t *v = &d->windows[i];

        if (v->admit)
            continue;
        if (v->held && settle_ms < v->retry_ms) {
            v->retry_ms = settle_ms;
            changed = 1;
        }
        if (v->retry_ms > retry_ms)
            retry_ms = v->retry_ms;
    }
    if (changed) {
        d->retry_after_s = (long)((retry_ms + 999) / 1000);
        if (d->retry_after_s < 1)
            d->retry_after_s = 1;
    }
    return changed;
}

int hl_decide_primary(hl_decide_item_t *const *items, int n)
{
    int i, best = 0;

    for (i = 0; i < n; ++i) {
        if (!items[i]->decision.admit && !items[i]->dry_run)
            return i;
        if (items[i]->decision.remaining < items[best]->decision.remaining)
            best = i;
    }
    return best;
}

int64_t hl_decide_reset_s(const hl_decision_t *d, int i)
{
    const hl_verdict_t *v = &d->windows[i];
    int64_t ms = v->admit ? v->reset_ms : v->retry_ms;

    return ms > 0 ? (ms + 999) / 1000 : 0;
}

int hl_decide_tightest(const hl_decision_t *d)
{
    int i, best = 0;

    for (i = 1; i < d->nwindows && i < HL_MAX_WINDOWS; ++i)
        if (hl_tightest_beats(d->windows[i].remaining, hl_decide_reset_s(d, i),
                              d->windows[best].remaining,
                              hl_decide_reset_s(d, best)))
            best = i;
    return best;
}
