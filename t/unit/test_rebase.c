/*
 * test_rebase.c - hl_limiter_rebase: counters saved under one clock base
 * (a previous boot's monotonic clock) and moved onto another keep their
 * meaning: a spent key stays spent for the rest of its window, is admitted
 * again when the window ends, and a time moved into the future never makes
 * a client wait longer than its window.
 */
#include "hl_limiter.h"
#include "hl_limiter_calls.h"
#include "hl_quota.h"
#include "hl_tap.h"

#include <stdio.h>
#include <string.h>

#define CAPACITY 64
#define OLD_BASE 5000000LL            /* "now" of the old clock, ms */
#define NEW_BASE 90000000LL           /* "now" of the new clock, ms */

/* Returns a table of CAPACITY slots in *mem (caller frees it). */
static hl_slots_t make_table(void **mem)
{
    hl_slots_t t;
    size_t size = hl_slots_size(CAPACITY);

    *mem = tap_calloc(size);
    hl_slots_attach(&t, *mem, size, CAPACITY, 42);
    return t;
}

/* Returns a 3/10s quota of algo. */
static hl_quota_t quota(hl_algo_t algo)
{
    hl_quota_t q;

    hl_quota_init(&q);
    q.nwindows = 1;
    q.windows[0].count = 3;
    q.windows[0].window_ms = 10000;
    q.algo = algo;
    return q;
}

/* Decides and counts one request of key at now. Returns the decision. */
static hl_decision_t hit(hl_slots_t *t, const hl_quota_t *q, const char *key,
                         int64_t now)
{
    hl_decision_t d;

    limiter_decide(t, q, HL_ORIGIN_DIRECTIVE, key, strlen(key),
                      (size_t)(strchr(key, '|') - key), now, 1, &d);
    return d;
}

static void test_algo(hl_algo_t algo)
{
    hl_quota_t q = quota(algo);
    void *mem;
    hl_slots_t t = make_table(&mem);
    hl_decision_t d;
    int i;
    /* Saved 0.5 s after the last hit; the new clock starts 0.5 s later. */
    int64_t saved_old = OLD_BASE + 500, resumed_new = NEW_BASE;
    int64_t delta = (resumed_new - 500) - saved_old;
    /* The longest wait the algorithm itself can ask for 3/10s: a sliding
     * counter needs up to window + window / COUNT. */
    long max_retry = algo == HL_ALGO_SLIDING ? 14 : 10;

    for (i = 0; i < 3; ++i)
        hit(&t, &q, "/a|k", OLD_BASE);
    hl_limiter_rebase(&t, delta, resumed_new);
    d = hit(&t, &q, "/a|k", resumed_new);
    okf(!d.admit, "%s: rebased, still spent 1 s into its window",
        hl_algo_name(algo));
    okf(d.retry_after_s >= 1 && d.retry_after_s <= max_retry,
        "%s: retry %ld s <= %ld s", hl_algo_name(algo), d.retry_after_s,
        max_retry);
    d = hit(&t, &q, "/a|k", resumed_new + max_retry * 1000);
    okf(d.admit, "%s: admitted again once the window passed",
        hl_algo_name(algo));
    free(mem);

    /* A delta that puts the saved times 1 h ahead of now (the wall clock
     * stepped back between stop and start): spent, never stalled. */
    t = make_table(&mem);
    for (i = 0; i < 3; ++i)
        hit(&t, &q, "/a|k", OLD_BASE);
    hl_limiter_rebase(&t, NEW_BASE - OLD_BASE + 3600 * 1000, NEW_BASE);
    d = hit(&t, &q, "/a|k", NEW_BASE);
    okf(!d.admit, "%s: saved times 1 h ahead: still spent",
        hl_algo_name(algo));
    okf(d.retry_after_s <= max_retry,
        "%s: saved times 1 h ahead: retry %ld s <= %ld", hl_algo_name(algo),
        d.retry_after_s, max_retry);
    d = hit(&t, &q, "/a|k", NEW_BASE + 2 * 10000 + 4000);
    okf(d.admit, "%s: saved times 1 h ahead: admitted within two windows",
        hl_algo_name(algo));
    free(mem);
}

/*
 * A sliding window saved aligned and moved by a delta that is not a
 * multiple of the window (the clocks differ by 1 ms here) still counts the
 * same window: 2 of 3 spent, 0.75 window later exactly one more is admitted.
 * Seen as "1 ms before the next window" it would roll, halve and admit two.
 */
static void test_sliding_unaligned_delta(void)
{
    hl_quota_t q = quota(HL_ALGO_SLIDING);
    void *mem;
    hl_slots_t t = make_table(&mem);
    hl_decision_t d;

    hit(&t, &q, "/a|k", OLD_BASE + 1000);
    hit(&t, &q, "/a|k", OLD_BASE + 1000);
    hl_limiter_rebase(&t, NEW_BASE - OLD_BASE - 1, NEW_BASE);
    d = hit(&t, &q, "/a|k", NEW_BASE + 7500);
    ok(d.admit, "sliding, delta 1 ms off: the third request is admitted");
    d = hit(&t, &q, "/a|k", NEW_BASE + 7500);
    ok(!d.admit, "sliding, delta 1 ms off: the fourth is refused");
    free(mem);

    t = make_table(&mem);
    hit(&t, &q, "/a|k", OLD_BASE + 1000);
    hit(&t, &q, "/a|k", OLD_BASE + 1000);
    hl_limiter_rebase(&t, NEW_BASE - OLD_BASE + 1, NEW_BASE);
    d = hit(&t, &q, "/a|k", NEW_BASE + 7500);
    ok(d.admit, "sliding, delta 1 ms over: the third request is admitted");
    d = hit(&t, &q, "/a|k", NEW_BASE + 7500);
    ok(!d.admit, "sliding, delta 1 ms over: the fourth is refused");
    free(mem);
}

int main(void)
{
    test_sliding_unaligned_delta();
    test_algo(HL_ALGO_FIXED);
    test_algo(HL_ALGO_SLIDING);
    test_algo(HL_ALGO_GCRA);
    return done_testing();
}
