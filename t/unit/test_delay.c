/* hl_delay: delay= (nginx limit_req's) holds admitted requests over the
 * rate until they conform; parsed, checked (gcra only) and described. */
#include <string.h>

#include "hl_tap.h"
#include "hl_bucket.h"
#include "hl_delay.h"
#include "hl_quota.h"
#include "hl_quota_text.h"
#include "hl_core_calls.h"

/* Decides one request at now under q's window 0 (bucket b) and returns
 * its hold in ms, or -1 when refused. */
static int64_t one(hl_bucket_t *b, const hl_quota_t *q, int64_t now)
{
    hl_policy_t p;
    hl_decision_t d = { 0 };

    hl_policy_from_quota(q, 0, &p);
    hl_bucket_check(b, &p, now, &d.windows[0]);
    if (!d.windows[0].admit)
        return -1;
    hl_bucket_commit(b, &p, now);
    d.admit = 1;
    d.nwindows = 1;
    return hl_delay_ms(q, &d);
}

/* Parses the space-separated tokens of line into *q. Returns
 * hl_quota_parse_args' answer. */
static int parse(hl_quota_t *q, const char *line, char *err, size_t errlen)
{
    static char copy[256];
    const char *argv[16];
    int argc = 0;
    char *tok;

    strncpy(copy, line, sizeof(copy) - 1);
    for (tok = strtok(copy, " "); tok && argc < 16; tok = strtok(NULL, " "))
        argv[argc++] = tok;
    return hl_quota_parse_args(q, argc, argv, err, errlen);
}

int main(void)
{
    hl_quota_t q;
    hl_bucket_t b = { 0, 0, 0 };
    char err[256], buf[256];
    int64_t got[6];
    int i;

    is_int(parse(&q, "2/1s algo=gcra burst=3 delay=0", err, sizeof(err)), 0,
           "2/1s algo=gcra burst=3 delay=0 parses");
    is_int((int)hl_quota_burst(&q), 4, "burst counts the requests beyond the first (nginx)");
    for (i = 0; i < 6; ++i)
        got[i] = one(&b, &q, 1000000);
    is_int((int)got[0], 0, "1st passes at once");
    is_int((int)got[1], 500, "2nd held 0.5 s");
    is_int((int)got[2], 1000, "3rd held 1.0 s");
    is_int((int)got[3], 1500, "4th held 1.5 s");
    is_int((int)got[4], -1, "5th refused");
    is_int((int)got[5], -1, "6th refused");

    memset(&b, 0, sizeof(b));
    is_int(parse(&q, "2/1s algo=gcra burst=3 delay=2", err, sizeof(err)), 0,
           "delay=2 parses");
    for (i = 0; i < 5; ++i)
        got[i] = one(&b, &q, 1000000);
    ok(got[0] == 0 && got[1] == 0 && got[2] == 0, "delay=2: the first 3 pass at once");
    is_int((int)got[3], 500, "... the 4th is held 0.5 s");
    is_int((int)got[4], -1, "... the 5th refused");
    hl_quota_describe(&q, buf, sizeof(buf));
    has_str(buf, "delay=2", "described with delay=");

    is_int(parse(&q, "2/1s delay=0", err, sizeof(err)), -1, "delay= without algo=gcra: an error");
    has_str(err, "needs algo=gcra", "... saying it needs algo=gcra");
    is_int(parse(&q, "2/1s algo=gcra delay=x", err, sizeof(err)), -1, "a bad delay: an error");
    is_int(parse(&q, "2/1s algo=gcra burst=3", err, sizeof(err)), 0, "without delay=");
    is_int((int)hl_quota_burst(&q), 3, "... burst as before");
    return done_testing();
}
