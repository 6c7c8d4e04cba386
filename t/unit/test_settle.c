/* test_settle.c - honest Retry-After for reserve= (issue 26 item 2): held
 * reservations in a fixed window (hl_bucket_hold/release), the refusal
 * they alone cause pointed at the route's settle estimate
 * (hl_decide_settle_hint), and that estimate (hl_stats_settled). */
#include <stdlib.h>
#include <string.h>
#include "hl_tap.h"
#include "hl_bucket.h"
#include "hl_decide.h"
#include "hl_stats.h"

#define NOW 1000000000LL

static hl_policy_t fixed(uint32_t limit, uint32_t window_ms)
{
    hl_policy_t p;

    memset(&p, 0, sizeof(p));
    p.algo = HL_ALGO_FIXED;
    p.limit = limit;
    p.window_ms = window_ms;
    return p;
}

static void bucket_tests(void)
{
    hl_policy_t p = fixed(100, 60000), g = p;
    hl_bucket_t b, c;
    hl_verdict_t v;
    int64_t mark;

    memset(&b, 0, sizeof(b));
    hl_bucket_commit_n(&b, &p, NOW, 60);
    mark = hl_bucket_mark(&b);
    hl_bucket_hold(&b, &p, NOW, mark, 60);
    hl_bucket_check_n(&b, &p, NOW + 10, 50, &v);
    ok(!v.admit && v.held, "refused by 60 held units: held");
    ok(v.retry_ms == 60000 - 10, "the window's own wait is kept");
    hl_bucket_release(&b, &p, NOW + 20, mark, 20);
    hl_bucket_check_n(&b, &p, NOW + 20, 50, &v);
    ok(!v.admit && v.held, "40 still held: held");
    hl_bucket_release(&b, &p, NOW + 30, mark, 40);
    hl_bucket_check_n(&b, &p, NOW + 30, 50, &v);
    ok(!v.admit && !v.held, "none held: spent units refuse");
    hl_bucket_release(&b, &p, NOW + 30, mark, 40);
    ok(b.prev_count == 0, "release never below 0");
    hl_bucket_hold(&b, &p, NOW + 40, mark, 500);
    ok(b.prev_count == 60, "held never more than counted");
    c = b;
    hl_bucket_hold(&c, &p, NOW + 40, mark + 1, 10);
    ok(c.prev_count == 60, "hold of another instance: nothing");
    hl_bucket_check(&b, &p, NOW + 60000, &v);
    ok(v.admit && b.prev_count == 0, "a new window holds nothing");
    hl_bucket_release(&b, &p, NOW + 60001, mark, 10);
    ok(b.count == 0 && b.prev_count == 0, "release after the window: nothing");
    g.algo = HL_ALGO_GCRA;
    memset(&c, 0, sizeof(c));
    hl_bucket_commit_n(&c, &g, NOW, 100);
    hl_bucket_hold(&c, &g, NOW, hl_bucket_mark(&c), 100);
    hl_bucket_check_n(&c, &g, NOW, 10, &v);
    ok(!v.admit && !v.held, "gcra keeps no held units");
}

static void hint_tests(void)
{
    hl_decision_t d;

    memset(&d, 0, sizeof(d));
    d.nwindows = 2;
    d.windows[0].admit = 0;
    d.windows[0].retry_ms = 59000;
    d.windows[0].held = 1;
    d.windows[1].admit = 1;
    d.retry_after_s = 59;
    ok(!hl_decide_settle_hint(&d, 0), "no estimate: unchanged");
    ok(d.retry_after_s == 59, "no estimate: the window's end");
    ok(hl_decide_settle_hint(&d, 1200), "an estimate: changed");
    ok(d.retry_after_s == 2 && d.windows[0].retry_ms == 1200,
       "Retry-After 2 s (1200 ms rounded up)");
    ok(!hl_decide_settle_hint(&d, 90000), "a longer estimate: never later");
    d.windows[0].retry_ms = 59000;
    ok(hl_decide_settle_hint(&d, 1) && d.retry_after_s == 1, "never below 1 s");
    d.windows[0].retry_ms = 59000;
    d.windows[1].admit = 0;
    d.windows[1].held = 0;
    d.windows[1].retry_ms = 3600000;
    hl_decide_settle_hint(&d, 1200);
    ok(d.retry_after_s == 3600, "a window spent for good keeps its wait");
    d.admit = 1;
    ok(!hl_decide_settle_hint(&d, 1200), "an admission: unchanged");
}

static void stats_tests(void)
{
    hl_stats_t *st = calloc(1, sizeof(*st));
    int i;

    ok(hl_stats_settle_ms(st, 42, "/v1", 3) == 0, "none settled: 0");
    hl_stats_settled(st, 42, "/v1", 3, 1000);
    is_int(hl_stats_settle_ms(st, 42, "/v1", 3), 1001, "the first: itself (rounded up)");
    for (i = 0; i < 40; ++i)
        hl_stats_settled(st, 42, "/v1", 3, 200);
    okf(llabs(hl_stats_settle_ms(st, 42, "/v1", 3) - 200) <= 2,
        "moves to recent durations (%lld)",
        (long long)hl_stats_settle_ms(st, 42, "/v1", 3));
    hl_stats_settled(st, 42, "/v1", 3, 5000);
    okf(hl_stats_settle_ms(st, 42, "/v1", 3) < 1500,
        "one slow request weighs a quarter (%lld)",
        (long long)hl_stats_settle_ms(st, 42, "/v1", 3));
    ok(hl_stats_settle_ms(st, 100, "/v2", 3) == 0, "per route");
    hl_stats_settled(st, 200, "/v3", 3, -5);
    ok(hl_stats_settle_ms(st, 200, "/v3", 3) == 1, "a negative duration: 0, kept as 1 ms");
    hl_stats_settled(st, 300, "/v4", 3, INT64_MAX);
    ok(hl_stats_settle_ms(st, 300, "/v4", 3) > 0, "a huge duration: capped, no wrap");
    free(st);
}

int main(void)
{
    bucket_tests();
    hint_tests();
    stats_tests();
    return done_testing();
}
