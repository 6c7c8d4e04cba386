/* test_limiter.c - one decision over every window of a quota. */
#include <stdlib.h>
#include "hl_tap.h"
#include "hl_limiter.h"

static hl_slots_t table(uint32_t capacity)
{
    hl_slots_t t;
    size_t size = hl_slots_size(capacity);
    void *mem = calloc(1, size);
    hl_slots_attach(&t, mem, size, capacity, 42);
    return t;
}

static hl_quota_t quota(const char *a, const char *b)
{
    hl_quota_t q;
    const char *argv[2] = { a, b };
    char err[HL_ERR_MAX];
    if (hl_quota_parse_args(&q, b ? 2 : 1, argv, err, sizeof(err)) != 0)
        printf("# parse failed: %s\n", err);
    return q;
}

int main(void)
{
    hl_slots_t t = table(1024);
    hl_quota_t q = quota("3/2s", "5/1m");
    hl_decision_t d;
    const char *k = "/user/login|203.0.113.7";
    int64_t now = 1700000000000LL;
    int i, admitted = 0;

    /* Three in the 2 s window, then the short window rejects. */
    for (i = 0; i < 4; ++i) {
        hl_limiter_decide(&t, &q, HL_ORIGIN_DIRECTIVE, k, strlen(k), now, 1, &d);
        admitted += d.admit;
    }
    is_int(admitted, 3, "3/2s admits three");
    ok(!d.admit, "fourth rejected");
    ok(!d.windows[0].admit && d.windows[1].admit, "only the 2s window is violated");
    is_int(d.retry_after_s, 2, "retry after 2 s");
    is_int(d.windows[1].remaining, 2, "rejected request not counted in 1m window");

    /* After the short window: two more, then the long window rejects. */
    now += 2000;
    for (i = 0; i < 3; ++i)
        hl_limiter_decide(&t, &q, HL_ORIGIN_DIRECTIVE, k, strlen(k), now, 1, &d);
    ok(!d.admit && d.windows[0].admit && !d.windows[1].admit, "1m window violated after 5");
    ok(d.retry_after_s >= 57 && d.retry_after_s <= 60, "retry points to the 1m window end");
    is_int(d.remaining, 0, "least remaining is 0");

    /* Another client and another origin have their own counters. */
    hl_limiter_decide(&t, &q, HL_ORIGIN_DIRECTIVE, "/user/login|198.51.100.1", 24, now, 1, &d);
    ok(d.admit, "other client admitted");
    is_int(d.remaining, 2, "other client: 2 left in the 2s window");
    hl_limiter_decide(&t, &q, HL_ORIGIN_TABLE, k, strlen(k), now, 1, &d);
    ok(d.admit, "a table rule on the same key has its own counter");

    /* commit = 0 never counts. */
    for (i = 0; i < 10; ++i)
        hl_limiter_decide(&t, &q, HL_ORIGIN_DIRECTIVE, "/x|1", 4, now, 0, &d);
    ok(d.admit, "decisions without commit never exhaust the quota");

    /* hl_limiter_count counts after the fact (count=failures). */
    for (i = 0; i < 3; ++i)
        hl_limiter_count(&t, &q, HL_ORIGIN_DIRECTIVE, "/f|1", 4, now);
    hl_limiter_decide(&t, &q, HL_ORIGIN_DIRECTIVE, "/f|1", 4, now, 0, &d);
    ok(!d.admit, "three counted failures exhaust 3/2s");

    /* Reset clears every window of a key, for both origins. */
    is_int(hl_limiter_reset(&t, k, strlen(k)), 4, "reset removes 2 windows x 2 origins");
    hl_limiter_decide(&t, &q, HL_ORIGIN_DIRECTIVE, k, strlen(k), now, 1, &d);
    ok(d.admit, "admitted after reset");
    is_int(hl_limiter_reset(&t, "/none|1", 7), 0, "reset of an unknown key removes nothing");

    /* A changed window applies to the existing counter at once. */
    {
        hl_quota_t q1 = quota("2/1h", NULL), q2 = quota("2/1s", NULL);
        hl_limiter_decide(&t, &q1, HL_ORIGIN_TABLE, "/w|1", 4, now, 1, &d);
        hl_limiter_decide(&t, &q1, HL_ORIGIN_TABLE, "/w|1", 4, now, 1, &d);
        hl_limiter_decide(&t, &q1, HL_ORIGIN_TABLE, "/w|1", 4, now + 1500, 1, &d);
        ok(!d.admit, "2/1h exhausted");
        hl_limiter_decide(&t, &q2, HL_ORIGIN_TABLE, "/w|1", 4, now + 1500, 1, &d);
        ok(d.admit, "window shortened to 1s: the old counter follows the new window");
    }

    /* Very long keys are compacted but stay distinct. */
    {
        char a[600], b[600];
        memset(a, 'a', sizeof(a));
        memcpy(b, a, sizeof(b));
        b[599] = 'b';
        hl_quota_t q1 = quota("1/1m", NULL);
        hl_limiter_decide(&t, &q1, HL_ORIGIN_DIRECTIVE, a, sizeof(a), now, 1, &d);
        ok(d.admit, "long key a admitted");
        hl_limiter_decide(&t, &q1, HL_ORIGIN_DIRECTIVE, b, sizeof(b), now, 1, &d);
        ok(d.admit, "long key b differing in its last byte has its own counter");
        hl_limiter_decide(&t, &q1, HL_ORIGIN_DIRECTIVE, a, sizeof(a), now, 1, &d);
        ok(!d.admit, "long key a rejected on its second request");
    }

    /* A full table still decides exactly for live keys. */
    {
        hl_slots_t small = table(64);
        hl_quota_t q1 = quota("2/1m", NULL);
        char key[32];
        for (i = 0; i < 1000; ++i) {
            snprintf(key, sizeof(key), "/r|10.0.%d.%d", i / 256, i % 256);
            hl_limiter_decide(&small, &q1, HL_ORIGIN_DIRECTIVE, key, strlen(key), now, 1, &d);
        }
        ok(small.hdr->used == 64 && small.hdr->evictions > 0, "full table evicts, never fails");
        hl_limiter_decide(&small, &q1, HL_ORIGIN_DIRECTIVE, "/hot|1", 6, now, 1, &d);
        hl_limiter_decide(&small, &q1, HL_ORIGIN_DIRECTIVE, "/hot|1", 6, now, 1, &d);
        hl_limiter_decide(&small, &q1, HL_ORIGIN_DIRECTIVE, "/hot|1", 6, now, 1, &d);
        ok(!d.admit, "a hot key is still limited in a full table");
        free(small.hdr);
    }
    free(t.hdr);
    return done_testing();
}
