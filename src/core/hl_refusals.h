/*
 * hl_refusals.h - refusals counted per key, for the status page's "who is
 * hurting me" ranking (issue 21): a small fixed table in shared memory of
 * the keys refused lately, each with its refusals in the current and the
 * previous minute and in all, and the route that refused it last.
 *
 * Bounded: HL_REFUSALS_ENTRIES entries, found by open addressing over
 * HL_REFUSALS_PROBES places. A key that finds neither its entry nor a free
 * one takes the place of the probed entry with the fewest refusals now
 * (one quiet for two minutes has none), so a flooding key always gets an
 * entry and a key refused once does not keep one.
 *
 * Lock-free, like hl_stats.h: an entry is claimed by a compare-and-swap of
 * its hash, filled in, then published; counts are atomic additions into
 * cells holding their minute in the high 32 bits. A reader copies an entry
 * and checks its hash did not change meanwhile (copy_entry in
 * hl_refusals.c). Pure: no
 * httpd; time passed in as now_ms (the monotonic clock).
 */
#ifndef HL_REFUSALS_H
#define HL_REFUSALS_H

#include <stddef.h>
#include <stdint.h>

#define HL_REFUSALS_ENTRIES  256   /* keys tracked; a power of two */
#define HL_REFUSALS_PROBES   8     /* places a key may take */
#define HL_REFUSALS_KEY_MAX  72    /* bytes of key kept, NUL included */
#define HL_REFUSALS_ROUTE_MAX 88   /* bytes of route kept, NUL included */
#define HL_REFUSALS_MINUTE_MS 60000
#define HL_REFUSALS_SECONDS  8     /* ring of refusals per second */
#define HL_REFUSALS_RATE_S   5     /* seconds the rate "now" averages */

typedef struct {
    uint64_t hash;                 /* 0: free; never changes while kept */
    uint64_t minutes[2];           /* [minute % 2]: minute << 32 | count */
    uint64_t total;                /* refusals since the entry was taken */
    char     key[HL_REFUSALS_KEY_MAX];
    char     route[HL_REFUSALS_ROUTE_MAX];   /* the route that refused it last */
} hl_refusal_entry_t;

typedef struct {
    hl_refusal_entry_t entries[HL_REFUSALS_ENTRIES];
    uint64_t seconds[HL_REFUSALS_SECONDS];  /* every key's refusals:
                                               [second % 8]: second << 32
                                               | count */
} hl_refusals_t;

/* A key's refusals as the status page ranks them. */
typedef struct {
    char     key[HL_REFUSALS_KEY_MAX];
    char     route[HL_REFUSALS_ROUTE_MAX];
    uint32_t now;       /* in this minute and the one before */
    uint64_t total;
} hl_refusal_rank_t;

/* Adds one to *cell, a count of period number `period` (period << 32 |
 * count; the ring cells of hl_stats.h and of this file): a cell of another
 * period restarts at 1, a full count stays full. Lock-free. */
void hl_cell_add(uint64_t *cell, uint32_t period);

/*
 * Counts one refusal of key (key_len bytes; a longer key than
 * HL_REFUSALS_KEY_MAX - 1 is cut) by route (route_len bytes, 0: up to its
 * NUL; NULL: "(banned)", a ban refused it) at now_ms. Never fails (a key that loses a race for an entry
 * is not counted this time).
 */
void hl_refusals_add(hl_refusals_t *rf, const char *key, size_t key_len,
                     const char *route, size_t route_len, int64_t now_ms);

/*
 * Fills out[0 .. max) with the keys refused most in this minute and the one
 * before, most first (ties: most in all), only keys with at least one
 * refusal then and for which keep (may be NULL: all) returns 1. Returns how
 * many were filled. rf may be the live table or a copy. Never fails.
 */
int hl_refusals_rank(const hl_refusals_t *rf, int64_t now_ms,
                     int (*keep)(const char *key, size_t len, void *baton),
                     void *baton, hl_refusal_rank_t *out, int max);

/* Returns the refusals of every key in the HL_REFUSALS_RATE_S whole
 * seconds before the one of now_ms (divide by HL_REFUSALS_RATE_S for a
 * rate). Never fails. */
uint64_t hl_refusals_recent(const hl_refusals_t *rf, int64_t now_ms);

/* Returns the refusals now (this minute and the one before) of key
 * (key_len bytes) in rf, 0 if it has no entry. Never fails. */
uint32_t hl_refusals_of(const hl_refusals_t *rf, const char *key,
                        size_t key_len, int64_t now_ms);

/* Forgets key (key_len bytes): its entry is freed. Returns 1 if it had
 * one. */
int hl_refusals_forget(hl_refusals_t *rf, const char *key, size_t key_len);

#endif
