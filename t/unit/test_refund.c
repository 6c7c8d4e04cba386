/*
 * test_refund.c - exact count=failures|status: the unit taken at
 * admission and given back when the final status is not counted
 * (hl_bucket_refund, hl_limiter_refund_refs, hl_decide_refund_locked).
 *
 * What must hold, for fixed, sliding and gcra:
 *  - requests in flight at once take their units at admission, so no more
 *    than COUNT are admitted however many arrive before any answer;
 *  - a refund gives the unit back while the counter instance it was taken
 *    in still holds it, and never frees room in a window that began since
 *    (a rollover, an evicted counter made again);
 *  - requests whose status is not counted (right passwords) leave the
 *    budget untouched.
 */
#include "hl_decide.h"
#include "hl_quota.h"
#include "hl_tap.h"
#include "hl_spec.h"
#include "hl_fixture.h"

#include <stdio.h>
#include <string.h>
#include "hl_core_calls.h"

#define NOW 5000000LL

/* ---- the bucket ---------------------------------------------------------- */

static hl_policy_t pol(hl_algo_t algo, uint32_t limit, uint32_t window)
{
    hl_policy_t p;

    p.algo = algo;
    p.limit = limit;
    p.window_ms = window;
    p.burst = 0;
    return p;
}

/* Checks *b at now, commits when admitted; *mark gets the unit's mark.
 * Returns admitted. */
static int take(hl_bucket_t *b, const hl_policy_t *p, int64_t now,
                int64_t *mark)
{
    hl_verdict_t v;

    hl_bucket_check(b, p, now, &v);
    if (!v.admit)
        return 0;
    hl_bucket_commit(b, p, now);
    *mark = hl_bucket_mark(b);
    return 1;
}

/* Returns how many of the next tries at now would be admitted (on a
 * copy of *b: nothing counted). */
static int room(const hl_bucket_t *b, const hl_policy_t *p, int64_t now)
{
    hl_bucket_t c = *b;
    int64_t m;
    int n = 0;

    while (n < 1000 && take(&c, p, now, &m))
        ++n;
    return n;
}

static void test_bucket_fixed(void)
{
    hl_policy_t p = pol(HL_ALGO_FIXED, 3, 60000);
    hl_bucket_t b;
    int64_t m1, m2, m3, m4;

    memset(&b, 0, sizeof(b));
    ok(take(&b, &p, NOW, &m1) && take(&b, &p, NOW + 5, &m2)
       && take(&b, &p, NOW + 9, &m3), "fixed: three taken at admission");
    ok(!take(&b, &p, NOW + 10, &m4), "fixed: a fourth in flight is refused");
    ok(hl_bucket_refund(&b, &p, NOW + 20, m2) == 1, "fixed: a refund gives one back");
    is_int(room(&b, &p, NOW + 21), 1, "fixed: ... and one more fits");
    ok(hl_bucket_refund(&b, &p, NOW + 22, m1) == 1
       && hl_bucket_refund(&b, &p, NOW + 23, m3) == 1
       && hl_bucket_refund(&b, &p, NOW + 24, m3) == 0,
       "fixed: never below zero");
    is_int(room(&b, &p, NOW + 25), 3, "fixed: all three back");

    /* A rollover: the refund must not steal from the new window. */
    memset(&b, 0, sizeof(b));
    take(&b, &p, NOW, &m1);
    take(&b, &p, NOW + 60000, &m2);          /* a new window */
    take(&b, &p, NOW + 60001, &m3);
    take(&b, &p, NOW + 60002, &m4);
    ok(hl_bucket_refund(&b, &p, NOW + 60003, m1) == 0,
       "fixed: a unit of the ended window is not given back");
    is_int(room(&b, &p, NOW + 60004), 0, "fixed: ... the new window stays full");
    ok(hl_bucket_refund(&b, &p, NOW + 60005, m3) == 1,
       "fixed: a unit of the current window is");
}

static void test_bucket_sliding(void)
{
    hl_policy_t p = pol(HL_ALGO_SLIDING, 4, 1000);
    hl_bucket_t b;
    int64_t m[6], t0 = 1000000;   /* aligned */
    int i;

    memset(&b, 0, sizeof(b));
    for (i = 0; i < 4; ++i)
        ok(take(&b, &p, t0 + 100, &m[i]), "sliding: taken at admission");
    ok(!take(&b, &p, t0 + 100, &m[4]), "sliding: the fifth in flight refused");
    ok(hl_bucket_refund(&b, &p, t0 + 200, m[0]) == 1 && b.count == 3,
       "sliding: refund in the same window: count 3");
    /* The window moved on: the unit weighs as the previous window's. */
    ok(hl_bucket_refund(&b, &p, t0 + 1100, m[1]) == 1
       && b.count == 0 && b.prev_count == 2,
       "sliding: a window later, given back from the previous count (2)");
    take(&b, &p, t0 + 1200, &m[5]);
    ok(hl_bucket_refund(&b, &p, t0 + 1300, m[5]) == 1 && b.count == 0
       && b.prev_count == 2, "sliding: the current window's own unit");
    ok(hl_bucket_refund(&b, &p, t0 + 2100, m[2]) == 0,
       "sliding: two windows later the unit is gone: nothing given back");
    ok(b.prev_count == 0 && b.count == 0,
       "sliding: ... and the new window is untouched");
}

static void test_bucket_gcra(void)
{
    hl_policy_t p = pol(HL_ALGO_GCRA, 5, 60000);   /* 12 s each, burst 5 */
    hl_bucket_t b;
    int64_t a, c, d;

    memset(&b, 0, sizeof(b));
    ok(take(&b, &p, NOW, &a), "gcra: taken at admission");
    ok(hl_bucket_refund(&b, &p, NOW + 100, a) == 1 && b.t <= NOW * 1000,
       "gcra: given back: the bucket is full again");
    is_int(room(&b, &p, NOW + 100), 5, "gcra: ... the whole burst left");

    /* Last in, first out: each refund finds the TAT its commit made. */
    memset(&b, 0, sizeof(b));
    take(&b, &p, NOW, &a);
    take(&b, &p, NOW + 1, &c);
    ok(hl_bucket_refund(&b, &p, NOW + 2, a) == 0,
       "gcra: a unit with a later one on top is not given back yet");
    ok(hl_bucket_refund(&b, &p, NOW + 3, c) == 1
       && hl_bucket_refund(&b, &p, NOW + 4, a) == 1,
       "gcra: ... once that one is, it is");
    is_int(room(&b, &p, NOW + 4), 5, "gcra: the whole burst back");

    /* The bucket refilled and a new burst began: never steal from it. */
    memset(&b, 0, sizeof(b));
    take(&b, &p, NOW, &a);                    /* TAT NOW + 12 s */
    take(&b, &p, NOW + 100000, &c);           /* refilled: a new start */
    take(&b, &p, NOW + 100000, &d);
    ok(hl_bucket_refund(&b, &p, NOW + 100001, a) == 0,
       "gcra: a unit of a bucket that refilled since is not given back");
    is_int(room(&b, &p, NOW + 100001), 3, "gcra: ... 3 of 5 left, not 4");
}

/* ---- the limiter and the decision -------------------------------------- */

/* 200 wrong passwords in flight at once against 5/1m count=failures: 5
 * admitted; all of them counted (failures), the window stays spent. */
static void test_concurrent_failures(const char *spec, const char *name)
{
    hl_quota_t q = quota(spec);
    hl_decide_item_t proto, req[200];
    int i, admitted = 0;

    fresh();
    item(&proto, &q, "/login|1.2.3.4");
    for (i = 0; i < 200; ++i)
        admitted += arrive(&proto, &req[i], NOW + i);
    okf(admitted == 5, "%s: 5 of 200 in flight admitted (%d)", name, admitted);
}

/* Right passwords first (decided and given back one by one, and some in
 * flight together): the budget is untouched; then failures spend it. */
static void test_successes_refunded(const char *spec, const char *name)
{
    hl_quota_t q = quota(spec);
    hl_decide_item_t proto, req[10];
    int i, admitted = 0, given = 0;

    fresh();
    item(&proto, &q, "/login|1.2.3.4");
    for (i = 0; i < 10; ++i) {
        admitted += arrive(&proto, &req[i], NOW + i);
        given += hl_decide_refund_locked(&table, &req[i], NOW + i);
    }
    okf(admitted == 10 && given == 10,
        "%s: 10 right passwords admitted and given back (%d, %d)", name,
        admitted, given);
    /* Three right passwords in flight at once, answered last first. */
    for (i = 0; i < 3; ++i)
        arrive(&proto, &req[i], NOW + 20);
    for (i = 2; i >= 0; --i)
        hl_decide_refund_locked(&table, &req[i], NOW + 21);
    for (i = 0, admitted = 0; i < 10; ++i)
        admitted += arrive(&proto, &req[i], NOW + 30);
    okf(admitted == 5, "%s: then 5 failures admitted, budget untouched (%d)",
        name, admitted);
}

/* A refund after the window rolled over gives nothing back in the new
 * window. */
static void test_no_refund_across_windows(void)
{
    hl_quota_t q = quota("2/1m count=failures");
    hl_decide_item_t proto, old, a, b, c;

    fresh();
    item(&proto, &q, "/login|5.6.7.8");
    arrive(&proto, &old, NOW);
    ok(arrive(&proto, &a, NOW + 60000) && arrive(&proto, &b, NOW + 60001),
       "the next window: two admitted");
    is_int(hl_decide_refund_locked(&table, &old, NOW + 60002), 0,
           "a unit of the ended window: nothing given back");
    ok(!arrive(&proto, &c, NOW + 60003), "... the new window stays full");
}

/* An evicted (reset) counter made again: its new instance keeps its
 * units, and a refund creates no counter. */
static void test_no_refund_after_reset(void)
{
    hl_quota_t q = quota("2/1m count=failures");
    hl_decide_item_t proto, old, a, c;
    char skey[HL_KEY_MAX];
    size_t n;

    fresh();
    item(&proto, &q, "/login|9.9.9.9");
    arrive(&proto, &old, NOW);
    hl_limiter_reset(&table, proto.key, proto.key_len);
    is_int(hl_decide_refund_locked(&table, &old, NOW + 1), 0,
           "reset since: nothing given back");
    n = hl_limiter_slot_key(skey, HL_ORIGIN_DIRECTIVE, 0, proto.key, proto.key_len);
    ok(hl_slots_find(&table, skey, n) == NULL, "... and no counter made");
    arrive(&proto, &a, NOW + 2);
    arrive(&proto, &c, NOW + 3);
    is_int(hl_decide_refund_locked(&table, &old, NOW + 4), 0,
           "the counter made again: the old unit is not in it");
}

/* Two windows and two quotas in one decision (one count=all): each
 * window of the failures quota gives back, the other quota keeps its. */
static void test_two_quotas(void)
{
    hl_quota_t f = quota("2/1m 3/1h count=failures"), all = quota("10/1m");
    hl_decide_item_t a, b, *items[2] = { &a, &b };

    fresh();
    item(&a, &f, "/login|1.1.1.1");
    item(&b, &all, "/site|1.1.1.1");
    ok(hl_decide_locked(tables, items, 2, NOW), "two quotas: admitted");
    ok(a.decision.marks[0] != 0 && a.decision.marks[1] != 0,
       "two quotas: both windows of the failures quota counted");
    is_int(hl_decide_refund_locked(&table, &a, NOW + 1), 2,
           "two quotas: both given back");
    is_int(hl_decide_refund_locked(&table, &b, NOW + 1), 0,
           "two quotas: the count=all quota gives nothing back");
    ok(hl_decide_locked(tables, items, 2, NOW + 2)
       && a.decision.remaining == 1 && b.decision.remaining == 8,
       "two quotas: failures budget whole (1 left), the other spent 2");
}

/* A look (peek) counts nothing, so gives nothing back. */
static void test_peek_gives_nothing(void)
{
    hl_quota_t q = quota("2/1m count=failures");
    hl_decide_item_t proto, a, p;

    fresh();
    item(&proto, &q, "/login|2.2.2.2");
    arrive(&proto, &a, NOW);
    p = proto;
    p.peek = 1;
    arrive(&p, &p, NOW + 1);
    is_int(hl_decide_refund_locked(&table, &p, NOW + 2), 0,
           "a look gives nothing back");
    ok(arrive(&proto, &a, NOW + 3) && a.decision.remaining == 0,
       "... the unit taken stays (0 left)");
}

/* Which quotas take their unit at the decision and give it back. */
static void test_which_quotas(void)
{
    hl_quota_t all = quota("5/1m"), f = quota("5/1m count=failures"),
               st = quota("5/1m count=status:401,403"),
               cost = quota("5/1m count=failures cost=header:X-Cost");

    ok(!hl_quota_refunds(&all) && !hl_quota_after_response(&all),
       "count=all: counted at the decision for good");
    ok(hl_quota_refunds(&f) && !hl_quota_after_response(&f),
       "count=failures: taken at the decision, given back");
    ok(hl_quota_refunds(&st) && !hl_quota_after_response(&st),
       "count=status: taken at the decision, given back");
    ok(!hl_quota_refunds(&cost) && hl_quota_after_response(&cost),
       "cost=header: (with count=failures) still counted after the response");
}

int main(void)
{
    test_which_quotas();
    test_bucket_fixed();
    test_bucket_sliding();
    test_bucket_gcra();
    test_concurrent_failures("5/1m count=failures", "fixed");
    test_concurrent_failures("5/1m count=status:401 algo=sliding", "sliding");
    test_concurrent_failures("5/1m count=failures algo=gcra", "gcra");
    test_successes_refunded("5/1m count=failures", "fixed");
    test_successes_refunded("5/1m count=failures algo=sliding", "sliding");
    test_successes_refunded("5/1m count=failures algo=gcra", "gcra");
    test_no_refund_across_windows();
    test_no_refund_after_reset();
    test_two_quotas();
    test_peek_gives_nothing();
    free(mem);
    return done_testing();
}
