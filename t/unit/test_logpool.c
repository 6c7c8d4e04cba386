/*
 * test_logpool.c - the log pool of algo=log (issue 25 item 3) reclaims as
 * the slot table evicts (spec 8): a flood of new keys, on any quota, never
 * frees the log of a key of another quota while that quota is not the
 * largest, nor a key at its limit before less filled ones.
 */
#include <stdlib.h>
#include "hl_tap.h"
#include "hl_limiter.h"
#include "hl_table.h"
#include "hl_limiter_calls.h"

static hl_quota_t quota(const char *count)
{
    hl_quota_t q;
    const char *argv[2] = { count, "algo=log" };
    char err[HL_ERR_MAX];

    if (hl_quota_parse_args(&q, 2, argv, err, sizeof(err)) != 0)
        printf("# parse failed: %s\n", err);
    return q;
}

/* Decides one request of "scope|client" on q at now; returns admit. */
static int hit(hl_slots_t *t, const hl_quota_t *q, const char *scope,
               const char *client, int64_t now)
{
    char key[160];
    hl_decision_t d;
    int n = snprintf(key, sizeof(key), "%s|%s", scope, client);

    limiter_decide(t, q, HL_ORIGIN_DIRECTIVE, key, (size_t)n, strlen(scope),
                   now, 1, &d);
    return d.admit;
}

/* Sends `keys` new clients of scope on q (one request each, one ms apart
 * from now). */
static void flood(hl_slots_t *t, const hl_quota_t *q, const char *scope,
                  uint32_t keys, int64_t now)
{
    char client[32];
    uint32_t i;

    for (i = 0; i < keys; i++) {
        snprintf(client, sizeof(client), "f%08x", i * 2654435761u);
        hit(t, q, scope, client, now + i);
    }
}

/* Returns how many of `tries` more requests of scope|client q admits. */
static int admitted(hl_slots_t *t, const hl_quota_t *q, const char *scope,
                    const char *client, int tries, int64_t now)
{
    int i, n = 0;

    for (i = 0; i < tries; i++)
        n += hit(t, q, scope, client, now + i);
    return n;
}

/* The scenario: a key at 3/3, then a flood of new keys on the same
 * quota (level 0), on another quota of count 1 (every key full) and of
 * count 3 (level 0): the key stays at its limit. */
static void test_at_limit_kept(void)
{
    static const struct { uint32_t slots, keys; } runs[] = {
        { 256, 50 }, { 256, 5000 }, { 65536, 9000 }, { 65536, 20000 },
    };
    static const struct { const char *scope, *count, *what; } floods[] = {
        { "/login", "3/1h", "the same quota" },
        { "/api", "1/1h", "a 1/1h quota (every flood key full)" },
        { "/api", "3/1h", "another 3/1h quota" },
    };
    hl_quota_t login = quota("3/1h");
    int64_t now = 1700000000000LL;
    size_t r, f;

    for (r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
        for (f = 0; f < sizeof(floods) / sizeof(floods[0]); f++) {
            hl_slots_t t = limiter_table(runs[r].slots);
            hl_quota_t fq = quota(floods[f].count);
            int before = admitted(&t, &login, "/login", "victim", 4, now);

            flood(&t, &fq, floods[f].scope, runs[r].keys, now + 10);
            okf(before == 3
                && admitted(&t, &login, "/login", "victim", 3,
                            now + 10 + runs[r].keys) == 0,
                "%u slots, %u new keys on %s: the key at 3/3 is still "
                "refused (%d then 0 admitted)", runs[r].slots, runs[r].keys,
                floods[f].what, before);
            free(t.hdr);
        }
    }
}

/* A key of another quota, used once (level 0), survives a flood of keys at
 * their limit on a quota that holds most of the pool; a key used twice of
 * the same quota survives a flood of one-request keys. */
static void test_classes(void)
{
    hl_quota_t three = quota("3/1h"), one = quota("1/1h");
    int64_t now = 1700000000000LL;
    hl_slots_t t = limiter_table(256);

    hit(&t, &three, "/login", "once", now);
    flood(&t, &one, "/api", 5000, now + 1);
    is_int(admitted(&t, &three, "/login", "once", 3, now + 6000), 2,
           "a key of another quota used once keeps its log through 5000 "
           "full keys of /api (2 more of 3 admitted)");
    free(t.hdr);

    t = limiter_table(256);
    admitted(&t, &three, "/login", "twice", 2, now);
    flood(&t, &three, "/login", 5000, now + 2);
    is_int(admitted(&t, &three, "/login", "twice", 3, now + 6000), 1,
           "a key used twice keeps its log through 5000 one-request keys "
           "of its own quota (1 more admitted)");
    free(t.hdr);
}

/* A new quota still gets logs from a pool another quota filled (it takes
 * them from the largest class), and expired logs are reused first. */
static void test_room(void)
{
    hl_quota_t three = quota("3/1h"), shortq = quota("3/1s");
    int64_t now = 1700000000000LL;
    hl_slots_t t = limiter_table(256);
    uint64_t evictions;

    flood(&t, &three, "/api", 5000, now);
    is_int(admitted(&t, &three, "/new", "client", 4, now + 6000), 3,
           "a new quota in a pool full of /api logs: exactly 3 of 4");
    free(t.hdr);

    t = limiter_table(256);
    flood(&t, &shortq, "/old", 40, now);
    evictions = t.hdr->evictions;
    flood(&t, &three, "/api", 40, now + 5000);
    ok(t.hdr->evictions == evictions && t.hdr->reclaims >= 30,
       "expired logs are reused before live ones are evicted");
    free(t.hdr);
}

int main(void)
{
    test_at_limit_kept();
    test_classes();
    test_room();
    return done_testing();
}
