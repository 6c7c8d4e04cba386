/*
 * hl_shape.c - a refusal in the shapes LLM providers' clients read (see
 * hl_shape.h). The bodies say in English which limit refused and how long
 * to wait in words (hl_duration_words), because SDKs show error.message to the
 * developer as it is; the header values are the providers' own formats.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <apr_strings.h>
#include "hl_shape.h"
#include "hl_tightest.h"
#include "hl_duration.h"

/* Returns the first violated policy of info, else the first, else NULL. */
static const hl_policy_view_t *refusing(const hl_reject_info_t *info)
{
    int i;

    for (i = 0; info->policies != NULL && i < info->npolicies; i++)
        if (info->policies[i].violated)
            return &info->policies[i];
    return info->policies != NULL && info->npolicies > 0 ? &info->policies[0]
                                                         : NULL;
}

char *hl_shape_message(apr_pool_t *p, const hl_reject_info_t *info)
{
    long retry = info->retry_after < 1 ? 1 : info->retry_after;
    const char *words = hl_duration_words(p, "en", retry);
    const hl_policy_view_t *pol = refusing(info);

    if (info->banned)
        return apr_pstrcat(p, "This client is banned for ", words,
                           " after too many refused requests. Please try "
                           "again in ", words, ".", NULL);
    return apr_pstrcat(p, "Rate limit reached for ",
                       info->route && *info->route ? info->route : "this route",
                       " on ", info->tokens ? "tokens" : "requests",
                       pol && pol->name ? " (" : "",
                       pol && pol->name ? pol->name : "",
                       pol && pol->name ? ")" : "",
                       ". Please try again in ", words, ".", NULL);
}

char *hl_shape_openai_json(apr_pool_t *p, const hl_reject_info_t *info)
{
    return apr_pstrcat(p, "{\"error\":{\"message\":\"",
                       hl_json_escape(p, hl_shape_message(p, info)),
                       "\",\"type\":\"", info->tokens ? "tokens" : "requests",
                       "\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}",
                       NULL);
}

char *hl_shape_anthropic_json(apr_pool_t *p, const hl_reject_info_t *info)
{
    return apr_pstrcat(p, "{\"type\":\"error\",\"error\":{\"type\":"
                       "\"rate_limit_error\",\"message\":\"",
                       hl_json_escape(p, hl_shape_message(p, info)), "\"}}",
                       NULL);
}

size_t hl_shape_duration(char *out, int64_t ms)
{
    long long h, m, s, frac;
    size_t n = 0;
    int k;

    if (ms <= 0)
        return (size_t)snprintf(out, HL_SHAPE_TEXT_MAX, "0s");
    if (ms < 1000)
        return (size_t)snprintf(out, HL_SHAPE_TEXT_MAX, "%lldms", (long long)ms);
    h = ms / 3600000;
    m = ms / 60000 % 60;
    s = ms / 1000 % 60;
    frac = ms % 1000;
    if (h > 0)
        n += (size_t)snprintf(out + n, HL_SHAPE_TEXT_MAX - n, "%lldh", h);
    if (h > 0 || m > 0)
        n += (size_t)snprintf(out + n, HL_SHAPE_TEXT_MAX - n, "%lldm", m);
    n += (size_t)snprintf(out + n, HL_SHAPE_TEXT_MAX - n, "%lld", s);
    if (frac > 0) {
        /* ".5", ".25", ".125": the milliseconds without trailing zeros */
        char digits[4];
        snprintf(digits, sizeof(digits), "%03lld", frac);
        for (k = 2; digits[k] == '0'; k--)
            digits[k] = '\0';
        n += (size_t)snprintf(out + n, HL_SHAPE_TEXT_MAX - n, ".%s", digits);
    }
    n += (size_t)snprintf(out + n, HL_SHAPE_TEXT_MAX - n, "s");
    return n;
}

size_t hl_shape_time(char *out, int64_t unix_ms)
{
    time_t t = (time_t)((unix_ms + 999) / 1000);
    struct tm tm;

    out[0] = '\0';
    if (unix_ms < 0 || gmtime_r(&t, &tm) == NULL)
        return 0;
    return strftime(out, HL_SHAPE_TEXT_MAX, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int64_t hl_shape_reset_ms(const hl_policy_view_t *v)
{
    if (v->reset_ms > 0)
        return v->reset_ms;
    return v->reset_s > 0 ? v->reset_s * 1000 : 0;
}

int hl_shape_pick(const hl_policy_view_t *v, int n, int tokens)
{
    int i, best = -1;

    for (i = 0; v != NULL && i < n; i++) {
        if ((v[i].tokens != 0) != (tokens != 0))
            continue;
        if (best < 0 || hl_tightest_beats(v[i].remaining, hl_shape_reset_ms(&v[i]),
                                          v[best].remaining,
                                          hl_shape_reset_ms(&v[best])))
            best = i;
    }
    return best;
}
