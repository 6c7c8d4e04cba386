/* test_log.c - algo=log (issue 20): the sliding log against a reference
 * log at random request times, through the limiter and the slot table's
 * log pool (eviction, persistence, refunds, rebase, follow). */
#include <stdlib.h>
#include <string.h>
#include "hl_tap.h"
#include "hl_limiter.h"
#include "hl_limiter_calls.h"
#include "hl_log.h"

static hl_slots_t table(uint32_t capacity, void **mem, size_t *size)
{
    hl_slots_t t;

    *size = hl_slots_size(capacity);
    *mem = calloc(1, *size);
    hl_slots_attach(&t, *mem, *size, capacity, 42);
    return t;
}

static hl_quota_t quota(const char *a, const char *b, const char *c)
{
    hl_quota_t q;
    const char *argv[3];
    int argc = 0;
    char err[HL_ERR_MAX];

    argv[argc++] = a;
    if (b != NULL)
        argv[argc++] = b;
    if (c != NULL)
        argv[argc++] = c;

    if (hl_quota_parse_args(&q, argc, argv, err, sizeof(err)) != 0)
        printf("# parse failed: %s\n", err);
    return q;
}

static int hit(hl_slots_t *t, const hl_quota_t *q, const char *key,
               int64_t now, hl_decision_t *d)
{
    limiter_decide(t, q, HL_ORIGIN_DIRECTIVE, key, strlen(key), 2, now, 1, d);
    return d->admit;
}

/* The reference: every admitted time, and the decision a sliding log
 * makes at now over every window of q. Returns admit; *retry_s gets the
 * whole seconds (rounded up, >= 1) until one more fits when it refuses. */
typedef struct {
    int64_t at[4096];
    int n;
} ref_log_t;

static int ref_decide(const ref_log_t *r, const hl_quota_t *q, int64_t now,
                      long *retry_s)
{
    int i, j, admit = 1;
    int64_t retry = 0;

    for (i = 0; i < q->nwindows; i++) {
        int64_t w = q->windows[i].window_ms, in[4096];
        int n = 0;
        uint32_t c = q->windows[i].count;

        for (j = 0; j < r->n; j++)
            if (r->at[j] > now - w)
                in[n++] = r->at[j];          /* ascending: r->at is */
        if ((uint32_t)n >= c) {
            int64_t x = in[n - c] + w - now;
            admit = 0;
            if (x > retry)
                retry = x;
        }
    }
    *retry_s = admit ? 0 : (long)((retry + 999) / 1000);
    if (!admit && *retry_s < 1)
        *retry_s = 1;
    return admit;
}

/* Random request times for q; every decision must equal the reference's
 * (admission and Retry-After), and no WINDOW span ever holds more than
 * COUNT admissions. */
static void against_reference(const char *a, const char *b, int max_gap,
                              unsigned seed)
{
    void *mem;
    size_t size;
    hl_slots_t t = table(64, &mem, &size);
    hl_quota_t q = quota(a, b, "algo=log");
    static ref_log_t r;
    int64_t now = 1000000;
    int k, same = 1, admitted = 0, refused = 0, over = 0, i, j;
    char name[160];

    srand(seed);
    r.n = 0;
    for (k = 0; k < 3000 && r.n < 4096; k++) {
        hl_decision_t d;
        long want_retry;
        int want;

        now += rand() % (max_gap + 1);
        want = ref_decide(&r, &q, now, &want_retry);
        hit(&t, &q, "s|client", now, &d);
        if (d.admit != want || (!want && d.retry_after_s != want_retry)) {
            if (same)
                printf("# request %d at %lld: got admit %d retry %ld, want %d %ld\n",
                       k, (long long)now, d.admit, d.retry_after_s, want, want_retry);
            same = 0;
        }
        if (d.admit)
            r.at[r.n++] = now, admitted++;
        else
            refused++;
    }
    for (i = 0; i < q.nwindows; i++)
        for (j = 0; j < r.n; j++) {
            int m = 0, x;
            for (x = j; x < r.n && r.at[x] < r.at[j] + (int64_t)q.windows[i].window_ms; x++)
                m++;
            if ((uint32_t)m > q.windows[i].count)
                over = 1;
        }
    snprintf(name, sizeof(name), "%s%s%s algo=log, gaps 0..%d ms: every decision "
             "and Retry-After equals the reference log", a, b ? " " : "", b ? b : "",
             max_gap);
    ok(same, name);
    okf(!over, "%s%s%s: never more than COUNT in any WINDOW span", a,
        b ? " " : "", b ? b : "");
    okf(admitted > 0 && refused > 0, "  (%d admitted, %d refused)", admitted, refused);
    free(mem);
}

static void test_reference(void)
{
    against_reference("5/2s", NULL, 300, 1);
    against_reference("5/2s", "20/1m", 150, 2);
    against_reference("1/1s", NULL, 700, 3);
    against_reference("64/10s", NULL, 120, 4);
    against_reference("3/500ms", "10/5s", 100, 5);
    against_reference("10/1m", "60/1h", 4000, 6);
    against_reference("5/2s", NULL, 3, 7);   /* bursts within one ms */
}

/* 5/2s 20/1m: the sliding counter admitted 24 in one 60 s span (issue
 * 20); the log admits exactly 20 at a steady 150 ms. */
static void test_issue_case(void)
{
    void *mem;
    size_t size;
    hl_slots_t t = table(64, &mem, &size);
    hl_quota_t q = quota("5/2s", "20/1m", "algo=log");
    int64_t now = 5000000, at[1000];
    int n = 0, k, i, most = 0;

    for (k = 0; k < 800; k++, now += 150) {
        hl_decision_t d;
        if (hit(&t, &q, "s|ip", now, &d))
            at[n++] = now;
    }
    for (i = 0; i < n; i++) {
        int m = 0, j;
        for (j = i; j < n && at[j] < at[i] + 60000; j++)
            m++;
        if (m > most)
            most = m;
    }
    is_int(most, 20, "5/2s 20/1m algo=log every 150 ms: at most 20 in any 60 s span");
    free(mem);
}

/* Retry-After is when the oldest admitted request leaves the window. */
static void test_retry(void)
{
    void *mem;
    size_t size;
    hl_slots_t t = table(64, &mem, &size);
    hl_quota_t q = quota("3/10s", "algo=log", NULL);
    hl_decision_t d;

    hit(&t, &q, "s|a", 100000, &d);
    hit(&t, &q, "s|a", 104000, &d);
    hit(&t, &q, "s|a", 104500, &d);
    is_int(hit(&t, &q, "s|a", 105000, &d), 0, "4th within 10 s refused");
    is_int(d.retry_after_s, 5, "Retry-After: the oldest (100 s) leaves at 110 s: 5 s");
    is_int(d.windows[0].retry_ms, 5000, "retry_ms exact: 5000");
    is_int(d.windows[0].reset_ms, 9500, "reset_ms: the newest leaves in 9.5 s");
    is_int(hit(&t, &q, "s|a", 109999, &d), 0, "1 ms before: still refused");
    is_int(d.retry_after_s, 1, "Retry-After 1 (never 0)");
    is_int(hit(&t, &q, "s|a", 110000, &d), 1, "when the oldest left: admitted");
    is_int(d.windows[0].remaining, 0, "remaining 0 after it");
    is_int(hit(&t, &q, "s|a", 110001, &d), 0, "then full again");
    is_int(d.retry_after_s, 4, "until the 104 s entry leaves: 4 s (3.999 rounded up)");
    free(mem);
}

/* count=failures: the unit taken at admission is given back, the newest
 * entry at its time; a mark of an entry gone gives nothing. */
static void test_refund(void)
{
    void *mem;
    size_t size;
    hl_slots_t t = table(64, &mem, &size);
    hl_quota_t q = quota("2/10s", "algo=log", "count=failures");
    hl_slot_ref_t refs[HL_MAX_WINDOWS];
    hl_decision_t d;
    uint64_t cls = limiter_class(HL_ORIGIN_DIRECTIVE, "s", 1);
    int64_t marks[HL_MAX_WINDOWS];

    hl_limiter_refs(&t, HL_ORIGIN_DIRECTIVE, 1, "s|k", 3, refs);
    hl_limiter_decide_refs(&t, &q, refs, cls, 1000, 0, &d);
    hl_limiter_count_refs(&t, &q, refs, cls, 1000, marks);
    is_int(marks[0], 1000, "the mark of a log entry is its time");
    hl_limiter_count_refs(&t, &q, refs, cls, 2000, d.marks);
    hl_limiter_decide_refs(&t, &q, refs, cls, 3000, 0, &d);
    is_int(d.admit, 0, "two taken: full");
    is_int(hl_limiter_refund_refs(&t, &q, refs, marks, 3000), 1, "refund of the 1 s entry");
    hl_limiter_decide_refs(&t, &q, refs, cls, 3000, 0, &d);
    is_int(d.admit, 1, "room again after the refund");
    is_int(hl_limiter_refund_refs(&t, &q, refs, marks, 3000), 0,
           "the same mark again: nothing left to give back");
    marks[0] = 2000;
    is_int(hl_limiter_refund_refs(&t, &q, refs, marks, 12500), 0,
           "an entry that left the window: nothing given back");
    free(mem);
}

/* The pool: records are freed with their slot, taken back when none is
 * free, and the table stays consistent (re-attaching keeps it). */
static void test_pool(void)
{
    void *mem;
    size_t size;
    hl_slots_t t = table(16, &mem, &size), t2;
    hl_quota_t q = quota("3/10s", "2/1s", "algo=log");
    hl_decision_t d;
    char key[32];
    int k, sound = 1;
    void *copy;

    is_int(hl_slots_nlogs(16), 16 / 8 + HL_SLOTS_RECENT + 1, "16 slots: 11 log records");
    for (k = 0; k < 200; k++) {
        snprintf(key, sizeof(key), "s|c%d", k % 37);
        hit(&t, &q, key, 1000 + k * 7, &d);
        if (k % 10 == 0) {
            copy = malloc(size);
            memcpy(copy, mem, size);
            if (hl_slots_attach(&t2, copy, size, 16, 1) != 0)
                sound = 0;
            free(copy);
        }
    }
    ok(sound, "after floods of keys past the pool, the table re-attaches as valid");
    ok(t.hdr->evictions + t.hdr->reclaims > 0, "records were taken back");
    {
        uint32_t r, owned = 0, freecount = 0;
        for (r = 0; r < t.hdr->nlogs; r++)
            owned += t.logs[r].owner != 0;
        for (r = t.hdr->log_free; r != 0; r = t.logs[r - 1].next)
            freecount++;
        is_int(owned + freecount, t.hdr->nlogs, "every record owned or free");
    }
    hl_slots_clear(&t);
    is_int(t.hdr->log_free, 1, "clear: every record free again");
    free(mem);
}

/* A flood of one-request keys takes log records back from each other,
 * never from a key at its limit. */
static void test_flood(void)
{
    void *mem;
    size_t size;
    hl_slots_t t = table(64, &mem, &size);
    hl_quota_t q = quota("3/60s", "algo=log", NULL);
    hl_decision_t d;
    char key[32];
    int k, held = 1;

    for (k = 0; k < 3; k++)
        hit(&t, &q, "s|hot", 1000 + k, &d);
    for (k = 0; k < 500; k++) {
        snprintf(key, sizeof(key), "s|new%d", k);
        hit(&t, &q, key, 2000 + k, &d);
        if (k % 25 == 0 && hit(&t, &q, "s|hot", 2000 + k, &d))
            held = 0;
    }
    ok(held, "500 new keys past a pool of 17: the full key stays refused");
    ok(t.hdr->evictions > 400, "the new keys were evicted to make room for each other");
    free(mem);
}

/* A persisted table (the bytes saved, attached again) keeps every log:
 * the decisions go on exactly as before. */
static void test_persist(void)
{
    void *mem, *copy;
    size_t size;
    hl_slots_t t = table(64, &mem, &size), t2;
    hl_quota_t q = quota("5/2s", "algo=log", NULL);
    hl_decision_t d;
    int k;

    for (k = 0; k < 5; k++)
        hit(&t, &q, "s|p", 10000 + k * 100, &d);
    copy = malloc(size);
    memcpy(copy, mem, size);
    is_int(hl_slots_attach(&t2, copy, size, 64, 9), 0, "the saved bytes attach as they are");
    is_int(hit(&t2, &q, "s|p", 11000, &d), 0, "the log came along: 6th refused");
    is_int(d.windows[0].retry_ms, 1000, "retry until the first leaves");
    is_int(hit(&t2, &q, "s|p", 12000, &d), 1, "admitted once it left");
    hl_limiter_rebase(&t2, 5000, 20000);
    is_int(hit(&t2, &q, "s|p", 17050, &d), 0, "rebased 5 s on: the entries moved with it");
    is_int(d.windows[0].retry_ms, 50, "the oldest (10.1 s, now 15.1 s) leaves in 50 ms");
    is_int(hit(&t2, &q, "s|p", 17100, &d), 1, "and then admits");
    free(copy);
    free(mem);
}

/* hl_log_follow: a refused report keeps the key out at least as long. */
static void test_follow(void)
{
    hl_log_t l;
    hl_policy_t p = { HL_ALGO_LOG, 4, 10000, 0 };
    hl_verdict_t rep = { 0, 0, 7000, 3000, 0 }, v;

    memset(&l, 0, sizeof(l));
    hl_log_follow(&l, &p, 50000, &rep, 0);
    hl_log_check(&l, &p, 50000, &v);
    is_int(v.admit, 0, "after a refusal reported: refused here too");
    ok(v.retry_ms >= rep.retry_ms, "and no sooner than there");
    hl_log_check(&l, &p, 57000, &v);
    is_int(v.admit, 1, "room once the newest reported has left");
    rep.admit = 1;
    rep.remaining = 1;   /* two used before it, one more counted */
    rep.reset_ms = 10000;
    hl_log_follow(&l, &p, 60000, &rep, 1);
    is_int(hl_log_length(&l), 3, "an admission reported: used + counted entries");
}

/* COUNT above 64 is a configuration error naming the window. */
static void test_config(void)
{
    hl_quota_t q;
    const char *ok_args[] = { "64/2s", "algo=log" };
    const char *bad_args[] = { "5/2s", "65/1m", "algo=log" };
    const char *sliding[] = { "65/2s", "algo=sliding" };
    char err[HL_ERR_MAX];

    is_int(hl_quota_parse_args(&q, 2, ok_args, err, sizeof(err)), 0, "64/2s algo=log accepted");
    is_int(q.algo, HL_ALGO_LOG, "algo log");
    is_str(hl_algo_name(q.algo), "log", "named log");
    is_int(hl_quota_parse_args(&q, 3, bad_args, err, sizeof(err)), -1, "65/1m algo=log refused");
    has_str(err, "65/1m", "the message names the window");
    has_str(err, "algo=log", "and algo=log");
    has_str(err, "64", "and the bound");
    is_int(hl_quota_parse_args(&q, 2, sliding, err, sizeof(err)), 0, "65/2s sliding still fine");
}

int main(void)
{
    test_reference();
    test_issue_case();
    test_retry();
    test_refund();
    test_pool();
    test_flood();
    test_persist();
    test_follow();
    test_config();
    return done_testing();
}
