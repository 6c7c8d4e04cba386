/*
 * hl_quota.h - quota specifications:
 * "COUNT/WINDOW ... by= algo= burst= count= cost= norm=": the record, its
 * parsing token by token and its checks. Its rooms: windows and durations
 * in hl_window.h, the key (by=) in hl_quota_by.h, the quota written back
 * as text in hl_quota_text.h.
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
#include "hl_window.h"

#define HL_MAX_STATUSES  8     /* statuses listed by count=status:... */
#define HL_BY_NAME_MAX   64    /* header/cookie/env name, NUL included */
#define HL_ERR_MAX       256   /* size of an error message buffer */

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

/* Returns the GCRA burst the counters of q use (hl_policy_t.burst; 0 =
 * the window's count): burst=, plus the first request under delay=, where
 * burst counts the requests beyond it as nginx's does. Inline: every
 * decision reads it. */
static inline uint32_t hl_quota_burst(const hl_quota_t *q)
{
    return q->has_delay ? q->burst + 1 : q->burst;
}

/*
 * Applies one token of a HotLimitQuota line to *q: a window, or by=..., algo=...,
 * burst=N, count=all|failures|status:401,403, cost=1|header:NAME|usage,
 * reserve=N|max_tokens[:DEFAULT]. Returns 0, or -1 with a message
 * naming the bad token (unknown key or value, too many windows, ...).
 */
int hl_quota_apply_token(hl_quota_t *q, const char *tok, char *err, size_t errlen);

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

/* Returns 1 if a request that ended with HTTP status `status` is counted by q. */
int hl_quota_counts_status(const hl_quota_t *q, int status);

/* Returns the name of algo used in messages ("fixed", "gcra", ...; "?" if
 * unknown). Static string. */
const char *hl_algo_name(hl_algo_t algo);

#endif
