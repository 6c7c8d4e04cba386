/*
 * hl_breaker.h - the circuit breaker in front of a remote store, in shared
 * memory: pointer-free, lock-free (atomic operations), safe across threads
 * and processes. Closed, every request uses the store. After a failure it
 * opens for a growing, jittered backoff; when that is over one request at a
 * time probes the store, and its success closes the breaker again. A probe
 * older than the caller's stale limit belongs to a process that died in it
 * (killed, crashed) and is taken over, so the breaker never stays open for
 * good. Times are the caller's monotonic milliseconds (now).
 */
#ifndef HL_BREAKER_H
#define HL_BREAKER_H

#include <stdint.h>

#define HL_BREAKER_BACKOFF_MIN_MS 250
#define HL_BREAKER_BACKOFF_MAX_MS 5000

typedef struct {
    int64_t  open_until_ms;   /* 0: closed */
    uint32_t failures;        /* in a row */
    uint32_t probing;         /* 1: a request is probing the store */
    int64_t  probe_ms;        /* when that probe began */
    uint32_t down;            /* 1: an outage was reported */
    uint32_t max_ms;          /* the longest backoff; 0: BACKOFF_MAX_MS */
} hl_breaker_t;

/* Sets the longest backoff of b to max_ms (0: HL_BREAKER_BACKOFF_MAX_MS;
 * shorter backoffs are cut to it too). For tests only: the module sets it
 * from HOTLIMIT_TEST_BREAKER_MAX_MS, so that a test waits out a short
 * backoff, not 5 s. */
void hl_breaker_set_max(hl_breaker_t *b, uint32_t max_ms);

/* Returns 1 if a request may use the store at now (it may then be the
 * probe), 0 if it must decide without it. stale_ms: the age after which a
 * probe is taken over (longer than any round trip can last). */
int hl_breaker_may_try(hl_breaker_t *b, int64_t now, int64_t stale_ms);

/* Records a failed round trip at now and opens the breaker for the n-th
 * backoff in a row (250 ms doubling to 5 s, or to max_ms) scaled by jitter_pct (80..120).
 * Returns 1 if this failure starts an outage (to be logged once), else 0. */
int hl_breaker_failed(hl_breaker_t *b, int64_t now, int jitter_pct);

/* Records a round trip that worked and closes the breaker. Returns 1 if
 * this ends an outage (to be logged once), else 0. */
int hl_breaker_succeeded(hl_breaker_t *b);

/* Returns 1 if the breaker is closed (the store is in use). */
int hl_breaker_is_closed(const hl_breaker_t *b);

#endif
