/*
 * test_reserve.c - reserve= on cost= quotas (issue 19): the reservation
 * taken at admission only if it fits every window, settled to the real
 * cost after the response (hl_bucket_check_n, hl_bucket_refund_n,
 * hl_limiter_settle_refs, hl_decide_settle_locked), and the units a
 * request reserves (hl_reserve_units, hl_reserve_find_max_tokens).
 *
 * What must hold, for fixed, sliding and gcra:
 *  - requests in flight at once never hold more than COUNT between them
 *    (20 requests reserving 400 on 1000: 2 admitted);
 *  - a cost below the reservation gives the rest back (room comes back),
 *    one above it charges the excess (capped at COUNT), never in a window
 *    that began since.
 */
#include "hl_decide.h"
#include "hl_quota.h"
#include "hl_reserve.h"
#include "hl_tap.h"
#include "hl_spec.h"
#include "hl_fixture.h"

#include <stdio.h>
#include <string.h>

#define NOW 5000000LL

/* Fills item it for quota q and key, its refs computed
 * (hl_decide_prepare), reserving what q reserves without a body. */
static void reserving(hl_decide_item_t *it, const hl_quota_t *q,
                      const char *key)
{
    item(it, q, key);
    it->reserve = hl_reserve_units(q, NULL, 0, 4);
}

/* ---- parsing -------------------------------------------------------------- */

static void test_parse(void)
{
    hl_quota_t q = quota("1000/1m cost=header:X-Tokens reserve=400");
    hl_quota_t m = quota("1000/1m cost=usage reserve=max_tokens");
    hl_quota_t d = quota("1000/1m cost=usage reserve=max_tokens:2048");
    hl_quota_t none = quota("1000/1m cost=usage");
    char err[HL_ERR_MAX];
    const char *bad[] = { "reserve=0", "reserve=x", "reserve=max_tokens:",
                          "reserve=max_tokens:0", "reserve=max_tokensx",
                          "reserve=-1", "reserve=99999999999" };
    const char *alone[] = { "10/1m", "reserve=5" };
    hl_quota_t b;
    size_t i;

    ok(q.reserve == 400 && !q.reserve_max_tokens && hl_quota_reserves(&q),
       "reserve=400 reserves 400");
    ok(m.reserve == HL_RESERVE_DEFAULT && m.reserve_max_tokens,
       "reserve=max_tokens: default 1024");
    ok(d.reserve == 2048 && d.reserve_max_tokens,
       "reserve=max_tokens:2048: default 2048");
    ok(!hl_quota_reserves(&none) && none.reserve == 0,
       "cost= without reserve= reserves nothing at admission");
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        hl_quota_init(&b);
        okf(hl_quota_apply_token(&b, bad[i], err, sizeof(err)) == -1
            && strstr(err, "reserve") != NULL, "%s refused: %s", bad[i], err);
    }
    okf(hl_quota_parse_args(&b, 2, alone, err, sizeof(err)) == -1
        && strstr(err, "needs cost=") != NULL,
        "reserve= without cost= refused: %s", err);
}

/* Returns the tokens body reserves with DEFAULT dflt, fed in pieces of
 * step bytes. */
static uint32_t tokens_of(const char *body, size_t len, size_t step,
                          uint32_t dflt)
{
    hl_reserve_reader_t rd;
    size_t off;

    hl_reserve_reader_init(&rd);
    for (off = 0; off < len; off += step)
        hl_reserve_reader_feed(&rd, body + off,
                               len - off < step ? len - off : step);
    return hl_reserve_reader_tokens(&rd, dflt);
}

static void test_find_max_tokens(void)
{
    /* v: the tokens reserved with DEFAULT 1024 (issue 25: the largest of
     * every wanted key as a decoder reads it; at least DEFAULT when unsure) */
    static const struct { const char *json; int found; uint32_t v; } c[] = {
        { "{\"model\":\"m\",\"max_tokens\":200}", 1, 200 },
        { " {\t \"max_completion_tokens\" : 77 , \"x\":1}", 1, 77 },
        { "{\"input\":\"hi\",\"max_output_tokens\":5}", 1, 5 },
        { "{\"messages\":[{\"max_tokens\":9}],\"max_tokens\":300}", 1, 300 },
        { "{\"a\":{\"max_tokens\":9}}", 0, 1024 },
        { "{\"s\":\"\\\"max_tokens\\\":9\",\"max_tokens\":12}", 1, 12 },
        /* issue 25: duplicates, escapes, number forms, digit strings */
        { "{\"max_tokens\":1,\"max_tokens\":4000}", 1, 4000 },
        { "{\"max_tokens\":4000,\"max_tokens\":1}", 1, 4000 },
        { "{\"max\\u005ftokens\":4000}", 1, 4000 },
        { "{\"\\u006dax_tokens\":1,\"max_tokens\":2}", 1, 2 },
        { "{\"max_tokens\":4e3}", 1, 4000 },
        { "{\"max_tokens\":4000.0}", 1, 4000 },
        { "{\"max_tokens\":4.0E+3}", 1, 4000 },
        { "{\"max_tokens\":400000e-2}", 1, 4000 },
        { "{\"max_tokens\":2.5}", 1, 3 },
        { "{\"max_tokens\":1e-30}", 0, 1024 },
        { "{\"max_tokens\":0.5}", 0, 1024 },
        { "{\"max_tokens\":1.0001}", 1, 2 },
        { "{\"max_tokens\":\"4000\"}", 1, 4000 },
        { "{\"max_tokens\":\" 4000 \"}", 1, 4000 },
        { "{\"max_tokens\":\"+4_000\"}", 0, 4000 },
        { "{\"max_tokens\":\"+4_0\"}", 0, 1024 },     /* PHP: 4 */
        { "{\"max_tokens\":\"\\u0034000\"}", 1, 4000 },
        { "{\"max_tokens\":\"\xef\xbc\x94\xef\xbc\x90\xef\xbc\x90\xef\xbc\x90\"}", 0, 4000 },
        { "{\"max_tokens\":\"\xef\xbc\x95\"}", 0, 1024 },  /* PHP: 0 */
        { "{\"max_tokens\":\"4e3\"}", 1, 4000 },
        { "{\"max_tokens\":1,\"max_completion_tokens\":4000}", 1, 4000 },
        { "{\"max_completion_tokens\":4000,\"max_tokens\":1}", 1, 4000 },
        { "{\"max_output_tokens\":4000,\"max_tokens\":1}", 1, 4000 },
        /* huge: capped, never wrapped */
        { "{\"max_tokens\":99999999999}", 1, HL_COST_MAX },
        { "{\"max_tokens\":18446744073709551617}", 1, HL_COST_MAX },
        { "{\"max_tokens\":4294967297}", 1, HL_COST_MAX },
        { "{\"max_tokens\":1e400}", 1, HL_COST_MAX },
        { "{\"max_tokens\":0.000000000000000000000000000001e40}", 1, HL_COST_MAX },
        { "{\"max_tokens\":100000000000000000000000000000e-20}", 1, 1000000000 },
        /* unsure: at least DEFAULT */
        { "{\"max_tokens\":0}", 0, 1024 },
        { "{\"max_tokens\":-5000}", 0, 1024 },
        { "{\"max_tokens\":1,\"max_tokens\":0}", 0, 1024 },
        { "{\"max_tokens\":1,\"max_tokens\":null}", 0, 1024 },
        { "{\"max_tokens\":\"x\"}", 0, 1024 },
        { "{\"max_tokens\":\"0x1000\"}", 0, 1024 },
        { "{\"max_tokens\":{\"n\":9}}", 0, 1024 },
        { "{\"max_tokens\":4000,\"max_tokens\":[1]}", 0, 4000 },
        { "{\"max_tokens\":5,}", 0, 1024 },          /* invalid JSON */
        { "{\"max_tokens\":05}", 0, 1024 },
        { "{\"max_tokens\":5}x", 0, 1024 },
        { "{\"max_tokens\":5,\"s\":\"\\q\"}", 0, 1024 },
        { "{\"max_tokens\":5,\"max_tokens\":Infinity}", 0, 1024 },
        { "\xef\xbb\xbf{\"max_tokens\":5}", 0, 1024 },
        /* a byte order mark: Python and express read past it, PHP not */
        { "\xef\xbb\xbf{\"max_tokens\":4000}", 0, 4000 },
        { "\xef\xbb\xbf {\"max_tokens\":1,\"max_tokens\":4000}", 0, 4000 },
        { "{\"max_tokens\":9000,\"a\":[}", 0, 9000 },
        { "[{\"max_tokens\":9}]", 0, 1024 },
        { "{\"max_tokens\":20", 0, 1024 },           /* cut off */
        { "{\"model\":\"m\"}", 0, 1024 },
        { "", 0, 1024 },
    };
    size_t i, step;

    for (i = 0; i < sizeof(c) / sizeof(c[0]); ++i) {
        uint32_t v = 0, t[3];
        size_t len = strlen(c[i].json);
        int found = hl_reserve_find_max_tokens(c[i].json, len, &v);

        for (step = 1; step <= 3; ++step)
            t[step - 1] = tokens_of(c[i].json, len, step == 3 ? len + 1 : step,
                                    1024);
        okf(found == c[i].found && (!found || v == c[i].v)
            && t[0] == c[i].v && t[1] == c[i].v && t[2] == c[i].v,
            "max_tokens in %s: %d %u, reserves %u %u %u", c[i].json, found,
            (unsigned)v, (unsigned)t[0], (unsigned)t[1], (unsigned)t[2]);
    }
}

/* Returns body (len bytes of UTF-8, ASCII here) in encoding enc: "16le",
 * "16be", "32le", "32be", each with bom or not, into out. Returns its
 * length. */
static size_t encode(char *out, const char *body, const char *enc, int bom)
{
    static const char *const boms[][2] = {
        { "16le", "\xff\xfe" }, { "16be", "\xfe\xff" },
        { "32le", "\xff\xfe\0\0" }, { "32be", "\0\0\xfe\xff" } };
    size_t w = enc[0] == '1' ? 2 : 4, n = 0, i, k, j;

    for (k = 0; k < 4; ++k)
        if (bom && strcmp(boms[k][0], enc) == 0)
            for (j = 0; j < w; ++j)
                out[n++] = boms[k][1][j];
    for (i = 0; body[i]; ++i) {
        for (j = 0; j < w; ++j)
            out[n + j] = 0;
        out[n + (strstr(enc, "le") ? 0 : w - 1)] = body[i];
        n += w;
    }
    return n;
}

/* issue 25 (t/95): the encodings Python's json.loads() reads from bytes. */
static void test_encodings(void)
{
    static const char *const encs[] = { "16le", "16be", "32le", "32be" };
    const char *body = "{\"max_tokens\":1,\"max_tokens\":4000}";
    /* A non-BMP character (U+1F600, a surrogate pair in UTF-16) first. */
    const char pair16le[] = "\xff\xfe{\0\"\0s\0\"\0:\0\"\0\x3d\xd8\x00\xde\"\0,\0"
                            "\"\0m\0a\0x\0_\0t\0o\0k\0e\0n\0s\0\"\0:\0"
                            "9\0\x30\0\x30\0}\0";
    char out[256];
    size_t i, len, step;
    int bom;

    for (i = 0; i < 4; ++i)
        for (bom = 0; bom <= 1; ++bom) {
            len = encode(out, body, encs[i], bom);
            for (step = 1; step <= 5; step += 2) {
                uint32_t t = tokens_of(out, len, step, 16);

                okf(t == 4000, "UTF-%s%s, pieces of %zu: 4000 (%u)", encs[i],
                    bom ? " with a byte order mark" : "", step, (unsigned)t);
            }
        }
    is_int(tokens_of(pair16le, sizeof(pair16le) - 1, 1, 16), 900,
           "UTF-16LE with a surrogate pair before max_tokens: 900");
    is_int(tokens_of("{}", 2, 1, 16), 16, "a body under 4 bytes: DEFAULT");
}

static void test_units(void)
{
    hl_quota_t n = quota("1000/1m cost=usage reserve=400");
    hl_quota_t m = quota("1000/1m cost=usage reserve=max_tokens:50");
    hl_quota_t none = quota("1000/1m cost=usage");
    const char *body = "{\"max_tokens\":200,\"prompt\":\"0123456789012345\"}";
    hl_reserve_reader_t rd, empty;

    hl_reserve_reader_init(&rd);
    hl_reserve_reader_feed(&rd, body, strlen(body));
    hl_reserve_reader_init(&empty);
    hl_reserve_reader_feed(&empty, "{}", 2);
    is_int(hl_reserve_units(&n, &rd, strlen(body), 4), 400,
           "reserve=N ignores the body");
    is_int(hl_reserve_units(&m, &rd, strlen(body), 4),
           200 + strlen(body) / 4, "max_tokens + body length / 4");
    is_int(hl_reserve_units(&m, &rd, strlen(body), 1),
           200 + strlen(body), "HotLimitPromptEstimate 1: a token a byte");
    is_int(hl_reserve_units(&m, &rd, strlen(body), 0),
           200 + strlen(body) / 4, "HotLimitPromptEstimate unset: 4");
    is_int(hl_reserve_units(&m, &empty, 4000, 4), 50 + 1000,
           "no max_tokens: DEFAULT + body length / 4");
    is_int(hl_reserve_units(&m, NULL, 0, 4), 50, "no body: DEFAULT");
    is_int(hl_reserve_units(&m, NULL, UINT64_MAX, 1), HL_COST_MAX,
           "a huge body: capped");
    is_int(hl_reserve_units(&none, &rd, strlen(body), 4), 0,
           "no reserve=: nothing");
    is_int(hl_cost_parse_or(NULL, 400), 400, "a missing cost charges the reservation");
    is_int(hl_cost_parse_or("1.5", 400), 400, "an invalid cost charges the reservation");
    is_int(hl_cost_parse_or(" 7 ", 400), 7, "a valid cost is the cost");
    is_int(hl_cost_parse_or("0", 400), 0, "0 is a cost");
}

/* ---- the bucket ----------------------------------------------------------- */

static void test_check_n(void)
{
    hl_policy_t p = { HL_ALGO_FIXED, 10, 60000, 0 };
    hl_bucket_t b;
    hl_verdict_t v;

    memset(&b, 0, sizeof(b));
    hl_bucket_check_n(&b, &p, NOW, 10, &v);
    ok(v.admit && v.remaining == 0, "fixed: 10 of 10 fit an empty window");
    hl_bucket_check_n(&b, &p, NOW, 11, &v);
    ok(!v.admit && v.retry_ms == 60000, "fixed: 11 of 10 never fit");
    hl_bucket_commit_n(&b, &p, NOW, 7);
    hl_bucket_check_n(&b, &p, NOW, 3, &v);
    ok(v.admit && v.remaining == 0, "fixed: 3 fit after 7");
    hl_bucket_check_n(&b, &p, NOW, 4, &v);
    ok(!v.admit, "fixed: 4 do not fit after 7");
    is_int(hl_bucket_refund_n(&b, &p, NOW + 1, NOW, 5), 5, "fixed: 5 given back");
    is_int(hl_bucket_refund_n(&b, &p, NOW + 1, NOW, 5), 2,
           "fixed: never below 0");
    is_int(hl_bucket_refund_n(&b, &p, NOW + 60001, NOW, 5), 0,
           "fixed: nothing after the window ended");
}

/* ---- decisions and settlement --------------------------------------------- */

/* 20 requests reserving 400 in flight at once on 1000: 2 admitted; both
 * settled at 100: room for 2 more reservations (200 + 2 x 400 <= 1000). */
static void test_concurrent(const char *spec, const char *name)
{
    hl_quota_t q = quota(spec);
    hl_decide_item_t proto, req[20];
    int i, admitted = 0, touched = 0;

    fresh();
    reserving(&proto, &q, "/v1|key");
    for (i = 0; i < 20; ++i)
        admitted += arrive(&proto, &req[i], NOW + i);
    okf(admitted == 2, "%s: 2 of 20 reserving 400 on 1000 admitted (%d)",
        name, admitted);
    /* Answered last first: a gcra mark names only the last commit. */
    for (i = 1; i >= 0; --i)
        touched += hl_decide_settle_locked(&table, &req[i], 100, NOW + 30);
    for (i = 0, admitted = 0; i < 20; ++i)
        admitted += arrive(&proto, &req[i], NOW + 40);
    okf(admitted == (q.algo == HL_ALGO_GCRA ? 1 : 2),
        "%s: settled at 100, %d more admitted (%d windows given back)", name,
        admitted, touched);
}

/* A cost above the reservation charges the excess; capped at COUNT. */
static void test_excess(void)
{
    hl_quota_t q = quota("1000/1m cost=header:X reserve=100");
    hl_decide_item_t proto, r1, r2;

    fresh();
    reserving(&proto, &q, "/v1|key");
    ok(arrive(&proto, &r1, NOW), "reserve 100: admitted");
    is_int(hl_decide_settle_locked(&table, &r1, 850, NOW + 1), 1,
           "cost 850: the excess of 750 charged");
    ok(arrive(&proto, &r2, NOW + 2), "150 left: a reservation of 100 fits");
    hl_decide_settle_locked(&table, &r2, 100, NOW + 3);
    ok(!arrive(&proto, &r2, NOW + 4), "50 left: 100 does not fit");
    hl_decide_settle_locked(&table, &r1, 9999999, NOW + 5);
    ok(!arrive(&proto, &r2, NOW + 6), "a huge excess: the window is full");
    ok(arrive(&proto, &r2, NOW + 60000 + 6),
       "... and the next window is empty (the excess is capped at COUNT)");
}

/* A settlement never frees room in a window that began since. */
static void test_no_settle_across_windows(void)
{
    hl_quota_t q = quota("1000/1s cost=header:X reserve=600");
    hl_decide_item_t proto, r1, r2, r3;

    fresh();
    reserving(&proto, &q, "/v1|key");
    ok(arrive(&proto, &r1, NOW), "first window: 600 reserved");
    ok(arrive(&proto, &r2, NOW + 1000), "next window: 600 reserved");
    is_int(hl_decide_settle_locked(&table, &r1, 0, NOW + 1001), 0,
           "the first request's settlement gives nothing in the new window");
    ok(!arrive(&proto, &r3, NOW + 1002), "... so 600 more still do not fit");
}

/* Two quotas on one request: the reservation counted once both admit. */
static void test_two_quotas(void)
{
    hl_quota_t tokens = quota("1000/1m cost=header:X reserve=400");
    hl_quota_t reqs = quota("100/1m");
    hl_decide_item_t a, b, ra[20], rb[20];
    int i, admitted = 0;

    fresh();
    reserving(&a, &tokens, "/v1|key");
    item(&b, &reqs, "/v1#2|key");
    for (i = 0; i < 20; ++i) {
        hl_decide_item_t *items[2] = { &ra[i], &rb[i] };
        ra[i] = a;
        rb[i] = b;
        admitted += hl_decide_locked(tables, items, 2, NOW + i);
    }
    okf(admitted == 2, "two quotas: 2 of 20 admitted (%d)", admitted);
    is_int(hl_decide_settle_locked(&table, &ra[0], 0, NOW + 30), 1,
           "two quotas: the reservation is given back");
    ok(hl_decide_settle_locked(&table, &rb[0], 0, NOW + 30) == 0,
       "a quota without reserve= has nothing to settle");
}

int main(void)
{
    test_parse();
    test_find_max_tokens();
    test_encodings();
    test_units();
    test_check_n();
    test_concurrent("1000/1m cost=header:X reserve=400", "fixed");
    test_concurrent("1000/1m cost=usage reserve=400 algo=sliding", "sliding");
    test_concurrent("1000/1m cost=usage reserve=400 algo=gcra", "gcra");
    test_excess();
    test_no_settle_across_windows();
    test_two_quotas();
    free(mem);
    return done_testing();
}
