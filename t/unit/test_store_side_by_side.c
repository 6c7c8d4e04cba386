/*
 * test_store_side_by_side.c - the two stores' bucket algorithms side by
 * side: the same requests at the same times through the shared-memory
 * store's core (hl_decide.c, hl_limiter.c, hl_bucket.c, hl_log.c) and
 * through the Redis store's script (src/core/hl_redis_script.lua, as embedded
 * in the module) in a real redis-server must give the same decisions, to
 * the millisecond: admitted or not, and per window admit, remaining,
 * reset, retry, the mark a refund names, Retry-After; and refunds and
 * settlements must touch the same windows. algo=fixed, sliding, gcra and
 * log; one and several windows; several quotas on one request (one in
 * dry run); cost= charged after the response; reserve= settled; exact
 * count=failures refunds; gcra bursts then a steady rate; and long runs
 * of pseudo-random arrivals.
 *
 * Why a unit test with explicit times, not two httpds: the shared-memory
 * store aligns its windows on a boot-based monotonic clock and the Redis
 * store on the server's TIME, so two live servers start their windows at
 * different instants and may legitimately differ at a window's edge.
 * Here both sides get the same `now`, so every answer must be equal.
 *
 * How the script gets that `now` without weakening production: the script
 * reads redis.call('TIME') and nothing a client sends can change that.
 * This test runs the embedded script text unchanged, behind a prefix of
 * its own (FAKE_CLOCK, below) that shadows the name `redis` with a local
 * table: TIME answers the test's clock (the key hltest:now), and key
 * expiry (SET .. PX, PEXPIRE, PTTL) is kept on that clock too, in the
 * hash hltest:expires, so that a key expires when the test's time passes
 * its end and never because the real clock moved. Every other command
 * goes to Redis as it is. The prefix exists only in this file; the module
 * sends the script alone.
 *
 * The C side is driven as the shared-memory store drives it
 * (mod_hotlimit_store_shm.c: hl_decide_locked, hl_decide_count_locked,
 * hl_decide_refund_locked, hl_decide_settle_locked); the Redis side gets
 * the very call the Redis store sends (hl_redis_call_build, by EVAL, with
 * the prefix "" and no lease) and its reply is read by the store's own
 * readers (hl_redis_call_parse, hl_redis_call_read).
 *
 * Times only move forward, as the Redis server's clock does (a store's
 * answer to a clock stepping back is its own affair). Not compared: the
 * leases of HotLimitStoreLease (the shared-memory store has none), the
 * look at a ban (a peek), and the status page's list of keys at their
 * limit.
 *
 * The redis-server is private to the test (a Unix socket in a temporary
 * directory, no persistence: hl_redis_server.h). Without redis-server on
 * PATH the test skips.
 */
#include "hl_decide.h"
#include "hl_quota.h"
#include "hl_redis_call.h"
#include "hl_tap.h"
#include "hl_spec.h"
#include "hl_fixture.h"
#include "hl_redis_server.h"
#include "hl_redis_script.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define T0 1767225600000LL   /* 2026-01-01T00:00:00Z in ms: an epoch time */
#define MAXQ 3               /* quotas on one request here */
#define SHOW_MAX 6           /* differences printed per scenario */

/* The test's clock for the script (see the head comment). */
static const char FAKE_CLOCK[] =
    "local real = redis\n"
    "local EXP = 'hltest:expires'\n"
    "local clock = tonumber(real.call('GET', 'hltest:now'))\n"
    "local function expire_due(key)\n"
    "  local at = real.call('HGET', EXP, key)\n"
    "  if at and (tonumber(at) <= clock or real.call('EXISTS', key) == 0) then\n"
    "    real.call('DEL', key); real.call('HDEL', EXP, key)\n"
    "  end\n"
    "end\n"
    "local function run(f, cmd, key, ...)\n"
    "  cmd = string.upper(cmd)\n"
    "  if cmd == 'TIME' then\n"
    "    return { tostring(math.floor(clock / 1000)), tostring((clock % 1000) * 1000) }\n"
    "  end\n"
    "  expire_due(key)\n"
    "  local a = { ... }\n"
    "  if cmd == 'SET' then\n"
    "    if a[2] and string.upper(a[2]) == 'PX' then\n"
    "      real.call('HSET', EXP, key, clock + tonumber(a[3]))\n"
    "      return f('SET', key, a[1])\n"
    "    end\n"
    "    real.call('HDEL', EXP, key)\n"
    "  elseif cmd == 'PEXPIRE' then\n"
    "    if real.call('EXISTS', key) == 0 then return 0 end\n"
    "    real.call('HSET', EXP, key, clock + tonumber(a[1]))\n"
    "    return 1\n"
    "  elseif cmd == 'PTTL' then\n"
    "    if real.call('EXISTS', key) == 0 then return -2 end\n"
    "    local at = real.call('HGET', EXP, key)\n"
    "    if not at then return -1 end\n"
    "    return tonumber(at) - clock\n"
    "  elseif cmd == 'DEL' then\n"
    "    real.call('HDEL', EXP, key)\n"
    "  end\n"
    "  return f(cmd, key, ...)\n"
    "end\n"
    "local redis = {\n"
    "  call = function(...) return run(real.call, ...) end,\n"
    "  pcall = function(...) return run(real.pcall, ...) end,\n"
    "}\n";

static char *script;         /* FAKE_CLOCK then the module's script */

/* One route: its quotas, each decided as one item, on both stores. */
typedef struct {
    char             name[160];
    int              n;                  /* quotas */
    hl_quota_t       q[MAXQ];
    char             key[MAXQ][48];
    hl_decide_item_t proto[MAXQ];        /* prepared, shared by both */
    hl_decide_item_t shm[MAXQ];          /* the last request, shm side */
    hl_decide_item_t red[MAXQ];          /* the last request, Redis side */
    int64_t          now;                /* of the last operation */
    int              steps, differences, admitted, refused;
} side_t;

/* ---- the Redis side --------------------------------------------------- */

/* Runs the script over items at now (the test's clock set first) and
 * reads its reply into *r (the caller frees it). A reply that is not an
 * array (a script error) bails out: nothing after it could be trusted. */
static void eval(hl_decide_item_t *const *items, int n, char mode,
                 uint32_t cost, int64_t now, rs_reply_t *r)
{
    static hl_redis_call_t c;    /* kept, as the store keeps one a thread */
    const hl_redis_script_t s = { "", script, NULL, NULL };
    const char m[2] = { mode, '\0' };
    char clock[24];
    const char *set[3] = { "SET", "hltest:now", clock };

    snprintf(clock, sizeof(clock), "%" PRId64, now);
    rs_command(3, set, NULL, r);
    rs_free(r);
    if (hl_redis_call_build(&c, &s, 1, items, n, m, cost, 0) != 0) {
        printf("Bail out! cannot build the script call\n");
        exit(2);
    }
    rs_send(c.buf + c.start, c.len - c.start, r);
    if (r->type != RS_ARRAY && !(r->type == RS_STR && (mode == 'd' || mode == 'c'))) {
        printf("Bail out! the script answered %s\n",
               r->type == RS_ERR ? r->str : "neither its string nor an array");
        exit(2);
    }
}

/* Fills the items' decisions from a decide reply, one string of
 * integers, by the Redis store's readers (hl_redis_call_parse, then
 * hl_redis_call_read). Returns 1 if admitted, 0 if not, -1 when the reply
 * is not such a string or does not fit the items. */
static int read_decisions(const rs_reply_t *reply,
                          hl_decide_item_t *const *items, int n)
{
    long long el[HL_REDIS_REPLY_MAX];
    long nel = reply->type == RS_STR
               ? hl_redis_call_parse(reply->str, strlen(reply->str), el, HL_REDIS_REPLY_MAX)
               : -1;

    return nel < 0 ? -1 : hl_redis_call_read(el, (size_t)nel, items, n);
}

/* ---- comparing --------------------------------------------------------- */

/* Notes one difference of s at its current step (printed for the first
 * SHOW_MAX of a scenario). */
static void differ(side_t *s, const char *what, int q, int w, long long shm,
                   long long red)
{
    if (++s->differences <= SHOW_MAX)
        printf("#   %s, step %d at +%lld ms, quota %d window %d: %s: "
               "shm %lld, redis %lld\n", s->name, s->steps,
               (long long)(s->now - T0), q, w, what, shm, red);
}

/* Compares the decisions of item q on both sides. */
static void compare_item(side_t *s, int q)
{
    const hl_decision_t *a = &s->shm[q].decision, *b = &s->red[q].decision;
    int j;

#define SAME(what, w, x, y) \
    do { if ((long long)(x) != (long long)(y)) differ(s, what, q, w, (long long)(x), (long long)(y)); } while (0)
    SAME("admit", -1, a->admit, b->admit);
    SAME("windows", -1, a->nwindows, b->nwindows);
    SAME("remaining", -1, a->remaining, b->remaining);
    SAME("retry_after_s", -1, a->retry_after_s, b->retry_after_s);
    for (j = 0; j < a->nwindows && j < HL_MAX_WINDOWS; ++j) {
        SAME("window admit", j, a->windows[j].admit, b->windows[j].admit);
        SAME("window remaining", j, a->windows[j].remaining, b->windows[j].remaining);
        SAME("window reset_ms", j, a->windows[j].reset_ms, b->windows[j].reset_ms);
        SAME("window retry_ms", j, a->windows[j].retry_ms, b->windows[j].retry_ms);
        SAME("mark", j, a->marks[j], b->marks[j]);
        SAME("window held", j, a->windows[j].held, b->windows[j].held);
    }
#undef SAME
}

/* ---- one route on both stores ------------------------------------------ */

/* Starts scenario name: both stores empty, the quotas of specs (n), the
 * first `dry` of them in dry run. */
static void side_open(side_t *s, const char *name, const char *const *specs,
                      int n, int dry)
{
    const char *flush[1] = { "FLUSHALL" };
    rs_reply_t r;
    int i;

    memset(s, 0, sizeof(*s));
    snprintf(s->name, sizeof(s->name), "%s", name);
    s->n = n;
    fresh();
    rs_command(1, flush, NULL, &r);
    rs_free(&r);
    for (i = 0; i < n; ++i) {
        s->q[i] = quota(specs[i]);
        snprintf(s->key[i], sizeof(s->key[i]), "route%d|203.0.113.7", i);
        item(&s->proto[i], &s->q[i], s->key[i]);
        s->proto[i].dry_run = i < dry;
    }
}

/* side_open for one quota, spec, named "what spec". */
static void side_open_one(side_t *s, const char *what, const char *spec)
{
    char name[160];

    snprintf(name, sizeof(name), "%s %s", what, spec);
    side_open(s, name, &spec, 1, 0);
}

/* One request at now, each quota taking reserve units when it has
 * reserve= (0: the quota's own rule): decided on both stores, compared.
 * Returns whether the shared-memory store admitted it. */
static int side_decide(side_t *s, int64_t now, uint32_t reserve)
{
    hl_decide_item_t *a[MAXQ], *b[MAXQ];
    rs_reply_t r;
    int i, admit_shm, admit_red;

    s->now = now;
    s->steps++;
    for (i = 0; i < s->n; ++i) {
        s->shm[i] = s->proto[i];
        if (reserve && hl_quota_reserves(&s->q[i]))
            s->shm[i].reserve = reserve;
        else if (hl_quota_reserves(&s->q[i]))
            s->shm[i].reserve = s->q[i].reserve;
        s->red[i] = s->shm[i];
        a[i] = &s->shm[i];
        b[i] = &s->red[i];
    }
    admit_shm = hl_decide_locked(tables, a, s->n, now);
    eval(b, s->n, 'd', 1, now, &r);
    admit_red = read_decisions(&r, b, s->n);
    rs_free(&r);
    if (admit_shm != admit_red)
        differ(s, "admitted", -1, -1, admit_shm, admit_red);
    for (i = 0; i < s->n; ++i)
        compare_item(s, i);
    if (admit_shm)
        s->admitted++;
    else
        s->refused++;
    return admit_shm;
}

/* The response of the last request, of cost, counted for quota q
 * (cost= without reserve=), on both stores. */
static void side_count(side_t *s, int q, uint32_t cost, int64_t now)
{
    hl_decide_item_t *b[1] = { &s->red[q] };
    rs_reply_t r;

    s->now = now;
    hl_decide_count_locked(&table, &s->shm[q], cost, now);
    eval(b, 1, 'c', cost, now, &r);
    rs_free(&r);
    if (getenv("TRACE")) {
        int j; for (j = 0; j < s->q[q].nwindows; ++j) {
            hl_slot_t *sl = hl_slots_find_hashed(&table, s->shm[q].refs[j].key, s->shm[q].refs[j].len, s->shm[q].refs[j].hash);
            char k[200]; const char *g[2] = { "GET", k }; rs_reply_t x;
            snprintf(k, sizeof k, "{hl}:%.*s", (int)s->shm[q].refs[j].len, s->shm[q].refs[j].key);
            rs_command(2, g, NULL, &x);
            printf("# TRACE step %d count %u at +%lld w%d shm t=%lld redis %s\n", s->steps, cost, (long long)(now - T0), j, (long long)(sl ? sl->bucket.t : -1), x.str ? x.str : "nil");
            rs_free(&x);
        }
    }
}

/* The last request's unit of quota q given back (count=failures: a
 * status not counted), on both stores; the windows given back compared.
 * As the Redis store, no call when nothing was counted. */
static void side_refund(side_t *s, int q, int64_t now)
{
    hl_decide_item_t *b[1] = { &s->red[q] };
    int given_shm, given_red = 0, j, marked = 0;
    rs_reply_t r;

    s->now = now;
    given_shm = hl_decide_refund_locked(&table, &s->shm[q], now);
    for (j = 0; j < s->q[q].nwindows; ++j)
        marked |= s->red[q].decision.marks[j] != 0;
    if (marked) {
        eval(b, 1, 'r', 0, now, &r);
        given_red = r.n >= 1 ? (int)r.el[0].integer : -1;
        rs_free(&r);
    }
    if (given_shm != given_red)
        differ(s, "refunded windows", q, -1, given_shm, given_red);
}

/* The last request's reservation of quota q settled to cost, on both
 * stores; the windows touched compared. As the Redis store, no call when
 * there is nothing to settle. */
static void side_settle(side_t *s, int q, uint32_t cost, int64_t now)
{
    hl_decide_item_t *b[1] = { &s->red[q] };
    int touched_shm, touched_red = 0;
    rs_reply_t r;

    s->now = now;
    touched_shm = hl_decide_settle_locked(&table, &s->shm[q], cost, now);
    if (s->red[q].reserve != 0
        && (cost != s->red[q].reserve || s->q[q].algo == HL_ALGO_FIXED)) {
        eval(b, 1, 's', cost, now, &r);
        touched_red = r.n >= 1 ? (int)r.el[0].integer : -1;
        rs_free(&r);
    }
    if (touched_shm != touched_red)
        differ(s, "settled windows", q, -1, touched_shm, touched_red);
}

/* Ends a scenario: one test that both stores agreed at every step, one
 * that the sequence met both admissions and refusals (it tested
 * something). */
static void side_close(side_t *s)
{
    okf(s->differences == 0, "%s: %d requests, the same decisions in both stores",
        s->name, s->steps);
    if (s->differences)
        printf("#   %d differences\n", s->differences);
    okf(s->admitted > 0 && s->refused > 0, "%s: %d admitted, %d refused",
        s->name, s->admitted, s->refused);
}

/* ---- sequences ----------------------------------------------------------- */

static const char *const algos[] = { "fixed", "sliding", "gcra", "log" };
#define NALGOS 4

/* A deterministic pseudo-random number in [0, n). */
static uint32_t rnd(uint32_t n)
{
    static uint64_t x = 0x2545f4914f6cdd1dULL;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return (uint32_t)(x % n);
}

/* 5/2s: under the limit, at it, refused, the window rolling over (at its
 * last ms, its end and after), idle past expiry, then a steady rate. */
static void seq_edges(const char *algo, int64_t start)
{
    static const int64_t at[] = {
        0, 0, 0, 0, 0, 0, 0, 1, 1500, 1999, 2000, 2000, 2001, 2500, 3000,
        3999, 4000, 4001, 4002, 4003, 4004, 4005, 5999, 6000, 16000, 16000,
        16001, 16002, 16003, 16004, 16005
    };
    char spec[64];
    side_t s;
    size_t i;

    snprintf(spec, sizeof(spec), "5/2s algo=%s", algo);
    side_open_one(&s, "edges", spec);
    for (i = 0; i < sizeof(at) / sizeof(at[0]); ++i)
        side_decide(&s, start + at[i], 0);
    for (i = 0; i < 40; ++i)
        side_decide(&s, start + 20000 + (int64_t)i * 333, 0);
    side_close(&s);
}

/* Two windows on one quota (5/2s 20/1m): the short one refuses first,
 * then the long one once 20 are counted, until the minute rolls. */
static void seq_two_windows(const char *algo, int64_t start)
{
    char spec[64];
    side_t s;
    int i;

    snprintf(spec, sizeof(spec), "5/2s 20/1m algo=%s", algo);
    side_open_one(&s, "two windows", spec);
    for (i = 0; i < 200; ++i)
        side_decide(&s, start + (int64_t)i * 250, 0);
    for (i = 0; i < 30; ++i)
        side_decide(&s, start + 61000 + (int64_t)i * 90, 0);
    side_close(&s);
}

/* Several quotas on one request, of different algorithms, one in dry run
 * (it never refuses, only reports): the request is counted only where
 * all the others admitted it. */
static void seq_quotas(int a, int64_t start)
{
    char name[160], s0[48], s1[48], s2[48];
    const char *specs[3] = { s0, s1, s2 };
    side_t s;
    int i;

    snprintf(name, sizeof(name), "three quotas %s(dry)/%s/%s",
             algos[a], algos[(a + 1) % NALGOS], algos[(a + 2) % NALGOS]);
    snprintf(s0, sizeof(s0), "2/1s algo=%s", algos[a]);
    snprintf(s1, sizeof(s1), "4/1s algo=%s", algos[(a + 1) % NALGOS]);
    snprintf(s2, sizeof(s2), "6/3s 9/9s algo=%s", algos[(a + 2) % NALGOS]);
    side_open(&s, name, specs, 3, 1);
    for (i = 0; i < 150; ++i)
        side_decide(&s, start + (int64_t)i * 97 + rnd(60), 0);
    side_close(&s);
}

/* gcra: a burst (all at once), then one per interval (the steady rate:
 * each admitted), then a little faster (refusals come back), then a
 * little slower; with burst= below and above the count. */
static void seq_gcra(const char *extra, int64_t start)
{
    char spec[64];
    side_t s;
    int64_t t = start;
    int i;

    snprintf(spec, sizeof(spec), "10/10s algo=gcra %s", extra);
    side_open_one(&s, "gcra burst then steady", spec);
    for (i = 0; i < 14; ++i)
        side_decide(&s, t, 0);
    for (i = 0; i < 15; ++i)
        side_decide(&s, t += 1000, 0);
    for (i = 0; i < 20; ++i)
        side_decide(&s, t += 900, 0);
    for (i = 0; i < 20; ++i)
        side_decide(&s, t += 1100, 0);
    for (i = 0; i < 20; ++i)
        side_decide(&s, t += 1 + rnd(1500), 0);
    side_close(&s);
}

/* gcra count=failures refunds around the moment the unit drains (its
 * TAT: one interval after a request on a full bucket): a millisecond
 * before it the unit is given back, at it and after it there is nothing
 * left to give back. */
static void seq_gcra_refund_edge(int64_t start)
{
    static const int64_t after[] = { 999, 1000, 1001, 1002 };
    side_t s;
    int64_t t = start;
    int i;

    side_open_one(&s, "gcra refunds as the unit drains", "3/3s algo=gcra count=failures");
    for (i = 0; i < 24; ++i) {
        if (side_decide(&s, t, 0))
            side_refund(&s, 0, t += after[i % 4]);
        t += 3000;
    }
    for (i = 0; i < 5; ++i)      /* then the burst, and past it */
        side_decide(&s, t, 0);
    side_close(&s);
}

/* gcra with a burst above its count and reservations between the two
 * (they fit the burst): taken whole, then settled below, at and above
 * them; alone and beside a second quota. */
static void seq_gcra_reserve_burst(int plain, int64_t start)
{
    static const uint32_t units[] = { 15, 1, 1, 12, 19, 20, 21, 3, 14, 16 };
    const char *specs[2] = { "10/10s algo=gcra burst=20 cost=header:X-Cost reserve=4",
                             "100/10s algo=fixed" };
    char name[160];
    side_t s;
    int64_t t = start;
    size_t i;

    snprintf(name, sizeof(name), "gcra reservations over the count %s%s",
             specs[0], plain ? " + 100/10s" : "");
    side_open(&s, name, specs, plain ? 2 : 1, 0);
    for (i = 0; i < 60; ++i) {
        uint32_t u = units[i % 10];
        if (side_decide(&s, t, u))
            side_settle(&s, 0, i % 3 == 0 ? u : i % 3 == 1 ? u / 2 : u + 3,
                        t += 500);
        t += i % 7 == 6 ? 12000 : 700;
    }
    side_close(&s);
}

/* reserve= on a fixed window, requests running at once: their
 * reservations are held until they settle (at, below or above them), and
 * a refusal says whether held units alone stand in the way (held), the
 * same on both stores. */
static void seq_held(int64_t start)
{
    side_t s;
    hl_decide_item_t a[2], b[2], c[2];
    int64_t t = start;

    side_open_one(&s, "held reservations", "100/10s cost=header:X-Cost reserve=40");
    side_decide(&s, t, 40);
    a[0] = s.shm[0]; a[1] = s.red[0];
    side_decide(&s, t += 10, 40);
    b[0] = s.shm[0]; b[1] = s.red[0];
    side_decide(&s, t += 10, 40);
    ok(!s.shm[0].decision.admit && s.shm[0].decision.windows[0].held,
       "held: refused, only held units in the way");
    s.shm[0] = a[0]; s.red[0] = a[1];
    side_settle(&s, 0, 40, t += 10);             /* at its reservation */
    side_decide(&s, t += 10, 30);
    ok(!s.shm[0].decision.admit && s.shm[0].decision.windows[0].held,
       "held: still, by the one running");
    s.shm[0] = b[0]; s.red[0] = b[1];
    side_settle(&s, 0, 10, t += 10);             /* below: 30 given back */
    ok(side_decide(&s, t += 10, 30), "held: admitted once given back");
    c[0] = s.shm[0]; c[1] = s.red[0];
    side_decide(&s, t += 10, 30);
    ok(s.shm[0].decision.windows[0].held, "held: the new one's units");
    s.shm[0] = c[0]; s.red[0] = c[1];
    side_settle(&s, 0, 45, t += 10);             /* above: 15 more */
    side_decide(&s, t += 10, 30);
    ok(!s.shm[0].decision.admit && !s.shm[0].decision.windows[0].held,
       "held: none left, spent units refuse");
    side_decide(&s, t += 10000, 30);             /* the next window */
    side_close(&s);
}

/* What follows an admitted request's response. */
typedef enum {
    AFTER_COUNT,     /* cost= without reserve=: its cost (1 .. 30, over the
                        count too: capped) counted */
    AFTER_SETTLE,    /* reserve=: its reservation (1 .. 25, over the count
                        at times: never fits) settled to a cost below it
                        (the rest given back), equal to it, or above it
                        (the excess counted) */
    AFTER_REFUND     /* count=failures: about half turn out not to count
                        and give their unit back, soon or after the window
                        moved */
} after_t;

/* 150 requests of quota spec (with `plain`, a second quota of cost 1 on
 * the same request), each admitted one followed by `after` a little
 * later. */
static void seq_after(const char *what, const char *spec, int plain,
                      after_t after, int64_t start)
{
    char name[160];
    const char *specs[2] = { spec, "100/10s algo=fixed" };
    side_t s;
    int64_t t = start;
    int i;

    snprintf(name, sizeof(name), "%s %s%s", what, spec,
             plain ? " + 100/10s" : "");
    side_open(&s, name, specs, plain ? 2 : 1, 0);
    for (i = 0; i < 150; ++i) {
        uint32_t units = after == AFTER_SETTLE ? 1 + rnd(i % 12 == 11 ? 25 : 8) : 0;

        t += rnd(after == AFTER_REFUND ? 400 : 900);
        if (!side_decide(&s, t, units))
            continue;
        if (after == AFTER_COUNT)
            side_count(&s, 0, 1 + rnd(i % 10 == 9 ? 30 : 8), t += rnd(300));
        else if (after == AFTER_SETTLE)
            side_settle(&s, 0, rnd(2 * units + 1), t += rnd(2000));
        else if (rnd(2))
            side_refund(&s, 0, t += rnd(i % 5 == 4 ? 4000 : 200));
    }
    side_close(&s);
}

/* seq_after for algo (and extra words) in each of its three forms. */
static void seq_after_all(const char *algo, const char *extra, int64_t start)
{
    char spec[96];

    snprintf(spec, sizeof(spec), "20/10s 50/1m algo=%s %scost=header:X-Cost",
             algo, extra);
    seq_after("cost after response", spec, 0, AFTER_COUNT, start);
    snprintf(spec, sizeof(spec), "3/2s 10/20s algo=%s %scount=failures",
             algo, extra);
    seq_after("refunds", spec, 0, AFTER_REFUND, start + 1);
    if (strcmp(algo, "log") == 0)
        return;                  /* reserve= is refused with algo=log */
    snprintf(spec, sizeof(spec), "20/10s 60/1m algo=%s %scost=header:X-Cost reserve=4",
             algo, extra);
    seq_after("reserve then settle", spec, 0, AFTER_SETTLE, start + 2);
    seq_after("reserve then settle", spec, 1, AFTER_SETTLE, start + 3);
}

/* Long runs of pseudo-random arrivals (gaps from 0 to twice the mean
 * interval of the short window, bursts of 0 ms now and then). */
static void seq_random(const char *spec, int64_t start, int64_t mean)
{
    side_t s;
    int64_t t = start;
    int i;

    side_open_one(&s, "random arrivals", spec);
    for (i = 0; i < 600; ++i) {
        t += rnd(5) == 0 ? 0 : rnd((uint32_t)(2 * mean));
        side_decide(&s, t, 0);
    }
    side_close(&s);
}

/* Returns the script to run: FAKE_CLOCK, then the module's own text
 * (owned; never freed). */
static char *fake_clock_script(void)
{
    size_t a = strlen(FAKE_CLOCK), b = strlen(hl_redis_script);
    char *out = tap_calloc(a + b + 1);

    memcpy(out, FAKE_CLOCK, a);
    memcpy(out + a, hl_redis_script, b);
    return out;
}

int main(void)
{
    static const char *const random_specs[] = {
        "10/1s 30/5s algo=fixed", "10/1s 30/5s algo=sliding",
        "10/1s 30/5s algo=gcra", "10/1s 30/5s algo=log",
        "7/700ms algo=sliding", "3/333ms algo=gcra burst=5",
        "64/10s algo=log", "1/1s algo=fixed", "1/1s algo=sliding",
        "1/1s algo=gcra", "1/1s algo=log"
    };
    static const int64_t means[] = { 100, 100, 100, 100, 100, 111, 156,
                                     1000, 1000, 1000, 1000 };
    int rc = rs_start(), a;
    size_t i;

    (void)arrive;               /* hl_fixture.h's, not needed here */

    if (rc == -1) {
        printf("1..0 # SKIP redis-server is not on PATH\n");
        return 0;
    }
    if (rc != 0) {
        printf("Bail out! could not start a private redis-server\n");
        return 2;
    }
    script = fake_clock_script();
    /* Window phases differ between scenarios: starts off any boundary. */
    for (a = 0; a < NALGOS; ++a) {
        seq_edges(algos[a], T0 + 1234 + 111 * a);
        seq_two_windows(algos[a], T0 + 7777 + 37 * a);
        seq_quotas(a, T0 + 500 * a + 3);
        seq_after_all(algos[a], "", T0 + 4321 + 10 * a);
    }
    seq_gcra("", T0 + 250);
    seq_gcra("burst=3", T0 + 251);
    seq_gcra("burst=15", T0 + 252);
    seq_after_all("gcra", "burst=30 ", T0 + 253);
    seq_gcra_refund_edge(T0 + 255);
    seq_held(T0 + 250);
    seq_gcra_reserve_burst(0, T0 + 260);
    seq_gcra_reserve_burst(1, T0 + 261);
    for (i = 0; i < sizeof(random_specs) / sizeof(random_specs[0]); ++i)
        seq_random(random_specs[i], T0 + 17 * (int64_t)i + 5, means[i]);
    rs_stop();
    return done_testing();
}
