/*
 * test_lease.c - hl_lease: the Redis store's leases. A key seen once asks
 * for nothing; a key seen often asks for half the requests it expects in a
 * lease's life, at most the configured maximum; granted units admit exactly
 * that many requests, each showing one less remaining; they end at their
 * validity, at HL_LEASE_TTL_MS at the latest, and never outlive an earlier
 * grant's end; a clear drops them.
 */
#include "hl_lease.h"
#include "hl_tap.h"

#include <string.h>

static hl_leases_t leases;

/* An admitted decision of one window with `remaining` left, resetting in
 * reset_ms. */
static hl_decision_t admitted(uint32_t remaining, int64_t reset_ms)
{
    hl_decision_t d;

    memset(&d, 0, sizeof d);
    d.admit = 1;
    d.nwindows = 1;
    d.windows[0].admit = 1;
    d.windows[0].remaining = remaining;
    d.windows[0].reset_ms = reset_ms;
    d.remaining = remaining;
    return d;
}

static void test_pace(void)
{
    hl_decision_t d;
    uint32_t want = 99;
    int64_t now = 5000;

    hl_lease_clear(&leases);
    ok(!hl_lease_take(&leases, 42, now, 100, &d, &want), "a new key has no lease");
    is_int(want, 0, "... and asks for none (no pace yet)");
    ok(!hl_lease_take(&leases, 42, now + 600, 100, &d, &want), "seen again 600 ms later: no lease");
    is_int(want, 0, "... slower than two per half lease: asks for none");
    ok(!hl_lease_take(&leases, 42, now + 610, 100, &d, &want), "seen again 10 ms later");
    is_int(want, 50, "... asks for half of the 100 expected within 1 s");
    ok(!hl_lease_take(&leases, 42, now + 611, 20, &d, &want), "1 ms later, at most 20");
    is_int(want, 20, "... asks for the maximum");
    ok(!hl_lease_take(&leases, 42, now + 611, 20, &d, &want), "the same millisecond");
    is_int(want, 20, "... counts as 1 ms: the maximum");
    ok(!hl_lease_take(&leases, 42, now + 500, 20, &d, &want), "a clock that went back");
    is_int(want, 0, "... asks for none");
}

static void test_units(void)
{
    hl_decision_t g = admitted(90, 30000), d;
    uint32_t want;
    int64_t now = 10000;
    int i, admitted_n = 0;

    hl_lease_clear(&leases);
    hl_lease_take(&leases, 7, now, 10, &d, &want);
    hl_lease_grant(&leases, 7, now, 3, 5000, &g);
    for (i = 1; i <= 5; ++i)
        admitted_n += hl_lease_take(&leases, 7, now + i, 10, &d, &want);
    is_int(admitted_n, 3, "3 units granted admit exactly 3 requests");

    hl_lease_grant(&leases, 7, now, 3, 5000, &g);
    ok(hl_lease_take(&leases, 7, now + 100, 10, &d, &want), "a unit admits");
    ok(d.admit && d.windows[0].admit, "... as an admitted decision");
    is_int(d.remaining, 89, "... one less remaining than the grant's");
    is_int(d.windows[0].reset_ms, 29900, "... the reset 100 ms nearer");
    ok(hl_lease_take(&leases, 7, now + 200, 10, &d, &want), "the next unit");
    is_int(d.remaining, 88, "... two less");
    ok(!hl_lease_take(&leases, 99, now + 200, 10, &d, &want), "another key has none");
    ok(hl_lease_take(&leases, 7, now + 300, 10, &d, &want), "... and leaves this key's lease alone");
    ok(!hl_lease_take(&leases, 7 + HL_LEASE_SLOTS, now + 300, 10, &d, &want),
       "a key taking the same slot has none");
    ok(!hl_lease_take(&leases, 7, now + 301, 10, &d, &want), "... and the units it displaced are gone");
}

static void test_ends(void)
{
    hl_decision_t g = admitted(50, 60000), d;
    uint32_t want;
    int64_t now = 20000;

    hl_lease_clear(&leases);
    hl_lease_take(&leases, 5, now, 10, &d, &want);
    hl_lease_grant(&leases, 5, now, 10, 300, &g);
    ok(hl_lease_take(&leases, 5, now + 299, 10, &d, &want), "usable until its validity");
    ok(!hl_lease_take(&leases, 5, now + 300, 10, &d, &want), "not at its end");
    ok(!hl_lease_take(&leases, 5, now + 301, 10, &d, &want), "nor after (its units are gone)");

    hl_lease_grant(&leases, 5, now, 10, 60000, &g);
    ok(hl_lease_take(&leases, 5, now + HL_LEASE_TTL_MS - 1, 10, &d, &want), "a long validity is usable within the TTL");
    ok(!hl_lease_take(&leases, 5, now + HL_LEASE_TTL_MS, 10, &d, &want), "... and capped at HL_LEASE_TTL_MS");

    hl_lease_grant(&leases, 5, now, 2, 200, &g);
    hl_lease_grant(&leases, 5, now + 50, 2, 900, &g);
    ok(hl_lease_take(&leases, 5, now + 199, 10, &d, &want), "a second grant adds to the first");
    ok(!hl_lease_take(&leases, 5, now + 200, 10, &d, &want),
       "... and the units end with the earlier grant, never later");

    hl_lease_grant(&leases, 5, now, 2, 500, &g);
    hl_lease_clear(&leases);
    ok(!hl_lease_take(&leases, 5, now + 1, 10, &d, &want), "a clear drops every lease");

    hl_lease_grant(&leases, 5, now, 0, 500, &g);
    ok(!hl_lease_take(&leases, 5, now + 1, 10, &d, &want), "a grant of 0 units admits nothing");
    hl_lease_grant(&leases, 5, now, 3, 0, &g);
    ok(!hl_lease_take(&leases, 5, now + 1, 10, &d, &want), "a grant already over admits nothing");
    hl_lease_grant(&leases, 5, now, 3, 500, &g);
    ok(!hl_lease_take(&leases, 5, now - 1, 10, &d, &want), "a time read before the grant: no unit");
    ok(hl_lease_take(&leases, 5, now + 1, 10, &d, &want), "... and the units are kept for later");
}

int main(void)
{
    test_pace();
    test_units();
    test_ends();
    return done_testing();
}
