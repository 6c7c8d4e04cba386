/*
 * hl_quota.h - quota specifications:
 * "COUNT/WINDOW ... by= algo= burst= count= cost= norm=".
 *
 * Pure core: no httpd headers, no allocation. An hl_quota_t holds no pointers,
 * so it can be copied into shared memory as it is (the published quota table
 * does exactly that).
 */
#ifndef HL_QUOTA_H
#define HL_QUOTA_H

#include <stddef.h>
#include <stdint.h>
#include "hl_keyform.h"

#define HL_MAX_WINDOWS   4     /* windows per quota, e.g. "5/1m 30/1h" */
#define HL_MAX_STATUSES  8     /* statuses listed by count=status:... */
#define HL_BY_NAME_MAX   64    /* header/cookie/env name, NUL included */
#define HL_ERR_MAX       256   /* size of an error message buffer */
#define HL_MAX_WINDOW_MS 2592000000u /* 30 days: the largest window accepted */

typedef enum {
    HL_BY_IP = 0,   /* r->useragent_ip, IPv6 grouped by prefix */
    HL_BY_GLOBAL,   /* one bucket for every client */
    HL_BY_USER,     /* REMOTE_USER */
    HL_BY_HEADER,   /* header:NAME */
    HL_BY_COOKIE,   /* cookie:NAME */
    HL_BY_ENV,      /* env:NAME */
    HL_BY_PARAM,    /* param:NAME, $_REQUEST[NAME] as PHP reads it */
    HL_BY_JSON,     /* json:PATH, a JSON body's value (hl_json_path.h) */
    HL_BY_PARTS     /* by=A|B or by=A+B: by_parts (by_join) */
} hl_by_t;

#define HL_BY_PARTS_MAX  4     /* parts of by=A|B|... or by=A+B+... */
#define HL_BY_JOIN_FIRST '|'   /* by=A|B: the first part the request has */
#define HL_BY_JOIN_ALL   '+'   /* by=A+B: every part together */

/* One part of a by= combination: a key kind but global and parts. */
typedef struct {
    hl_by_t by;
    char    name[HL_BY_NAME_MAX];        /* as hl_quota_t's by_name */
} hl_by_part_t;

typedef enum {
    HL_ALGO_FIXED = 0,  /* window starts at a key's first hit */
    HL_ALGO_SLIDING,    /* sliding-window counter */
    HL_ALGO_GCRA,       /* generic cell rate (token bucket) */
    HL_ALGO_LOG         /* exact sliding log, COUNT <= HL_LOG_COUNT_MAX
                           (issue 20) */
} hl_algo_t;

typedef enum {
    HL_COUNT_ALL = 0,   /* every admitted request */
    HL_COUNT_FAILURES,  /* admitted requests whose final status >= 400 */
    HL_COUNT_STATUS     /* admitted requests whose final status is listed */
} hl_count_t;

typedef struct {
    uint32_t count;      /* requests admitted per window, >= 1 */
    uint32_t window_ms;  /* window length in milliseconds, >= 1 */
} hl_window_t;

typedef struct {
    int         nwindows;                 /* 1..HL_MAX_WINDOWS */
    hl_window_t windows[HL_MAX_WINDOWS];
    hl_by_t     by;
    char        by_name[HL_BY_NAME_MAX];  /* for header:/cookie:/env:/param:,
                                             json:'s path, else "" */
    hl_algo_t   algo;
    uint32_t    burst;                    /* gcra burst; 0 = use the window's count */
    uint8_t     has_delay;                /* delay= given (nginx limit_req's
                                             delay=): burst then counts the
                                             requests beyond the first */
    uint32_t    delay;                    /* delay=N: over the rate, the first
                                             N pass at once, the next are held */
    hl_count_t  count;
    int         nstatuses;
    uint16_t    statuses[HL_MAX_STATUSES];
    int         dry_run;                  /* -1 unset, 0 off, 1 on (table entries) */
    char        cost_name[HL_BY_NAME_MAX]; /* cost=header:NAME: the response
                                             header whose integer the request
                                             is charged, after the response;
                                             "" = cost 1 (default) */
    hl_norm_t   norm;                     /* norm=: how a non-ip key value
                                             is folded (HL_NORM_LOWER) */
    uint16_t    norm_cc;                  /* norm=digits:CC: CC, else 0 */
    /* cost=usage (issue 19): 1 = the request is charged the tokens its
     * answer reports in its body (hl_usage.h), after the response. */
    uint8_t     cost_usage;
    uint32_t    concurrency;              /* a table entry's "concurrency"
                                             (HotLimitConcurrency, by its
                                             by= and norm=), 0: none */
    /* reserve= (issue 19): what a cost= request takes at admission,
     * settled to its real cost after the response. 0 = none (the cost is
     * only charged after the response); with reserve_max_tokens, the
     * default used when the body names no max_tokens. */
    uint32_t    reserve;
    uint8_t     reserve_max_tokens;
    /* by=A|B and by=A+B (issue 26 item 4/7): by is HL_BY_PARTS, by_name
     * is "", and the parts are here in the order written. */
    uint8_t     by_user;                  /* 1: REMOTE_USER is the key or a
                                             part of it (decided at fixups) */
    uint8_t     by_join;                  /* HL_BY_JOIN_FIRST or _ALL */
    uint8_t     by_nparts;                /* 2..HL_BY_PARTS_MAX */
    hl_by_part_t by_parts[HL_BY_PARTS_MAX];
} hl_quota_t;

#define HL_COST_MAX 2147483647u   /* a cost header's value is capped here */

/* Sets *q to an empty quota (no windows, by=ip, algo=fixed, count=all, dry_run -1). */
void hl_quota_init(hl_quota_t *q);

/*
 * Parses a duration: "500ms", "10s", "1m", "2h", "1d", or a bare number of
 * seconds when bare_unit_ms is nonzero (bare numbers are then multiplied by
 * bare_unit_ms; pass 0 to refuse bare numbers).
 * Returns 0 and sets *out_ms; on failure returns -1 and writes a message
 * naming the bad token into err (errlen bytes, may be 0). Zero, negative,
 * overflowing or over-30-day durations fail.
 */
/* Returns the GCRA burst the counters of q use (hl_policy_t.burst; 0 =
 * the window's count): burst=, plus the first request under delay=, where
 * burst counts the requests beyond it as nginx's does. */
uint32_t hl_quota_burst(const hl_quota_t *q);

int hl_parse_duration_ms(const char *s, uint32_t bare_unit_ms,
                         uint32_t *out_ms, char *err, size_t errlen);

/*
 * Parses "COUNT/WINDOW" ("5/1m", "10/60s", "3/500ms"). COUNT must be a
 * positive integer below 2^31. Returns 0, or -1 with a message in err.
 */
int hl_parse_window(const char *tok, hl_window_t *w, char *err, size_t errlen);

/*
 * Applies one token of a HotLimitQuota line to *q: a window, or by=..., algo=...,
 * burst=N, count=all|failures|status:401,403, cost=1|header:NAME|usage,
 * reserve=N|max_tokens[:DEFAULT]. Returns 0, or -1 with a message
 * naming the bad token (unknown key or value, too many windows, ...).
 */
int hl_quota_apply_token(hl_quota_t *q, const char *tok, char *err, size_t errlen);

/*
 * Parses "by" values alone ("ip", "global", "user", "header:NAME", ...),
 * as used by the JSON table, and their combinations: "A|B|..." (the first
 * part present; "ip" only last, where it adds nothing) and "A+B+..."
 * (every part together), at most HL_BY_PARTS_MAX parts, no part twice,
 * no "global" and no mix of '|' and '+'. Returns 0, or -1 with a message
 * in err naming the bad part.
 */
int hl_quota_set_by(hl_quota_t *q, const char *value, char *err, size_t errlen);

/*
 * Parses a "cost" value: "1" (the default: each request costs 1),
 * "header:NAME" (NAME a header token of 1..HL_BY_NAME_MAX-1 characters) or
 * "usage" (the tokens the answer's body reports). Returns 0, or -1 with a
 * message naming value; q->cost_name and q->cost_usage are written only on
 * success.
 */
int hl_quota_set_cost(hl_quota_t *q, const char *value, char *err, size_t errlen);

/*
 * Reads a cost header's value: a whole decimal number, surrounding spaces
 * and tabs allowed. Returns it, capped at HL_COST_MAX; returns `missing`
 * when value is NULL, empty, negative or not a whole number (a missing or
 * invalid header charges 1, or under reserve= the reservation). Reads only.
 */
uint32_t hl_cost_parse_or(const char *value, uint32_t missing);

/* Returns 1 if q is counted after the response (cost=header: or
 * cost=usage, with any count=), 0 if it is counted at the decision (cost 1,
 * any count=). */
static inline int hl_quota_after_response(const hl_quota_t *q)
{
    return q->cost_name[0] != '\0' || q->cost_usage;
}

/*
 * Parses a reserve= value (also the JSON table's "reserve"): a whole
 * number 1..HL_COST_MAX, or "max_tokens" / "max_tokens:DEFAULT" (DEFAULT
 * 1..HL_COST_MAX, 1024 when omitted). Returns 0, or -1 with a message
 * naming value; q is written only on success.
 */
int hl_quota_set_reserve(hl_quota_t *q, const char *value, char *err,
                         size_t errlen);

#define HL_RESERVE_DEFAULT 1024u  /* reserve=max_tokens without :DEFAULT */

/* Returns 1 if q takes a reservation at admission (a cost= quota with
 * reserve=), else 0. */
static inline int hl_quota_reserves(const hl_quota_t *q)
{
    return q->reserve > 0 && hl_quota_after_response(q);
}

/* Returns 1 if q takes its unit at the decision and gives it back when
 * the final status is not one it counts (count=failures|status at cost
 * 1: exact under concurrency), else 0. */
static inline int hl_quota_refunds(const hl_quota_t *q)
{
    return q->count != HL_COUNT_ALL && q->cost_name[0] == '\0'
           && !q->cost_usage;
}

/* Parses a norm= value ("lower", "digits", "email", "exact"), as the
 * JSON table's "norm" too. Returns 0, or -1 with a message naming value. */
int hl_quota_set_norm(hl_quota_t *q, const char *value, char *err, size_t errlen);

#define HL_LOG_COUNT_MAX 64   /* algo=log: entries one log keeps */

/* Parses an algo name ("fixed", "sliding", "gcra", "log"). Returns 0, or -1 + err. */
int hl_quota_set_algo(hl_quota_t *q, const char *value, char *err, size_t errlen);

/*
 * Checks a filled quota: at least one window, burst only with gcra or >= 1.
 * Returns 0, or -1 with a message in err.
 */
int hl_quota_validate(const hl_quota_t *q, char *err, size_t errlen);

/*
 * Parses a whole token list (argc/argv as httpd hands them) into *q and
 * validates it. Returns 0, or -1 with a message naming the bad token.
 */
int hl_quota_parse_args(hl_quota_t *q, int argc, const char *const *argv,
                        char *err, size_t errlen);

/*
 * Writes a short, stable name of a window ("5/1m", "10/60s", "3/500ms") into
 * buf, choosing the largest unit that divides the window exactly.
 * Returns buf (always NUL-terminated when buflen > 0).
 */
char *hl_window_name(const hl_window_t *w, char *buf, size_t buflen);

/*
 * Checks that no window among earlier[0..n) has the length of w (n is
 * clamped to 0..HL_MAX_WINDOWS). Returns 0, or -1 with "duplicate window
 * 'NAME': 'OTHER' already has the same length" in err, NAME being name
 * (the window as written) or, when name is NULL, hl_window_name(w).
 * Reads only; err may be NULL.
 */
int hl_window_check_distinct(const hl_window_t *earlier, int n,
                             const hl_window_t *w, const char *name,
                             char *err, size_t errlen);

/* Returns 1 if a request that ended with HTTP status `status` is counted by q. */
int hl_quota_counts_status(const hl_quota_t *q, int status);

/*
 * Writes q as a quota line would say it into buf: its windows, then by=
 * (always), and algo=, burst=, count= and dry-run only when not the
 * default ("5/1m 30/1h by=ip", "10/1s by=header:X-Key algo=gcra
 * burst=20"). Returns buf, always NUL-terminated when buflen > 0 (cut
 * short when buf is too small). Reads only.
 */
char *hl_quota_describe(const hl_quota_t *q, char *buf, size_t buflen);

/* Writes the windows of q alone into buf ("5/1m 30/1h"), as
 * hl_quota_describe begins. Returns buf, NUL-terminated when buflen > 0
 * (cut short when buf is too small). Reads only. */
char *hl_quota_windows(const hl_quota_t *q, char *buf, size_t buflen);

/* Writes q's by= value as a quota line says it into buf ("ip",
 * "header:X-Key", "header:Authorization|header:x-api-key", "ip+param:log").
 * Returns buf, NUL-terminated when buflen > 0 (cut short when too small). */
char *hl_quota_by_text(const hl_quota_t *q, char *buf, size_t buflen);

/* Returns 1 if q's key names an account (user, header:, cookie:, param:,
 * json:; a part of a combination too), so that a device cookie can be
 * bound to it; 0 for the address, global, env: keys. Reads only. */
int hl_quota_keys_account(const hl_quota_t *q);

/* Returns 1 if q's key, or a part of it, is of kind by, else 0. */
int hl_quota_keys_by(const hl_quota_t *q, hl_by_t by);

/* Returns the names used in messages: "ip", "fixed", "failures", ... (static). */
const char *hl_by_name(hl_by_t by);
const char *hl_algo_name(hl_algo_t algo);

#endif
