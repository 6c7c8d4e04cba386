/* test_validator.c - the one-second rule for the quota table's validators
 * (RFC 9110 8.8.2.2): a modification time from the same second as its
 * observation is weak, and so is an ETag beside a weak Last-Modified. */
#include <stdint.h>
#include "hl_tap.h"
#include "hl_validator.h"

#define SEC 1000000LL

/* Returns "e+l" style flags of hl_validator_usable for a compact check. */
static int usable(const char *etag, const char *lm, const char *date)
{
    hl_validator_use_t use;

    hl_validator_usable(etag, lm, date, &use);
    return use.etag * 2 + use.last_modified;
}

int main(void)
{
    const int64_t t = 1796000000LL * SEC;   /* a whole second */
    const char *lm = "Tue, 01 Dec 2026 15:00:00 GMT";
    const char *same = "Tue, 01 Dec 2026 15:00:00 GMT";
    const char *next = "Tue, 01 Dec 2026 15:00:01 GMT";
    const char *earlier = "Tue, 01 Dec 2026 14:59:59 GMT";

    /* File modification times. */
    ok(!hl_validator_time_strong(t, t), "mtime observed in its own instant: weak");
    ok(!hl_validator_time_strong(t, t + SEC - 1), "mtime observed 0.999999 s later: weak");
    ok(hl_validator_time_strong(t, t + SEC), "mtime observed 1 s later: strong");
    ok(hl_validator_time_strong(t + 123456, t + SEC + 123456), "sub-second mtime, 1 s later: strong");
    ok(!hl_validator_time_strong(t + 5 * SEC, t), "mtime in the future (clock skew): weak");
    ok(hl_validator_time_strong(0, t), "epoch mtime seen now: strong");

    /* Last-Modified against Date. */
    is_int(usable(NULL, lm, same), 0, "Last-Modified in the Date's second: not sent back");
    is_int(usable(NULL, lm, next), 1, "Last-Modified 1 s before Date: sent back");
    is_int(usable(NULL, lm, earlier), 0, "Last-Modified after Date (skew): not sent back");
    is_int(usable(NULL, lm, NULL), 0, "no Date: Last-Modified not sent back");
    is_int(usable(NULL, lm, "yesterday"), 0, "unparseable Date: Last-Modified not sent back");
    is_int(usable(NULL, "garbage", next), 0, "unparseable Last-Modified: not sent back");
    is_int(usable(NULL, "Tuesday, 01-Dec-26 14:00:00 GMT", next), 1, "RFC 850 Last-Modified parsed");
    is_int(usable(NULL, "", ""), 0, "nothing: nothing sent back");

    /* ETag. */
    is_int(usable("\"abc\"", NULL, NULL), 2, "strong ETag, no Last-Modified: sent back");
    is_int(usable("\"abc\"", "", same), 2, "empty Last-Modified counts as absent");
    is_int(usable("\"abc\"", lm, next), 3, "strong ETag, strong Last-Modified: both sent back");
    is_int(usable("\"5f0c-1a\"", lm, same), 0,
           "ETag beside a same-second Last-Modified (nginx mtime-size): not sent back");
    is_int(usable("\"abc\"", lm, NULL), 0, "ETag beside a Last-Modified without Date: not sent back");
    is_int(usable("W/\"abc\"", NULL, NULL), 0, "weak ETag: not sent back");
    is_int(usable("W/\"abc\"", lm, next), 1, "weak ETag, strong Last-Modified: only Last-Modified");
    is_int(usable("", lm, next), 1, "empty ETag: only Last-Modified");
    return done_testing();
}
