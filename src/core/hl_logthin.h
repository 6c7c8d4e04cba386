/*
 * hl_logthin.h - which refusals are written to the error log under
 * HotLimitLogRefusals first: the first refusal of each key in each of its
 * refusal spells ("windows": from a refusal until the moment that key is
 * admitted again, its Retry-After) in full, and the later ones of that
 * key summed into at most one summary line per key per
 * HL_LOGTHIN_SUMMARY_MS.
 *
 * The state is a fixed table of integers over a caller-supplied memory
 * block (shared memory, so every child of httpd sees the same counts),
 * 4-way set-associative by the key's 64-bit hash: bounded whatever the
 * number of keys. When a set is full, the entry whose spell ends first is
 * reused; refusals it still had to report are added to a "dropped" count
 * that is itself reported at most once per HL_LOGTHIN_SUMMARY_MS, so
 * every refusal is accounted for in some line, however many keys flood.
 *
 * A summary is written by the refusal that finds its key's summary due
 * (no timer): the refusals of the last seconds of a flood are reported by
 * that key's next line (its next summary, or the summary written beside
 * the first line of its next spell).
 *
 * Pure: no httpd, no allocation, no lock (the caller serialises calls on
 * one table), time passed in as now_ms.
 */
#ifndef HL_LOGTHIN_H
#define HL_LOGTHIN_H

#include <stddef.h>
#include <stdint.h>

#define HL_LOGTHIN_SUMMARY_MS 10000   /* at most one summary per key per */
#define HL_LOGTHIN_WAYS 4             /* entries per set */

/* One key's state. 32 bytes. */
typedef struct {
    uint64_t hash;           /* the key's hash; 0: free */
    int64_t  spell_end_ms;   /* a refusal at or after it starts a new spell */
    int64_t  summary_at_ms;  /* a summary may be written from then on */
    uint32_t pending;        /* refusals not written in any line yet */
    uint32_t pad;
} hl_logthin_entry_t;

#define HL_LOGTHIN_TOP 32       /* busiest addresses followed (gate): any
                                   with more than 1/32 of the held lines
                                   is among them */
#define HL_LOGTHIN_ADDR_MAX 48  /* bytes of an address, NUL included */

/* One of the busiest addresses among the refusals the gate held back. */
typedef struct {
    char     addr[HL_LOGTHIN_ADDR_MAX];  /* NUL-terminated; "" free */
    uint32_t n;                          /* its refusals (an upper bound) */
    uint32_t err;                        /* at most this many of n are not
                                            its own: n - err is a lower
                                            bound */
} hl_logthin_top_t;

/* The table's header; nsets * HL_LOGTHIN_WAYS entries follow it. */
typedef struct {
    uint32_t magic;
    uint32_t nsets;
    uint64_t dropped;            /* pending refusals of reused entries */
    int64_t  dropped_at_ms;      /* dropped may be reported from then on */
    /* The server-wide gate of full lines (hl_logthin_gate): */
    int64_t  rate_sec;           /* the second rate_used counts */
    uint32_t rate_used;          /* full lines let through in it */
    uint32_t pad;
    uint64_t held;               /* full lines held back, not reported yet */
    uint64_t held_keys;          /* of them, keys new to the table */
    int64_t  held_at_ms;         /* held may be reported from then on */
    hl_logthin_top_t top[HL_LOGTHIN_TOP];  /* busiest addresses of held */
    hl_logthin_entry_t entries[];
} hl_logthin_t;

/* What to write for one refusal. */
typedef struct {
    int      first;          /* 1: write this refusal in full (HL00100) */
    uint32_t summary;        /* > 0: write a summary of this many refusals
                                of the key (this one included when
                                first is 0) */
    uint64_t dropped;        /* > 0: write that this many refusals of keys
                                whose entries were reused were not
                                summarised */
    int      fresh;          /* 1: the key was new to the table */
    /* From hl_logthin_gate: > 0: write the summary of the full lines the
     * gate held back (held refusals, held_keys of them keys new to the
     * table), naming the busiest addresses among them (top[0 .. ntop),
     * busiest first, each with n set to its sure count n - err >= 2). */
    uint64_t held;
    uint64_t held_keys;
    int      ntop;
    hl_logthin_top_t top[HL_LOGTHIN_TOP];
} hl_logthin_verdict_t;

/* Returns the bytes a table of at least nkeys entries takes (nkeys is
 * rounded up to a multiple of HL_LOGTHIN_WAYS; at least one set). */
size_t hl_logthin_size(uint32_t nkeys);

/* Lays an empty table of nkeys entries (as for hl_logthin_size) over mem,
 * which must hold hl_logthin_size(nkeys) bytes aligned for int64_t.
 * Returns the table (mem itself). Never fails. */
hl_logthin_t *hl_logthin_init(void *mem, uint32_t nkeys);

/*
 * Records one refusal of the key hashing to hash (0 is taken as 1) at
 * now_ms, whose Retry-After is spell_ms (the refusal's spell lasts that
 * long from now when it is the first of a new one), and fills *v with the
 * lines to write. The caller holds the table's lock. Never fails.
 */
void hl_logthin_note(hl_logthin_t *t, uint64_t hash, int64_t now_ms,
                     int64_t spell_ms, hl_logthin_verdict_t *v);

/*
 * The server-wide gate of full lines (HotLimitLogRate), after
 * hl_logthin_note filled *v: lets through at most `rate` full lines per
 * second of wall_s (a different second starts a new count), and turns
 * the others (v->first cleared) into a count reported at most once per
 * HL_LOGTHIN_SUMMARY_MS: the first held line starts the period, and the
 * refusal that finds it over fills v->held, v->held_keys and the busiest
 * addresses (counted only for refusals of address keys: addr not NULL,
 * cut to HL_LOGTHIN_ADDR_MAX - 1 bytes; a bounded "space saving" count:
 * an address with more than 1/HL_LOGTHIN_TOP of the held lines is always
 * kept, and each is reported with the count it surely had). The caller holds the table's
 * lock. Never fails.
 */
void hl_logthin_gate(hl_logthin_t *t, int64_t now_ms, int64_t wall_s,
                     uint32_t rate, const char *addr, hl_logthin_verdict_t *v);

#endif
