/* hl_conc: HotLimitConcurrency's holders table: limits, giving back,
 * reclaiming dead holders, pid reuse, collisions and removal. */
#include "hl_tap.h"
#include "hl_conc.h"

static int dead_pid = -1;     /* the process alive() says is gone */
static int tests;             /* how often alive() was asked */

static int alive(int32_t pid, uint64_t start, void *ctx)
{
    (void)start;
    (void)ctx;
    ++tests;
    return pid != dead_pid;
}

static unsigned char mem[1 << 16];

int main(void)
{
    hl_conc_table_t *t = hl_conc_init(mem, 8);
    hl_conc_holder_t a = { 100, 1 }, b = { 200, 1 }, b2 = { 200, 2 };
    unsigned sc;
    uint64_t k;
    int i;

    ok(hl_conc_size(8) <= sizeof(mem), "size fits");
    sc = hl_conc_scope(t, 77, "/llm", 0, 2);
    is_int((int)sc, 0, "first scope");
    is_int((int)hl_conc_scope(t, 77, "/llm", 0, 3), 0, "same scope again");
    is_int((int)t->scopes[0].limit, 3, "limit updated");
    is_str(t->scopes[0].name, "/llm", "scope name");

    is_int(hl_conc_take(t, 5, &a, 2, sc, 1000, alive, NULL), 1, "1st taken");
    is_int(hl_conc_take(t, 5, &b, 2, sc, 1000, alive, NULL), 1, "2nd taken (other holder)");
    is_int(hl_conc_take(t, 5, &a, 2, sc, 1000, alive, NULL), 0, "3rd refused");
    is_int((int)t->scopes[sc].refused, 1, "refusal counted");
    is_int((int)t->scopes[sc].in_flight, 2, "two in flight");
    is_int(hl_conc_take(t, 6, &a, 2, sc, 1000, alive, NULL), 1, "another key taken");
    is_int((int)hl_conc_in_flight(t, 5), 2, "key 5: 2");
    is_int(hl_conc_give(t, 5, &a), 1, "a gives back");
    is_int((int)hl_conc_in_flight(t, 5), 1, "key 5: 1");
    is_int(hl_conc_take(t, 5, &a, 2, sc, 1000, alive, NULL), 1, "taken again");
    is_int(hl_conc_give(t, 5, &b2), 0, "a reused pid holds nothing");

    /* b dies holding one slot of key 5: reclaimed at the limit. */
    dead_pid = 200;
    tests = 0;
    is_int(hl_conc_take(t, 5, &a, 2, sc, 2000, alive, NULL), 1,
           "dead holder's slot reclaimed");
    is_int((int)hl_conc_in_flight(t, 5), 2, "a holds both");
    is_int(tests, 1, "one holder tested");
    is_int(hl_conc_take(t, 5, &a, 2, sc, 2000, alive, NULL), 0, "a at limit");
    is_int(tests, 1, "no other holder to test");

    /* A live holder is tested at most every HL_CONC_CHECK_MS. */
    dead_pid = -1;
    hl_conc_give(t, 5, &a);
    is_int(hl_conc_take(t, 5, &b, 2, sc, 3000, alive, NULL), 1, "b takes one");
    tests = 0;
    is_int(hl_conc_take(t, 5, &b, 2, sc, 3000, alive, NULL), 0, "b refused");
    is_int(hl_conc_take(t, 5, &b, 2, sc, 3100, alive, NULL), 0, "b refused again");
    is_int(tests, 1, "a tested once within the period");

    /* Refusal lines: one per scope per HL_CONC_LOG_MS, the rest counted. */
    {
        uint32_t skipped = 9;
        is_int(hl_conc_log_due(t, sc, 10000, &skipped), 1, "first refusal logged");
        is_int((int)skipped, 0, "none skipped before");
        is_int(hl_conc_log_due(t, sc, 10100, &skipped), 0, "next within 1 s: not");
        is_int(hl_conc_log_due(t, sc, 10900, &skipped), 0, "nor that one");
        is_int(hl_conc_log_due(t, sc, 11000, &skipped), 1, "a second later: logged");
        is_int((int)skipped, 2, "saying 2 were not");
        is_int(hl_conc_log_due(t, HL_CONC_NO_SCOPE, 11001, &skipped), 1,
               "no scope: always logged");
    }

    /* Full table: the last record stays empty, take says -1. */
    t = hl_conc_init(mem, 4);
    for (i = 0; i < 3; ++i) {
        hl_conc_holder_t h = { 300 + i, 0 };
        is_int(hl_conc_take(t, 9, &h, 10, HL_CONC_NO_SCOPE, 0, alive, NULL), 1,
               "fills");
    }
    {
        hl_conc_holder_t h = { 400, 0 };
        is_int(hl_conc_take(t, 9, &h, 10, HL_CONC_NO_SCOPE, 0, alive, NULL), -1,
               "full table: -1");
        is_int(hl_conc_take(t, 9, &a, 10, HL_CONC_NO_SCOPE, 0, alive, NULL), -1,
               "still -1");
        /* What the glue does then: reap the dead (at most once a second),
         * and try again. */
        dead_pid = 301;
        is_int((int)hl_conc_reap(t, alive, NULL), 1, "a dead holder reaped");
        is_int(hl_conc_take(t, 9, &h, 10, HL_CONC_NO_SCOPE, 0, alive, NULL), 1,
               "then the take finds room");
        dead_pid = -1;
    }

    /* Many keys colliding: removal keeps every record reachable. */
    t = hl_conc_init(mem, 64);
    for (k = 1; k <= 40; ++k)
        hl_conc_take(t, k * 64, &a, 5, HL_CONC_NO_SCOPE, 0, alive, NULL);
    for (k = 1; k <= 40; k += 2)
        hl_conc_give(t, k * 64, &a);
    for (k = 1, i = 1; k <= 40; ++k)
        if (hl_conc_in_flight(t, k * 64) != (k % 2 ? 0u : 1u))
            i = 0;
    ok(i, "after removals each key holds what it should");
    is_int((int)t->used, 20, "20 records left");

    /* Reap: every dead holder's records go. */
    for (k = 1; k <= 10; ++k)
        hl_conc_take(t, k * 64 + 1, &b, 5, HL_CONC_NO_SCOPE, 0, alive, NULL);
    dead_pid = 200;
    is_int((int)hl_conc_reap(t, alive, NULL), 10, "reap gives back 10");
    is_int((int)t->used, 20, "a's records stay");
    for (k = 2, i = 1; k <= 40; k += 2)
        if (hl_conc_in_flight(t, k * 64) != 1)
            i = 0;
    ok(i, "a's keys still held");
    return done_testing();
}
