/* test_limiter.c - one decision over every window of a quota. */
#include <stdlib.h>
#include "hl_tap.h"
#include "hl_limiter.h"
#include "hl_table.h"
#include "hl_limiter_calls.h"

static hl_slots_t table(uint32_t capacity)
{
    return limiter_table(capacity);
}

/* Returns the length of the scope of key (n bytes): up to its last '|',
 * all of it without one. */
static size_t scope_len(const char *key, size_t n)
{
    size_t i = n;

    while (i > 0 && key[i - 1] != '|')
        --i;
    return i > 0 ? i - 1 : n;
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

/* Decides one request of key on quota q (directive origin) at now, counted
 * when admitted; returns the decision's admit. */
static int hit(hl_slots_t *t, const hl_quota_t *q, const char *key, int64_t now,
               hl_decision_t *d)
{
    limiter_decide(t, q, HL_ORIGIN_DIRECTIVE, key, strlen(key),
                      scope_len(key, strlen(key)), now, 1, d);
    return d->admit;
}

/* Returns the count of window i of key (directive origin), or -1 when
 * it has no slot; *at_limit receives whether its level is full. */
static long window_count(hl_slots_t *t, const char *key, int i, int *at_limit)
{
    char skey[HL_KEY_MAX];
    size_t n = hl_limiter_slot_key(skey, HL_ORIGIN_DIRECTIVE, i, key, strlen(key));
    hl_slot_t *s = hl_slots_find(t, skey, n);

    if (s == NULL)
        return -1;
    *at_limit = s->level == HL_SLOT_FULL;
    return (long)s->bucket.count;
}

/* A client cannot free its own counters by flooding other keys. */
static void test_flood(void)
{
    static const uint32_t floods[] = { 64, 1000, 100000 };
    hl_quota_t login = quota("3/1m", NULL), api = quota("1000/1m", NULL);
    hl_quota_t two = quota("2/1m", "5/1h");
    const char *victim = "/login|203.0.113.7";
    int64_t now = 1700000000000LL;
    hl_decision_t d;
    char key[64];
    int i, at_limit = 0, admitted;
    size_t f;

    ok(limiter_class(HL_ORIGIN_DIRECTIVE, "/login", 6)
       != limiter_class(HL_ORIGIN_TABLE, "/login", 6)
       && limiter_class(HL_ORIGIN_DIRECTIVE, "/login", 6)
          == limiter_class(HL_ORIGIN_DIRECTIVE, "/login|x", 6)
       && limiter_class(HL_ORIGIN_DIRECTIVE, "/login", 6) != 0,
       "class: origin and scope only, never 0");
    /* One scope hash: the one-call form's class (limiter_class) and a quota's
     * (from the hash its configuration or the table image keeps). */
    ok(limiter_class(HL_ORIGIN_DIRECTIVE, "ban", 3)
       == hl_limiter_class_of(HL_ORIGIN_DIRECTIVE, 0,
                              hl_table_route_hash("ban", 3))
       && limiter_class(HL_ORIGIN_TABLE, "/login", 6)
          == hl_limiter_class_of(HL_ORIGIN_TABLE, 0,
                                 hl_table_route_hash("/login", 6)),
       "class: made of the scope's hl_table_route_hash");

    for (f = 0; f < sizeof(floods) / sizeof(floods[0]); f++) {
        hl_slots_t t = table(64);

        for (i = 0; i < 4; i++)
            hit(&t, &login, victim, now, &d);
        ok(!d.admit && window_count(&t, victim, 0, &at_limit) == 3 && at_limit,
           "/login 3/1m: fourth request rejected, counter at limit");
        for (i = 0; i < (int)floods[f]; i++) {
            snprintf(key, sizeof(key), "/api|h:%016x", (unsigned)i * 2654435761u);
            hit(&t, &api, key, now + 1 + i / 1000, &d);
        }
        okf(window_count(&t, victim, 0, &at_limit) == 3 && at_limit,
            "flood of %u keys on /api: /login counter intact", floods[f]);
        okf(!hit(&t, &login, victim, now + 200, &d),
            "... and /login still rejects (%u)", floods[f]);
        free(t.hdr);
    }

    {   /* within one quota: the key at its limit is evicted last */
        hl_slots_t t = table(64);

        for (i = 0; i < 4; i++)
            hit(&t, &login, victim, now, &d);
        for (i = 0; i < 100000; i++) {
            snprintf(key, sizeof(key), "/login|10.%d.%d.%d", i >> 16, (i >> 8) & 255, i & 255);
            hit(&t, &login, key, now + 1, &d);
        }
        ok(window_count(&t, victim, 0, &at_limit) == 3 && at_limit,
           "100000 other clients of /login: the client at its limit keeps its counter");
        ok(!hit(&t, &login, victim, now + 2, &d), "... and is still rejected");
        free(t.hdr);
    }

    {   /* expired counters are reused before live ones */
        hl_slots_t t = table(64);
        hl_quota_t shortq = quota("100/1s", NULL);

        for (i = 0; i < 63; i++) {
            snprintf(key, sizeof(key), "/old|%d", i);
            hit(&t, &shortq, key, now, &d);
        }
        hit(&t, &login, victim, now, &d);
        for (i = 0; i < 63; i++) {
            snprintf(key, sizeof(key), "/api|%d", i);
            hit(&t, &api, key, now + 5000, &d);
        }
        for (i = 0, admitted = 0; i < 63; i++) {
            snprintf(key, sizeof(key), "/api|%d", i);
            admitted += window_count(&t, key, 0, &at_limit) < 0;
        }
        printf("# 63 new /api keys: %llu expired /old counters reused, %llu evictions\n",
               (unsigned long long)t.hdr->reclaims, (unsigned long long)t.hdr->evictions);
        ok(t.hdr->reclaims >= 32, "expired /old counters reused for new /api keys");
        is_int(admitted, (long)t.hdr->evictions, "every live counter evicted was an /api one");
        ok(window_count(&t, victim, 0, &at_limit) == 1, "/login counter intact");
        free(t.hdr);
    }

    {   /* two windows in a table full of counters at limit of the same quota */
        hl_slots_t t = table(64);

        for (i = 0; i < 40; i++) {
            snprintf(key, sizeof(key), "/two|%d", i);
            hit(&t, &two, key, now, &d);
            hit(&t, &two, key, now, &d);
        }
        for (i = 0, admitted = 0; i < 3; i++)
            admitted += hit(&t, &two, "/two|new", now, &d);
        is_int(admitted, 2, "a new client in a full table: each window its own slot, "
               "2/1m admits exactly 2");
        ok(window_count(&t, "/two|new", 0, &at_limit) == 2 && at_limit
           && window_count(&t, "/two|new", 1, &at_limit) == 2 && !at_limit,
           "window 0 at limit, window 1 not");
        free(t.hdr);
    }

    {   /* limiter_count flags the counter it fills */
        hl_slots_t t = table(64);
        hl_quota_t q2 = quota("2/1m", NULL);

        limiter_count(&t, &q2, HL_ORIGIN_DIRECTIVE, "/f|1", 4, 2, now);
        ok(window_count(&t, "/f|1", 0, &at_limit) == 1 && !at_limit, "count 1 of 2: not at limit");
        limiter_count(&t, &q2, HL_ORIGIN_DIRECTIVE, "/f|1", 4, 2, now);
        ok(window_count(&t, "/f|1", 0, &at_limit) == 2 && at_limit, "count 2 of 2: at limit");
        limiter_decide(&t, &q2, HL_ORIGIN_DIRECTIVE, "/f|1", 4, 2, now + 61000, 0, &d);
        ok(d.admit && window_count(&t, "/f|1", 0, &at_limit) == 0 && !at_limit,
           "a decision in the next window clears the flag");
        free(t.hdr);
    }

    {   /* cost n: each window charged n, capped at its COUNT */
        hl_slots_t t = table(64);
        hl_quota_t q2 = quota("100/1m", "1000/1h");
        hl_slot_ref_t refs[HL_MAX_WINDOWS];
        uint64_t cls = limiter_class(HL_ORIGIN_DIRECTIVE, "/c", 2);

        hl_limiter_refs(&t, HL_ORIGIN_DIRECTIVE, 2, "/c|1", 4, refs);
        hl_limiter_count_refs_n(&t, &q2, refs, cls, now, 90);
        ok(window_count(&t, "/c|1", 0, &at_limit) == 90 && !at_limit
           && window_count(&t, "/c|1", 1, &at_limit) == 90, "cost 90: 90 in each window");
        hl_limiter_count_refs_n(&t, &q2, refs, cls, now, 10);
        ok(window_count(&t, "/c|1", 0, &at_limit) == 100 && at_limit,
           "cost 10 more: the minute is at its limit");
        hl_limiter_count_refs_n(&t, &q2, refs, cls, now, 5000);
        ok(window_count(&t, "/c|1", 0, &at_limit) == 200
           && window_count(&t, "/c|1", 1, &at_limit) == 1100 && at_limit,
           "cost 5000: capped at 100 and 1000 per window");
        hl_limiter_count_refs_n(&t, &q2, refs, cls, now, 0);
        ok(window_count(&t, "/c|1", 0, &at_limit) == 200, "cost 0 charges nothing");
        free(t.hdr);
    }
}

/* Sends `hits` requests of each of the keys "<scope>|<i>", i from `from`
 * to to - 1, on q at now. */
static void hit_keys(hl_slots_t *t, const hl_quota_t *q, const char *scope,
                     int from, int to, int hits, int64_t now)
{
    hl_decision_t d;
    char key[64];
    int i, h;

    for (i = from; i < to; i++) {
        snprintf(key, sizeof(key), "%s|%d", scope, i);
        for (h = 0; h < hits; h++)
            hit(t, q, key, now, &d);
    }
}

/* Returns how many of the n keys "<scope>|<i>" no longer count `count` in
 * window 0. */
static int keys_lost(hl_slots_t *t, const char *scope, int n, long count)
{
    char key[64];
    int i, at_limit, lost = 0;

    for (i = 0; i < n; i++) {
        snprintf(key, sizeof(key), "%s|%d", scope, i);
        lost += window_count(t, key, 0, &at_limit) != count;
    }
    return lost;
}

/*
 * Eviction takes the least filled counter first (issue 18, item 6): in a
 * table of 64 slots, quota 5/1h by key, K1 makes 4 requests, then 64 new
 * keys make one each, then K1 comes back: K1 kept its counter, so it gets
 * exactly one more (5 in all), then 429. With every algorithm, and with a
 * key of 2 requests under a large limit (its fill 2/1000 still outranks a
 * one-request key's).
 */
static void test_least_filled(void)
{
    static const char *const algos[] = { NULL, "algo=sliding", "algo=gcra" };
    int64_t now = 1700000000000LL;
    hl_quota_t q5 = quota("5/1h", NULL);
    hl_decision_t d;
    char key[64];
    size_t k;
    int i, admitted;

    for (k = 0; k < sizeof(algos) / sizeof(algos[0]); k++) {
        hl_quota_t q = quota("5/1h", algos[k]);
        hl_slots_t t = table(64);

        for (i = 0, admitted = 0; i < 4; i++)
            admitted += hit(&t, &q, "/api|K1", now, &d);
        hit_keys(&t, &q, "/api", 0, 64, 1, now + 1);
        for (i = 0; i < 6; i++)
            admitted += hit(&t, &q, "/api|K1", now + 100, &d);
        okf(admitted == 5, "5/1h %s: K1 4 requests, 64 new keys, K1 again: "
            "5 admitted in all (%d)", algos[k] ? algos[k] : "fixed", admitted);
        okf(t.hdr->evictions > 0, "... the 64 new keys evicted (%llu)",
            (unsigned long long)t.hdr->evictions);
        free(t.hdr);
    }
    {
        hl_quota_t big = quota("1000/1h", NULL);
        hl_slots_t t = table(64);
        int at_limit, lost = 0;

        hit(&t, &big, "/api|two", now, &d);
        hit(&t, &big, "/api|two", now, &d);
        for (i = 0; i < 10000; i++) {
            snprintf(key, sizeof(key), "/api|one-%d", i);
            hit(&t, &big, key, now + 1 + i, &d);
            lost += window_count(&t, "/api|two", 0, &at_limit) != 2;
        }
        is_int(lost, 0, "1000/1h: a key of 2 requests outlives 10000 one-request keys");
        free(t.hdr);
    }
    {   /* another quota's less filled counters before the requester's */
        hl_slots_t t = table(64);

        hit_keys(&t, &q5, "/big", 0, 60, 1, now);  /* the largest class, fresh keys */
        hit_keys(&t, &q5, "/own", 0, 4, 3, now);  /* 4 keys of 3 requests */
        hit_keys(&t, &q5, "/own", 4, 24, 1, now + 1);
        is_int(keys_lost(&t, "/own", 4, 3), 0,
               "new keys of a smaller quota: its own keys of 3 requests kept");
        free(t.hdr);
    }
    {   /* the requester's own less filled counters before another's fuller */
        hl_slots_t t = table(64);

        hit_keys(&t, &q5, "/big", 0, 54, 3, now);  /* the largest class */
        hit_keys(&t, &q5, "/own", 0, 1000, 1, now + 1);
        is_int(keys_lost(&t, "/big", 54, 3), 0, "a flood of one-request keys of a "
               "small quota: the larger quota's keys of 3 requests kept");
        free(t.hdr);
    }
}

/* Local counters following a remote store's answers (Redis, item 8). */
static void test_follow(void)
{
    hl_quota_t q = quota("1/1h", NULL), two = quota("3/1m", "10/1h");
    hl_slot_ref_t refs[HL_MAX_WINDOWS];
    uint64_t cls = limiter_class(HL_ORIGIN_DIRECTIVE, "/q", 2);
    hl_verdict_t v[HL_MAX_WINDOWS];
    int64_t now = 1700000000000LL;
    hl_decision_t d;
    hl_slots_t t = table(64);
    int at_limit;

    memset(v, 0, sizeof(v));
    /* the remote store admitted and counted the key's one request */
    v[0].admit = 1;
    v[0].remaining = 0;
    v[0].reset_ms = 3600000;
    hl_limiter_refs(&t, HL_ORIGIN_DIRECTIVE, 1, "/q|k", 4, refs);
    hl_limiter_follow_refs(&t, &q, refs, cls, now, v, 1);
    ok(window_count(&t, "/q|k", 0, &at_limit) == 1 && at_limit,
       "follow 1/1h, counted: the local counter holds 1, at its limit");
    ok(!hit(&t, &q, "/q|k", now + 1000, &d), "... and refuses the key locally");
    ok(!hit(&t, &q, "/q|k", now + 3599000, &d), "... until the window the store "
       "reported ends");
    ok(hit(&t, &q, "/q|k", now + 3600000, &d), "... then admits it again");
    /* a look that found the key unused costs no slot */
    hl_limiter_refs(&t, HL_ORIGIN_DIRECTIVE, 1, "/q|fresh", 8, refs);
    hl_limiter_follow_refs(&t, &q, refs, cls, now, v, 0);
    is_int(window_count(&t, "/q|fresh", 0, &at_limit), -1,
           "follow of an unused key, nothing counted: no local counter");
    /* refused in one window, the other not counted: 3 of 3 and 7 of 10 */
    v[0].admit = 0;
    v[0].remaining = 0;
    v[0].reset_ms = 20000;
    v[1].admit = 1;
    v[1].remaining = 2;
    v[1].reset_ms = 1800000;
    hl_limiter_refs(&t, HL_ORIGIN_DIRECTIVE, 2, "/q|two", 6, refs);
    hl_limiter_follow_refs(&t, &two, refs, cls, now, v, 0);
    ok(window_count(&t, "/q|two", 0, &at_limit) == 3 && at_limit
       && window_count(&t, "/q|two", 1, &at_limit) == 7 && !at_limit,
       "follow of a refusal: 3 of 3 in the minute, 7 of 10 in the hour");
    ok(!hit(&t, &two, "/q|two", now + 19999, &d) && hit(&t, &two, "/q|two", now + 20000, &d)
       && d.windows[1].remaining == 2,
       "... refused locally until the minute ends, then 2 left in the hour");
    free(t.hdr);
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
        limiter_decide(&t, &q, HL_ORIGIN_DIRECTIVE, k, strlen(k), scope_len(k, strlen(k)), now, 1, &d);
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
        limiter_decide(&t, &q, HL_ORIGIN_DIRECTIVE, k, strlen(k), scope_len(k, strlen(k)), now, 1, &d);
    ok(!d.admit && d.windows[0].admit && !d.windows[1].admit, "1m window violated after 5");
    ok(d.retry_after_s >= 57 && d.retry_after_s <= 60, "retry points to the 1m window end");
    is_int(d.remaining, 0, "least remaining is 0");

    /* Another client and another origin have their own counters. */
    limiter_decide(&t, &q, HL_ORIGIN_DIRECTIVE, "/user/login|198.51.100.1", 24, scope_len("/user/login|198.51.100.1", 24), now, 1, &d);
    ok(d.admit, "other client admitted");
    is_int(d.remaining, 2, "other client: 2 left in the 2s window");
    limiter_decide(&t, &q, HL_ORIGIN_TABLE, k, strlen(k), scope_len(k, strlen(k)), now, 1, &d);
    ok(d.admit, "a table rule on the same key has its own counter");

    /* commit = 0 never counts. */
    for (i = 0; i < 10; ++i)
        limiter_decide(&t, &q, HL_ORIGIN_DIRECTIVE, "/x|1", 4, scope_len("/x|1", 4), now, 0, &d);
    ok(d.admit, "decisions without commit never exhaust the quota");

    /* limiter_count counts after the fact (count=failures). */
    for (i = 0; i < 3; ++i)
        limiter_count(&t, &q, HL_ORIGIN_DIRECTIVE, "/f|1", 4, scope_len("/f|1", 4), now);
    limiter_decide(&t, &q, HL_ORIGIN_DIRECTIVE, "/f|1", 4, scope_len("/f|1", 4), now, 0, &d);
    ok(!d.admit, "three counted failures exhaust 3/2s");

    /* Reset clears every window of a key, for both origins. */
    is_int(hl_limiter_reset(&t, k, strlen(k)), 4, "reset removes 2 windows x 2 origins");
    limiter_decide(&t, &q, HL_ORIGIN_DIRECTIVE, k, strlen(k), scope_len(k, strlen(k)), now, 1, &d);
    ok(d.admit, "admitted after reset");
    is_int(hl_limiter_reset(&t, "/none|1", 7), 0, "reset of an unknown key removes nothing");

    /* A changed window applies to the existing counter at once. */
    {
        hl_quota_t q1 = quota("2/1h", NULL), q2 = quota("2/1s", NULL);
        limiter_decide(&t, &q1, HL_ORIGIN_TABLE, "/w|1", 4, scope_len("/w|1", 4), now, 1, &d);
        limiter_decide(&t, &q1, HL_ORIGIN_TABLE, "/w|1", 4, scope_len("/w|1", 4), now, 1, &d);
        limiter_decide(&t, &q1, HL_ORIGIN_TABLE, "/w|1", 4, scope_len("/w|1", 4), now + 1500, 1, &d);
        ok(!d.admit, "2/1h exhausted");
        limiter_decide(&t, &q2, HL_ORIGIN_TABLE, "/w|1", 4, scope_len("/w|1", 4), now + 1500, 1, &d);
        ok(d.admit, "window shortened to 1s: the old counter follows the new window");
    }

    /* Very long keys are compacted but stay distinct. */
    {
        char a[600], b[600];
        memset(a, 'a', sizeof(a));
        memcpy(b, a, sizeof(b));
        b[599] = 'b';
        hl_quota_t q1 = quota("1/1m", NULL);
        limiter_decide(&t, &q1, HL_ORIGIN_DIRECTIVE, a, sizeof(a), scope_len(a, sizeof(a)), now, 1, &d);
        ok(d.admit, "long key a admitted");
        limiter_decide(&t, &q1, HL_ORIGIN_DIRECTIVE, b, sizeof(b), scope_len(b, sizeof(b)), now, 1, &d);
        ok(d.admit, "long key b differing in its last byte has its own counter");
        limiter_decide(&t, &q1, HL_ORIGIN_DIRECTIVE, a, sizeof(a), scope_len(a, sizeof(a)), now, 1, &d);
        ok(!d.admit, "long key a rejected on its second request");
    }

    /* A full table still decides exactly for live keys. */
    {
        hl_slots_t small = table(64);
        hl_quota_t q1 = quota("2/1m", NULL);
        char key[32];
        for (i = 0; i < 1000; ++i) {
            snprintf(key, sizeof(key), "/r|10.0.%d.%d", i / 256, i % 256);
            limiter_decide(&small, &q1, HL_ORIGIN_DIRECTIVE, key, strlen(key), scope_len(key, strlen(key)), now, 1, &d);
        }
        ok(small.hdr->used == 64 && small.hdr->evictions > 0, "full table evicts, never fails");
        limiter_decide(&small, &q1, HL_ORIGIN_DIRECTIVE, "/hot|1", 6, scope_len("/hot|1", 6), now, 1, &d);
        limiter_decide(&small, &q1, HL_ORIGIN_DIRECTIVE, "/hot|1", 6, scope_len("/hot|1", 6), now, 1, &d);
        limiter_decide(&small, &q1, HL_ORIGIN_DIRECTIVE, "/hot|1", 6, scope_len("/hot|1", 6), now, 1, &d);
        ok(!d.admit, "a hot key is still limited in a full table");
        free(small.hdr);
    }
    free(t.hdr);
    test_flood();
    test_least_filled();
    test_follow();
    return done_testing();
}
