/*
 * hl_spool.h - HotLimitSpoolLimit's account: the bytes of request bodies
 * spooled to disk at once by the whole server, in shared memory, changed
 * with atomic operations only (no lock: every process adds and gives back
 * on its own), and the bound on its log lines.
 */
#ifndef HL_SPOOL_H
#define HL_SPOOL_H

#include <stdint.h>

#define HL_SPOOL_LOG_MS 1000   /* at most one "spool full" line a second */

/* The account, in memory every process shares (integers only). */
typedef struct {
    int64_t  bytes;       /* spooled now, every process together */
    int64_t  limit;       /* HotLimitSpoolLimit, bytes */
    uint64_t refused;     /* bodies refused for it since the start */
    int64_t  logged_ms;   /* when the last line was written; 0: never */
    uint64_t unlogged;    /* refusals since that line, not logged */
} hl_spool_t;

/* Adds n bytes to s when they fit under its limit. Returns 1 if added,
 * 0 if they would go over it (nothing added). Atomic. */
int hl_spool_charge(hl_spool_t *s, int64_t n);

/* Gives back n bytes charged before. Atomic; never below 0. */
void hl_spool_give(hl_spool_t *s, int64_t n);

/* Counts a body refused for the limit at now (ms, any monotonic clock).
 * Returns 1 if a line is to be written now (the first, then at most one
 * per HL_SPOOL_LOG_MS), with *skipped set to the refusals not logged
 * since the last line; else 0 (counted among the unlogged). Atomic. */
int hl_spool_refused(hl_spool_t *s, int64_t now, uint64_t *skipped);

#endif
