/*
 * hl_conc.h - HotLimitConcurrency's table of slot holders: how many
 * requests of one key are in flight, and which process holds them.
 *
 * One record per (key, holder process): the key's hash, the holder's pid
 * and start time, and how many slots it holds. A key's in-flight count is
 * the sum over its records. Records live in an open-addressing table with
 * linear probing from the key's home (so every record of one key lies in
 * the run that starts there) and backward-shift deletion (no tombstones).
 *
 * A process that dies holding slots (SIGKILL, crash) never gives them
 * back itself: when a key is at its limit, the records of its other
 * holders are checked with the caller's liveness test (at most once per
 * HL_CONC_CHECK_MS per record) and those of dead processes are dropped.
 * The start time tells a pid reused by a new process from the old one.
 *
 * Per-scope figures (limit, in flight, admitted, refused) for the status
 * page are kept beside the records, in HL_CONC_SCOPES entries.
 *
 * Pure: no locks (the caller holds one around every call), no allocation;
 * time passed in as now (monotonic ms). Integers only: it lives in shared
 * memory.
 */
#ifndef HL_CONC_H
#define HL_CONC_H

#include <stddef.h>
#include <stdint.h>

#define HL_CONC_MAGIC     0x686c6363u   /* "hlcc" */
#define HL_CONC_SCOPES    64            /* scopes with figures */
#define HL_CONC_NAME_MAX  96            /* a scope's name, NUL included */
#define HL_CONC_CHECK_MS  500           /* a holder is tested at most this often */
#define HL_CONC_NO_SCOPE  0xffffu
#define HL_CONC_LIMIT_MAX 100000        /* the largest N accepted */
#define HL_CONC_LOG_MS    1000          /* refusals logged per scope at most this often */

/* Who holds slots: a process, told apart from a later one with its pid. */
typedef struct {
    int32_t  pid;
    uint64_t start;        /* process start time (any unit), 0 unknown */
} hl_conc_holder_t;

/* One holder's slots of one key. key 0: an empty record. */
typedef struct {
    uint64_t key;
    uint64_t start;
    int64_t  checked_ms;   /* when its liveness was last tested */
    int32_t  pid;
    uint32_t count;
    uint16_t scope;        /* index in scopes[], HL_CONC_NO_SCOPE */
    uint16_t pad[3];
} hl_conc_rec_t;

/* One scope's figures. hash 0: an unused entry. */
typedef struct {
    uint64_t hash;
    uint64_t admitted;
    uint64_t refused;
    uint32_t limit;
    uint32_t in_flight;
    uint32_t table;        /* 1: a table rule's, 0: a directive's */
    uint32_t unlogged;     /* refusals not logged since logged_ms */
    int64_t  logged_ms;    /* when a refusal was last logged, 0 never */
    uint32_t avg_ms;       /* moving estimate of how long a slot is held */
    uint32_t samples;      /* slots given back since the scope was made */
    char     name[HL_CONC_NAME_MAX];
} hl_conc_scope_t;

typedef struct {
    uint32_t        magic;
    uint32_t        capacity;     /* records */
    uint32_t        used;         /* records in use */
    uint32_t        pad;
    int64_t         reaped_ms;    /* the caller's: when it last reaped */
    hl_conc_scope_t scopes[HL_CONC_SCOPES];
    hl_conc_rec_t   rec[];        /* capacity of them */
} hl_conc_table_t;

/* Returns 1 if the holder is alive, 0 if it is gone; ctx is the caller's. */
typedef int (*hl_conc_alive_fn)(int32_t pid, uint64_t start, void *ctx);

/* Returns the bytes a table of capacity records takes. */
size_t hl_conc_size(uint32_t capacity);

/* Lays an empty table of capacity records over mem (hl_conc_size bytes).
 * Returns it; never fails. */
hl_conc_table_t *hl_conc_init(void *mem, uint32_t capacity);

/*
 * Returns the index of the scope named name (hash: its hash, non-zero;
 * table: 1 for a table rule's), created with limit when absent, its limit
 * updated when present; or
 * HL_CONC_NO_SCOPE when all HL_CONC_SCOPES entries are taken (the key is
 * still limited, without figures).
 */
unsigned hl_conc_scope(hl_conc_table_t *t, uint64_t hash, const char *name,
                       int table, uint32_t limit);

/*
 * Takes one slot of key (non-zero hash) for holder me, at most limit in
 * flight, noted under scope (an index from hl_conc_scope). At the limit,
 * first drops the records of key's other holders that alive says are
 * gone (each tested at most once per HL_CONC_CHECK_MS). Returns 1 taken,
 * 0 refused (limit reached: counted as refused in scope), -1 when the
 * table has no free record (nothing taken; the caller admits).
 */
int hl_conc_take(hl_conc_table_t *t, uint64_t key, const hl_conc_holder_t *me,
                 uint32_t limit, unsigned scope, int64_t now,
                 hl_conc_alive_fn alive, void *ctx);

/* hl_conc_take without counting a refusal: for a request that waits in
 * line (queue=) and asks again. Same returns. */
int hl_conc_try(hl_conc_table_t *t, uint64_t key, const hl_conc_holder_t *me,
                uint32_t limit, unsigned scope, int64_t now,
                hl_conc_alive_fn alive, void *ctx);

/*
 * Returns 1 if a refusal in scope at now should be logged (at most one per
 * HL_CONC_LOG_MS per scope), setting *skipped to the refusals not logged
 * since the last one; else 0, counting this one among them. A scope of
 * HL_CONC_NO_SCOPE is always logged.
 */
int hl_conc_log_due(hl_conc_table_t *t, unsigned scope, int64_t now,
                    uint32_t *skipped);

/* Gives back one slot of key held by me. Returns 1, or 0 when me holds
 * none (already reclaimed). */
int hl_conc_give(hl_conc_table_t *t, uint64_t key, const hl_conc_holder_t *me);

/*
 * Notes that a slot of scope was held held_ms (given back): the scope's
 * moving estimate takes 1/8 of the difference (the first one is taken as
 * it is). A scope of HL_CONC_NO_SCOPE is ignored.
 */
void hl_conc_note_held(hl_conc_table_t *t, unsigned scope, int64_t held_ms);

/*
 * Returns the Retry-After (whole seconds, >= 1) of a request of scope
 * refused at its limit of limit: the typical time until a slot frees, the
 * scope's estimate (1 s flat before any slot was given back: nothing is
 * known; and for HL_CONC_NO_SCOPE), spread between
 * refused clients so that they do not all come back at once: the
 * position-th refusal (e.g. the scope's refusal count) gets estimate * (1
 * + (position mod 2*limit) / limit), plus up to one slot's share of it
 * (estimate / limit) chosen by salt (a hash of the key). Never fails.
 */
long hl_conc_retry_after_s(const hl_conc_table_t *t, unsigned scope,
                           uint32_t limit, uint64_t position, uint64_t salt);

/* Returns how many slots of key are held. */
uint32_t hl_conc_in_flight(const hl_conc_table_t *t, uint64_t key);

/* Drops every record whose holder alive says is gone, whatever its key.
 * Returns the number of slots given back. */
uint32_t hl_conc_reap(hl_conc_table_t *t, hl_conc_alive_fn alive, void *ctx);

#endif
