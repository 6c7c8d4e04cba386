/*
 * hl_core_calls.h - for unit tests of the core: the one-unit and default
 * forms of calls the module only makes in their general form, kept here so
 * that production headers offer what production uses. Header-only, like
 * hl_limiter_calls.h; include after the core headers it names.
 */
#ifndef HL_CORE_CALLS_H
#define HL_CORE_CALLS_H

#include <string.h>
#include "hl_bucket.h"
#include "hl_hash.h"
#include "hl_quota.h"
#include "hl_stats.h"

/* Counts one admitted request in *b at now_ms: hl_bucket_commit_n of 1. */
static inline void hl_bucket_commit(hl_bucket_t *b, const hl_policy_t *p,
                                    int64_t now_ms)
{
    hl_bucket_commit_n(b, p, now_ms, 1);
}

/* Gives back one unit committed when *b had mark: hl_bucket_refund_n of
 * 1. Returns 1 if given back, 0 when gone. */
static inline int hl_bucket_refund(hl_bucket_t *b, const hl_policy_t *p,
                                   int64_t now_ms, int64_t mark)
{
    return hl_bucket_refund_n(b, p, now_ms, mark, 1) > 0;
}

/* Reads a cost header's value as a quota without reserve= does: 1 when
 * missing or invalid (hl_cost_parse_or). */
static inline uint32_t hl_cost_parse(const char *value)
{
    return hl_cost_parse_or(value, 1);
}

/* Empties *st. */
static inline void hl_stats_clear(hl_stats_t *st)
{
    memset(st, 0, sizeof(*st));
}

/* Feeds len bytes at data to a hash state (hl_hash64_begin) and returns
 * the new state. */
static inline uint64_t hl_hash64_more(uint64_t state, const void *data,
                                      size_t len)
{
    const unsigned char *p = data;
    size_t i;

    for (i = 0; i < len; i++)
        state = hl_hash64_byte(state, p[i]);
    return state;
}

#endif
