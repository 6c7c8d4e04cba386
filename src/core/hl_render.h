/*
 * hl_render.h - the bodies and header values of a throttled response:
 * the built-in HTML page in several languages, an administrator's template
 * with placeholders, RFC 9457 problem details, and the RateLimit header
 * values of draft-ietf-httpapi-ratelimit-headers. Uses an APR pool for
 * the strings it returns; no httpd headers.
 */
#ifndef HL_RENDER_H
#define HL_RENDER_H

#include <apr_pools.h>
#include <stdint.h>
#include "hl_fmt.h"
#include "hl_quota.h"

/* One window of the matched quota, as the headers and bodies describe it. */
typedef struct {
    const char *name;        /* policy name, e.g. "5/1m" (a window name) */
    uint32_t    limit;       /* COUNT */
    uint32_t    window_s;    /* WINDOW in whole seconds, rounded up, >= 1 */
    uint32_t    remaining;   /* requests left in it */
    int64_t     reset_s;     /* seconds until it is full again, >= 0 */
    int         violated;    /* 1 if this window rejected the request */
    int         tokens;      /* 1 if its quota has a cost= (tokens, not
                                requests: the openai/anthropic headers) */
    int64_t     reset_ms;    /* reset_s in milliseconds, >= 0 (0: not known
                                finer than reset_s) */
} hl_policy_view_t;

/*
 * Fills v[0 .. q->nwindows) with the windows of q as clients and the
 * RateLimit headers are shown them: name (names[i] when names is not NULL,
 * else hl_window_name of the window, allocated from p), limit (its COUNT)
 * window_s (its WINDOW in whole seconds, rounded up) and tokens (q has a
 * cost=); remaining, reset_s, reset_ms and violated are 0, for the caller
 * to fill from a decision.
 * Never fails.
 */
void hl_render_quota_views(apr_pool_t *p, const hl_quota_t *q,
                           const char *const *names, hl_policy_view_t *v);

/* Returns COUNT in decimal ("5"), as RateLimit-Policy's q=,
 * HOTLIMIT_LIMIT and a template's {{LIMIT}} show it; allocated from p.
 * Never NULL. */
char *hl_render_count(apr_pool_t *p, uint32_t count);

/* Everything the 429 response says. */
typedef struct {
    const char             *route;        /* matched route, e.g. "/user/login" */
    long                    retry_after;  /* seconds, >= 1 */
    int                     npolicies;
    const hl_policy_view_t *policies;
    const char             *lang;         /* from hl_negotiate_lang */
    int                     banned;       /* 1: refused because the client
                                             is banned (HotLimitBan);
                                             retry_after is the ban's time
                                             left, and policies describe the
                                             ban, not a quota */
    int                     tokens;       /* 1: the refusing quota has a
                                             cost= (a token budget) */
} hl_reject_info_t;

/*
 * Returns the code of built-in page language i (a static string), or NULL
 * when i is past the last; the first (i = 0) is "en", the fallback. The
 * languages are at least "en", "zh", "es", "fr", "de", "ar", "ja", and
 * hl_negotiate_lang chooses among exactly these. Never fails.
 */
const char *hl_render_language(size_t i);

/*
 * Returns the built-in, self-contained HTML page (no external assets,
 * <meta name="robots" content="noindex, nofollow">, lang/dir attributes,
 * how long to wait in words (hl_duration_words), a "retry" link to the same
 * page and a "home" link to "/"), in info->lang, falling back to en; a
 * banned client (info->banned) is told it is banned and for how long.
 * Allocated from p. Never NULL.
 */
char *hl_render_html(apr_pool_t *p, const hl_reject_info_t *info);

/*
 * Returns template tpl with {{RETRY_AFTER}}, {{LIMIT}}, {{WINDOW}},
 * {{ROUTE}} and {{LANG}} replaced by HTML-escaped values (LIMIT and WINDOW
 * describe the first violated policy, else the first). Unknown {{...}} are
 * left as they are. Allocated from p. Never NULL.
 */
char *hl_render_template(apr_pool_t *p, const char *tpl,
                         const hl_reject_info_t *info);

/*
 * Returns the JSON problem object: type (the IANA quota-exceeded problem
 * type), title "Too Many Requests", status 429, detail (English sentence),
 * retry_after, route, violated-policies (names of the violated windows).
 * A banned client (info->banned) is told so in detail, with the ban's
 * time left in words, and violated-policies is ["ban"] (no quota refused
 * it), with "banned":true. Strings are JSON-escaped. Allocated from p.
 * Never NULL.
 */
char *hl_render_problem_json(apr_pool_t *p, const hl_reject_info_t *info);

/*
 * Returns the RateLimit-Policy value: each policy as
 * "NAME";q=COUNT;w=SECONDS, joined by ", ". Allocated from p.
 */
char *hl_render_policy_header(apr_pool_t *p, const hl_policy_view_t *pol, int n);

/*
 * Makes the names of pol[0 .. n) distinct, in order: a name already used by
 * an earlier policy gets "-2", "-3", ... (the first free one), so that
 * RateLimit-Policy lists several quotas whose windows read alike (two
 * "5/1m" lines keyed differently) as distinct policies, with the same names
 * at every request of the same configuration. Renamed names are allocated
 * from p; the others are left as they are. Never fails.
 */
void hl_render_distinct_names(apr_pool_t *p, hl_policy_view_t *pol, int n);

/*
 * Returns the RateLimit value for the policy with the least remaining
 * (ties: the longest reset): "NAME";r=REMAINING;t=SECONDS. Allocated from p.
 */
char *hl_render_ratelimit_header(apr_pool_t *p, const hl_policy_view_t *pol, int n);

/* Returns the index of the policy that binds (hl_tightest_beats: the
 * least remaining; ties: the larger reset_s, then the first): the one
 * RateLimit describes. 0 when n <= 1 or pol is NULL. */
int hl_render_tightest(const hl_policy_view_t *pol, int n);

/* Returns the start of a RateLimit value for the policy called name,
 * "\"NAME\";r=", allocated from p (once per quota, at configuration). */
char *hl_render_ratelimit_prefix(apr_pool_t *p, const char *name);

/* Returns prefix + remaining + ";t=" + reset_s (a negative reset_s as 0),
 * allocated from p in one piece: the request path's RateLimit value. */
char *hl_render_ratelimit_value(apr_pool_t *p, const char *prefix,
                                const char *remaining, int64_t reset_s);

/* hl_render_remaining with a prefix: both texts. Never NULL. */
const char *hl_render_remaining_and_value(apr_pool_t *p, uint32_t remaining,
                                          const char *prefix,
                                          size_t prefix_len, int64_t reset_s,
                                          const char **value);

/*
 * Returns REMAINING in decimal and, when prefix (prefix_len bytes, from
 * hl_render_ratelimit_prefix) is not NULL, sets *value to the RateLimit
 * value prefix + REMAINING + ";t=" + reset_s (a negative reset_s as 0),
 * else to NULL: the two texts of a request's decision, each number
 * formatted once, in one allocation from p. Never NULL. Inline: without
 * RateLimit headers, every decision writes only the number, in place.
 */
static inline const char *hl_render_remaining(apr_pool_t *p,
                                              uint32_t remaining,
                                              const char *prefix,
                                              size_t prefix_len,
                                              int64_t reset_s,
                                              const char **value)
{
    char *out;

    if (prefix != NULL)
        return hl_render_remaining_and_value(p, remaining, prefix,
                                             prefix_len, reset_s, value);
    *value = NULL;
    out = apr_palloc(p, sizeof("4294967295"));  /* a uint32_t */
    hl_fmt_u64(out, remaining);
    return out;
}

/* Returns s with & < > " ' escaped for HTML. Allocated from p (s may be NULL: ""). */
char *hl_html_escape(apr_pool_t *p, const char *s);

/* Returns s with " \ and control characters escaped for a JSON string (no quotes added). */
char *hl_json_escape(apr_pool_t *p, const char *s);

#endif
