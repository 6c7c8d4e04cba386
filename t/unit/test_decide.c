/*
 * test_decide.c - the decision over every quota of one request
 * (hl_decide.c): counted only if every quota not in dry run admits,
 * count=failures taken at the decision, statistics, primary and tightest choice,
 * peek (the ban check) and cost= charges.
 */
#include "hl_decide.h"
#include "hl_limiter_calls.h"
#include "hl_quota.h"
#include "hl_table.h"
#include "hl_tap.h"
#include "hl_spec.h"

#include <stdio.h>
#include <string.h>
#include "hl_core_calls.h"

#define CAPACITY 256
#define NOW 5000000LL

/* hl_decide_locked, then hl_decide_stats into st when st is not NULL (as
 * the store does after its locks). */
static int decide(hl_slots_t *const *tables, hl_stats_t *st,
                  hl_decide_item_t *const *items, int n, int64_t now_ms)
{
    int admit = hl_decide_locked(tables, items, n, now_ms);

    if (st != NULL)
        hl_decide_stats(st, items, n, now_ms);
    return admit;
}

static void *mem;
static hl_slots_t table;
static hl_stats_t stats;
static hl_slots_t *tables[HL_DECIDE_MAX];

/* Starts every test on an empty table and empty statistics. */
static void fresh(void)
{
    size_t size = hl_slots_size(CAPACITY);
    int i;

    free(mem);
    mem = tap_calloc(size);
    for (i = 0; i < HL_DECIDE_MAX; ++i)
        tables[i] = &table;
    hl_slots_attach(&table, mem, size, CAPACITY, 7);
    hl_stats_clear(&stats);
}

/* Fills item it for quota q and key ("scope|client"), its refs
 * computed (hl_decide_prepare). */
static void item(hl_decide_item_t *it, const hl_quota_t *q, const char *key,
                 int dry_run)
{
    size_t scope = (size_t)(strchr(key, '|') - key);

    memset(it, 0, sizeof(*it));
    it->quota = q;
    it->origin = HL_ORIGIN_DIRECTIVE;
    it->dry_run = dry_run;
    it->key = key;
    it->key_len = strlen(key);
    it->cls = limiter_class(HL_ORIGIN_DIRECTIVE, key, scope);
    it->stats_hash = hl_table_route_hash(key, scope);
    it->stats_name = key;   /* fine for tests: a name per item */
    hl_decide_prepare(&table, it);
}

/* Returns the statistics entry of name, NULL if absent. */
static const hl_route_stat_t *entry_of(const char *name)
{
    int i;

    for (i = 0; i < HL_STATS_ROUTES; ++i)
        if (stats.routes[i].hash && !strcmp(stats.routes[i].route, name))
            return &stats.routes[i];
    return NULL;
}

/* Returns the statistics entry count of kind for name, 0 if absent. */
static uint64_t stat_of(const char *name, hl_decision_kind_t kind)
{
    return entry_of(name) ? entry_of(name)->count[kind] : 0;
}

/* Returns the refused_other count of the statistics entry name (0: none). */
static uint64_t other_of(const char *name)
{
    return entry_of(name) ? entry_of(name)->refused_other : 0;
}

/* Returns the refused_by count of the statistics entry name (0: none). */
static uint64_t refused_by_of(const char *name)
{
    return entry_of(name) ? entry_of(name)->refused_by : 0;
}

static void test_one_quota(void)
{
    hl_quota_t q = quota("2/1m");
    hl_decide_item_t a, *items[1] = { &a };

    fresh();
    item(&a, &q, "/a|c", 0);
    ok(decide(tables, &stats, items, 1, NOW), "one quota: 1st admitted");
    is_int(a.decision.remaining, 1, "one quota: 1 left");
    ok(decide(tables, &stats, items, 1, NOW), "one quota: 2nd admitted");
    ok(!decide(tables, &stats, items, 1, NOW), "one quota: 3rd rejected");
    is_int(a.decision.retry_after_s, 60, "one quota: retry 60 s");
    is_int((int)stat_of("/a|c", HL_DECISION_ADMITTED), 2, "stats: 2 admitted");
    is_int((int)stat_of("/a|c", HL_DECISION_REJECTED), 1, "stats: 1 rejected");
}

static void test_all_or_nothing(void)
{
    hl_quota_t small = quota("1/1m"), big = quota("10/1m");
    hl_decide_item_t a, b, *items[2] = { &a, &b };
    hl_decide_item_t b_only, *bi[1] = { &b_only };

    fresh();
    item(&a, &small, "/s|c", 0);
    item(&b, &big, "/b|c", 0);
    ok(decide(tables, &stats, items, 2, NOW), "two quotas: admitted");
    ok(!decide(tables, &stats, items, 2, NOW),
       "two quotas: the small one rejects");
    item(&b_only, &big, "/b|c", 0);
    decide(tables, NULL, bi, 1, NOW);
    is_int(b_only.decision.remaining, 8,
           "the rejected request was not counted in the big quota (10-1-1)");
    /* A refused request is counted once as rejected, on the quota that
     * refused it (issue 27): the big quota would have admitted it, and
     * counts it as refused by another rule, not as its rejection. */
    is_int((int)stat_of("/b|c", HL_DECISION_ADMITTED), 1,
           "stats: the big quota's route counts 1 admitted, not 2");
    is_int((int)stat_of("/b|c", HL_DECISION_REJECTED), 0,
           "stats: ... and the refused request not as its rejection");
    is_int((int)other_of("/b|c"), 1,
           "stats: ... but as refused by another rule");
    is_int((int)stat_of("/s|c", HL_DECISION_REJECTED), 1,
           "stats: the small quota's route counts its rejection");
    is_int((int)other_of("/s|c"), 0, "stats: ... and none by another rule");
    /* Which rule refused (issue 21): only the small quota's. */
    is_int((int)refused_by_of("/s|c"), 1, "refused by: the small quota");
    is_int((int)refused_by_of("/b|c"), 0, "... not the big one");
    is_int((int)hl_refusals_of(&stats.refusals, "/s|c", 4, NOW), 1,
           "the refused key's refusals are counted");
}

static void test_dry_run(void)
{
    hl_quota_t q = quota("1/1m"), other = quota("5/1m");
    hl_decide_item_t a, b, *items[2] = { &a, &b };

    fresh();
    item(&a, &q, "/d|c", 1);
    item(&b, &other, "/o|c", 0);
    ok(decide(tables, &stats, items, 2, NOW), "dry run: 1st admitted");
    ok(decide(tables, &stats, items, 2, NOW),
       "dry run: a would-be rejection admits");
    ok(!a.decision.admit, "dry run: the item itself says rejected");
    is_int((int)stat_of("/d|c", HL_DECISION_DRY_RUN), 1, "stats: 1 dry run");
    is_int(b.decision.remaining, 3, "the other quota counted both (5-2)");
    is_int(hl_decide_primary(items, 2), 0,
           "primary: the dry-run item does not reject, least remaining wins");
}

/* count=failures takes its unit at the decision (two in flight fill
 * 2/1m) and gives it back when the answer is not a failure
 * (test_refund.c has the rest). */
static void test_failures_taken_at_decision(void)
{
    hl_quota_t q = quota("2/1m count=failures");
    hl_decide_item_t a, *items[1] = { &a };
    int i;

    fresh();
    item(&a, &q, "/f|c", 0);
    for (i = 0; i < 5; ++i) {
        ok(decide(tables, &stats, items, 1, NOW),
           "count=failures: admitted while nothing failed");
        is_int(hl_decide_refund_locked(&table, &a, NOW), 1,
               "count=failures: a success gives its unit back");
    }
    ok(decide(tables, &stats, items, 1, NOW)
       && decide(tables, &stats, items, 1, NOW),
       "count=failures: two in flight admitted");
    ok(!decide(tables, &stats, items, 1, NOW),
       "count=failures: a third in flight refused before any answer");
}

static void test_primary_and_tightest(void)
{
    hl_quota_t two = quota("5/1m 30/1h"), one = quota("3/1m");
    hl_decide_item_t a, b, *items[2] = { &a, &b };
    int i;

    fresh();
    item(&a, &two, "/t|c", 0);
    item(&b, &one, "/u|c", 0);
    decide(tables, &stats, items, 2, NOW);
    is_int(hl_decide_primary(items, 2), 1, "primary: the least remaining (3/1m)");
    is_int(hl_decide_tightest(&a.decision), 0, "tightest: 5/1m before 30/1h");
    for (i = 0; i < 4; ++i)
        decide(tables, &stats, items, 2, NOW);
    is_int(hl_decide_primary(items, 2), 1, "primary: the rejecting one");
    ok(!b.decision.admit, "... which did reject");
    /* Ties on remaining: the window that takes longer to reset. */
    {
        hl_decision_t d;
        memset(&d, 0, sizeof(d));
        d.nwindows = 2;
        d.windows[0].admit = d.windows[1].admit = 1;
        d.windows[0].remaining = d.windows[1].remaining = 2;
        d.windows[0].reset_ms = 1000;
        d.windows[1].reset_ms = 9000;
        is_int(hl_decide_tightest(&d), 1, "tightest: a tie goes to the longer reset");
        is_int((int)hl_decide_reset_s(&d, 0), 1, "reset_s rounds up");
    }
}

/* peek: decided, never counted, no slot created for a key without one;
 * stats_name NULL: left out of the statistics; cost n counted at once. */
static void test_peek_and_cost(void)
{
    hl_quota_t ban = quota("1/5s"), cost = quota("100/1m cost=header:X-T");
    hl_decide_item_t a, *it = &a;
    int i;

    fresh();
    item(&a, &ban, "ban|1", 0);
    a.peek = 1;
    a.stats_name = NULL;
    ok(decide(tables, &stats, &it, 1, NOW) == 1 && a.decision.admit,
       "peek: a key without counters is admitted");
    is_int((int)table.hdr->used, 0, "peek: no slot created");
    is_int((int)stat_of("ban|1", HL_DECISION_ADMITTED), 0,
           "stats_name NULL: not in the statistics");
    a.peek = 0;
    decide(tables, &stats, &it, 1, NOW);       /* the ban starts */
    a.peek = 1;
    for (i = 0; i < 3; ++i)
        decide(tables, &stats, &it, 1, NOW + 1000);
    ok(!a.decision.admit && a.decision.retry_after_s == 4,
       "peek: banned, Retry-After is the time left (4 s)");
    ok(decide(tables, &stats, &it, 1, NOW + 5000) == 1,
       "peek: the ban is over after its window");

    item(&a, &cost, "/llm|k", 0);
    ok(decide(tables, &stats, &it, 1, NOW) == 1, "cost: admitted");
    ok(decide(tables, &stats, &it, 1, NOW) == 1
       && a.decision.remaining == 99, "cost: not counted at the decision");
    hl_decide_count_locked(&table, &a, 99, NOW);
    ok(decide(tables, &stats, &it, 1, NOW) == 1
       && a.decision.remaining == 0, "cost 99 counted: 1 left, admitted");
    hl_decide_count_locked(&table, &a, 50, NOW);
    ok(decide(tables, &stats, &it, 1, NOW) == 0,
       "overshoot to 149 of 100: refused");
}

/* A ban look asked with the quotas, first: a banned client's request
 * refuses before any quota is asked, so no quota counter is looked up,
 * created or evicted (creating one could evict the ban itself); a client
 * not banned is decided and counted as without the look. */
static void test_ban_look_first(void)
{
    hl_quota_t ban = quota("1/5s"), q = quota("5/1m");
    hl_decide_item_t b, a, d, *its[3] = { &b, &a, &d };
    char skey[HL_KEY_MAX];
    size_t n;

    fresh();
    item(&b, &ban, "ban|1", 0);
    b.stats_name = NULL;
    decide(tables, &stats, its, 1, NOW);         /* the ban starts */
    b.peek = 1;
    item(&a, &q, "/q|1", 0);
    a.decision.admit = 1;
    ok(decide(tables, &stats, its, 2, NOW + 1000) == 0 && !b.decision.admit,
       "banned: refused by the look");
    ok(!a.decision.admit && a.decision.nwindows == 0,
       "... the quota after it not asked (refused, no window)");
    n = hl_limiter_slot_key(skey, HL_ORIGIN_DIRECTIVE, 0, a.key, a.key_len);
    ok(hl_slots_find(&table, skey, n) == NULL, "... and no counter created for it");
    ok(stat_of("/q|1", HL_DECISION_REJECTED) == 0
       && stat_of("/q|1", HL_DECISION_BANNED) == 1 && other_of("/q|1") == 0,
       "... counted as banned at its route, never as its rejection (issue 27)");
    item(&d, &q, "/d|1", 1);
    decide(tables, &stats, its, 3, NOW + 1000);
    ok(stat_of("/q|1", HL_DECISION_BANNED) == 2
       && stat_of("/d|1", HL_DECISION_BANNED) == 0
       && stat_of("/d|1", HL_DECISION_REJECTED) == 0
       && stat_of("/d|1", HL_DECISION_DRY_RUN) == 0,
       "... counted once, on the request's first route: not at the dry-run one");
    ok(decide(tables, &stats, its, 2, NOW + 5000) == 1 && b.decision.admit
       && a.decision.admit && a.decision.remaining == 4,
       "the ban over: the quota is decided and counted (4 left)");
}

static void test_prepare_matches_limiter(void)
{
    hl_quota_t q = quota("5/1m 30/1h");
    hl_decide_item_t a;
    char skey[HL_KEY_MAX];
    size_t n;

    fresh();
    item(&a, &q, "/p|some-client", 0);
    n = hl_limiter_slot_key(skey, HL_ORIGIN_DIRECTIVE, 1, a.key, a.key_len);
    ok(a.refs[1].len == n && !memcmp(a.refs[1].key, skey, n),
       "prepare: window 1's slot key");
    ok(a.refs[1].hash == hl_slots_hash(&table, skey, n), "prepare: its hash");
}

int main(void)
{
    test_one_quota();
    test_all_or_nothing();
    test_dry_run();
    test_failures_taken_at_decision();
    test_primary_and_tightest();
    test_prepare_matches_limiter();
    test_peek_and_cost();
    test_ban_look_first();
    free(mem);
    return done_testing();
}
