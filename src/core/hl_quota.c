/*
 * hl_quota.c - parsing and checking of quota specifications
 * ("5/1m 30/1h by=ip algo=gcra burst=10 count=failures").
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
#include "hl_phone.h"
#include "hl_fmt.h"
#include "hl_json_path.h"
#include "hl_text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HL_COUNT_MAX   2147483647u  /* COUNT and burst must be below 2^31 */
#define HL_UNITS_HINT  "(use ms, s, m, h or d)"

/* Duration units, largest first (hl_window_name relies on that order). */
static const struct {
    const char *name;
    uint32_t    ms;
} hl_units[] = {
    { "d",  86400000u },
    { "h",  3600000u },
    { "m",  60000u },
    { "s",  1000u },
    { "ms", 1u },
};
#define HL_NUNITS (sizeof(hl_units) / sizeof(hl_units[0]))

/*
 * Formats a message into err when err is non-NULL and errlen > 0 (truncated
 * to fit, always NUL-terminated). Returns -1 so callers can "return set_err()".
 */
static int set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || errlen == 0)
        return -1;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Returns 1 if c is an ASCII digit (no locale involved). */
static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/*
 * Reads the len characters at s as an unsigned decimal number (digits only:
 * no sign, no space). Returns 0 and sets *out; -1 if len is 0 or a
 * character is not a digit; -2 if the value is above cap.
 */
static int parse_digits(const char *s, size_t len, uint64_t cap, uint64_t *out)
{
    uint64_t v = 0;
    size_t i;
    int over = 0;

    if (len == 0)
        return -1;
    for (i = 0; i < len; i++) {
        if (!is_digit(s[i]))
            return -1;
        if (!over) {
            v = v * 10 + (uint64_t)(s[i] - '0');
            if (v > cap)
                over = 1;   /* keep scanning: a later non-digit wins */
        }
    }
    if (over)
        return -2;
    *out = v;
    return 0;
}

/* Returns the number of leading ASCII digits of the len characters at s. */
static size_t count_digits(const char *s, size_t len)
{
    size_t n = 0;

    while (n < len && is_digit(s[n]))
        n++;
    return n;
}

/*
 * Returns 1 if the len characters at s equal the NUL-terminated word w.
 */
static int span_is(const char *s, size_t len, const char *w)
{
    return strlen(w) == len && memcmp(s, w, len) == 0;
}

/*
 * Parses the len characters at s as a duration. `what` ("duration" or
 * "window") and `tok` (the whole token, quoted in messages) only shape the
 * error text. Returns 0 and sets *out_ms, or -1 with a message in err.
 */
static int parse_duration_span(const char *s, size_t len, uint32_t bare_unit_ms,
                               uint32_t *out_ms, const char *what,
                               const char *tok, char *err, size_t errlen)
{
    size_t ndig, ulen, i;
    const char *unit;
    uint64_t value, unit_ms = 0;
    int rc;

    if (len == 0)
        return set_err(err, errlen, "bad %s '%s': missing duration "
                       "(e.g. 30s or 1m)", what, tok);
    ndig = count_digits(s, len);
    if (ndig == 0)
        return set_err(err, errlen, "bad %s '%s': duration must start with a "
                       "positive integer (e.g. 30s or 1m)", what, tok);
    unit = s + ndig;
    ulen = len - ndig;
    if (ulen == 0) {
        if (bare_unit_ms == 0)
            return set_err(err, errlen, "bad %s '%s': missing unit "
                           HL_UNITS_HINT, what, tok);
        unit_ms = bare_unit_ms;
    } else if (unit[0] == '.' || unit[0] == ',') {
        return set_err(err, errlen, "bad %s '%s': duration must be a whole "
                       "number (e.g. 90s instead of 1.5m)", what, tok);
    } else {
        for (i = 0; i < HL_NUNITS; i++) {
            if (span_is(unit, ulen, hl_units[i].name))
                unit_ms = hl_units[i].ms;
        }
        if (unit_ms == 0)
            return set_err(err, errlen, "unknown unit in '%s' " HL_UNITS_HINT,
                           tok);
    }
    rc = parse_digits(s, ndig, HL_MAX_WINDOW_MS, &value);
    if (rc == 0 && value == 0)
        return set_err(err, errlen, "bad %s '%s': duration must be greater "
                       "than zero", what, tok);
    /* value <= 2^32 and unit_ms < 2^32: the product fits in 64 bits */
    if (rc != 0 || value * unit_ms > HL_MAX_WINDOW_MS)
        return set_err(err, errlen, "bad %s '%s': duration longer than "
                       "30 days", what, tok);
    *out_ms = (uint32_t)(value * unit_ms);
    return 0;
}

/*
 * Parses the len characters at s as a count below 2^31 and above 0.
 * Returns 0 and sets *out; -1 if not a positive integer; -2 if too big.
 */
static int parse_count_span(const char *s, size_t len, uint32_t *out)
{
    uint64_t v;
    int rc = parse_digits(s, len, HL_COUNT_MAX, &v);

    if (rc != 0)
        return rc;
    if (v == 0)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

void hl_quota_init(hl_quota_t *q)
{
    memset(q, 0, sizeof(*q));
    q->by = HL_BY_IP;
    q->algo = HL_ALGO_FIXED;
    q->count = HL_COUNT_ALL;
    q->dry_run = -1;
}

/*
 * Parses a duration string (see hl_quota.h). Returns 0, or -1 with a message
 * in err; *out_ms is written only on success.
 */
int hl_parse_duration_ms(const char *s, uint32_t bare_unit_ms,
                         uint32_t *out_ms, char *err, size_t errlen)
{
    if (s == NULL)
        return set_err(err, errlen, "bad duration '': missing duration");
    return parse_duration_span(s, strlen(s), bare_unit_ms, out_ms,
                               "duration", s, err, errlen);
}

/*
 * Parses "COUNT/WINDOW". Returns 0, or -1 with a message naming tok in err;
 * *w is written only on success.
 */
int hl_parse_window(const char *tok, hl_window_t *w, char *err, size_t errlen)
{
    const char *slash;
    uint32_t count, ms;
    int rc;

    if (tok == NULL)
        return set_err(err, errlen, "bad window '': expected COUNT/WINDOW "
                       "(e.g. 5/1m)");
    slash = strchr(tok, '/');
    if (slash == NULL)
        return set_err(err, errlen, "bad window '%s': expected COUNT/WINDOW "
                       "(e.g. 5/1m)", tok);
    if (strchr(slash + 1, '/') != NULL)
        return set_err(err, errlen, "bad window '%s': more than one '/'", tok);
    rc = parse_count_span(tok, (size_t)(slash - tok), &count);
    if (rc == -2)
        return set_err(err, errlen, "bad window '%s': count must be below "
                       "2147483648", tok);
    if (rc != 0)
        return set_err(err, errlen, "bad window '%s': count must be a "
                       "positive integer", tok);
    if (parse_duration_span(slash + 1, strlen(slash + 1), 0, &ms, "window",
                            tok, err, errlen) != 0)
        return -1;
    w->count = count;
    w->window_ms = ms;
    return 0;
}

/*
 * Checks the header/cookie/variable name after "what=...:" (value is the
 * whole value, quoted in messages): 1..HL_BY_NAME_MAX-1 token characters.
 * Returns 0, or -1 with a message in err.
 */
static int check_name(const char *what, const char *value, const char *name,
                      char *err, size_t errlen)
{
    size_t i, len = strlen(name);

    if (len == 0)
        return set_err(err, errlen, "bad %s '%s': empty name after ':'", what,
                       value);
    if (len >= HL_BY_NAME_MAX)
        return set_err(err, errlen, "bad %s '%s': name longer than %d "
                       "characters", what, value, HL_BY_NAME_MAX - 1);
    for (i = 0; i < len; i++) {
        if (!hl_is_tchar(name[i]))
            return set_err(err, errlen, "bad %s '%s': a name may contain only "
                           "letters, digits and !#$%%&'*+-.^_`|~", what, value);
    }
    return 0;
}

/* Checks the path of "json:PATH" (value is the whole value, quoted in
 * messages): see hl_json_path_check. Returns 0, or -1 with a message. */
static int check_json_path(const char *value, const char *path, char *err,
                           size_t errlen)
{
    if (hl_json_path_check(path) == 0)
        return 0;
    return set_err(err, errlen, "bad by '%s': a JSON path is 1 to %d letters, "
                   "digits, '_' or '-', with dots between non-empty names "
                   "(user.email)", value, HL_JSON_PATH_MAX);
}

/* Sets a by= that takes no name. Returns 0. */
static int set_plain_by(hl_quota_t *q, hl_by_t by)
{
    q->by = by;
    q->by_name[0] = '\0';
    q->by_user = by == HL_BY_USER;
    q->by_nparts = 0;
    q->by_join = 0;
    return 0;
}

/*
 * Parses one key kind (value, no combination) into *by and name
 * (HL_BY_NAME_MAX bytes). Returns 0, or -1 with a message naming value.
 */
static int parse_by_one(const char *value, hl_by_t *by, char *name, char *err,
                        size_t errlen)
{
    static const struct {
        const char *word;
        hl_by_t     by;
        int         named;
    } kinds[] = {
        { "ip", HL_BY_IP, 0 },          { "global", HL_BY_GLOBAL, 0 },
        { "user", HL_BY_USER, 0 },      { "header:", HL_BY_HEADER, 1 },
        { "cookie:", HL_BY_COOKIE, 1 }, { "env:", HL_BY_ENV, 1 },
        { "param:", HL_BY_PARAM, 1 },   { "json:", HL_BY_JSON, 1 },
    };
    const char *rest;
    size_t i, len;

    for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        len = strlen(kinds[i].word);
        if (kinds[i].named ? strncmp(value, kinds[i].word, len) != 0
                           : strcmp(value, kinds[i].word) != 0)
            continue;
        *by = kinds[i].by;
        name[0] = '\0';
        if (!kinds[i].named)
            return 0;
        rest = value + len;
        if (*by == HL_BY_JSON ? check_json_path(value, rest, err, errlen) != 0
                              : check_name("by", value, rest, err, errlen) != 0)
            return -1;
        memcpy(name, rest, strlen(rest) + 1);
        return 0;
    }
    return set_err(err, errlen, "unknown by '%s' (use ip, global, user, "
                   "header:NAME, cookie:NAME, env:NAME, param:NAME or "
                   "json:PATH, or A|B, A+B of these)", value);
}

/*
 * Parses the parts of a combination value (join '|' or '+') into parts
 * (HL_BY_PARTS_MAX). Returns their number, or -1 with a message naming
 * the bad part.
 */
static int parse_by_parts(const char *value, char join, hl_by_part_t *parts,
                          char *err, size_t errlen)
{
    char tok[HL_BY_NAME_MAX + 16];
    const char *p = value, *end;
    int n = 0, i;

    for (;;) {
        end = strchr(p, join);
        if (!end)
            end = p + strlen(p);
        if (end == p)
            return set_err(err, errlen, "bad by '%s': an empty part around "
                           "'%c'", value, join);
        if (n == HL_BY_PARTS_MAX)
            return set_err(err, errlen, "bad by '%s': more than %d parts",
                           value, HL_BY_PARTS_MAX);
        if ((size_t)(end - p) >= sizeof(tok))
            return set_err(err, errlen, "bad by '%s': part '%.*s...' too "
                           "long", value, 16, p);
        memcpy(tok, p, (size_t)(end - p));
        tok[end - p] = '\0';
        if (parse_by_one(tok, &parts[n].by, parts[n].name, err, errlen) != 0)
            return -1;
        if (parts[n].by == HL_BY_GLOBAL)
            return set_err(err, errlen, "bad by '%s': 'global' is one bucket "
                           "for everyone and cannot be combined", value);
        for (i = 0; i < n; i++)
            if (parts[i].by == parts[n].by
                && strcmp(parts[i].name, parts[n].name) == 0)
                return set_err(err, errlen, "bad by '%s': '%s' named twice",
                               value, tok);
        if (join == HL_BY_JOIN_FIRST && n > 0
            && parts[n - 1].by == HL_BY_IP)
            return set_err(err, errlen, "bad by '%s': 'ip' is always present, "
                           "so '%s' after it is never used (ip goes last, "
                           "or not at all: it is the fall-back)", value, tok);
        ++n;
        if (*end == '\0')
            return n;
        p = end + 1;
    }
}

/*
 * Parses a "by" value (see hl_quota.h). Returns 0, or -1 with a message
 * naming value; q's key is written only on success.
 */
int hl_quota_set_by(hl_quota_t *q, const char *value, char *err, size_t errlen)
{
    hl_by_part_t parts[HL_BY_PARTS_MAX];
    const char *bar, *plus;
    char join;
    int n, i;

    if (value == NULL)
        value = "";
    bar = strchr(value, HL_BY_JOIN_FIRST);
    plus = strchr(value, HL_BY_JOIN_ALL);
    if (bar && plus)
        return set_err(err, errlen, "bad by '%s': use A|B (the first "
                       "present) or A+B (together), not both", value);
    if (!bar && !plus) {
        if (parse_by_one(value, &parts[0].by, parts[0].name, err, errlen) != 0)
            return -1;
        set_plain_by(q, parts[0].by);
        memcpy(q->by_name, parts[0].name, strlen(parts[0].name) + 1);
        return 0;
    }
    join = bar ? HL_BY_JOIN_FIRST : HL_BY_JOIN_ALL;
    if ((n = parse_by_parts(value, join, parts, err, errlen)) < 0)
        return -1;
    set_plain_by(q, HL_BY_PARTS);
    q->by_join = (uint8_t)join;
    q->by_nparts = (uint8_t)n;
    for (i = 0; i < n; i++) {
        q->by_parts[i] = parts[i];
        q->by_user |= parts[i].by == HL_BY_USER;
    }
    return 0;
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
        return set_err(err, errlen, "unknown algo '%s' (use fixed, sliding, "
                       "gcra or log)", value);
    return 0;
}

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
        return set_err(err, errlen, "unknown cost '%s' (use 1, header:NAME "
                       "or usage)", value);
    name = value + 7;
    if (check_name("cost", value, name, err, errlen) != 0)
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
    rc = parse_digits(value, len, HL_COST_MAX, &v);
    if (rc == -2)
        return HL_COST_MAX;
    return rc == 0 ? (uint32_t)v : missing;
}

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
            return set_err(err, errlen, "bad reserve '%s' (use N, max_tokens "
                           "or max_tokens:DEFAULT)", value);
    }
    if (num && (parse_digits(num, strlen(num), HL_COST_MAX, &v) != 0 || v < 1))
        return set_err(err, errlen, "bad reserve '%s' (use N, max_tokens or "
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
    int rc = parse_count_span(value, strlen(value), &n);

    if (rc == -2)
        return set_err(err, errlen, "bad burst '%s': must be below "
                       "2147483648", value);
    if (rc != 0)
        return set_err(err, errlen, "bad burst '%s': must be a positive "
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
            return set_err(err, errlen, "bad count '%s': empty status in the "
                           "list", value);
        if (count == HL_MAX_STATUSES)
            return set_err(err, errlen, "bad count '%s': more than %d "
                           "statuses", value, HL_MAX_STATUSES);
        if (parse_digits(p, len, 999, &code) == -1)
            return set_err(err, errlen, "bad count '%s': status '%.*s' is not "
                           "a number", value, (int)len, p);
        if (count_digits(p, len) != len || len > 3 || code < 100 || code > 599)
            return set_err(err, errlen, "bad count '%s': status '%.*s' is not "
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
        return set_err(err, errlen, "unknown count '%s' (use all, failures or "
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
        return set_err(err, errlen, "too many windows at '%s' (at most %d)",
                       tok, HL_MAX_WINDOWS);
    q->windows[q->nwindows++] = w;
    return 0;
}

int hl_window_check_distinct(const hl_window_t *earlier, int n,
                             const hl_window_t *w, const char *name,
                             char *err, size_t errlen)
{
    char own[32], other[32];
    int i;

    for (i = 0; i < n && i < HL_MAX_WINDOWS; i++) {
        if (earlier[i].window_ms == w->window_ms)
            return set_err(err, errlen, "duplicate window '%s': '%s' already "
                           "has the same length",
                           name != NULL ? name : hl_window_name(w, own, sizeof(own)),
                           hl_window_name(&earlier[i], other, sizeof(other)));
    }
    return 0;
}

/*
 * Applies one token (a window or key=value). Returns 0, or -1 with a message
 * naming the bad token or value. A later by=/algo=/burst=/count= overrides
 * an earlier one.
 */
int hl_quota_set_norm(hl_quota_t *q, const char *value, char *err, size_t errlen)
{
    unsigned cc;
    int norm = hl_keyform_norm_parse(value, &cc);

    if (norm == -2)
        return set_err(err, errlen, "bad norm '%s': no trunk-prefix rules "
                       "for that country code (known: %s)", value,
                       hl_phone_cc_list());
    if (norm < 0)
        return set_err(err, errlen, "bad norm '%s' (use lower, digits, "
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
        return set_err(err, errlen, "bad delay '%s': a whole number of "
                       "requests from 0", value);
    q->delay = (uint32_t)n;
    q->has_delay = 1;
    return 0;
}

uint32_t hl_quota_burst(const hl_quota_t *q)
{
    return q->has_delay ? q->burst + 1 : q->burst;
}

int hl_quota_apply_token(hl_quota_t *q, const char *tok, char *err, size_t errlen)
{
    const char *eq, *val;
    size_t klen;

    if (tok == NULL || tok[0] == '\0')
        return set_err(err, errlen, "empty token '' (expected COUNT/WINDOW or "
                       "by=, algo=, burst=, count=, cost=, norm=)");
    eq = strchr(tok, '=');
    if (eq == NULL) {
        if (strchr(tok, '/') != NULL)
            return add_window(q, tok, err, errlen);
        return set_err(err, errlen, "unknown token '%s' (expected COUNT/WINDOW "
                       "or by=, algo=, burst=, count=, cost=, norm=)", tok);
    }
    klen = (size_t)(eq - tok);
    val = eq + 1;
    if (!span_is(tok, klen, "by") && !span_is(tok, klen, "algo")
        && !span_is(tok, klen, "burst") && !span_is(tok, klen, "count")
        && !span_is(tok, klen, "cost") && !span_is(tok, klen, "norm")
        && !span_is(tok, klen, "reserve") && !span_is(tok, klen, "delay"))
        return set_err(err, errlen, "unknown key '%.*s' in '%s' (use by, algo, "
                       "burst, delay, count, cost, norm or reserve)", (int)klen,
                       tok, tok);
    if (val[0] == '\0')
        return set_err(err, errlen, "missing value in '%s'", tok);
    if (span_is(tok, klen, "by"))
        return hl_quota_set_by(q, val, err, errlen);
    if (span_is(tok, klen, "algo"))
        return hl_quota_set_algo(q, val, err, errlen);
    if (span_is(tok, klen, "burst"))
        return set_burst(q, val, err, errlen);
    if (span_is(tok, klen, "delay"))
        return set_delay(q, val, err, errlen);
    if (span_is(tok, klen, "cost"))
        return hl_quota_set_cost(q, val, err, errlen);
    if (span_is(tok, klen, "norm"))
        return hl_quota_set_norm(q, val, err, errlen);
    if (span_is(tok, klen, "reserve"))
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
        return set_err(err, errlen, "no COUNT/WINDOW given (e.g. 5/1m)");
    if (q->nwindows > HL_MAX_WINDOWS)
        return set_err(err, errlen, "too many windows (%d, at most %d)",
                       q->nwindows, HL_MAX_WINDOWS);
    for (i = 0; i < q->nwindows; i++) {
        const hl_window_t *w = &q->windows[i];

        if (w->count < 1 || w->count > HL_COUNT_MAX || w->window_ms < 1
            || w->window_ms > HL_MAX_WINDOW_MS)
            return set_err(err, errlen, "bad window '%s': count must be "
                           "1..2147483647 and length 1ms..30d",
                           hl_window_name(w, a, sizeof(a)));
        if (hl_window_check_distinct(q->windows, i, w, NULL, err, errlen) != 0)
            return -1;
    }
    return 0;
}

/*
 * Checks the parts of a combined key (by=A|B, A+B) of q. Returns 0, or -1
 * with a message in err.
 */
static int validate_parts(const hl_quota_t *q, char *err, size_t errlen)
{
    int i;

    if (q->by != HL_BY_PARTS)
        return 0;
    if (q->by_nparts < 2 || q->by_nparts > HL_BY_PARTS_MAX
        || (q->by_join != HL_BY_JOIN_FIRST && q->by_join != HL_BY_JOIN_ALL))
        return set_err(err, errlen, "bad by: %d parts joined by '%c'",
                       (int)q->by_nparts, q->by_join ? q->by_join : '?');
    for (i = 0; i < q->by_nparts; i++) {
        const hl_by_part_t *p = &q->by_parts[i];

        if ((int)p->by < HL_BY_IP || (int)p->by > HL_BY_JSON
            || p->by == HL_BY_GLOBAL
            || memchr(p->name, '\0', HL_BY_NAME_MAX) == NULL
            || (p->by >= HL_BY_HEADER && p->name[0] == '\0')
            || (p->by == HL_BY_JSON && hl_json_path_check(p->name) != 0))
            return set_err(err, errlen, "bad by: part %d", i + 1);
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
        return set_err(err, errlen, "bad algo %d", (int)q->algo);
    for (i = 0; q->algo == HL_ALGO_LOG && i < q->nwindows; i++) {
        char a[32];
        if (q->windows[i].count > HL_LOG_COUNT_MAX)
            return set_err(err, errlen, "'%s' with algo=log: COUNT must "
                           "be at most %d (the log keeps that many times)",
                           hl_window_name(&q->windows[i], a, sizeof(a)),
                           HL_LOG_COUNT_MAX);
    }
    if (validate_parts(q, err, errlen) != 0)
        return -1;
    if (q->norm != HL_NORM_LOWER && (q->by == HL_BY_IP || q->by == HL_BY_GLOBAL))
        return set_err(err, errlen, "'norm=%s' folds a key value: it needs "
                       "by=user, header:, cookie:, env:, param: or json:",
                       hl_keyform_norm_name(q->norm));
    if (q->burst != 0 && q->algo != HL_ALGO_GCRA)
        return set_err(err, errlen, "'burst=%u' needs algo=gcra (algo is %s)",
                       (unsigned)q->burst, hl_algo_name(q->algo));
    if (q->has_delay && q->algo != HL_ALGO_GCRA)
        return set_err(err, errlen, "'delay=%u' needs algo=gcra (algo is %s)",
                       (unsigned)q->delay, hl_algo_name(q->algo));
    if (q->has_delay && q->burst && q->delay > q->burst)
        return set_err(err, errlen, "'delay=%u' is over 'burst=%u': no "
                       "request would ever be held", (unsigned)q->delay,
                       (unsigned)q->burst);
    if ((int)q->by < HL_BY_IP || (int)q->by > HL_BY_PARTS)
        return set_err(err, errlen, "bad by %d", (int)q->by);
    if (q->by >= HL_BY_HEADER && q->by <= HL_BY_JSON
        && (q->by_name[0] == '\0'
            || memchr(q->by_name, '\0', HL_BY_NAME_MAX) == NULL))
        return set_err(err, errlen, "'by=%s' needs a name of 1..%d characters",
                       hl_by_name(q->by), HL_BY_NAME_MAX - 1);
    if (q->by == HL_BY_JSON && hl_json_path_check(q->by_name) != 0)
        return set_err(err, errlen, "'by=json:' needs a JSON path");
    if (q->count == HL_COUNT_STATUS) {
        if (q->nstatuses < 1 || q->nstatuses > HL_MAX_STATUSES)
            return set_err(err, errlen, "'count=status:' needs 1..%d statuses",
                           HL_MAX_STATUSES);
        for (i = 0; i < q->nstatuses; i++) {
            if (q->statuses[i] < 100 || q->statuses[i] > 599)
                return set_err(err, errlen, "bad count status '%u': not "
                               "between 100 and 599",
                               (unsigned)q->statuses[i]);
        }
    } else if (q->count != HL_COUNT_ALL && q->count != HL_COUNT_FAILURES) {
        return set_err(err, errlen, "bad count %d", (int)q->count);
    }
    if (q->dry_run < -1 || q->dry_run > 1)
        return set_err(err, errlen, "bad dry_run %d", q->dry_run);
    if (memchr(q->cost_name, '\0', HL_BY_NAME_MAX) == NULL)
        return set_err(err, errlen, "'cost=header:' needs a name of 1..%d "
                       "characters", HL_BY_NAME_MAX - 1);
    if (q->cost_usage > 1 || (q->cost_usage && q->cost_name[0]))
        return set_err(err, errlen, "bad cost_usage %d", (int)q->cost_usage);
    if (q->reserve > 0 && !hl_quota_after_response(q))
        return set_err(err, errlen, "'reserve=' needs cost=header:NAME or "
                       "cost=usage (a request of cost 1 reserves 1)");
    if (q->reserve > 0 && q->algo == HL_ALGO_LOG)
        return set_err(err, errlen, "'reserve=' with algo=log: a sliding log "
                       "counts requests one by one (COUNT at most 64); use "
                       "fixed, sliding or gcra for a token budget");
    if (q->reserve > HL_COST_MAX || q->reserve_max_tokens > 1)
        return set_err(err, errlen, "bad reserve %u", (unsigned)q->reserve);
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
 * Writes "COUNT/NUNIT" with the largest unit dividing the window exactly.
 * Returns buf; NULL-safe and truncating (nothing written when buflen is 0).
 */
char *hl_window_name(const hl_window_t *w, char *buf, size_t buflen)
{
    size_t i;

    if (buf == NULL || buflen == 0)
        return buf;
    for (i = 0; i < HL_NUNITS; i++) {
        if (w->window_ms != 0 && w->window_ms % hl_units[i].ms == 0)
            break;
    }
    if (i == HL_NUNITS)   /* window_ms == 0: invalid, still printable */
        i = HL_NUNITS - 1;
    {
        /* "COUNT/N" + unit, built by hand: this runs on every request. */
        char tmp[2 * HL_FMT_U64_MAX + 8];
        size_t n = hl_fmt_u64(tmp, w->count), ulen = strlen(hl_units[i].name);

        tmp[n++] = '/';
        n += hl_fmt_u64(tmp + n, w->window_ms / hl_units[i].ms);
        memcpy(tmp + n, hl_units[i].name, ulen + 1);
        n += ulen;
        if (n >= buflen)
            n = buflen - 1;
        memcpy(buf, tmp, n);
        buf[n] = '\0';
    }
    return buf;
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

/* Returns the message name of by ("ip", "header", ...); "?" if unknown. */
/* Appends the formatted text to buf (len bytes of buflen used so far);
 * returns the new length, at most buflen - 1. */
static size_t describe_add(char *buf, size_t buflen, size_t len,
                           const char *fmt, ...)
{
    va_list ap;
    int n;

    if (len + 1 >= buflen)
        return len;
    va_start(ap, fmt);
    n = vsnprintf(buf + len, buflen - len, fmt, ap);
    va_end(ap);
    if (n < 0)
        return len;
    return (size_t)n >= buflen - len ? buflen - 1 : len + (size_t)n;
}

/* Appends the windows of q ("5/1m 30/1h") to buf at len (describe_add).
 * Returns the new length. */
static size_t describe_windows(const hl_quota_t *q, char *buf, size_t buflen,
                               size_t len)
{
    char name[48];
    int i;

    for (i = 0; i < q->nwindows && i < HL_MAX_WINDOWS; ++i)
        len = describe_add(buf, buflen, len, "%s%s", i ? " " : "",
                           hl_window_name(&q->windows[i], name, sizeof(name)));
    return len;
}

char *hl_quota_windows(const hl_quota_t *q, char *buf, size_t buflen)
{
    if (buflen == 0)
        return buf;
    buf[0] = '\0';
    describe_windows(q, buf, buflen, 0);
    return buf;
}

char *hl_quota_describe(const hl_quota_t *q, char *buf, size_t buflen)
{
    size_t len;
    int i;

    if (buflen == 0)
        return buf;
    buf[0] = '\0';
    len = describe_windows(q, buf, buflen, 0);
    len = describe_add(buf, buflen, len, "%sby=", len ? " " : "");
    if (len < buflen - 1)
        hl_quota_by_text(q, buf + len, buflen - len);
    len += strlen(buf + len);
    if (q->algo != HL_ALGO_FIXED)
        len = describe_add(buf, buflen, len, " algo=%s", hl_algo_name(q->algo));
    if (q->burst)
        len = describe_add(buf, buflen, len, " burst=%u", (unsigned)q->burst);
    if (q->has_delay)
        len = describe_add(buf, buflen, len, " delay=%u", (unsigned)q->delay);
    if (q->count == HL_COUNT_FAILURES)
        len = describe_add(buf, buflen, len, " count=failures");
    else if (q->count == HL_COUNT_STATUS) {
        len = describe_add(buf, buflen, len, " count=status:");
        for (i = 0; i < q->nstatuses && i < HL_MAX_STATUSES; ++i)
            len = describe_add(buf, buflen, len, "%s%u", i ? "," : "",
                               (unsigned)q->statuses[i]);
    }
    if (q->concurrency)
        len = describe_add(buf, buflen, len, " concurrency=%u",
                           (unsigned)q->concurrency);
    if (q->dry_run == 1)
        describe_add(buf, buflen, len, " dry-run");
    return buf;
}

/* Appends one key kind (by, name) to buf (len bytes in use) as by= says
 * it. Returns the new length (describe_add's). */
static size_t by_add(char *buf, size_t buflen, size_t len, hl_by_t by,
                     const char *name)
{
    return describe_add(buf, buflen, len, "%s%s%.*s", hl_by_name(by),
                        by >= HL_BY_HEADER ? ":" : "",
                        by >= HL_BY_HEADER ? HL_BY_NAME_MAX - 1 : 0, name);
}

char *hl_quota_by_text(const hl_quota_t *q, char *buf, size_t buflen)
{
    size_t len = 0;
    int i;

    if (buflen == 0)
        return buf;
    buf[0] = '\0';
    if (q->by != HL_BY_PARTS) {
        by_add(buf, buflen, 0, q->by, q->by_name);
        return buf;
    }
    for (i = 0; i < q->by_nparts && i < HL_BY_PARTS_MAX; i++) {
        if (i)
            len = describe_add(buf, buflen, len, "%c", q->by_join);
        len = by_add(buf, buflen, len, q->by_parts[i].by,
                     q->by_parts[i].name);
    }
    return buf;
}

/* Returns 1 if key kind by names an account (see hl_quota_keys_account). */
static int names_account(hl_by_t by)
{
    return by == HL_BY_USER || by == HL_BY_HEADER || by == HL_BY_COOKIE
           || by == HL_BY_PARAM || by == HL_BY_JSON;
}

int hl_quota_keys_account(const hl_quota_t *q)
{
    int i;

    if (q->by != HL_BY_PARTS)
        return names_account(q->by);
    for (i = 0; i < q->by_nparts && i < HL_BY_PARTS_MAX; i++)
        if (names_account(q->by_parts[i].by))
            return 1;
    return 0;
}

int hl_quota_keys_by(const hl_quota_t *q, hl_by_t by)
{
    int i;

    if (q->by != HL_BY_PARTS)
        return q->by == by;
    for (i = 0; i < q->by_nparts && i < HL_BY_PARTS_MAX; i++)
        if (q->by_parts[i].by == by)
            return 1;
    return 0;
}

const char *hl_by_name(hl_by_t by)
{
    switch (by) {
    case HL_BY_IP:     return "ip";
    case HL_BY_GLOBAL: return "global";
    case HL_BY_USER:   return "user";
    case HL_BY_HEADER: return "header";
    case HL_BY_COOKIE: return "cookie";
    case HL_BY_ENV:    return "env";
    case HL_BY_PARAM:  return "param";
    case HL_BY_JSON:   return "json";
    case HL_BY_PARTS:  return "parts";
    }
    return "?";
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
