/* test_device.c - device cookie tokens (hl_device.c): a token verifies
 * only for its account as sent, its quota's scope, its secret and before
 * its expiry; every other shape is refused without harm. */
#include <string.h>
#include "hl_tap.h"
#include "hl_device.h"
#include "hl_quota.h"

static const unsigned char secret[] = "0123456789abcdef0123456789abcdef";
#define SLEN 32
#define ACCOUNT "alice+m@example.org"
#define SCOPE "|/login|param:user"
#define SC SCOPE, strlen(SCOPE)
#define NOW 1700000000
#define EXPIRY 1800000000

/* Returns 1 if text verifies for account ACCOUNT at NOW. */
static int valid(const char *text, size_t len)
{
    return hl_device_verify(text, len, secret, SLEN, SC, ACCOUNT,
                            strlen(ACCOUNT), NOW);
}

/* Returns a quota parsed from spec (a one-token quota line). */
static hl_quota_t quota(const char *w, const char *count)
{
    const char *argv[2] = { w, count };
    hl_quota_t q;
    char err[HL_ERR_MAX];

    if (hl_quota_parse_args(&q, count ? 2 : 1, argv, err, sizeof(err)) != 0)
        printf("# %s\n", err);
    return q;
}

int main(void)
{
    char tok[HL_DEVICE_TOKEN_MAX + 1], bad[HL_DEVICE_SCOPE_MAX + 64];
    size_t n, i;
    hl_quota_t q;
    uint32_t secs = 0;
    char err[HL_ERR_MAX];

    /* Known answer: HMAC-SHA256 as Python's hmac computes it. */
    n = hl_device_make(tok, sizeof(tok), secret, SLEN, SC, ACCOUNT,
                       strlen(ACCOUNT), EXPIRY);
    is_str(tok, "2.1800000000.YZ9-bChYWnr2VxIV4KoFXUwvMQCFmNhWp6uR56u3S1w",
           "make: version, expiry and the base64url HMAC of head|scope length:scope account");
    is_int(n, strlen(tok), "make: returns the length");
    ok(valid(tok, n), "verify: the token made for the account");

    /* Bound to the account, the secret and the expiry. */
    ok(!hl_device_verify(tok, n, secret, SLEN, SC, "alice+m@example.orh", 19, NOW),
       "verify: another account's token is refused");
    ok(!hl_device_verify(tok, n, (const unsigned char *)"1123456789abcdef0123456789abcdef",
                         SLEN, SC, ACCOUNT, strlen(ACCOUNT), NOW),
       "verify: a token of another secret (after rotation) is refused");
    ok(!hl_device_verify(tok, n, secret, SLEN, SC, ACCOUNT, strlen(ACCOUNT), EXPIRY),
       "verify: refused at its expiry");
    ok(hl_device_verify(tok, n, secret, SLEN, SC, ACCOUNT, strlen(ACCOUNT), EXPIRY - 1),
       "verify: accepted a second before");

    /* Bound to the spelling as sent and to the quota (issue 25): another
     * case, the address without its tag, another section or line, another
     * key, and a scope/account split elsewhere are all refused. */
    ok(!hl_device_verify(tok, n, secret, SLEN, SC, "ALICE+m@example.org", 19, NOW),
       "verify: another case of the account is refused");
    ok(!hl_device_verify(tok, n, secret, SLEN, SC, "alice@example.org", 17, NOW),
       "verify: the address without its +tag is refused");
    ok(!hl_device_verify(tok, n, secret, SLEN, "|/admin/login|param:user", 24,
                         ACCOUNT, strlen(ACCOUNT), NOW),
       "verify: a token of another section is refused");
    ok(!hl_device_verify(tok, n, secret, SLEN, "|/login#2|param:user", 20,
                         ACCOUNT, strlen(ACCOUNT), NOW),
       "verify: a token of another quota line is refused");
    ok(!hl_device_verify(tok, n, secret, SLEN, "|/login|json:user", 17,
                         ACCOUNT, strlen(ACCOUNT), NOW),
       "verify: a token of another key is refused");
    ok(!hl_device_verify(tok, n, secret, SLEN, SCOPE "a", strlen(SCOPE) + 1,
                         ACCOUNT + 1, strlen(ACCOUNT) - 1, NOW),
       "verify: the same bytes split otherwise between scope and account");

    /* Forged: a later expiry with the old MAC, a flipped MAC character. */
    memcpy(bad, tok, n + 1);
    bad[2] = '9';
    ok(!valid(bad, n), "forged: a changed expiry");
    memcpy(bad, tok, n + 1);
    bad[n - 1] = bad[n - 1] == 'Q' ? 'R' : 'Q';
    ok(!valid(bad, n), "forged: one MAC character changed");
    memcpy(bad, "1", 1);
    memcpy(bad + 1, tok + 1, n);
    ok(!valid(bad, n), "forged: another version");

    /* Truncated, padded, garbage, long. */
    for (i = 0; i < n; ++i)
        if (valid(tok, i))
            break;
    is_int(i, n, "truncated: no prefix of the token verifies");
    memcpy(bad, tok, n);
    memcpy(bad + n, "==", 3);
    ok(!valid(bad, n + 2), "padded with '=': refused");
    ok(!valid("", 0), "empty: refused");
    ok(!valid("garbage", 7), "garbage: refused");
    ok(!valid("2..YZ9-bChYWnr2VxIV4KoFXUwvMQCFmNhWp6uR56u3S1w", 46), "no expiry: refused");
    ok(!valid("2.01800000000.YZ9-bChYWnr2VxIV4KoFXUwvMQCFmNhWp6uR56u3S1w", 57),
       "a leading zero in the expiry: refused");
    ok(!valid("2.-1800000000.YZ9-bChYWnr2VxIV4KoFXUwvMQCFmNhWp6uR56u3S1w", 57),
       "a negative expiry: refused");
    memset(bad, '9', sizeof(bad));
    ok(!valid(bad, sizeof(bad)), "long: refused");
    memcpy(bad, "2.", 2);
    bad[2 + 13] = '.';
    ok(!valid(bad, 2 + 13 + 1 + HL_DEVICE_MAC_CHARS), "a 13-digit expiry: refused");
    ok(!hl_device_verify(NULL, 0, secret, SLEN, SC, ACCOUNT, 19, NOW), "NULL token: refused");
    ok(!hl_device_verify(tok, n, NULL, 0, SC, ACCOUNT, 19, NOW), "no secret: refused");
    memcpy(bad, tok, n + 1);
    bad[5] = '\0';
    ok(!valid(bad, n), "a NUL inside: refused");

    /* make's arguments. */
    is_int(hl_device_make(tok, HL_DEVICE_TOKEN_MAX, secret, SLEN, SC, ACCOUNT, 19, EXPIRY),
           0, "make: a short buffer fails");
    is_int(hl_device_make(tok, sizeof(tok), secret, SLEN, SC, ACCOUNT, 19, 0), 0,
           "make: expiry 0 fails");
    is_int(hl_device_make(tok, sizeof(tok), secret, SLEN, SC, ACCOUNT, 19, 1000000000000LL),
           0, "make: a 13-digit expiry fails");
    memset(bad, 'a', sizeof(bad));
    is_int(hl_device_make(tok, sizeof(tok), secret, SLEN, SC, bad,
                          HL_DEVICE_ACCOUNT_MAX + 1, EXPIRY), 0,
           "make: an over-long account fails");
    ok(hl_device_make(tok, sizeof(tok), secret, SLEN, SC, bad, HL_DEVICE_ACCOUNT_MAX,
                      EXPIRY) > 0, "make: the longest account works");
    is_int(hl_device_make(tok, sizeof(tok), secret, SLEN, bad,
                          HL_DEVICE_SCOPE_MAX + 1, ACCOUNT, 19, EXPIRY), 0,
           "make: an over-long scope fails");
    is_int(hl_device_make(tok, sizeof(tok), secret, 0, SC, ACCOUNT, 19, EXPIRY), 0,
           "make: an empty secret fails");

    /* What earns a cookie. */
    q = quota("5/1m", "count=failures");
    ok(hl_device_success(&q, 200) && hl_device_success(&q, 302)
       && hl_device_success(&q, 303), "failures: 200, 302, 303 earn it");
    ok(!hl_device_success(&q, 400) && !hl_device_success(&q, 403)
       && !hl_device_success(&q, 429) && !hl_device_success(&q, 500),
       "failures: 4xx and 5xx do not");
    ok(!hl_device_success(&q, 0), "no status: does not");
    q = quota("5/1m", "count=status:200");
    ok(!hl_device_success(&q, 200), "status:200: a 200 (a failed login) does not");
    ok(hl_device_success(&q, 302), "status:200: a 302 does");
    ok(!hl_device_success(&q, 403), "status:200: a 403 does not");
    q = quota("5/1m", NULL);
    ok(!hl_device_success(&q, 302) && !hl_device_success(&q, 200),
       "all: nothing (a count=all quota cannot tell a failure)");

    ok(hl_device_account_quota(&(hl_quota_t){ .by = HL_BY_PARAM })
       && hl_device_account_quota(&(hl_quota_t){ .by = HL_BY_USER })
       && hl_device_account_quota(&(hl_quota_t){ .by = HL_BY_HEADER })
       && hl_device_account_quota(&(hl_quota_t){ .by = HL_BY_COOKIE })
       && hl_device_account_quota(&(hl_quota_t){ .by = HL_BY_JSON }),
       "account quotas: param, user, header, cookie, json");
    ok(!hl_device_account_quota(&(hl_quota_t){ .by = HL_BY_IP })
       && !hl_device_account_quota(&(hl_quota_t){ .by = HL_BY_GLOBAL })
       && !hl_device_account_quota(&(hl_quota_t){ .by = HL_BY_ENV }),
       "not account quotas: ip, global, env");

    /* Lifetimes and names. */
    ok(hl_device_parse_max_age("30d", &secs, err, sizeof(err)) == 0 && secs == 2592000,
       "max-age: 30d");
    ok(hl_device_parse_max_age("90", &secs, err, sizeof(err)) == 0 && secs == 90,
       "max-age: bare seconds");
    ok(hl_device_parse_max_age("400d", &secs, err, sizeof(err)) == 0, "max-age: 400d");
    ok(hl_device_parse_max_age("401d", &secs, err, sizeof(err)) == -1, "max-age: 401d refused");
    has_str(err, "'401d'", "max-age: the message names the token");
    ok(hl_device_parse_max_age("0", &secs, err, sizeof(err)) == -1, "max-age: 0 refused");
    ok(hl_device_parse_max_age("5w", &secs, err, sizeof(err)) == -1, "max-age: unknown unit");
    ok(hl_device_parse_max_age("99999999999999999999d", &secs, err, sizeof(err)) == -1,
       "max-age: overflow refused");
    ok(hl_device_parse_max_age("", &secs, err, sizeof(err)) == -1, "max-age: empty refused");
    ok(hl_device_valid_name("hl_device") && hl_device_valid_name("__Host-dev"),
       "name: tokens");
    ok(!hl_device_valid_name("") && !hl_device_valid_name("a=b")
       && !hl_device_valid_name("a b") && !hl_device_valid_name("a;b"),
       "name: empty, '=', space, ';' refused");
    memset(bad, 'a', 64);
    bad[64] = '\0';
    ok(!hl_device_valid_name(bad), "name: 64 characters refused");
    bad[63] = '\0';
    ok(hl_device_valid_name(bad), "name: 63 characters");
    return done_testing();
}
