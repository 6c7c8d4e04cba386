/*
 * hl_log.c - the sliding log of algo=log: see hl_log.h.
 *
 * Entries are kept as 32-bit ms offsets after the oldest one (a window is
 * at most 30 days, below 2^32 ms); every operation decodes them into 64-bit
 * times, works on those, and encodes them back (at most HL_LOG_MAX, so a
 * few hundred bytes on the stack and O(HL_LOG_MAX) per request). A record
 * that is corrupt (n too large) reads as empty.
 */
#include <string.h>
#include "hl_log.h"

/* Returns the policy's COUNT, clamped to 1 .. HL_LOG_MAX. */
static uint32_t limit_of(const hl_policy_t *p)
{
    if (p->limit == 0)
        return 1;
    return p->limit > HL_LOG_MAX ? HL_LOG_MAX : p->limit;
}

/* Returns the policy's window in ms, reading an invalid 0 as 1. */
static int64_t window_of(const hl_policy_t *p)
{
    return p->window_ms ? (int64_t)p->window_ms : 1;
}

/* Decodes *l into ts (HL_LOG_MAX entries); returns the count. */
static uint32_t decode(const hl_log_t *l, int64_t *ts)
{
    uint32_t i, n = l->n <= HL_LOG_MAX ? l->n : 0;

    for (i = 0; i < n; ++i)
        ts[i] = l->base + (int64_t)l->off[i];
    return n;
}

/* Encodes ts[0 .. n) (ascending) into *l, keeping only the newest
 * HL_LOG_MAX; an offset too large for 32 bits is capped (later, so the
 * entry only weighs longer). */
static void encode(hl_log_t *l, const int64_t *ts, uint32_t n)
{
    uint32_t i, from = n > HL_LOG_MAX ? n - HL_LOG_MAX : 0;

    l->n = n - from;
    l->base = l->n > 0 ? ts[from] : 0;
    for (i = 0; i < l->n; ++i) {
        int64_t d = ts[from + i] - l->base;
        l->off[i] = d > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)d;
    }
    for (; i < HL_LOG_MAX; ++i)
        l->off[i] = 0;
}

/* Drops from ts[0 .. n) the entries that left the window by now (t +
 * window <= now); returns the new count. */
static uint32_t prune(int64_t *ts, uint32_t n, int64_t window, int64_t now)
{
    uint32_t gone = 0;

    while (gone < n && ts[gone] + window <= now)
        ++gone;
    if (gone > 0)
        memmove(ts, ts + gone, (size_t)(n - gone) * sizeof(*ts));
    return n - gone;
}

void hl_log_check(hl_log_t *l, const hl_policy_t *p, int64_t now_ms,
                  hl_verdict_t *v)
{
    int64_t ts[HL_LOG_MAX] = {0}, window = window_of(p);
    uint32_t limit = limit_of(p), n = decode(l, ts);

    n = prune(ts, n, window, now_ms);
    encode(l, ts, n);
    if (n < limit) {
        v->admit = 1;
        v->remaining = limit - n - 1;
        v->reset_ms = window;          /* this request is the newest */
        v->retry_ms = 0;
        return;
    }
    v->admit = 0;
    v->remaining = 0;
    /* One more fits once n - limit + 1 have left: the (n - limit)th. */
    v->retry_ms = ts[n - limit] + window - now_ms;
    if (v->retry_ms < 1)
        v->retry_ms = 1;
    v->reset_ms = ts[n - 1] + window - now_ms;
    if (v->reset_ms < v->retry_ms)
        v->reset_ms = v->retry_ms;
}

void hl_log_commit_n(hl_log_t *l, const hl_policy_t *p, int64_t now_ms,
                     uint32_t n)
{
    int64_t ts[2 * HL_LOG_MAX] = {0};
    uint32_t k = decode(l, ts), at, add = n > HL_LOG_MAX ? HL_LOG_MAX : n, i;

    k = prune(ts, k, window_of(p), now_ms);
    /* In order: after every entry at or before now (one stepped back
     * stays where it was). */
    at = k;
    while (at > 0 && ts[at - 1] > now_ms)
        --at;
    memmove(ts + at + add, ts + at, (size_t)(k - at) * sizeof(*ts));
    for (i = 0; i < add; ++i)
        ts[at + i] = now_ms;
    encode(l, ts, k + add);
}

int64_t hl_log_mark(int64_t now_ms)
{
    return now_ms != 0 ? now_ms : 1;
}

int hl_log_refund(hl_log_t *l, const hl_policy_t *p, int64_t now_ms,
                  int64_t mark)
{
    int64_t ts[HL_LOG_MAX] = {0};
    uint32_t n = decode(l, ts), i;

    n = prune(ts, n, window_of(p), now_ms);
    for (i = n; i > 0; --i) {
        if (ts[i - 1] == mark) {
            memmove(ts + i - 1, ts + i, (size_t)(n - i) * sizeof(*ts));
            encode(l, ts, n - 1);
            return 1;
        }
    }
    encode(l, ts, n);
    return 0;
}

void hl_log_follow(hl_log_t *l, const hl_policy_t *p, int64_t now_ms,
                   const hl_verdict_t *v, uint32_t n)
{
    int64_t ts[HL_LOG_MAX] = {0}, window = window_of(p);
    int64_t reset = v->reset_ms < 0 ? 0 : v->reset_ms;
    uint32_t limit = limit_of(p), used, i;

    if (!v->admit)
        used = limit;
    else
        used = v->remaining < limit ? limit - v->remaining - 1 : 0;
    if (reset > window)
        reset = window;
    /* An admission's reset counts that request: the others are older, but
     * no older than this, so placing them here is the safe side. */
    for (i = 0; i < used; ++i)
        ts[i] = now_ms + reset - window;
    if (reset == 0)
        used = 0;
    encode(l, ts, used);
    hl_log_commit_n(l, p, now_ms, n);
}

int64_t hl_log_expires_ms(const hl_log_t *l, const hl_policy_t *p)
{
    if (l->n == 0 || l->n > HL_LOG_MAX)
        return 0;
    return l->base + (int64_t)l->off[l->n - 1] + window_of(p);
}

uint32_t hl_log_length(const hl_log_t *l)
{
    return l->n <= HL_LOG_MAX ? l->n : 0;
}

void hl_log_rebase(hl_log_t *l, int64_t delta_ms, int64_t now_ms)
{
    int64_t ts[HL_LOG_MAX] = {0};
    uint32_t n = decode(l, ts), i;

    for (i = 0; i < n; ++i) {
        ts[i] += delta_ms;
        if (ts[i] > now_ms)
            ts[i] = now_ms;
    }
    encode(l, ts, n);
}
