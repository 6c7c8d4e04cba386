/*
 * hl_quota.c - parsing and checking of quota specifications
 * ("5/1m 30/1h by=ip algo=gcra burst=10 count=failures"), token by token.
 * Windows are read by hl_window.c, by= by hl_quota_by.c.
 *
 * Pure core: no httpd headers, no allocation, no locale. Numbers are read
 * digit by digit so that signs, spaces, decimal points and overflow are all
 * refused explicitly. Every error message names the offending text verbatim
 * in single quotes and fits on one line.
 *
 * Functions that fill a struct write it only on success, so a failed token
 * leaves the quota as it was. Memory: the caller owns every buffer (quota,
 * strings, err); nothing is allocated or kept; the name functions return
 * static strings.
 */
#include "hl_quota.h"
#include "hl_quota_by.h"
#include "hl_phone.h"
#include "hl_text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Empties *q (see hl_quota.h). Never fails. */
void hl_quota_init(hl_quota_t *q)
{
    memset(q, 0, sizeof(*q));
    q->by = HL_BY_IP;
    q->algo = HL_ALGO_FIXED;
    q->count = HL_COUNT_ALL;
    q->dry_run = -1;
}

/*
 * Parses an algo name. Returns 0, or -1 with a message naming value;
 * q->algo is written only on success.
 */
int hl_quota_set_algo(hl_quota_t *q, const char *value, char *err, size_t errlen)
{
    if (value == NULL)
        value = "";
    if (strcmp(value, "fixed") == 0)
        q->algo = HL_ALGO_FIXED;
    else if (strcmp(value, "sliding") == 0)
        q->algo = HL_ALGO_SLIDING;
    else if (strcmp(value, "gcra") == 0)
        q->algo = HL_ALGO_GCRA;
    else if (strcmp(value, "log") == 0)
        q->algo = HL_ALGO_LOG;
    else
        return hl_errf(err, errlen, "unknown algo '%s' (use fixed, sliding, "
                       "gcra or log)", value);
    return 0;
}

/* Parses a cost= value (see hl_quota.h). Returns 0, or -1 with a message
 * naming value; q is written only on success. */
int hl_quota_set_cost(hl_quota_t *q, const char *value, char *err, size_t errlen)
{
    const char *name;
    size_t len;

    if (value == NULL)
        value = "";
    /* "usage" (issue 19): the body's usage, read by mod_hotlimit_usage.c. */
    if (strcmp(value, "1") == 0 || strcmp(value, "usage") == 0) {
        q->cost_name[0] = '\0';
        q->cost_usage = value[0] == 'u';
        return 0;
    }
    if (strncmp(value, "header:", 7) != 0)
        return hl_errf(err, errlen, "unknown cost '%s' (use 1, header:NAME "
                       "or usage)", value);
    name = value + 7;
    if (hl_by_check_name("cost", value, name, err, errlen) != 0)
        return -1;
    len = strlen(name);
    memcpy(q->cost_name, name, len + 1);
    q->cost_usage = 0;
    return 0;
}

/* Returns 1 for a space or a tab (optional whitespace around a header). */
static int is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* Reads a cost header's value (see hl_quota.h). Returns it, capped, or
 * `missing`. */
uint32_t hl_cost_parse_or(const char *value, uint32_t missing)
{
    size_t len;
    uint64_t v;
    int rc;

    if (value == NULL)
        return missing;
    while (is_ows(*value))
        value++;
    len = strlen(value);
    while (len > 0 && is_ows(value[len - 1]))
        len--;
    rc = hl_digits_parse(value, len, HL_COST_MAX, &v);
    if (rc == -2)
        return HL_COST_MAX;
    return rc == 0 ? (uint32_t)v : missing;
}

/* Parses a reserve= value (see hl_quota.h). Returns 0, or -1 with a
 * message naming value; q is written only on success. */
int hl_quota_set_reserve(hl_quota_t *q, const char *value, char *err,
                         size_t errlen)
{
    const char *num = value ? value : "";
    uint64_t v = HL_RESERVE_DEFAULT;
    int by_tokens = strncmp(num, "max_tokens", 10) == 0;

    if (by_tokens) {
        num += 10;
        if (*num == '\0')
            num = NULL;
        else if (*num++ != ':')
            return hl_errf(err, errlen, "bad reserve '%s' (use N, max_tokens "
                           "or max_tokens:DEFAULT)", value);
    }
    if (num && (hl_digits_parse(num, strlen(num), HL_COST_MAX, &v) != 0
                || v < 1))
        return hl_errf(err, errlen, "bad reserve '%s' (use N, max_tokens or "
                       "max_tokens:DEFAULT, numbers 1..%u)", value ? value : "",
                       (unsigned)HL_COST_MAX);
    q->reserve = (uint32_t)v;
    q->reserve_max_tokens = (uint8_t)by_tokens;
    return 0;
}

/*
 * Parses a burst value. Returns 0, or -1 with a message naming value;
 * q->burst is written only on success.
 */
static int set_burst(hl_quota_t *q, const char *value, char *err, size_t errlen)
{
    uint32_t n;
    int rc = hl_parse_count(value, strlen(value), &n);

    if (rc == -2)
        return hl_errf(err, errlen, "bad burst '%s': must be below "
                       "2147483648", value);
    if (rc != 0)
        return hl_errf(err, errlen, "bad burst '%s': must be a positive "
                       "integer", value);
    q->burst = n;
    return 0;
}

/*
 * Parses "401,403,422" (the text after "status:"; value is the whole count
 * value, quoted in messages). Returns 0 and fills statuses and *n, or -1
 * with a message in err.
 */
static int parse_status_list(const char *list, const char *value,
                             uint16_t *statuses, int *n,
                             char *err, size_t errlen)
{
    const char *p = list, *end;
    uint64_t code = 0;
    size_t len;
    int count = 0;

    for (;;) {
        end = strchr(p, ',');
        len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0)
            return hl_errf(err, errlen, "bad count '%s': empty status in the "
                           "list", value);
        if (count == HL_MAX_STATUSES)
            return hl_errf(err, errlen, "bad count '%s': more than %d "
                           "statuses", value, HL_MAX_STATUSES);
        if (hl_digits_parse(p, len, 999, &code) == -1)
            return hl_errf(err, errlen, "bad count '%s': status '%.*s' is not "
                           "a number", value, (int)len, p);
        if (hl_digits_count(p, len) != len || len > 3 || code < 100
            || code > 599)
            return hl_errf(err, errlen, "bad count '%s': status '%.*s' is not "
                           "between 100 and 599", value, (int)len, p);
        statuses[count++] = (uint16_t)code;
        if (end == NULL)
            break;
        p = end + 1;
    }
    *n = count;
    return 0;
}

/*
 * Parses a count value ("all", "failures", "status:401,403"). Returns 0, or
 * -1 with a message naming value; q is written only on success.
 */
static int set_count(hl_quota_t *q, const char *value, char *err, size_t errlen)
{
    uint16_t statuses[HL_MAX_STATUSES];
    int n = 0;

    if (strcmp(value, "all") == 0) {
        q->count = HL_COUNT_ALL;
        q->nstatuses = 0;
        return 0;
    }
    if (strcmp(value, "failures") == 0) {
        q->count = HL_COUNT_FAILURES;
        q->nstatuses = 0;
        return 0;
    }
    if (strncmp(value, "status:", 7) != 0)
        return hl_errf(err, errlen, "unknown count '%s' (use all, failures or "
                       "status:CODE,CODE...)", value);
    if (parse_status_list(value + 7, value, statuses, &n, err, errlen) != 0)
        return -1;
    q->count = HL_COUNT_STATUS;
    q->nstatuses = n;
    memcpy(q->statuses, statuses, sizeof(statuses[0]) * (size_t)n);
    return 0;
}

/*
 * Appends a window token to q. Returns 0, or -1 with a message naming tok
 * (bad window, too many windows, same length as an earlier window).
 */
static int add_window(hl_quota_t *q, const char *tok, char *err, size_t errlen)
{
    hl_window_t w;

    if (hl_parse_window(tok, &w, err, errlen) != 0
        || hl_window_check_distinct(q->windows, q->nwindows, &w, tok, err,
                                    errlen) != 0)
        return -1;
    if (q->nwindows < 0 || q->nwindows >= HL_MAX_WINDOWS)
        return hl_errf(err, errlen, "too many windows at '%s' (at most %d)",
                       tok, HL_MAX_WINDOWS);
    q->windows[q->nwindows++] = w;
    return 0;
}

/* Parses a norm= value (see hl_quota.h). Returns 0, or -1 with a message
 * naming value; q is written only on success. */
int hl_quota_set_norm(hl_quota_t *q, const char *value, char *err, size_t errlen)
{
    unsigned cc;
    int norm = hl_keyform_norm_parse(value, &cc);

    if (norm == -2)
        return hl_errf(err, errlen, "bad norm '%s': no trunk-prefix rules "
                       "for that country code (known: %s)", value,
                       hl_phone_cc_list());
    if (norm < 0)
        return hl_errf(err, errlen, "bad norm '%s' (use lower, digits, "
                       "digits:CC, email or exact)", value ? value : "");
    q->norm = (hl_norm_t)norm;
    q->norm_cc = (uint16_t)cc;
    return 0;
}

/* Parses delay=N. Returns 0, or -1 with a message naming value. */
static int set_delay(hl_quota_t *q, const char *value, char *err, size_t errlen)
{
    char *end;
    unsigned long n;

    errno = 0;
    n = strtoul(value, &end, 10);
    if (errno || end == value || *end || value[0] == '-' || n > HL_COUNT_MAX)
        return hl_errf(err, errlen, "bad delay '%s': a whole number of "
                       "requests from 0", value);
    q->delay = (uint32_t)n;
    q->has_delay = 1;
    return 0;
}

/* Returns q's GCRA burst (see hl_quota.h). Never fails. */
/*
 * Applies one token (a window or key=value). Returns 0, or -1 with a message
 * naming the bad token or value. A later by=/algo=/burst=/count= overrides
 * an earlier one.
 */
int hl_quota_apply_token(hl_quota_t *q, const char *tok, char *err, size_t errlen)
{
    const char *eq, *val;
    size_t klen;

    if (tok == NULL || tok[0] == '\0')
        return hl_errf(err, errlen, "empty token '' (expected COUNT/WINDOW or "
                       "by=, algo=, burst=, count=, cost=, norm=)");
    eq = strchr(tok, '=');
    if (eq == NULL) {
        if (strchr(tok, '/') != NULL)
            return add_window(q, tok, err, errlen);
        return hl_errf(err, errlen, "unknown token '%s' (expected COUNT/WINDOW "
                       "or by=, algo=, burst=, count=, cost=, norm=)", tok);
    }
    klen = (size_t)(eq - tok);
    val = eq + 1;
    if (!hl_span_is(tok, klen, "by") && !hl_span_is(tok, klen, "algo")
        && !hl_span_is(tok, klen, "burst") && !hl_span_is(tok, klen, "count")
        && !hl_span_is(tok, klen, "cost") && !hl_span_is(tok, klen, "norm")
        && !hl_span_is(tok, klen, "reserve") && !hl_span_is(tok, klen, "delay"))
        return hl_errf(err, errlen, "unknown key '%.*s' in '%s' (use by, algo, "
                       "burst, delay, count, cost, norm or reserve)", (int)klen,
                       tok, tok);
    if (val[0] == '\0')
        return hl_errf(err, errlen, "missing value in '%s'", tok);
    if (hl_span_is(tok, klen, "by"))
        return hl_quota_set_by(q, val, err, errlen);
    if (hl_span_is(tok, klen, "algo"))
        return hl_quota_set_algo(q, val, err, errlen);
    if (hl_span_is(tok, klen, "burst"))
        return set_burst(q, val, err, errlen);
    if (hl_span_is(tok, klen, "delay"))
        return set_delay(q, val, err, errlen);
    if (hl_span_is(tok, klen, "cost"))
        return hl_quota_set_cost(q, val, err, errlen);
    if (hl_span_is(tok, klen, "norm"))
        return hl_quota_set_norm(q, val, err, errlen);
    if (hl_span_is(tok, klen, "reserve"))
        return hl_quota_set_reserve(q, val, err, errlen);
    return set_count(q, val, err, errlen);
}

/*
 * Checks the windows of q (count and length in range, no two of the same
 * length). Returns 0, or -1 with a message in err.
 */
static int validate_windows(const hl_quota_t *q, char *err, size_t errlen)
{
    char a[32];
    int i;

    if (q->nwindows < 1)
        return hl_errf(err, errlen, "no COUNT/WINDOW given (e.g. 5/1m)");
    if (q->nwindows > HL_MAX_WINDOWS)
        return hl_errf(err, errlen, "too many windows (%d, at most %d)",
                       q->nwindows, HL_MAX_WINDOWS);
    for (i = 0; i < q->nwindows; i++) {
        const hl_window_t *w = &q->windows[i];

        if (w->count < 1 || w->count > HL_COUNT_MAX || w->window_ms < 1
            || w->window_ms > HL_MAX_WINDOW_MS)
            return hl_errf(err, errlen, "bad window '%s': count must be "
                           "1..2147483647 and length 1ms..30d",
                           hl_window_name(w, a, sizeof(a)));
        if (hl_window_check_distinct(q->windows, i, w, NULL, err, errlen) != 0)
            return -1;
    }
    return 0;
}

/*
 * Checks a filled quota. Returns 0, or -1 with a message in err.
 */
int hl_quota_validate(const hl_quota_t *q, char *err, size_t errlen)
{
    int i;

    if (validate_windows(q, err, errlen) != 0)
        return -1;
    if ((int)q->algo < HL_ALGO_FIXED || (int)q->algo > HL_ALGO_LOG)
        return hl_errf(err, errlen, "bad algo %d", (int)q->algo);
    for (i = 0; q->algo == HL_ALGO_LOG && i < q->nwindows; i++) {
        char a[32];
        if (q->windows[i].count > HL_LOG_COUNT_MAX)
            return hl_errf(err, errlen, "'%s' with algo=log: COUNT must "
                           "be at most %d (the log keeps that many times)",
                           hl_window_name(&q->windows[i], a, sizeof(a)),
                           HL_LOG_COUNT_MAX);
    }
    if (hl_quota_by_validate(q, err, errlen) != 0)
        return -1;
    if (q->norm != HL_NORM_LOWER && (q->by == HL_BY_IP || q->by == HL_BY_GLOBAL))
        return hl_errf(err, errlen, "'norm=%s' folds a key value: it needs "
                       "by=user, header:, cookie:, env:, param: or json:",
                       hl_keyform_norm_name(q->norm));
    if (q->burst != 0 && q->algo != HL_ALGO_GCRA)
        return hl_errf(err, errlen, "'burst=%u' needs algo=gcra (algo is %s)",
                       (unsigned)q->burst, hl_algo_name(q->algo));
    if (q->has_delay && q->algo != HL_ALGO_GCRA)
        return hl_errf(err, errlen, "'delay=%u' needs algo=gcra (algo is %s)",
                       (unsigned)q->delay, hl_algo_name(q->algo));
    if (q->has_delay && q->burst && q->delay > q->burst)
        return hl_errf(err, errlen, "'delay=%u' is over 'burst=%u': no "
                       "request would ever be held", (unsigned)q->delay,
                       (unsigned)q->burst);
    if (q->count == HL_COUNT_STATUS) {
        if (q->nstatuses < 1 || q->nstatuses > HL_MAX_STATUSES)
            return hl_errf(err, errlen, "'count=status:' needs 1..%d statuses",
                           HL_MAX_STATUSES);
        for (i = 0; i < q->nstatuses; i++) {
            if (q->statuses[i] < 100 || q->statuses[i] > 599)
                return hl_errf(err, errlen, "bad count status '%u': not "
                               "between 100 and 599",
                               (unsigned)q->statuses[i]);
        }
    } else if (q->count != HL_COUNT_ALL && q->count != HL_COUNT_FAILURES) {
        return hl_errf(err, errlen, "bad count %d", (int)q->count);
    }
    if (q->dry_run < -1 || q->dry_run > 1)
        return hl_errf(err, errlen, "bad dry_run %d", q->dry_run);
    if (memchr(q->cost_name, '\0', HL_BY_NAME_MAX) == NULL)
        return hl_errf(err, errlen, "'cost=header:' needs a name of 1..%d "
                       "characters", HL_BY_NAME_MAX - 1);
    if (q->cost_usage > 1 || (q->cost_usage && q->cost_name[0]))
        return hl_errf(err, errlen, "bad cost_usage %d", (int)q->cost_usage);
    if (q->reserve > 0 && !hl_quota_after_response(q))
        return hl_errf(err, errlen, "'reserve=' needs cost=header:NAME or "
                       "cost=usage (a request of cost 1 reserves 1)");
    if (q->reserve > 0 && q->algo == HL_ALGO_LOG)
        return hl_errf(err, errlen, "'reserve=' with algo=log: a sliding log "
                       "counts requests one by one (COUNT at most 64); use "
                       "fixed, sliding or gcra for a token budget");
    if (q->reserve > HL_COST_MAX || q->reserve_max_tokens > 1)
        return hl_errf(err, errlen, "bad reserve %u", (unsigned)q->reserve);
    return 0;
}

/*
 * Resets *q, applies every argv token, then validates. Returns 0, or -1 with
 * the message of the first bad token in err (q is then partly filled).
 */
int hl_quota_parse_args(hl_quota_t *q, int argc, const char *const *argv,
                        char *err, size_t errlen)
{
    int i;

    hl_quota_init(q);
    for (i = 0; i < argc && argv != NULL; i++) {
        if (hl_quota_apply_token(q, argv[i], err, errlen) != 0)
            return -1;
    }
    return hl_quota_validate(q, err, errlen);
}

/*
 * Returns 1 if status is counted by q: count=all always, count=failures for
 * status >= 400, count=status for listed statuses; 0 otherwise.
 */
int hl_quota_counts_status(const hl_quota_t *q, int status)
{
    int i;

    switch (q->count) {
    case HL_COUNT_ALL:
        return 1;
    case HL_COUNT_FAILURES:
        return status >= 400;
    case HL_COUNT_STATUS:
        for (i = 0; i < q->nstatuses && i < HL_MAX_STATUSES; i++) {
            if (q->statuses[i] == status)
                return 1;
        }
        return 0;
    }
    return 1;   /* unknown mode: counting is the safe side */
}

/* Returns the message name of algo ("fixed", ...); "?" if unknown. */
const char *hl_algo_name(hl_algo_t algo)
{
    switch (algo) {
    case HL_ALGO_FIXED:   return "fixed";
    case HL_ALGO_SLIDING: return "sliding";
    case HL_ALGO_GCRA:    return "gcra";
    case HL_ALGO_LOG:     return "log";
    }
    return "?";
}
