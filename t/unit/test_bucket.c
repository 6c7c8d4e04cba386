/*
 * test_bucket.c - unit tests of hl_bucket.c: exact numbers for the three
 * algorithms, then property tests over many (limit, window, burst, time
 * step) combinations driven by a deterministic PRNG. Prints TAP.
 *
 * Properties, for every algorithm:
 *  (a) admission agrees with the algorithm's definition, computed here
 *      independently from the history of admitted requests, and the count
 *      admitted stays within the limit (fixed: per window; sliding: per
 *      aligned window and by the estimate; gcra: burst + rate over any span);
 *  (b) a rejection with retry_ms = d is still a rejection at now+d-1 and an
 *      admission at now+d (Retry-After never points earlier than re-admission);
 *  (c) remaining drops by exactly one per admitted request at the same instant;
 *  plus: reset_ms is the exact time to a full quota, expires_ms gives a
 *  bucket equivalent to a fresh one.
 */
#include "hl_bucket.h"
#include "hl_tap.h"

#include <stdio.h>
#include <string.h>
#include "hl_core_calls.h"

#define BASE_MS 1700000000000LL   /* a realistic "now" */

/* ---------- helpers ---------- */

/* Returns a policy. */
static hl_policy_t pol(hl_algo_t algo, uint32_t limit, uint32_t window,
                       uint32_t burst)
{
    hl_policy_t p;

    p.algo = algo;
    p.limit = limit;
    p.window_ms = window;
    p.burst = burst;
    return p;
}

/* Checks a copy of *b at now (the copy absorbs the roll). */
static hl_verdict_t peek(const hl_bucket_t *b, const hl_policy_t *p, int64_t now)
{
    hl_bucket_t c = *b;
    hl_verdict_t v;

    hl_bucket_check(&c, p, now, &v);
    return v;
}

/* Checks *b at now and, if admitted, commits. Returns the verdict. */
static hl_verdict_t hit(hl_bucket_t *b, const hl_policy_t *p, int64_t now)
{
    hl_verdict_t v;

    hl_bucket_check(b, p, now, &v);
    if (v.admit)
        hl_bucket_commit(b, p, now);
    return v;
}

/* Returns the remaining count of a full quota: limit-1, or burst-1 (gcra). */
static uint32_t full_remaining(const hl_policy_t *p)
{
    if (p->algo == HL_ALGO_GCRA && p->burst)
        return p->burst - 1;
    return p->limit - 1;
}

/* Returns the GCRA emission interval in us, computed as the spec says. */
static int64_t gcra_T(const hl_policy_t *p)
{
    return ((int64_t)p->window_ms * 1000 + p->limit - 1) / p->limit;
}

/* ---------- exact numbers ---------- */

static void test_fixed_numbers(void)
{
    hl_policy_t p = pol(HL_ALGO_FIXED, 3, 1000, 0);
    hl_bucket_t b;
    hl_verdict_t v;
    int i, admitted;

    memset(&b, 0, sizeof(b));
    is_int(hl_bucket_expires_ms(&b, &p), 0, "fixed: fresh bucket expires 0");
    v = peek(&b, &p, BASE_MS);
    ok(v.admit, "fixed: fresh admits");
    is_int(v.remaining, 2, "fixed: fresh remaining = limit-1");
    is_int(v.reset_ms, 1000, "fixed: fresh reset = window");
    is_int(v.retry_ms, 0, "fixed: admitted retry 0");

    v = hit(&b, &p, BASE_MS);
    is_int(hl_bucket_expires_ms(&b, &p), BASE_MS + 1000,
           "fixed: expires = first hit + window");
    v = hit(&b, &p, BASE_MS + 100);
    ok(v.admit, "fixed: 2nd admitted");
    is_int(v.remaining, 1, "fixed: 2nd remaining 1");
    is_int(v.reset_ms, 900, "fixed: 2nd reset 900");
    v = hit(&b, &p, BASE_MS + 200);
    ok(v.admit, "fixed: 3rd admitted");
    is_int(v.remaining, 0, "fixed: 3rd remaining 0");
    is_int(v.reset_ms, 800, "fixed: 3rd reset 800");
    v = hit(&b, &p, BASE_MS + 300);
    ok(!v.admit, "fixed: 4th rejected");
    is_int(v.remaining, 0, "fixed: rejected remaining 0");
    is_int(v.retry_ms, 700, "fixed: retry = window end - now");
    is_int(v.reset_ms, 700, "fixed: rejected reset 700");
    is_int(b.count, 3, "fixed: a rejection is not counted");
    v = hit(&b, &p, BASE_MS + 999);
    ok(!v.admit, "fixed: still rejected 1 ms before the end");
    is_int(v.retry_ms, 1, "fixed: retry 1 at the last ms");
    v = hit(&b, &p, BASE_MS + 1000);
    ok(v.admit, "fixed: admitted when the window ends");
    is_int(v.remaining, 2, "fixed: new window remaining 2");
    is_int(v.reset_ms, 1000, "fixed: new window starts at this hit");
    v = hit(&b, &p, BASE_MS + 1500);
    is_int(v.reset_ms, 500, "fixed: new window end = 2nd start + window");
    is_int(hl_bucket_expires_ms(&b, &p), BASE_MS + 2000, "fixed: expires moved");

    /* exactly limit at one instant, whatever the limit */
    p = pol(HL_ALGO_FIXED, 100, 60000, 0);
    memset(&b, 0, sizeof(b));
    for (admitted = 0, i = 0; i < 150; i++)
        admitted += hit(&b, &p, BASE_MS).admit;
    is_int(admitted, 100, "fixed: 100/1m admits exactly 100 at once");
    v = peek(&b, &p, BASE_MS + 59999);
    is_int(v.retry_ms, 1, "fixed: 100/1m retry 1 at the last ms");
    ok(peek(&b, &p, BASE_MS + 60000).admit, "fixed: 100/1m admits after 60 s");

    /* a window starts at the first hit, not at an aligned boundary */
    p = pol(HL_ALGO_FIXED, 1, 60000, 0);
    memset(&b, 0, sizeof(b));
    hit(&b, &p, BASE_MS + 59000);
    v = peek(&b, &p, BASE_MS + 61000);
    ok(!v.admit, "fixed: window not aligned to the epoch");
    is_int(v.retry_ms, 58000, "fixed: retry from the first hit");

    /* count=failures may count past the limit: still rejects, exact retry */
    p = pol(HL_ALGO_FIXED, 2, 1000, 0);
    memset(&b, 0, sizeof(b));
    for (i = 0; i < 5; i++)
        hl_bucket_commit(&b, &p, BASE_MS + i);
    is_int(b.count, 5, "fixed: commits past the limit are kept");
    v = peek(&b, &p, BASE_MS + 10);
    ok(!v.admit, "fixed: over the limit rejects");
    is_int(v.retry_ms, 990, "fixed: over the limit retry exact");
}

static void test_sliding_numbers(void)
{
    hl_policy_t p = pol(HL_ALGO_SLIDING, 10, 1000, 0);
    hl_bucket_t b;
    hl_verdict_t v;
    int i;
    int64_t w0 = BASE_MS;     /* BASE_MS is a multiple of 1000 */

    memset(&b, 0, sizeof(b));
    v = peek(&b, &p, w0);
    ok(v.admit, "sliding: fresh admits");
    is_int(v.remaining, 9, "sliding: fresh remaining 9");
    is_int(v.reset_ms, 2000, "sliding: fresh reset = end of the next window");
    for (i = 0; i < 10; i++)
        ok(hit(&b, &p, w0 + 500).admit, "sliding: admitted within the limit");
    is_int(b.t, w0, "sliding: t is the aligned window start");
    is_int(hl_bucket_expires_ms(&b, &p), w0 + 2000, "sliding: expires t+2W");
    v = peek(&b, &p, w0 + 500);
    ok(!v.admit, "sliding: 11th rejected");
    /* next window: prev=10 weighs 10*(1000-f)/1000; admits iff
       10*(1000-f) <= 9*1000, i.e. f >= 100 */
    is_int(v.retry_ms, 600, "sliding: retry to w0+1100");
    is_int(v.reset_ms, 1500, "sliding: reset to the end of the next window");
    ok(!peek(&b, &p, w0 + 1099).admit, "sliding: rejected at w0+1099");
    v = peek(&b, &p, w0 + 1100);
    ok(v.admit, "sliding: admitted at w0+1100");
    is_int(v.remaining, 0, "sliding: remaining 0 at w0+1100");
    v = peek(&b, &p, w0 + 1500);
    is_int(v.remaining, 4, "sliding: estimate 5 at mid-window, remaining 4");
    v = peek(&b, &p, w0 + 2000);
    is_int(v.remaining, 9, "sliding: two windows on, full again");

    /* in-window retry: prev=10, count=0 at the window start */
    hl_bucket_check(&b, &p, w0 + 1000, &v);
    is_int(b.prev_count, 10, "sliding: count rolled into prev");
    is_int(b.count, 0, "sliding: count restarted");
    ok(!v.admit, "sliding: full previous window rejects at the boundary");
    is_int(v.retry_ms, 100, "sliding: retry 100 in this window");
    is_int(v.reset_ms, 1000, "sliding: reset = end of this window (count 0)");

    /* limit 1 and a previous hit: wait for two windows' worth of decay */
    p = pol(HL_ALGO_SLIDING, 1, 1000, 0);
    memset(&b, 0, sizeof(b));
    hit(&b, &p, w0 + 10);
    v = peek(&b, &p, w0 + 20);
    ok(!v.admit, "sliding 1/1s: 2nd rejected");
    is_int(v.retry_ms, 1980, "sliding 1/1s: retry to w0+2000");
    ok(!peek(&b, &p, w0 + 1999).admit, "sliding 1/1s: rejected at w0+1999");
    ok(peek(&b, &p, w0 + 2000).admit, "sliding 1/1s: admitted at w0+2000");
}

static void test_gcra_numbers(void)
{
    hl_policy_t p = pol(HL_ALGO_GCRA, 10, 1000, 0);   /* T = 100 ms */
    hl_bucket_t b;
    hl_verdict_t v;
    int i;

    memset(&b, 0, sizeof(b));
    is_int(hl_bucket_expires_ms(&b, &p), 0, "gcra: fresh expires 0");
    for (i = 0; i < 10; i++) {
        v = hit(&b, &p, BASE_MS);
        ok(v.admit, "gcra: burst admitted at one instant");
        is_int(v.remaining, 9 - i, "gcra: remaining counts down to 0");
        is_int(v.reset_ms, 100 * (i + 1), "gcra: reset = TAT - now");
    }
    is_int(b.t, (BASE_MS + 1000) * 1000, "gcra: TAT in microseconds");
    is_int(hl_bucket_expires_ms(&b, &p), BASE_MS + 1000, "gcra: expires TAT");
    v = peek(&b, &p, BASE_MS);
    ok(!v.admit, "gcra: 11th rejected");
    is_int(v.retry_ms, 100, "gcra: retry one interval");
    is_int(v.reset_ms, 1000, "gcra: reset 1000");
    ok(!peek(&b, &p, BASE_MS + 99).admit, "gcra: rejected at +99");
    v = hit(&b, &p, BASE_MS + 100);
    ok(v.admit, "gcra: admitted at +100");
    is_int(v.remaining, 0, "gcra: remaining 0 at +100");
    v = peek(&b, &p, BASE_MS + 150);
    ok(!v.admit, "gcra: rejected at +150");
    is_int(v.retry_ms, 50, "gcra: retry 50");

    /* burst=3: three at once, then one per 100 ms */
    p = pol(HL_ALGO_GCRA, 10, 1000, 3);
    memset(&b, 0, sizeof(b));
    for (i = 0; i < 3; i++)
        is_int(hit(&b, &p, BASE_MS).remaining, 2 - i, "gcra burst=3: remaining");
    v = peek(&b, &p, BASE_MS);
    ok(!v.admit, "gcra burst=3: 4th rejected");
    is_int(v.retry_ms, 100, "gcra burst=3: retry 100");

    /* burst larger than the limit */
    p = pol(HL_ALGO_GCRA, 600, 60000, 1000);
    memset(&b, 0, sizeof(b));
    for (i = 0; i < 1000; i++)
        if (!hit(&b, &p, BASE_MS).admit)
            break;
    is_int(i, 1000, "gcra 600/1m burst=1000: 1000 at once");
    v = peek(&b, &p, BASE_MS);
    is_int(v.retry_ms, 100, "gcra 600/1m: then one per 100 ms");

    /* an interval that does not divide: ceil keeps the rate <= the limit */
    p = pol(HL_ALGO_GCRA, 3, 1000, 1);
    is_int(gcra_T(&p), 333334, "gcra 3/1s: T = 333334 us");
    memset(&b, 0, sizeof(b));
    ok(hit(&b, &p, BASE_MS).admit, "gcra 3/1s burst 1: 1st at 0");
    ok(!peek(&b, &p, BASE_MS + 333).admit, "gcra 3/1s: not at 333 ms");
    ok(hit(&b, &p, BASE_MS + 334).admit, "gcra 3/1s: 2nd at 334 ms");
    ok(!peek(&b, &p, BASE_MS + 667).admit, "gcra 3/1s: not at 667 ms");
    ok(hit(&b, &p, BASE_MS + 668).admit, "gcra 3/1s: 3rd at 668 ms");
    v = peek(&b, &p, BASE_MS + 1001);
    ok(!v.admit, "gcra 3/1s: 4th not at 1001 ms (3 per second at most)");
    is_int(v.retry_ms, 1, "gcra 3/1s: retry rounds up to 1 ms");
    ok(peek(&b, &p, BASE_MS + 1002).admit, "gcra 3/1s: 4th at 1002 ms");
}

static void test_clock_backwards(void)
{
    static const hl_algo_t algos[] = { HL_ALGO_FIXED, HL_ALGO_SLIDING,
                                       HL_ALGO_GCRA };
    size_t a;
    char nbuf[128];

    for (a = 0; a < 3; a++) {
        hl_policy_t p = pol(algos[a], 5, 1000, 0);
        hl_bucket_t b;
        hl_verdict_t v;
        int i, admitted = 0;
        int64_t now = BASE_MS + 500, back = BASE_MS - 3000;

        memset(&b, 0, sizeof(b));
        for (i = 0; i < 5; i++)
            hit(&b, &p, now);
        for (i = 0; i < 5; i++)
            admitted += hit(&b, &p, back).admit;
        snprintf(nbuf, sizeof(nbuf), "%s: clock 3.5 s back admits nothing more",
                 hl_algo_name(algos[a]));
        is_int(admitted, 0, nbuf);
        hl_bucket_check(&b, &p, back, &v);
        okf(!v.admit && v.retry_ms >= 1 && v.reset_ms >= 0,
            "%s: clock back: retry >= 1", hl_algo_name(algos[a]));
        okf(v.retry_ms == 1 || !peek(&b, &p, back + v.retry_ms - 1).admit,
            "%s: clock back: rejected at retry-1", hl_algo_name(algos[a]));
        okf(peek(&b, &p, back + v.retry_ms).admit,
            "%s: clock back: admitted at retry", hl_algo_name(algos[a]));
        okf(b.count <= 5 && b.prev_count <= 5,
            "%s: clock back: nothing underflows", hl_algo_name(algos[a]));
    }
    {
        /* fixed: the window restarts at the earlier now, count kept */
        hl_policy_t p = pol(HL_ALGO_FIXED, 2, 1000, 0);
        hl_bucket_t b;
        hl_verdict_t v;

        memset(&b, 0, sizeof(b));
        hit(&b, &p, BASE_MS);
        hit(&b, &p, BASE_MS);
        v = peek(&b, &p, BASE_MS - 5000);
        is_int(v.retry_ms, 1000, "fixed: clock back restarts the window at now");
    }
}

/*
 * Stored times ahead of now (counters saved before a reboot, a clock that
 * stepped): the bucket keeps its count but never makes the client wait
 * longer than the window (sliding: window + window / limit).
 */
static void test_future_times(void)
{
    static const hl_algo_t algos[] = { HL_ALGO_FIXED, HL_ALGO_SLIDING,
                                       HL_ALGO_GCRA };
    size_t a;

    for (a = 0; a < 3; a++) {
        hl_policy_t p = pol(algos[a], 5, 1000, 0);
        int64_t ahead = BASE_MS + 3600 * 1000, max_retry;
        hl_bucket_t b;
        hl_verdict_t v;
        int i;

        max_retry = algos[a] == HL_ALGO_SLIDING ? 1000 + 1000 / 5 : 1000;
        memset(&b, 0, sizeof(b));
        for (i = 0; i < 5; i++)
            hit(&b, &p, ahead);
        v = peek(&b, &p, BASE_MS);
        okf(!v.admit, "%s: times 1 h ahead: still full",
            hl_algo_name(algos[a]));
        okf(v.retry_ms >= 1 && v.retry_ms <= max_retry,
            "%s: times 1 h ahead: retry %lld <= %lld ms",
            hl_algo_name(algos[a]), (long long)v.retry_ms,
            (long long)max_retry);
        okf(v.reset_ms <= 2 * 1000,
            "%s: times 1 h ahead: reset %lld ms bounded",
            hl_algo_name(algos[a]), (long long)v.reset_ms);
        hl_bucket_check(&b, &p, BASE_MS, &v);
        okf(peek(&b, &p, BASE_MS + v.retry_ms).admit,
            "%s: times 1 h ahead: admitted after retry",
            hl_algo_name(algos[a]));
    }
}

static void test_extremes(void)
{
    static const hl_algo_t algos[] = { HL_ALGO_FIXED, HL_ALGO_SLIDING,
                                       HL_ALGO_GCRA };
    static const int64_t nows[] = { 0, 1, BASE_MS, INT64_MAX, INT64_MIN, -5 };
    size_t a, i, k;
    int bad = 0;

    /* Under -fsanitize=undefined any overflow here aborts the test. */
    for (a = 0; a < 3; a++) {
        hl_policy_t ps[4];

        ps[0] = pol(algos[a], UINT32_MAX, UINT32_MAX, UINT32_MAX);
        ps[1] = pol(algos[a], 1, UINT32_MAX, 0);
        ps[2] = pol(algos[a], UINT32_MAX, 1, 0);
        ps[3] = pol(algos[a], 0, 0, 0);            /* invalid: read as 1/1ms */
        for (k = 0; k < 4; k++) {
            hl_bucket_t b;
            hl_verdict_t v;

            memset(&b, 0, sizeof(b));
            for (i = 0; i < 6 * 3; i++) {
                int64_t now = nows[i % 6];

                hl_bucket_check(&b, &ps[k], now, &v);
                hl_bucket_commit(&b, &ps[k], now);
                hl_bucket_commit(&b, &ps[k], now);
                if (v.reset_ms < 0 || (!v.admit && v.retry_ms < 1)
                    || (v.admit && v.retry_ms != 0))
                    bad++;
                (void)hl_bucket_expires_ms(&b, &ps[k]);
            }
            b.count = UINT32_MAX;
            b.prev_count = UINT32_MAX;
            b.t = INT64_MAX;                         /* corrupt slot */
            hl_bucket_check(&b, &ps[k], BASE_MS, &v);
            hl_bucket_commit(&b, &ps[k], BASE_MS);
            (void)hl_bucket_expires_ms(&b, &ps[k]);
            if (v.reset_ms < 0 || (!v.admit && v.retry_ms < 1))
                bad++;
            b.t = INT64_MIN;
            hl_bucket_check(&b, &ps[k], BASE_MS, &v);
            (void)hl_bucket_expires_ms(&b, &ps[k]);
        }
    }
    is_int(bad, 0, "extreme limits, windows, times and slots: sane verdicts");
    {
        hl_policy_t p = pol(HL_ALGO_FIXED, 1, 1000, 0);
        hl_bucket_t b;

        memset(&b, 0, sizeof(b));
        b.count = UINT32_MAX;
        b.t = BASE_MS;
        hl_bucket_commit(&b, &p, BASE_MS);
        is_int(b.count, UINT32_MAX, "count saturates instead of wrapping");
    }
}

static void test_policy_from_quota(void)
{
    hl_quota_t q;
    hl_policy_t p;

    hl_quota_init(&q);
    q.nwindows = 2;
    q.windows[0].count = 5;
    q.windows[0].window_ms = 60000;
    q.windows[1].count = 30;
    q.windows[1].window_ms = 3600000;
    q.algo = HL_ALGO_GCRA;
    q.burst = 7;
    hl_policy_from_quota(&q, 1, &p);
    is_int(p.algo, HL_ALGO_GCRA, "policy: algo");
    is_int(p.limit, 30, "policy: limit of window 1");
    is_int(p.window_ms, 3600000, "policy: window of window 1");
    is_int(p.burst, 7, "policy: burst");
    hl_policy_from_quota(&q, 0, &p);
    is_int(p.limit, 5, "policy: limit of window 0");
    is_int(p.window_ms, 60000, "policy: window of window 0");
    hl_policy_from_quota(&q, 2, &p);
    is_int(p.limit, 0, "policy: out-of-range window gives limit 0");
}

/* ---------- property tests ---------- */

typedef struct {
    uint64_t s;
} rng_t;

/* splitmix64: a deterministic, well-mixed sequence. */
static uint64_t rnd(rng_t *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Returns a number in [0, n) (0 when n is 0). */
static uint64_t below(rng_t *r, uint64_t n)
{
    return n ? rnd(r) % n : 0;
}

enum { MODE_PLAIN = 0, MODE_OVERCOMMIT, MODE_BACKWARDS, NMODES };
static const char *const mode_names[NMODES] = {
    "plain", "count=failures over-commits", "clock jitter backwards"
};

#define MAX_STEPS 500

typedef struct {
    long runs, checks, admits, rejects;
    long n_model, n_b, n_c, n_reset, n_expires;
    long f_sanity, f_model, f_bound, f_b, f_c, f_reset, f_expires;
    char first[300];
} stats_t;

/* Records one failed property (keeps the first description). */
static void fail(stats_t *st, long *counter, const char *what,
                 const hl_policy_t *p, int64_t now, const hl_verdict_t *v)
{
    if (st->first[0] == '\0')
        snprintf(st->first, sizeof(st->first),
                 "%s: limit=%u window=%u burst=%u now=%lld admit=%d "
                 "remaining=%u retry=%lld reset=%lld", what,
                 (unsigned)p->limit, (unsigned)p->window_ms,
                 (unsigned)p->burst, (long long)now, v->admit,
                 (unsigned)v->remaining, (long long)v->retry_ms,
                 (long long)v->reset_ms);
    (*counter)++;
}

/* Is v a full quota (admit with the whole burst/limit left)? */
static int is_full(const hl_verdict_t *v, const hl_policy_t *p)
{
    return v->admit && v->remaining == full_remaining(p);
}

/*
 * The definition of each algorithm, computed from the history of admitted
 * times (hist[0..n-1], non-decreasing in MODE_PLAIN). Returns the expected
 * admission and sets *rem to the expected remaining.
 */
typedef struct {
    int64_t fixed_start;  /* fixed: start of the key's window */
    uint32_t fixed_count; /* fixed: admitted in it */
    int64_t tat_us;       /* gcra: theoretical arrival time */
} model_t;

static int model_admits(const model_t *m, const hl_policy_t *p,
                        const int64_t *hist, int n, int64_t now, uint32_t *rem)
{
    int64_t W = p->window_ms;

    if (p->algo == HL_ALGO_FIXED) {
        uint32_t c = m->fixed_count;

        if (c > 0 && now - m->fixed_start >= W)
            c = 0;
        *rem = c < p->limit ? p->limit - c - 1 : 0;
        return c < p->limit;
    }
    if (p->algo == HL_ALGO_SLIDING) {
        int64_t cur = now - now % W, e = now - cur;
        uint64_t prev = 0, count = 0, lhs, room;
        int i;

        for (i = n - 1; i >= 0 && hist[i] >= cur - W; i--) {
            if (hist[i] >= cur)
                count++;
            else
                prev++;
        }
        /* E = prev*(W-e)/W + count; admit iff E + 1 <= limit */
        lhs = prev * (uint64_t)(W - e) + (count + 1) * (uint64_t)W;
        if (lhs > (uint64_t)p->limit * (uint64_t)W) {
            *rem = 0;
            return 0;
        }
        room = (uint64_t)p->limit * (uint64_t)W - lhs;
        *rem = (uint32_t)(room / (uint64_t)W);
        return 1;
    }
    {
        int64_t T = gcra_T(p), B = p->burst ? p->burst : p->limit;
        int64_t tau = (B - 1) * T, now_us = now * 1000;
        int64_t tat = m->tat_us > now_us ? m->tat_us : now_us;

        if (tat - now_us > tau) {
            *rem = 0;
            return 0;
        }
        *rem = (uint32_t)((tau - (tat - now_us)) / T);
        return 1;
    }
}

/* Counts one admitted request in the model. */
static void model_commit(model_t *m, const hl_policy_t *p, int64_t now)
{
    int64_t now_us = now * 1000;

    if (m->fixed_count > 0 && now - m->fixed_start >= (int64_t)p->window_ms)
        m->fixed_count = 0;
    if (m->fixed_count == 0)
        m->fixed_start = now;
    m->fixed_count++;
    m->tat_us = (m->tat_us > now_us ? m->tat_us : now_us) + gcra_T(p);
}

/* Bounds on the admitted history (property a). Returns violations. */
static long history_bounds(const hl_policy_t *p, const int64_t *hist, int n)
{
    int64_t W = p->window_ms;
    long bad = 0;
    int i, j;

    if (p->algo == HL_ALGO_FIXED) {
        /* any span shorter than W holds at most 2 windows' worth */
        for (j = 0, i = 0; j < n; j++) {
            while (hist[j] - hist[i] >= W)
                i++;
            if (j - i + 1 > 2 * (int64_t)p->limit)
                bad++;
        }
    } else if (p->algo == HL_ALGO_SLIDING) {
        /* no aligned window holds more than the limit */
        for (j = 0, i = 0; j < n; j++) {
            if (hist[j] / W != hist[i] / W)
                i = j;
            if (j - i + 1 > (int64_t)p->limit)
                bad++;
        }
    } else {
        /* n admitted within D us: n <= B + floor(D / T) */
        int64_t T = gcra_T(p), B = p->burst ? p->burst : p->limit;

        for (i = 0; i < n; i++) {
            for (j = i; j < n; j++) {
                if (j - i + 1 > B + (hist[j] - hist[i]) * 1000 / T)
                    bad++;
            }
        }
    }
    return bad;
}

/* Draws a time step for the simulation. */
static int64_t draw_step(rng_t *r, const hl_policy_t *p, int mode)
{
    int64_t W = p->window_ms, gap = W / p->limit + 1;

    if (mode == MODE_BACKWARDS && below(r, 20) == 0)
        return -(int64_t)below(r, (uint64_t)W + 2);
    switch (below(r, 20)) {
    case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7:
        return 0;
    case 8: case 9: case 10: case 11:
        return 1 + (int64_t)below(r, 3);
    case 12: case 13: case 14: case 15:
        return (int64_t)below(r, 2 * (uint64_t)gap + 1);
    case 16: case 17: case 18:
        return (int64_t)below(r, 2 * (uint64_t)W + 1);
    default:
        return (int64_t)below(r, 4 * (uint64_t)W + 1);
    }
}

/* Draws a random policy for algo. */
static hl_policy_t draw_policy(rng_t *r, hl_algo_t algo)
{
    static const uint32_t limits[] = { 1, 2, 3, 4, 5, 7, 10, 16, 60, 100 };
    static const uint32_t windows[] = { 1, 2, 3, 7, 10, 100, 999, 1000, 1001,
                                        60000, 3600000, 86400000 };
    uint32_t limit, window, burst = 0;

    limit = below(r, 2) ? limits[below(r, 10)] : 1 + (uint32_t)below(r, 50);
    window = below(r, 2) ? windows[below(r, 12)] : 1 + (uint32_t)below(r, 5000);
    if (algo == HL_ALGO_GCRA && below(r, 3) != 0)
        burst = 1 + (uint32_t)below(r, 2 * (uint64_t)limit + 2);
    return pol(algo, limit, window, burst);
}

/* Runs one random scenario and accumulates into *st. */
static void run_one(rng_t *r, hl_algo_t algo, int mode, stats_t *st)
{
    hl_policy_t p = draw_policy(r, algo);
    hl_bucket_t b;
    model_t m;
    int64_t hist[MAX_STEPS], now;
    int n = 0, step;

    memset(&b, 0, sizeof(b));
    memset(&m, 0, sizeof(m));
    now = below(r, 10) == 0 ? (int64_t)below(r, 5) : BASE_MS + (int64_t)below(r, 1000000000);
    st->runs++;
    for (step = 0; step < MAX_STEPS; step++) {
        hl_verdict_t v, w;
        uint32_t rem = 0;
        int64_t e;

        now += draw_step(r, &p, mode);
        if (now < 0)
            now = 0;
        hl_bucket_check(&b, &p, now, &v);
        st->checks++;

        /* sanity of every verdict */
        if (v.reset_ms < 0 || (v.admit && v.retry_ms != 0)
            || (!v.admit && (v.retry_ms < 1 || v.remaining != 0))
            || (v.admit && v.remaining > full_remaining(&p)))
            fail(st, &st->f_sanity, "verdict sanity", &p, now, &v);

        /* (a) the definition, for the plain mode */
        if (mode == MODE_PLAIN) {
            int want = model_admits(&m, &p, hist, n, now, &rem);

            st->n_model++;
            if (want != v.admit || rem != v.remaining)
                fail(st, &st->f_model, "(a) differs from the definition",
                     &p, now, &v);
        }

        /* (b) retry_ms is exact */
        if (!v.admit) {
            st->rejects++;
            st->n_b++;
            if (v.retry_ms > 1 && peek(&b, &p, now + v.retry_ms - 1).admit)
                fail(st, &st->f_b, "(b) admitted before retry_ms", &p, now, &v);
            if (!peek(&b, &p, now + v.retry_ms).admit)
                fail(st, &st->f_b, "(b) still rejected at retry_ms", &p, now, &v);
        }

        /* reset_ms is the exact time to a full quota (after this request) */
        {
            hl_bucket_t c = b;

            if (v.admit)
                hl_bucket_commit(&c, &p, now);
            st->n_reset++;
            w = peek(&c, &p, now + v.reset_ms);
            if (!is_full(&w, &p))
                fail(st, &st->f_reset, "reset_ms: not full at reset", &p, now, &v);
            if (v.reset_ms >= 1) {
                w = peek(&c, &p, now + v.reset_ms - 1);
                if (is_full(&w, &p))
                    fail(st, &st->f_reset, "reset_ms: full before reset",
                         &p, now, &v);
            }
        }

        if (v.admit || (mode == MODE_OVERCOMMIT && below(r, 8) == 0)) {
            hl_bucket_commit(&b, &p, now);
            if (v.admit) {
                st->admits++;
                if (n < MAX_STEPS)
                    hist[n++] = now;
                model_commit(&m, &p, now);
                /* (c) remaining drops by one at the same instant */
                st->n_c++;
                w = peek(&b, &p, now);
                if (v.remaining > 0 ? !(w.admit && w.remaining == v.remaining - 1)
                                    : w.admit)
                    fail(st, &st->f_c, "(c) remaining did not drop by one",
                         &p, now, &v);
            }
            /* expires_ms: from then on the bucket is as good as fresh */
            e = hl_bucket_expires_ms(&b, &p);
            st->n_expires++;
            w = peek(&b, &p, e > now ? e : now);
            if (e <= now || !is_full(&w, &p))
                fail(st, &st->f_expires, "expires_ms", &p, now, &v);
        }
    }
    if (mode == MODE_PLAIN && history_bounds(&p, hist, n) != 0) {
        hl_verdict_t none;

        memset(&none, 0, sizeof(none));
        fail(st, &st->f_bound, "(a) admitted history exceeds the bound",
             &p, now, &none);
    }
}

static void test_properties(void)
{
    static const hl_algo_t algos[] = { HL_ALGO_FIXED, HL_ALGO_SLIDING,
                                       HL_ALGO_GCRA };
    size_t a;
    int mode, i;
    char nbuf[200];

    for (a = 0; a < 3; a++) {
        for (mode = 0; mode < NMODES; mode++) {
            rng_t r;
            stats_t st;
            const char *an = hl_algo_name(algos[a]);

            r.s = 0x686f746c696d6974ULL + a * 1000 + (uint64_t)mode;
            memset(&st, 0, sizeof(st));
            for (i = 0; i < 300; i++)
                run_one(&r, algos[a], mode, &st);
            printf("# %s, %s: %ld runs, %ld checks, %ld admitted, "
                   "%ld rejected\n", an, mode_names[mode], st.runs,
                   st.checks, st.admits, st.rejects);
            if (st.first[0])
                printf("# first failure: %s\n", st.first);
#define PROP(cnt, txt) do { \
    snprintf(nbuf, sizeof(nbuf), "%s, %s: %s", an, mode_names[mode], txt); \
    is_int(cnt, 0, nbuf); \
} while (0)
            PROP(st.f_sanity, "every verdict is well-formed");
            if (mode == MODE_PLAIN) {
                PROP(st.f_model, "(a) admission and remaining match the "
                     "definition");
                PROP(st.f_bound, "(a) admitted history within the limit");
            }
            PROP(st.f_b, "(b) rejected at now+retry-1, admitted at now+retry");
            PROP(st.f_c, "(c) remaining drops by one per admitted request");
            PROP(st.f_reset, "reset_ms is exactly the time to a full quota");
            PROP(st.f_expires, "expires_ms gives a fresh bucket");
#undef PROP
            okf(st.n_b > 1000 && st.n_c > 1000, "%s, %s: properties exercised "
                "(rejections and admissions seen)", an, mode_names[mode]);
        }
    }
}

/* hl_bucket_commit_n(n) leaves a bucket exactly as n hl_bucket_commit
 * calls at the same now do, for every algorithm, from many states. */
static void test_commit_n(void)
{
    static const hl_algo_t algos[] = { HL_ALGO_FIXED, HL_ALGO_SLIDING,
                                       HL_ALGO_GCRA };
    static const uint32_t ns[] = { 0, 1, 2, 3, 7, 10, 50, 99, 100, 101, 250 };
    int a, bad = 0, cases = 0;
    size_t k;
    uint32_t pre;

    for (a = 0; a < 3; a++) {
        hl_policy_t p = { algos[a], 100, 60000, 0 };
        for (pre = 0; pre < 130; pre += 13) {
            for (k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
                hl_bucket_t one, many;
                int64_t now = 1000000, later = now + 7000;
                uint32_t i;

                memset(&one, 0, sizeof(one));
                for (i = 0; i < pre; i++)    /* some history, then later */
                    hl_bucket_commit(&one, &p, now);
                many = one;
                for (i = 0; i < ns[k]; i++)
                    hl_bucket_commit(&one, &p, later);
                hl_bucket_commit_n(&many, &p, later, ns[k]);
                if (ns[k] == 0) {   /* 0 rolls only: compare verdicts */
                    hl_verdict_t v1, v2;
                    hl_bucket_check(&one, &p, later, &v1);
                    hl_bucket_check(&many, &p, later, &v2);
                    bad += v1.admit != v2.admit || v1.remaining != v2.remaining;
                } else
                    bad += one.t != many.t || one.count != many.count
                           || one.prev_count != many.prev_count;
                cases++;
            }
        }
    }
    okf(bad == 0, "commit_n equals n single commits (%d cases, %d differ)",
        cases, bad);
    {   /* saturation: counts stop at UINT32_MAX, GCRA at its bound */
        hl_policy_t p = { HL_ALGO_FIXED, 100, 60000, 0 };
        hl_bucket_t b;
        memset(&b, 0, sizeof(b));
        hl_bucket_commit_n(&b, &p, 5000, UINT32_MAX - 1);
        hl_bucket_commit_n(&b, &p, 5000, 10);
        ok(b.count == UINT32_MAX, "fixed: commit_n saturates at UINT32_MAX");
        p.algo = HL_ALGO_GCRA;
        memset(&b, 0, sizeof(b));
        hl_bucket_commit_n(&b, &p, 5000, UINT32_MAX);
        /* tau = 99 * 600 ms, + 2 intervals: now + 60.6 s at most */
        is_int((int)((b.t - 5000 * 1000) / 1000), 60600,
               "gcra: commit_n(huge) stops at now + tau + 2 intervals");
    }
}

/*
 * hl_bucket_follow: a "remote" bucket R on one clock is checked and counted
 * n (0..3) at a random state; a local bucket L follows R's verdict on a
 * clock offset by an odd amount. At that instant L finds the same
 * remaining as R would (then R's next check); from then on, every 37 ms up
 * to two windows later, L never admits when R refuses (fixed, gcra: the
 * room comes back no sooner than in R). Sliding windows sit on another
 * grid, so only the first check is compared.
 */
static void test_follow(void)
{
    static const hl_algo_t algos[] = { HL_ALGO_FIXED, HL_ALGO_SLIDING, HL_ALGO_GCRA };
    rng_t seed = { 77 };
    long now_bad[3] = { 0 }, later_bad[3] = { 0 }, cases = 0;
    size_t a;
    int i;

    for (a = 0; a < 3; a++) {
        for (i = 0; i < 3000; i++) {
            uint32_t limit = 1 + (uint32_t)(rnd(&seed) % 20);
            uint32_t window = 1000 + (uint32_t)(rnd(&seed) % 60000);
            hl_policy_t p = pol(algos[a], limit, window,
                                algos[a] == HL_ALGO_GCRA && rnd(&seed) % 2
                                ? 1 + (uint32_t)(rnd(&seed) % 30) : 0);
            int64_t rnow = BASE_MS + (int64_t)(rnd(&seed) % 100000);
            int64_t lnow = 5000000 + (int64_t)(rnd(&seed) % 777777);
            uint32_t hits = (uint32_t)(rnd(&seed) % (limit + 3)), n, h;
            hl_bucket_t r, l;
            hl_verdict_t v, vr, vl;
            int64_t dt;

            memset(&r, 0, sizeof(r));
            for (h = 0; h < hits; h++)   /* R's history before the decision */
                hit(&r, &p, rnow - (int64_t)(rnd(&seed) % window));
            hl_bucket_check(&r, &p, rnow, &v);
            n = (uint32_t)(rnd(&seed) % 4);
            if (n > 0 && !v.admit && rnd(&seed) % 2)
                n = 0;                    /* a refused decision counts nothing */
            hl_bucket_commit_n(&r, &p, rnow, n);
            memset(&l, 0xa5, sizeof(l));  /* whatever was there before */
            hl_bucket_follow(&l, &p, lnow, &v, n);
            vr = peek(&r, &p, rnow);
            vl = peek(&l, &p, lnow);
            cases++;
            if (vr.admit != vl.admit || vr.remaining != vl.remaining) {
                if (now_bad[a]++ < 3)
                    printf("#   %s %u/%u burst %u: R %d/%u, L %d/%u after n=%u\n",
                           algos[a] == HL_ALGO_FIXED ? "fixed" : algos[a] == HL_ALGO_SLIDING
                           ? "sliding" : "gcra", limit, window, p.burst,
                           vr.admit, vr.remaining, vl.admit, vl.remaining, n);
            }
            if (algos[a] == HL_ALGO_SLIDING)
                continue;
            for (dt = 0; dt <= 2 * (int64_t)window; dt += 37) {
                vr = peek(&r, &p, rnow + dt);
                vl = peek(&l, &p, lnow + dt);
                if (vl.remaining > vr.remaining || (vl.admit && !vr.admit)) {
                    later_bad[a]++;
                    break;
                }
            }
        }
    }
    okf(now_bad[0] == 0 && now_bad[1] == 0 && now_bad[2] == 0,
        "follow: %ld reports, the local bucket finds what the remote one has "
        "(fixed %ld, sliding %ld, gcra %ld differ)", cases, now_bad[0],
        now_bad[1], now_bad[2]);
    okf(later_bad[0] == 0 && later_bad[2] == 0,
        "follow: later, the local bucket never admits where the remote one "
        "refuses (fixed %ld, gcra %ld)", later_bad[0], later_bad[2]);
}

int main(void)
{
    test_follow();
    test_commit_n();
    test_fixed_numbers();
    test_sliding_numbers();
    test_gcra_numbers();
    test_clock_backwards();
    test_future_times();
    test_extremes();
    test_policy_from_quota();
    test_properties();
    return done_testing();
}
