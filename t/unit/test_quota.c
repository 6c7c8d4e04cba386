/*
 * test_quota.c - unit tests of hl_quota.c: durations, windows, quota tokens,
 * validation, window names and status counting. Prints TAP.
 */
#include "hl_quota.h"
#include "hl_quota_by.h"
#include "hl_quota_text.h"
#include "hl_tap.h"

#include <stdio.h>
#include <string.h>
#include "hl_core_calls.h"

static char err[HL_ERR_MAX];
static char name[512];

/* Formats a test name into the static buffer `name` and returns it. */
static const char *nm(const char *fmt, const char *a)
{
    snprintf(name, sizeof(name), fmt, a);
    return name;
}

/* Asserts that the error text is a single line and quotes `bad`. */
static void err_names(const char *bad, const char *what)
{
    char quoted[300];

    snprintf(quoted, sizeof(quoted), "'%s'", bad);
    has_str(err, quoted, nm("%s: message quotes the bad text", what));
    ok(strchr(err, '\n') == NULL, nm("%s: message is one line", what));
}

/* A duration that must parse to `want` ms. */
static void dur_ok(const char *s, uint32_t bare, uint32_t want)
{
    uint32_t ms = 12345;
    char what[128];

    snprintf(what, sizeof(what), "duration '%s' (bare %u)", s, (unsigned)bare);
    err[0] = '\0';
    is_int(hl_parse_duration_ms(s, bare, &ms, err, sizeof(err)), 0, what);
    is_int(ms, want, nm("%s: value", what));
}

/* A duration that must fail with a message containing `needle`. */
static void dur_bad(const char *s, uint32_t bare, const char *needle)
{
    uint32_t ms = 777;
    char what[128];

    snprintf(what, sizeof(what), "duration '%s' (bare %u) rejected", s,
             (unsigned)bare);
    err[0] = '\0';
    is_int(hl_parse_duration_ms(s, bare, &ms, err, sizeof(err)), -1, what);
    is_int(ms, 777, nm("%s: output untouched", what));
    err_names(s, what);
    has_str(err, needle, nm("%s: says what is wrong", what));
}

/* A window that must parse to count/ms. */
static void win_ok(const char *s, uint32_t count, uint32_t ms)
{
    hl_window_t w = { 0, 0 };

    is_int(hl_parse_window(s, &w, err, sizeof(err)), 0, nm("window '%s'", s));
    is_int(w.count, count, nm("window '%s': count", s));
    is_int(w.window_ms, ms, nm("window '%s': window_ms", s));
}

/* A window that must fail; `full` is the exact message or NULL. */
static void win_bad(const char *s, const char *needle, const char *full)
{
    hl_window_t w = { 9, 9 };
    char what[128];

    snprintf(what, sizeof(what), "window '%s' rejected", s);
    err[0] = '\0';
    is_int(hl_parse_window(s, &w, err, sizeof(err)), -1, what);
    ok(w.count == 9 && w.window_ms == 9, nm("%s: output untouched", what));
    err_names(s, what);
    has_str(err, needle, nm("%s: says what is wrong", what));
    if (full)
        is_str(err, full, nm("%s: exact message", what));
}

/* Parses argv (NULL-terminated) into *q; returns the result. */
static int parse(hl_quota_t *q, const char *const *argv)
{
    int argc = 0;

    while (argv[argc])
        argc++;
    err[0] = '\0';
    return hl_quota_parse_args(q, argc, argv, err, sizeof(err));
}

/* A token list that must fail, quoting `bad` and containing `needle`. */
static void args_bad(const char *const *argv, const char *bad,
                     const char *needle, const char *full)
{
    hl_quota_t q;
    char what[256];

    snprintf(what, sizeof(what), "args ... '%s' rejected", bad);
    is_int(parse(&q, argv), -1, what);
    err_names(bad, what);
    has_str(err, needle, nm("%s: says what is wrong", what));
    if (full)
        is_str(err, full, nm("%s: exact message", what));
}

/* One token that must fail on a fresh quota. */
static void tok_bad(const char *tok, const char *bad, const char *needle,
                    const char *full)
{
    const char *argv[3] = { "5/1m", tok, NULL };

    args_bad(argv, bad, needle, full);
}

static void test_durations(void)
{
    dur_ok("500ms", 0, 500);
    dur_ok("1ms", 0, 1);
    dur_ok("1s", 0, 1000);
    dur_ok("10s", 0, 10000);
    dur_ok("60s", 0, 60000);
    dur_ok("1m", 0, 60000);
    dur_ok("2h", 0, 7200000);
    dur_ok("1d", 0, 86400000);
    dur_ok("30d", 0, 2592000000u);
    dur_ok("720h", 0, 2592000000u);
    dur_ok("43200m", 0, 2592000000u);
    dur_ok("2592000s", 0, 2592000000u);
    dur_ok("2592000000ms", 0, 2592000000u);
    dur_ok("007s", 0, 7000);
    dur_ok("60", 1000, 60000);           /* JSON "window": 60 */
    dur_ok("60s", 1000, 60000);          /* a unit wins over bare_unit_ms */
    dur_ok("250", 1, 250);
    dur_ok("2592000", 1000, 2592000000u);

    dur_bad("1.5m", 0, "whole number");
    dur_bad("1 m", 0, "unknown unit");
    dur_bad("1mm", 0, "unknown unit");
    dur_bad("1x", 0, "unknown unit in '1x' (use ms, s, m, h or d)");
    dur_bad("1M", 0, "unknown unit");
    dur_bad("1S", 0, "unknown unit");
    dur_bad("1h30m", 0, "unknown unit");
    dur_bad("1s ", 0, "unknown unit");
    dur_bad(" 1s", 0, "positive integer");
    dur_bad("m", 0, "positive integer");
    dur_bad("ms", 0, "positive integer");
    dur_bad("", 0, "missing duration");
    dur_bad("-1s", 0, "positive integer");
    dur_bad("+1s", 0, "positive integer");
    dur_bad("0s", 0, "greater than zero");
    dur_bad("0ms", 0, "greater than zero");
    dur_bad("00d", 0, "greater than zero");
    dur_bad("0", 1000, "greater than zero");
    dur_bad("31d", 0, "longer than 30 days");
    dur_bad("2592000001ms", 0, "longer than 30 days");
    dur_bad("4294967296ms", 0, "longer than 30 days");
    dur_bad("4294967297s", 0, "longer than 30 days");
    dur_bad("18446744073709551617s", 0, "longer than 30 days");
    dur_bad("99999999999999999999999999d", 0, "longer than 30 days");
    dur_bad("2592001", 1000, "longer than 30 days");
    dur_bad("60", 0, "missing unit");
    dur_bad("1,5s", 0, "whole number");
    dur_bad("0x10s", 0, "unknown unit");
    dur_bad("1e3ms", 0, "unknown unit");

    {
        uint32_t ms = 5;
        char buf[4] = "XYZ";

        is_int(hl_parse_duration_ms("bad", 0, &ms, NULL, 100), -1,
               "NULL err buffer: still fails, no crash");
        is_int(hl_parse_duration_ms("bad", 0, &ms, buf, 0), -1,
               "errlen 0: fails");
        is_str(buf, "XYZ", "errlen 0: nothing written");
        is_int(hl_parse_duration_ms("1x", 0, &ms, buf, sizeof(buf)), -1,
               "tiny err buffer: fails");
        is_int(strlen(buf), 3, "tiny err buffer: truncated and terminated");
        is_int(hl_parse_duration_ms(NULL, 0, &ms, err, sizeof(err)), -1,
               "NULL duration rejected");
    }
}

static void test_windows(void)
{
    win_ok("5/1m", 5, 60000);
    win_ok("10/60s", 10, 60000);
    win_ok("200/1d", 200, 86400000);
    win_ok("3/500ms", 3, 500);
    win_ok("30/1h", 30, 3600000);
    win_ok("1/30d", 1, 2592000000u);
    win_ok("2147483647/1s", 2147483647u, 1000);
    win_ok("05/1m", 5, 60000);

    win_bad("0/1m", "count must be a positive integer",
            "bad window '0/1m': count must be a positive integer");
    win_bad("-1/1m", "count must be a positive integer", NULL);
    win_bad("+5/1m", "count must be a positive integer", NULL);
    win_bad("5 /1m", "count must be a positive integer", NULL);
    win_bad("/1m", "count must be a positive integer", NULL);
    win_bad("1.5/1m", "count must be a positive integer", NULL);
    win_bad("2147483648/1m", "below 2147483648", NULL);
    win_bad("99999999999999999999999/1m", "below 2147483648", NULL);
    win_bad("5/", "missing duration", NULL);
    win_bad("5/1x", "unknown unit",
            "unknown unit in '5/1x' (use ms, s, m, h or d)");
    win_bad("5/1m/2", "more than one '/'", NULL);
    win_bad("5//1m", "more than one '/'", NULL);
    win_bad("abc", "expected COUNT/WINDOW", NULL);
    win_bad("5", "expected COUNT/WINDOW", NULL);
    win_bad("", "expected COUNT/WINDOW", NULL);
    win_bad("5/0s", "greater than zero", NULL);
    win_bad("5/31d", "longer than 30 days", NULL);
    win_bad("5/60", "missing unit", NULL);
    win_bad("5/m", "positive integer", NULL);
    win_bad("5/ 1m", "positive integer", NULL);
    win_bad("5/1.5m", "whole number", NULL);
    win_bad("5/-1m", "positive integer", NULL);
    win_bad("5/1m ", "unknown unit", NULL);
}

static void test_args_accepted(void)
{
    hl_quota_t q;

    {
        const char *argv[] = { "5/1m", "30/1h", NULL };
        is_int(parse(&q, argv), 0, "5/1m 30/1h");
        is_int(q.nwindows, 2, "two windows");
        is_int(q.windows[0].count, 5, "first count");
        is_int(q.windows[0].window_ms, 60000, "first window");
        is_int(q.windows[1].count, 30, "second count");
        is_int(q.windows[1].window_ms, 3600000, "second window");
        is_int(q.by, HL_BY_IP, "default by=ip");
        is_str(q.by_name, "", "no by name");
        is_int(q.algo, HL_ALGO_FIXED, "default algo=fixed");
        is_int(q.burst, 0, "default burst 0");
        is_int(q.count, HL_COUNT_ALL, "default count=all");
        is_int(q.nstatuses, 0, "no statuses");
        is_int(q.dry_run, -1, "dry_run unset");
    }
    {
        const char *argv[] = { "10/1m", "by=global", "algo=sliding", NULL };
        is_int(parse(&q, argv), 0, "10/1m by=global algo=sliding");
        is_int(q.by, HL_BY_GLOBAL, "by=global");
        is_int(q.algo, HL_ALGO_SLIDING, "algo=sliding");
    }
    {
        const char *argv[] = { "600/60s", "algo=gcra", "burst=100",
                               "by=header:Authorization", NULL };
        is_int(parse(&q, argv), 0, "600/60s algo=gcra burst=100 by=header:...");
        is_int(q.algo, HL_ALGO_GCRA, "algo=gcra");
        is_int(q.burst, 100, "burst=100");
        is_int(q.by, HL_BY_HEADER, "by=header");
        is_str(q.by_name, "Authorization", "header name kept as written");
    }
    {
        const char *argv[] = { "burst=2147483647", "algo=gcra", "1/1s", NULL };
        is_int(parse(&q, argv), 0, "order does not matter; largest burst");
        is_int(q.burst, 2147483647u, "burst=2147483647");
    }
    {
        const char *argv[] = { "1/1s", "2/1m", "3/1h", "4/1d", NULL };
        is_int(parse(&q, argv), 0, "four windows (the maximum)");
        is_int(q.nwindows, 4, "nwindows 4");
    }
    {
        const char *argv[] = { "5/1m", "by=user", NULL };
        is_int(parse(&q, argv), 0, "by=user");
        is_int(q.by, HL_BY_USER, "by=user value");
    }
    {
        const char *argv[] = { "5/1m", "by=cookie:PHPSESSID", NULL };
        is_int(parse(&q, argv), 0, "by=cookie:PHPSESSID");
        is_int(q.by, HL_BY_COOKIE, "by=cookie");
        is_str(q.by_name, "PHPSESSID", "cookie name");
    }
    {
        const char *argv[] = { "5/1m", "by=env:HL_KEY", NULL };
        is_int(parse(&q, argv), 0, "by=env:HL_KEY");
        is_int(q.by, HL_BY_ENV, "by=env");
        is_str(q.by_name, "HL_KEY", "env name");
    }
    {
        const char *argv[] = { "3/1m", "by=param:email", NULL };
        is_int(parse(&q, argv), 0, "by=param:email");
        is_int(q.by, HL_BY_PARAM, "by=param");
        is_str(q.by_name, "email", "param name");
    }
    {
        const char *argv[] = { "3/1m", "by=param:", NULL };
        is_int(parse(&q, argv), -1, "by=param: needs a name");
    }
    {
        const char *argv[] = { "1/1m", "by=json:user.email", NULL };
        is_int(parse(&q, argv), 0, "by=json:user.email");
        is_int(q.by, HL_BY_JSON, "by=json");
        is_str(q.by_name, "user.email", "json path");
    }
    {
        static const char *const bad[] = { "by=json:", "by=json:.a", "by=json:a.",
            "by=json:a..b", "by=json:a b", "by=json:a/b", "by=json:a[0]",
            "by=json:a$", NULL };
        char err[HL_ERR_MAX], name[64];
        int i;

        for (i = 0; bad[i]; i++) {
            hl_quota_init(&q);
            snprintf(name, sizeof(name), "%s refused", bad[i]);
            is_int(hl_quota_apply_token(&q, bad[i], err, sizeof(err)), -1, name);
        }
        hl_quota_init(&q);
        hl_quota_apply_token(&q, "by=json:a..b", err, sizeof(err));
        is_str(err, "bad by 'json:a..b': a JSON path is 1 to 63 letters, digits, "
               "'_' or '-', with dots between non-empty names (user.email)",
               "by=json: message");
        is_int(hl_quota_apply_token(&q, "by=json:"
               "a123456789a123456789a123456789a123456789a123456789a123456789abc",
               err, sizeof(err)), 0, "a JSON path of 63 bytes");
        is_int(hl_quota_apply_token(&q, "by=json:"
               "a123456789a123456789a123456789a123456789a123456789a123456789abcd",
               err, sizeof(err)), -1, "a JSON path of 64 bytes refused");
        hl_quota_init(&q);
        is_int(hl_quota_apply_token(&q, "1/1m", err, sizeof(err)), 0, "json: validates");
        q.by = HL_BY_JSON;
        strcpy(q.by_name, "a..b");
        is_int(hl_quota_validate(&q, err, sizeof(err)), -1, "validate: a bad JSON path");
        strcpy(q.by_name, "phone");
        is_int(hl_quota_validate(&q, err, sizeof(err)), 0, "validate: json:phone");
        is_str(hl_by_name(HL_BY_JSON), "json", "hl_by_name(HL_BY_JSON)");
    }
    {
        /* '|' and '+' join the parts of by=A|B and by=A+B */
        const char *argv[] = { "5/1m", "by=header:aZ09!#$%&'*.^_`~-", NULL };
        is_int(parse(&q, argv), 0, "every token character but | and + accepted in a name");
        is_str(q.by_name, "aZ09!#$%&'*.^_`~-", "name with token characters");
    }
    {
        char tok[100], want[64];
        const char *argv[] = { "5/1m", tok, NULL };

        memset(want, 'x', 63);
        want[63] = '\0';
        snprintf(tok, sizeof(tok), "by=header:%s", want);
        is_int(parse(&q, argv), 0, "63-character header name accepted");
        is_str(q.by_name, want, "63-character name stored");
    }
    {
        const char *argv[] = { "5/1m", "by=user", "by=global", NULL };
        is_int(parse(&q, argv), 0, "by= twice: the later wins");
        is_int(q.by, HL_BY_GLOBAL, "later by= kept");
    }
    {
        const char *argv[] = { "5/1m", "by=header:X", "by=ip", NULL };
        is_int(parse(&q, argv), 0, "by=header then by=ip");
        is_str(q.by_name, "", "name cleared by by=ip");
    }
    {
        const char *argv[] = { "5/1m", "count=failures", NULL };
        is_int(parse(&q, argv), 0, "count=failures");
        is_int(q.count, HL_COUNT_FAILURES, "count=failures value");
        is_int(hl_quota_counts_status(&q, 200), 0, "failures: 200 not counted");
        is_int(hl_quota_counts_status(&q, 302), 0, "failures: 302 not counted");
        is_int(hl_quota_counts_status(&q, 399), 0, "failures: 399 not counted");
        is_int(hl_quota_counts_status(&q, 400), 1, "failures: 400 counted");
        is_int(hl_quota_counts_status(&q, 401), 1, "failures: 401 counted");
        is_int(hl_quota_counts_status(&q, 503), 1, "failures: 503 counted");
    }
    {
        const char *argv[] = { "5/1m", "count=status:401,403,422", NULL };
        is_int(parse(&q, argv), 0, "count=status:401,403,422");
        is_int(q.count, HL_COUNT_STATUS, "count=status value");
        is_int(q.nstatuses, 3, "three statuses");
        is_int(q.statuses[0], 401, "status 0");
        is_int(q.statuses[1], 403, "status 1");
        is_int(q.statuses[2], 422, "status 2");
        is_int(hl_quota_counts_status(&q, 401), 1, "status: 401 counted");
        is_int(hl_quota_counts_status(&q, 422), 1, "status: 422 counted");
        is_int(hl_quota_counts_status(&q, 404), 0, "status: 404 not counted");
        is_int(hl_quota_counts_status(&q, 200), 0, "status: 200 not counted");
    }
    {
        const char *argv[] = { "5/1m", "count=status:100,599", NULL };
        is_int(parse(&q, argv), 0, "statuses 100 and 599 (bounds)");
    }
    {
        const char *argv[] = { "5/1m",
            "count=status:400,401,402,403,404,405,406,407", NULL };
        is_int(parse(&q, argv), 0, "eight statuses (the maximum)");
        is_int(q.nstatuses, 8, "nstatuses 8");
    }
    {
        const char *argv[] = { "5/1m", "count=status:401", "count=all", NULL };
        is_int(parse(&q, argv), 0, "count= twice: the later wins");
        is_int(q.count, HL_COUNT_ALL, "count=all kept");
        is_int(q.nstatuses, 0, "statuses cleared");
        is_int(hl_quota_counts_status(&q, 200), 1, "all: 200 counted");
        is_int(hl_quota_counts_status(&q, 500), 1, "all: 500 counted");
    }
}

static void test_args_rejected(void)
{
    tok_bad("foo=1", "foo=1", "unknown key 'foo'",
            "unknown key 'foo' in 'foo=1' (use by, algo, burst, delay, count, cost, norm or reserve)");
    tok_bad("=1", "=1", "unknown key", NULL);
    tok_bad("BY=ip", "BY=ip", "unknown key", NULL);
    tok_bad("abc", "abc", "unknown token", NULL);
    tok_bad("5", "5", "unknown token", NULL);
    tok_bad("", "", "empty token", NULL);
    tok_bad("algo=leaky", "leaky", "unknown algo",
            "unknown algo 'leaky' (use fixed, sliding, gcra or log)");
    tok_bad("algo=FIXED", "FIXED", "unknown algo", NULL);
    tok_bad("algo=", "algo=", "missing value", NULL);
    tok_bad("by=", "by=", "missing value", NULL);
    tok_bad("by=foo", "foo", "unknown by", NULL);
    tok_bad("by=IP", "IP", "unknown by", NULL);
    tok_bad("by=header", "header", "unknown by", NULL);
    tok_bad("by=header:", "header:", "empty name", NULL);
    tok_bad("by=cookie:", "cookie:", "empty name", NULL);
    tok_bad("by=env:", "env:", "empty name", NULL);
    tok_bad("by=header:a b", "header:a b", "letters, digits", NULL);
    tok_bad("by=header:a:b", "header:a:b", "letters, digits", NULL);
    tok_bad("by=cookie:a;b", "cookie:a;b", "letters, digits", NULL);
    tok_bad("by=env:a/b", "env:a/b", "letters, digits", NULL);
    tok_bad("by=header:\xc3\xa9", "header:\xc3\xa9", "letters, digits", NULL);
    {
        char tok[120], val[100];

        memset(val, 0, sizeof(val));
        memcpy(val, "header:", 7);
        memset(val + 7, 'x', 64);
        snprintf(tok, sizeof(tok), "by=%s", val);
        tok_bad(tok, val, "longer than 63 characters", NULL);
    }
    tok_bad("burst=0", "0", "positive integer", NULL);
    tok_bad("burst=-1", "-1", "positive integer", NULL);
    tok_bad("burst=abc", "abc", "positive integer", NULL);
    tok_bad("burst=1.5", "1.5", "positive integer", NULL);
    tok_bad("burst=2147483648", "2147483648", "below 2147483648", NULL);
    tok_bad("burst=", "burst=", "missing value", NULL);
    tok_bad("count=some", "some", "unknown count", NULL);
    tok_bad("count=", "count=", "missing value", NULL);
    tok_bad("count=status:", "status:", "empty status", NULL);
    tok_bad("count=status:401,,403", "status:401,,403", "empty status", NULL);
    tok_bad("count=status:401,", "status:401,", "empty status", NULL);
    tok_bad("count=status:,401", "status:,401", "empty status", NULL);
    tok_bad("count=status:99", "status:99", "'99' is not between 100 and 599",
            NULL);
    tok_bad("count=status:600", "status:600", "not between 100 and 599", NULL);
    tok_bad("count=status:4010", "status:4010", "not between 100 and 599",
            NULL);
    tok_bad("count=status:0401", "status:0401", "not between 100 and 599",
            NULL);
    tok_bad("count=status:40a", "status:40a", "'40a' is not a number", NULL);
    tok_bad("count=status: 401", "status: 401", "not a number", NULL);
    tok_bad("count=status:+401", "status:+401", "not a number", NULL);
    tok_bad("count=status:400,401,402,403,404,405,406,407,408",
            "status:400,401,402,403,404,405,406,407,408", "more than 8", NULL);
    tok_bad("count=Failures", "Failures", "unknown count", NULL);
    tok_bad("0/1m", "0/1m", "count must be a positive integer", NULL);
    tok_bad("5/1x", "5/1x", "unknown unit", NULL);
    {
        const char *argv[] = { "1/1s", "2/1m", "3/1h", "4/1d", "5/5d", NULL };
        args_bad(argv, "5/5d", "too many windows", NULL);
    }
    {
        const char *argv[] = { "5/1m", "10/60s", NULL };
        args_bad(argv, "10/60s", "duplicate window", NULL);
        has_str(err, "'5/1m'", "duplicate: names the earlier window");
    }
    {
        const char *argv[] = { "5/1m", "5/1m", NULL };
        args_bad(argv, "5/1m", "duplicate window", NULL);
    }
    {
        const char *argv[] = { "5/1m", "burst=10", NULL };
        args_bad(argv, "burst=10", "needs algo=gcra", NULL);
    }
    {
        const char *argv[] = { "5/1m", "burst=10", "algo=sliding", NULL };
        args_bad(argv, "burst=10", "algo is sliding", NULL);
    }
    {
        hl_quota_t q;
        const char *argv[] = { "by=ip", "algo=gcra", NULL };
        is_int(parse(&q, argv), -1, "no window: rejected");
        has_str(err, "no COUNT/WINDOW", "no window: message");
        is_int(hl_quota_parse_args(&q, 0, NULL, err, sizeof(err)), -1,
               "empty argument list rejected");
    }
    {
        /* the first bad token is the one reported */
        const char *argv[] = { "5/1m", "algo=nope", "by=nope", NULL };
        args_bad(argv, "nope", "unknown algo", NULL);
    }
}

static void test_apply_and_setters(void)
{
    hl_quota_t q;

    hl_quota_init(&q);
    is_int(q.nwindows, 0, "init: no windows");
    is_int(q.by, HL_BY_IP, "init: by=ip");
    is_int(q.algo, HL_ALGO_FIXED, "init: algo=fixed");
    is_int(q.count, HL_COUNT_ALL, "init: count=all");
    is_int(q.dry_run, -1, "init: dry_run -1");
    is_int(hl_quota_validate(&q, err, sizeof(err)), -1, "init: not valid alone");

    is_int(hl_quota_apply_token(&q, "by=user", err, sizeof(err)), 0, "apply by=user");
    is_int(hl_quota_apply_token(&q, "by=header:", err, sizeof(err)), -1,
           "apply bad by=");
    is_int(q.by, HL_BY_USER, "failed by= leaves q as it was");
    is_int(hl_quota_apply_token(&q, "count=status:401,99", err, sizeof(err)),
           -1, "apply bad count=");
    is_int(q.count, HL_COUNT_ALL, "failed count= leaves count");
    is_int(q.nstatuses, 0, "failed count= leaves statuses");
    is_int(hl_quota_apply_token(&q, "algo=x", err, sizeof(err)), -1,
           "apply bad algo=");
    is_int(q.algo, HL_ALGO_FIXED, "failed algo= leaves algo");
    is_int(hl_quota_apply_token(&q, NULL, err, sizeof(err)), -1,
           "NULL token rejected");

    is_int(hl_quota_set_by(&q, "header:X-Api-Key", err, sizeof(err)), 0,
           "set_by header:X-Api-Key");
    is_int(q.by, HL_BY_HEADER, "set_by: header");
    is_str(q.by_name, "X-Api-Key", "set_by: name");
    is_int(hl_quota_set_by(&q, "global", err, sizeof(err)), 0, "set_by global");
    is_int(q.by, HL_BY_GLOBAL, "set_by: global");
    is_int(hl_quota_set_by(&q, "nope", err, sizeof(err)), -1, "set_by nope");
    has_str(err, "unknown by 'nope'", "set_by: message");
    is_int(hl_quota_set_by(&q, NULL, err, sizeof(err)), -1, "set_by NULL");
    is_int(hl_quota_set_algo(&q, "sliding", err, sizeof(err)), 0,
           "set_algo sliding");
    is_int(q.algo, HL_ALGO_SLIDING, "set_algo: sliding");
    is_int(hl_quota_set_algo(&q, "gcra", err, sizeof(err)), 0, "set_algo gcra");
    is_int(q.algo, HL_ALGO_GCRA, "set_algo: gcra");
    is_int(hl_quota_set_algo(&q, "leaky", err, sizeof(err)), -1,
           "set_algo leaky");
    is_str(err, "unknown algo 'leaky' (use fixed, sliding, gcra or log)",
           "set_algo: exact message");
    is_int(q.algo, HL_ALGO_GCRA, "set_algo: failed call leaves algo");
    is_int(hl_quota_set_algo(&q, NULL, err, sizeof(err)), -1, "set_algo NULL");
}

static void test_validate(void)
{
    hl_quota_t q;

    hl_quota_init(&q);
    q.nwindows = 1;
    q.windows[0].count = 5;
    q.windows[0].window_ms = 60000;
    is_int(hl_quota_validate(&q, err, sizeof(err)), 0, "validate: minimal quota");

    q.windows[0].count = 0;
    is_int(hl_quota_validate(&q, err, sizeof(err)), -1, "validate: count 0");
    q.windows[0].count = 5;
    q.windows[0].window_ms = 0;
    is_int(hl_quota_validate(&q, err, sizeof(err)), -1, "validate: window 0");
    q.windows[0].window_ms = HL_MAX_WINDOW_MS + 1;
    is_int(hl_quota_validate(&q, err, sizeof(err)), -1, "validate: window > 30d");
    q.windows[0].window_ms = 60000;

    q.nwindows = 2;
    q.windows[1] = q.windows[0];
    is_int(hl_quota_validate(&q, err, sizeof(err)), -1,
           "validate: same window length twice");
    has_str(err, "duplicate window", "validate: duplicate message");
    q.nwindows = HL_MAX_WINDOWS + 1;
    is_int(hl_quota_validate(&q, err, sizeof(err)), -1,
           "validate: too many windows");
    q.nwindows = 1;

    q.burst = 3;
    is_int(hl_quota_validate(&q, err, sizeof(err)), -1, "validate: burst, fixed");
    has_str(err, "'burst=3'", "validate: burst message names the token");
    q.algo = HL_ALGO_GCRA;
    is_int(hl_quota_validate(&q, err, sizeof(err)), 0, "validate: burst, gcra");
    q.burst = 0;

    q.by = HL_BY_COOKIE;
    is_int(hl_quota_validate(&q, err, sizeof(err)), -1,
           "validate: by=cookie without a name");
    strcpy(q.by_name, "sid");
    is_int(hl_quota_validate(&q, err, sizeof(err)), 0, "validate: by=cookie:sid");

    q.count = HL_COUNT_STATUS;
    is_int(hl_quota_validate(&q, err, sizeof(err)), -1,
           "validate: count=status without statuses");
    q.nstatuses = 1;
    q.statuses[0] = 700;
    is_int(hl_quota_validate(&q, err, sizeof(err)), -1,
           "validate: status out of range");
    q.statuses[0] = 429;
    is_int(hl_quota_validate(&q, err, sizeof(err)), 0, "validate: status 429");

    q.dry_run = 1;
    is_int(hl_quota_validate(&q, err, sizeof(err)), 0, "validate: dry_run 1");
    q.dry_run = 2;
    is_int(hl_quota_validate(&q, err, sizeof(err)), -1, "validate: dry_run 2");
}

/* The one duplicate-window check that directives, validation and the
 * table share: the message names the window as written, or its name. */
static void test_check_distinct(void)
{
    hl_window_t ws[2] = { { 5, 60000 }, { 30, 3600000 } }, w = { 10, 60000 };
    hl_window_t other = { 1, 1000 };
    char err[160];

    is_int(hl_window_check_distinct(ws, 2, &other, "1/1s", err, sizeof(err)), 0,
           "distinct: a new length passes");
    is_int(hl_window_check_distinct(ws, 0, &w, NULL, err, sizeof(err)), 0,
           "distinct: nothing earlier");
    is_int(hl_window_check_distinct(ws, 2, &w, "10/60s", err, sizeof(err)), -1,
           "distinct: same length as an earlier window");
    is_str(err, "duplicate window '10/60s': '5/1m' already has the same length",
           "distinct: names the window as written and the earlier one");
    hl_window_check_distinct(ws, 2, &w, NULL, err, sizeof(err));
    is_str(err, "duplicate window '10/1m': '5/1m' already has the same length",
           "distinct: names the window by hl_window_name without a name");
    is_int(hl_window_check_distinct(ws, 2, &w, NULL, NULL, 0), -1,
           "distinct: no message buffer");
    is_int(hl_window_check_distinct(ws, -1, &w, NULL, err, sizeof(err)), 0,
           "distinct: a negative count reads nothing");
}

static void test_window_names(void)
{
    static const struct {
        uint32_t count, ms;
        const char *want;
    } cases[] = {
        { 5, 60000, "5/1m" },
        { 10, 60000, "10/1m" },          /* "10/60s" is named by minutes */
        { 3, 500, "3/500ms" },
        { 1, 1500, "1/1500ms" },
        { 1, 90000, "1/90s" },
        { 4, 61000, "4/61s" },
        { 200, 86400000, "200/1d" },
        { 1, 7200000, "1/2h" },
        { 1, 5400000, "1/90m" },
        { 1, 2592000000u, "1/30d" },
        { 2147483647u, 1, "2147483647/1ms" },
    };
    char buf[64], back[64];
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        hl_window_t w = { cases[i].count, cases[i].ms }, w2 = { 0, 0 };

        is_str(hl_window_name(&w, buf, sizeof(buf)), cases[i].want,
               nm("window name %s", cases[i].want));
        is_int(hl_parse_window(buf, &w2, err, sizeof(err)), 0,
               nm("window name %s parses back", cases[i].want));
        ok(w2.count == w.count && w2.window_ms == w.window_ms,
           nm("window name %s round-trips", cases[i].want));
    }
    {
        hl_window_t w = { 5, 60000 };

        strcpy(back, "untouched");
        ok(hl_window_name(&w, back, 0) == back, "buflen 0 returns buf");
        is_str(back, "untouched", "buflen 0 writes nothing");
        is_str(hl_window_name(&w, buf, 4), "5/1", "short buffer truncates");
    }
}

static void test_names(void)
{
    is_str(hl_by_name(HL_BY_IP), "ip", "by name ip");
    is_str(hl_by_name(HL_BY_GLOBAL), "global", "by name global");
    is_str(hl_by_name(HL_BY_USER), "user", "by name user");
    is_str(hl_by_name(HL_BY_HEADER), "header", "by name header");
    is_str(hl_by_name(HL_BY_COOKIE), "cookie", "by name cookie");
    is_str(hl_by_name(HL_BY_ENV), "env", "by name env");
    is_str(hl_by_name(HL_BY_PARAM), "param", "by name param");
    is_str(hl_by_name(HL_BY_JSON), "json", "by name json");
    is_str(hl_algo_name(HL_ALGO_FIXED), "fixed", "algo name fixed");
    is_str(hl_algo_name(HL_ALGO_SLIDING), "sliding", "algo name sliding");
    is_str(hl_algo_name(HL_ALGO_GCRA), "gcra", "algo name gcra");
}

/* A quota said back as a quota line would say it. */
static void describe(const char *const *argv, const char *want)
{
    hl_quota_t q;
    char buf[160];

    ok(parse(&q, argv) == 0, nm("describe: '%s' parses", argv[0]));
    is_str(hl_quota_describe(&q, buf, sizeof(buf)), want,
           nm("describe: '%s'", want));
}

static void test_describe(void)
{
    static const char *const a[] = { "5/1m", "30/1h", NULL };
    static const char *const b[] = { "10/1s", "by=header:X-Key", "algo=gcra",
                                     "burst=20", NULL };
    static const char *const c[] = { "3/10m", "count=status:401,403", NULL };
    static const char *const d[] = { "100/60s", "by=global",
                                     "count=failures", NULL };
    hl_quota_t q;
    char small[8];

    describe(a, "5/1m 30/1h by=ip");
    describe(b, "10/1s by=header:X-Key algo=gcra burst=20");
    describe(c, "3/10m by=ip count=status:401,403");
    describe(d, "100/1m by=global count=failures");
    {
        static const char *const e[] = { "1/1m", "by=json:user.email", NULL };
        describe(e, "1/1m by=json:user.email");
    }
    parse(&q, a);
    q.dry_run = 1;
    is_str(hl_quota_describe(&q, small, sizeof(small)), "5/1m 30",
           "describe: cut short, NUL-terminated, in a small buffer");
    ok(hl_quota_describe(&q, small, 0) == small, "describe: buflen 0");
}

/* cost=1|header:NAME, and reading a cost header's value. */
static void test_cost(void)
{
    static const char *const good[] = { "100/1m", "by=header:Authorization",
                                        "cost=header:X-LLM-Tokens" };
    static const char *const bad[] = { "5/1m", "cost=2" };
    static const char *const bad2[] = { "5/1m", "cost=header:" };
    static const char *const bad3[] = { "5/1m", "cost=header:a b" };
    hl_quota_t q;
    char err[HL_ERR_MAX];

    is_int(hl_quota_parse_args(&q, 3, good, err, sizeof(err)), 0,
           "cost=header:X-LLM-Tokens parses");
    is_str(q.cost_name, "X-LLM-Tokens", "cost header name kept");
    is_int(hl_quota_after_response(&q), 1, "a cost quota counts after the "
           "response");
    is_int(hl_quota_apply_token(&q, "cost=1", err, sizeof(err)), 0, "cost=1");
    is_str(q.cost_name, "", "cost=1 clears the header");
    is_int(hl_quota_after_response(&q), 0, "count=all cost=1 counts at once");
    is_int(hl_quota_parse_args(&q, 2, bad, err, sizeof(err)), -1, "cost=2 "
           "refused");
    is_str(err, "unknown cost '2' (use 1, header:NAME or usage)", "cost=2 message");
    is_int(hl_quota_parse_args(&q, 2, bad2, err, sizeof(err)), -1,
           "cost=header: refused");
    is_str(err, "bad cost 'header:': empty name after ':'",
           "empty cost header message");
    is_int(hl_quota_parse_args(&q, 1, bad3, err, sizeof(err)), 0, "one token");
    is_int(hl_quota_apply_token(&q, "cost=header:a b", err, sizeof(err)), -1,
           "cost header with a space refused");
    is_int((int)hl_cost_parse("60"), 60, "cost 60");
    is_int((int)hl_cost_parse(" 42\t"), 42, "cost with spaces around");
    is_int((int)hl_cost_parse("0"), 0, "cost 0 charges nothing");
    is_int((int)hl_cost_parse(NULL), 1, "missing header charges 1");
    is_int((int)hl_cost_parse(""), 1, "empty header charges 1");
    is_int((int)hl_cost_parse("-5"), 1, "negative charges 1");
    is_int((int)hl_cost_parse("1.5"), 1, "not whole charges 1");
    is_int((int)hl_cost_parse("12abc"), 1, "trailing junk charges 1");
    is_int((int)hl_cost_parse("99999999999999999999999"), (int)HL_COST_MAX,
           "absurdly large is capped at 2^31-1");
}

static void test_norm(void)
{
    static const char *const phone[] = { "1/1m", "by=param:phone", "norm=digits" };
    static const char *const onip[] = { "1/1m", "norm=email" };
    static const char *const onglobal[] = { "1/1m", "by=global", "norm=exact" };
    hl_quota_t q;
    char err[HL_ERR_MAX];

    hl_quota_init(&q);
    is_int((int)q.norm, HL_NORM_LOWER, "norm: lower by default");
    is_int(hl_quota_parse_args(&q, 3, phone, err, sizeof(err)), 0, "norm=digits parses");
    is_int((int)q.norm, HL_NORM_DIGITS, "norm=digits kept");
    is_int(hl_quota_apply_token(&q, "norm=email", err, sizeof(err)), 0, "norm=email");
    is_int((int)q.norm, HL_NORM_EMAIL, "norm=email kept");
    is_int(hl_quota_apply_token(&q, "norm=exact", err, sizeof(err)), 0, "norm=exact");
    is_int(hl_quota_apply_token(&q, "norm=lower", err, sizeof(err)), 0, "norm=lower");
    is_int((int)q.norm, HL_NORM_LOWER, "norm=lower kept");
    is_int(hl_quota_apply_token(&q, "norm=upper", err, sizeof(err)), -1, "norm=upper refused");
    is_str(err, "bad norm 'upper' (use lower, digits, digits:CC, email or exact)", "norm=upper message");
    is_int(hl_quota_apply_token(&q, "norm=digits:33", err, sizeof(err)), 0, "norm=digits:33");
    ok(q.norm == HL_NORM_DIGITS && q.norm_cc == 33, "... digits with country code 33");
    is_int(hl_quota_apply_token(&q, "norm=digits:999", err, sizeof(err)), -1, "norm=digits:999 refused");
    has_str(err, "no trunk-prefix rules for that country code (known: 1, 7,", "... naming the known codes");
    is_int(hl_quota_apply_token(&q, "norm=digits", err, sizeof(err)), 0, "norm=digits after digits:33");
    is_int((int)q.norm_cc, 0, "... forgets the country code");
    is_int(hl_quota_apply_token(&q, "norm=", err, sizeof(err)), -1, "norm= empty refused");
    is_int(hl_quota_parse_args(&q, 2, onip, err, sizeof(err)), -1, "norm= on by=ip refused");
    has_str(err, "'norm=email'", "... naming the token");
    is_int(hl_quota_parse_args(&q, 3, onglobal, err, sizeof(err)), -1, "norm= on by=global refused");
    is_int(hl_quota_set_norm(&q, "digits", err, sizeof(err)), 0, "set_norm (the table's)");
    is_int(hl_quota_set_norm(&q, NULL, err, sizeof(err)), -1, "set_norm NULL refused");
    {
        static const char *const json_phone[] = { "1/1m", "5/1d", "by=json:phone", "norm=digits" };
        hl_quota_init(&q);
        is_int(hl_quota_parse_args(&q, 4, json_phone, err, sizeof(err)), 0,
               "by=json:phone norm=digits parses");
        is_int((int)q.norm, HL_NORM_DIGITS, "... norm=digits on a json: key");
    }
}

/* by=A|B and by=A+B (issue 26 items 4 and 7). */
static void test_by_parts(void)
{
    hl_quota_t q;
    char buf[300];

    {
        const char *argv[] = { "20000/1m",
                               "by=header:Authorization|header:x-api-key", NULL };
        is_int(parse(&q, argv), 0, "by=header:Authorization|header:x-api-key");
        is_int(q.by, HL_BY_PARTS, "A|B: by is parts");
        is_int(q.by_join, '|', "A|B: joined by |");
        is_int(q.by_nparts, 2, "A|B: two parts");
        is_int(q.by_parts[0].by, HL_BY_HEADER, "A|B: part 1 a header");
        is_str(q.by_parts[0].name, "Authorization", "A|B: part 1 named");
        is_str(q.by_parts[1].name, "x-api-key", "A|B: part 2 named");
        is_str(q.by_name, "", "A|B: no single name");
        is_int(hl_quota_validate(&q, err, sizeof(err)), 0, "A|B validates");
        is_str(hl_quota_by_text(&q, buf, sizeof(buf)),
               "header:Authorization|header:x-api-key", "A|B: by text");
        is_int(hl_quota_keys_account(&q), 1, "A|B: an account key");
        is_int(q.by_user, 0, "A|B: not by user");
    }
    {
        const char *argv[] = { "5/15m", "by=ip+param:log", "count=failures",
                               "norm=email", NULL };
        is_int(parse(&q, argv), 0, "by=ip+param:log");
        is_int(q.by_join, '+', "A+B: joined by +");
        is_int(q.by_parts[0].by, HL_BY_IP, "A+B: part 1 the address");
        is_int(q.by_parts[1].by, HL_BY_PARAM, "A+B: part 2 a parameter");
        is_int(hl_quota_validate(&q, err, sizeof(err)), 0,
               "A+B with norm=email validates (norm= folds the non-ip parts)");
        is_str(hl_quota_describe(&q, buf, sizeof(buf)),
               "5/15m by=ip+param:log count=failures", "A+B described");
        is_int(hl_quota_keys_by(&q, HL_BY_PARAM), 1, "keys_by param");
        is_int(hl_quota_keys_by(&q, HL_BY_JSON), 0, "keys_by json: no");
    }
    {
        const char *argv[] = { "5/1m", "by=user+json:a.b+cookie:s+env:E", NULL };
        is_int(parse(&q, argv), 0, "four parts");
        is_int(q.by_user, 1, "a user part: decided at fixups");
        is_str(hl_quota_by_text(&q, buf, sizeof(buf)),
               "user+json:a.b+cookie:s+env:E", "four parts: by text");
    }
    {
        const char *argv[] = { "5/1m", "by=header:a|ip", NULL };
        is_int(parse(&q, argv), 0, "ip last in A|B");
        is_int(hl_quota_keys_account(&q), 1, "header|ip: an account key");
    }
    {
        const char *argv[] = { "5/1m", "by=ip+env:X", NULL };
        is_int(parse(&q, argv), 0, "ip+env:X");
        is_int(hl_quota_keys_account(&q), 0, "ip+env: no account");
    }
    {
        const char *argv[] = { "5/1m", "by=header:a|header:b", "by=ip", NULL };
        is_int(parse(&q, argv), 0, "a later by=ip replaces a combination");
        is_int(q.by, HL_BY_IP, "by=ip kept");
        is_int(q.by_nparts, 0, "parts cleared");
    }
    tok_bad("by=a+b+c+d+e", "a", "unknown by", NULL);
    tok_bad("by=ip+header:a+header:b+header:c+header:d",
            "ip+header:a+header:b+header:c+header:d", "more than 4 parts", NULL);
    tok_bad("by=header:a|header:b+ip", "header:a|header:b+ip", "not both", NULL);
    tok_bad("by=header:a||header:b", "header:a||header:b", "empty part", NULL);
    tok_bad("by=header:a|", "header:a|", "empty part", NULL);
    tok_bad("by=+ip", "+ip", "empty part", NULL);
    tok_bad("by=ip+global", "ip+global", "cannot be combined", NULL);
    tok_bad("by=ip+ip", "ip+ip", "'ip' named twice", NULL);
    tok_bad("by=header:a|header:a", "header:a|header:a", "named twice", NULL);
    tok_bad("by=ip|header:a", "ip|header:a", "never used", NULL);
    tok_bad("by=ip+header:", "header:", "empty name", NULL);
    tok_bad("by=ip+json:a..b", "json:a..b", "JSON path", NULL);
    tok_bad("by=ip+nope", "nope", "unknown by", NULL);
    tok_bad("by=ip+header:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "ip+header:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "too long", NULL);
    {
        hl_quota_t v;
        const char *argv[] = { "5/1m", "by=ip+param:log", NULL };

        parse(&v, argv);
        v.by_nparts = 5;
        is_int(hl_quota_validate(&v, err, sizeof(err)), -1, "validate: 5 parts");
        v.by_nparts = 2;
        v.by_parts[1].by = HL_BY_GLOBAL;
        is_int(hl_quota_validate(&v, err, sizeof(err)), -1, "validate: a global part");
        v.by_parts[1].by = HL_BY_PARAM;
        v.by_join = 'x';
        is_int(hl_quota_validate(&v, err, sizeof(err)), -1, "validate: a bad join");
    }
}

int main(void)
{
    test_by_parts();
    test_norm();
    test_cost();
    test_durations();
    test_windows();
    test_args_accepted();
    test_args_rejected();
    test_apply_and_setters();
    test_validate();
    test_check_distinct();
    test_window_names();
    test_names();
    test_describe();
    return done_testing();
}
