/*
 * mod_hotlimit_shape.c - the rate-limit headers of LLM providers' APIs on
 * a limited route's responses (HotLimitHeaders openai, anthropic), and
 * retry-after-ms on its 429s: what the OpenAI and Anthropic SDKs,
 * LangChain and dashboards read. Called only when HotLimitHeaders names a
 * provider, so HotLimitHeaders Off and draft cost nothing here. The values
 * are rendered by the core (hl_shape.h).
 */
#include "httpd.h"
#include "http_config.h"
#include "apr_strings.h"
#include "apr_time.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_respond.h"
#include "mod_hotlimit_shape.h"
#include "hl_shape.h"
#include "hl_clock.h"

/* One provider's header names for one class (requests or tokens). */
typedef struct {
    const char *limit, *remaining, *reset;
} hl_shape_names_t;

static const hl_shape_names_t openai_names[2] = {
    { "x-ratelimit-limit-requests", "x-ratelimit-remaining-requests",
      "x-ratelimit-reset-requests" },
    { "x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens",
      "x-ratelimit-reset-tokens" },
};

static const hl_shape_names_t anthropic_names[2] = {
    { "anthropic-ratelimit-requests-limit", "anthropic-ratelimit-requests-remaining",
      "anthropic-ratelimit-requests-reset" },
    { "anthropic-ratelimit-tokens-limit", "anthropic-ratelimit-tokens-remaining",
      "anthropic-ratelimit-tokens-reset" },
};

/* Sets the three headers names of policy v, its reset written as reset
 * (already rendered). */
static void put_three(request_rec *r, const hl_shape_names_t *names,
                      const hl_policy_view_t *v, const char *reset)
{
    apr_table_setn(r->err_headers_out, names->limit,
                   apr_psprintf(r->pool, "%u", (unsigned)v->limit));
    apr_table_setn(r->err_headers_out, names->remaining,
                   apr_psprintf(r->pool, "%u", (unsigned)v->remaining));
    apr_table_setn(r->err_headers_out, names->reset, reset);
}

void hl_shape_put_headers(request_rec *r, const hl_match_t *all, int n,
                          unsigned formats)
{
    hl_policy_view_t *v = apr_palloc(r->pool, sizeof(*v) * HL_MAX_WINDOWS
                                              * (size_t)(n > 0 ? n : 1));
    int64_t now_ms = hl_now_ms();
    char text[HL_SHAPE_TEXT_MAX];
    int i, count = 0, tokens, best;

    for (i = 0; i < n; ++i) {
        int w = all[i].item.quota->nwindows;

        memcpy(v + count, hl_respond_views(r, &all[i]), sizeof(*v) * (size_t)w);
        count += w;
    }
    for (tokens = 0; tokens <= 1; ++tokens) {
        if ((best = hl_shape_pick(v, count, tokens)) < 0)
            continue;
        if (formats & HL_HEADERS_OPENAI) {
            hl_shape_duration(text, hl_shape_reset_ms(&v[best]));
            put_three(r, &openai_names[tokens], &v[best],
                      apr_pstrdup(r->pool, text));
        }
        if (formats & HL_HEADERS_ANTHROPIC) {
            hl_shape_time(text, now_ms + hl_shape_reset_ms(&v[best]));
            put_three(r, &anthropic_names[tokens], &v[best],
                      apr_pstrdup(r->pool, text));
        }
    }
}

void hl_shape_put_retry_ms(request_rec *r, const hl_match_t *m)
{
    const hl_decision_t *d = &m->item.decision;
    int64_t ms = (int64_t)(d->retry_after_s > 0 ? d->retry_after_s : 1) * 1000;
    int64_t refusing = 0;
    int i;

    /* Retry-After is rounded up to whole seconds; the refusing windows
     * know the milliseconds. Never later than Retry-After, which may be
     * shorter than a window's wait (an estimate of when reserved units
     * settle, a concurrency slot). */
    for (i = 0; i < d->nwindows && i < HL_MAX_WINDOWS; ++i)
        if (!d->windows[i].admit && d->windows[i].retry_ms > refusing)
            refusing = d->windows[i].retry_ms;
    if (refusing > 0 && refusing < ms)
        ms = refusing;
    apr_table_setn(r->err_headers_out, "retry-after-ms",
                   apr_psprintf(r->pool, "%" APR_INT64_T_FMT, ms));
}
