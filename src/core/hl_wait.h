/*
 * hl_wait.h - the requests the server holds instead of refusing them:
 * HotLimitConcurrency ... queue= (in line for a key's slot, first come
 * first served) and HotLimitQuota ... delay= (held until they conform).
 *
 * One record per waiting request: the key it waits for (a concurrency
 * key's hash, odd; HL_WAIT_HOLD for a delay= hold, which has no line),
 * its ticket (seq, increasing: the order of arrival) and the holder
 * process (pid and start time, so a process that dies while its requests
 * wait leaves no one blocking a line: hl_wait_reap).
 *
 * The whole table is bounded twice: by HL_WAIT_MAX records, and by the
 * caller's total (HotLimitMaxWaiting); a key's line by its queue=.
 *
 * Pure: no locks (the caller holds one around every call), no
 * allocation, integers only (it lives in shared memory).
 */
#ifndef HL_WAIT_H
#define HL_WAIT_H

#include <stdint.h>

#include "hl_conc.h"

#define HL_WAIT_MAX   1024       /* records: the most requests held at once */
#define HL_WAIT_HOLD  2u         /* the key of a delay= hold (even: no line) */

/* One waiting request. seq 0: an empty record. */
typedef struct {
    uint64_t key;
    uint64_t seq;
    uint64_t start;
    int32_t  pid;
    uint32_t pad;
} hl_wait_rec_t;

typedef struct {
    uint64_t      next_seq;      /* the last ticket given */
    uint32_t      used;          /* records in use */
    uint32_t      pad;
    hl_wait_rec_t rec[HL_WAIT_MAX];
} hl_wait_table_t;

/* Why hl_wait_join said no. */
#define HL_WAIT_LINE_FULL   1    /* the key's line holds queue_max already */
#define HL_WAIT_SERVER_FULL 2    /* total_max (or HL_WAIT_MAX) are held */

/*
 * Puts a request of holder me at the end of key's line. queue_max: the
 * most of key's records at once (0: no bound, for holds); total_max: the
 * most records of the whole table. Returns its ticket (> 0), or 0 with
 * *why set to HL_WAIT_LINE_FULL or HL_WAIT_SERVER_FULL (nothing joined).
 */
uint64_t hl_wait_join(hl_wait_table_t *t, uint64_t key,
                      const hl_conc_holder_t *me, uint32_t queue_max,
                      uint32_t total_max, int *why);

/* Returns how many of key's records came before ticket seq (0: first in
 * line; a ticket not in the table counts every record of key). */
uint32_t hl_wait_ahead(const hl_wait_table_t *t, uint64_t key, uint64_t seq);

/* Returns how many requests wait for key. */
uint32_t hl_wait_count(const hl_wait_table_t *t, uint64_t key);

/* Removes ticket seq. Returns 1, or 0 when it was not there (reaped). */
int hl_wait_leave(hl_wait_table_t *t, uint64_t seq);

/* Removes the records of holders alive says are gone. Returns how many. */
uint32_t hl_wait_reap(hl_wait_table_t *t, hl_conc_alive_fn alive, void *ctx);

#endif
