/*
 * test_shape.c - a refusal in the providers' shapes: the OpenAI and
 * Anthropic 429 bodies, Go-style durations, RFC 3339 times, and which
 * window each class of provider headers describes.
 */
#include <string.h>
#include <apr_general.h>
#include <apr_pools.h>
#include "hl_tap.h"
#include "hl_shape.h"

static apr_pool_t *pool;

static void test_duration(void)
{
    static const struct { long long ms; const char *want; } cases[] = {
        { 0, "0s" }, { -5, "0s" }, { 120, "120ms" }, { 999, "999ms" },
        { 1000, "1s" }, { 1500, "1.5s" }, { 1250, "1.25s" }, { 1001, "1.001s" },
        { 59000, "59s" }, { 60000, "1m0s" }, { 360000, "6m0s" },
        { 3723000, "1h2m3s" }, { 3600000, "1h0m0s" }, { 86400000, "24h0m0s" },
    };
    char out[HL_SHAPE_TEXT_MAX];
    size_t i, n;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        n = hl_shape_duration(out, cases[i].ms);
        okf(strcmp(out, cases[i].want) == 0 && n == strlen(out),
            "%lld ms is %s (got %s)", cases[i].ms, cases[i].want, out);
    }
}

static void test_time(void)
{
    char out[HL_SHAPE_TEXT_MAX];

    is_int(hl_shape_time(out, 0), 20, "epoch: 20 bytes");
    is_str(out, "1970-01-01T00:00:00Z", "epoch in RFC 3339");
    hl_shape_time(out, 1767322800000LL);
    is_str(out, "2026-01-02T03:00:00Z", "a whole second");
    hl_shape_time(out, 1767322800001LL);
    is_str(out, "2026-01-02T03:00:01Z", "milliseconds rounded up to the second");
    is_int(hl_shape_time(out, -1), 0, "negative: nothing");
}

static void test_pick(void)
{
    hl_policy_view_t v[4] = {
        { "10/1m", 10, 60, 7, 30, 0, 0, 30000 },
        { "100/1h", 100, 3600, 3, 3000, 0, 0, 0 },
        { "20000/1m", 20000, 60, 5000, 40, 0, 1, 0 },
        { "200000/1d", 200000, 86400, 190000, 80000, 0, 1, 0 },
    };

    is_int(hl_shape_pick(v, 4, 0), 1, "requests: the window with the least remaining");
    is_int(hl_shape_pick(v, 4, 1), 2, "tokens: only cost= windows, least remaining");
    is_int(hl_shape_pick(v, 2, 1), -1, "no cost= window: no tokens headers");
    v[0].remaining = 3;
    is_int(hl_shape_pick(v, 4, 0), 1, "tie on remaining: the longer reset");
    is_int((int)hl_shape_reset_ms(&v[0]), 30000, "reset_ms when known");
    is_int((int)hl_shape_reset_ms(&v[1]), 3000000, "else reset_s in ms");
}

static void test_bodies(void)
{
    hl_policy_view_t pol[1] = { { "3/1m", 3, 60, 0, 42, 1, 0, 0 } };
    hl_reject_info_t info;
    char *b;

    memset(&info, 0, sizeof(info));
    info.route = "/v1/chat/\"completions\"";
    info.retry_after = 2853;
    info.npolicies = 1;
    info.policies = pol;
    b = hl_shape_openai_json(pool, &info);
    is_str(b, "{\"error\":{\"message\":\"Rate limit reached for /v1/chat/\\\"completions\\\" "
              "on requests (3/1m). Please try again in about 47 minutes.\","
              "\"type\":\"requests\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}",
           "openai: error.message, type requests, code; the route JSON-escaped");
    info.tokens = 1;
    has_str(hl_shape_openai_json(pool, &info), "on tokens (3/1m)", "openai: tokens in the message");
    has_str(hl_shape_openai_json(pool, &info), "\"type\":\"tokens\"", "openai: type tokens");
    b = hl_shape_anthropic_json(pool, &info);
    is_str(b, "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":"
              "\"Rate limit reached for /v1/chat/\\\"completions\\\" on tokens (3/1m). "
              "Please try again in about 47 minutes.\"}}", "anthropic: rate_limit_error");
    info.banned = 1;
    info.retry_after = 3600;
    has_str(hl_shape_openai_json(pool, &info),
            "This client is banned for 1 hour after too many refused requests.",
            "banned: said so, for how long");
    info.banned = 0;
    info.npolicies = 0;
    info.policies = NULL;
    info.retry_after = 1;
    has_str(hl_shape_anthropic_json(pool, &info),
            "on tokens. Please try again in 1 second.", "no policy (concurrency): no name");
}

int main(void)
{
    apr_initialize();
    apr_pool_create(&pool, NULL);
    test_duration();
    test_time();
    test_pick();
    test_bodies();
    apr_pool_destroy(pool);
    apr_terminate();
    return done_testing();
}
