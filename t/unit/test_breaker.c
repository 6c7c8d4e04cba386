/*
 * test_breaker.c - hl_breaker: the Redis store's circuit breaker. Closed,
 * everything goes to the store; a failure opens it for a growing backoff;
 * then exactly one probe at a time; a success closes it; an outage is
 * reported once and its end once; and a probe whose process died is taken
 * over after the stale limit, so the breaker never stays open for good.
 */
#include "hl_breaker.h"
#include "hl_tap.h"

#include <string.h>

#define STALE 1600   /* 2 x 300 ms timeout + 1 s, as the glue passes it */

static void test_open_probe_close(void)
{
    hl_breaker_t b;
    int64_t now = 1000000;

    memset(&b, 0, sizeof b);
    ok(hl_breaker_may_try(&b, now, STALE), "closed: a request uses the store");
    ok(hl_breaker_may_try(&b, now, STALE), "closed: and the next one too");
    ok(hl_breaker_is_closed(&b), "closed: reported closed");

    ok(hl_breaker_failed(&b, now, 100) == 1, "first failure starts an outage");
    ok(!hl_breaker_is_closed(&b), "open after a failure");
    ok(!hl_breaker_may_try(&b, now + 249, STALE), "open: refused during the 250 ms backoff");
    ok(hl_breaker_may_try(&b, now + 250, STALE), "backoff over: one request probes");
    ok(!hl_breaker_may_try(&b, now + 251, STALE), "a second request does not probe meanwhile");

    ok(hl_breaker_failed(&b, now + 300, 100) == 0, "a failed probe: the outage is not reported again");
    ok(!hl_breaker_may_try(&b, now + 300 + 499, STALE), "second backoff is 500 ms");
    ok(hl_breaker_may_try(&b, now + 300 + 500, STALE), "then one probe again");

    ok(hl_breaker_succeeded(&b) == 1, "the probe's success ends the outage (reported once)");
    ok(hl_breaker_is_closed(&b), "closed again");
    ok(hl_breaker_may_try(&b, now + 801, STALE), "closed: every request uses the store");
    ok(hl_breaker_may_try(&b, now + 801, STALE), "closed: concurrently too");
    ok(hl_breaker_succeeded(&b) == 0, "a success while closed reports nothing");
}

static void test_backoff_grows_and_caps(void)
{
    hl_breaker_t b;
    int64_t now = 5000000, expect[] = { 250, 500, 1000, 2000, 4000, 5000, 5000 };
    int i;

    memset(&b, 0, sizeof b);
    for (i = 0; i < 7; ++i) {
        hl_breaker_failed(&b, now, 100);
        okf(!hl_breaker_may_try(&b, now + expect[i] - 1, STALE)
            && hl_breaker_may_try(&b, now + expect[i], STALE),
            "failure %d: backoff %lld ms", i + 1, (long long)expect[i]);
        now += expect[i];
    }
    memset(&b, 0, sizeof b);
    hl_breaker_failed(&b, now, 120);
    ok(!hl_breaker_may_try(&b, now + 299, STALE) && hl_breaker_may_try(&b, now + 300, STALE),
       "jitter 120 %: 300 ms");
    memset(&b, 0, sizeof b);
    hl_breaker_failed(&b, now, 500);
    ok(hl_breaker_may_try(&b, now + 300, STALE), "jitter above 120 % is capped");
}

/* The test-only cap (HOTLIMIT_TEST_BREAKER_MAX_MS): every backoff, the
 * first one too, ends by it; 0 restores the 5 s cap. */
static void test_max_set_for_tests(void)
{
    hl_breaker_t b;
    int64_t now = 7000000;
    int i;

    memset(&b, 0, sizeof b);
    hl_breaker_set_max(&b, 100);
    for (i = 0; i < 7; ++i) {
        hl_breaker_failed(&b, now, 100);
        okf(!hl_breaker_may_try(&b, now + 99, STALE) && hl_breaker_may_try(&b, now + 100, STALE),
            "max 100 ms, failure %d: backoff 100 ms", i + 1);
        now += 100;
    }
    hl_breaker_set_max(&b, 0);
    hl_breaker_failed(&b, now, 100);
    ok(!hl_breaker_may_try(&b, now + 4999, STALE) && hl_breaker_may_try(&b, now + 5000, STALE),
       "max 0: the 5 s cap again");
}

/* A process killed in the middle of the one probe never reports: without a
 * takeover every later request would be refused the store for good. */
static void test_dead_probe_taken_over(void)
{
    hl_breaker_t b;
    int64_t now = 9000000;

    memset(&b, 0, sizeof b);
    hl_breaker_failed(&b, now, 100);
    ok(hl_breaker_may_try(&b, now + 250, STALE), "a probe starts (its process then dies)");
    ok(!hl_breaker_may_try(&b, now + 250 + STALE - 1, STALE),
       "younger than the stale limit: still its probe");
    ok(hl_breaker_may_try(&b, now + 250 + STALE, STALE),
       "at the stale limit: taken over by another request");
    ok(!hl_breaker_may_try(&b, now + 250 + STALE + 1, STALE),
       "the new probe is again the only one");
    ok(hl_breaker_succeeded(&b) == 1, "its success closes the breaker");
    ok(hl_breaker_may_try(&b, now + 250 + STALE + 2, STALE), "store in use again");
}

int main(void)
{
    test_open_probe_close();
    test_backoff_grows_and_caps();
    test_max_set_for_tests();
    test_dead_probe_taken_over();
    return done_testing();
}
