/*
 * hl_store.h - what a counter store offers the decision. The shared-memory
 * store (mod_hotlimit_store_shm.c: the slot table under the hotlimit-shm
 * mutexes) and a remote store (Redis, mod_hotlimit_redis.c) implement the
 * same calls with the same semantics (hl_decide.h); mod_hotlimit_stores.c
 * chooses one, so the access checker, the status page and the ban list
 * do not know where counters live.
 */
#ifndef HL_STORE_H
#define HL_STORE_H

#include <stddef.h>
#include <stdint.h>
#include "hl_decide.h"

/* A counter window at its limit, as a store that keeps such a list (a
 * remote one, for every server sharing it) reports it. */
typedef struct {
    char     key[HL_KEY_MAX];  /* its slot key (hl_limiter_slot_key: origin,
                                  window digit, "scope|client"), len bytes,
                                  not NUL-terminated */
    size_t   len;
    uint32_t count;            /* requests counted (0 for gcra) */
    int64_t  left_ms;          /* until the counter clears */
} hl_store_limited_t;

/* What a store has done, for the status page and metrics. */
typedef struct {
    int      configured;       /* 1: a remote store (figures below), 0: the
                                  shared memory (all zero) */
    int      up;               /* remote: it answers (breaker closed) */
    uint64_t decisions, fallbacks, errors;
    uint64_t leased;           /* admitted by a lease (HotLimitStoreLease) */
} hl_store_figures_t;

/* A store's calls, in the order a request meets them (prepare, decide,
 * then after the response count, refund or settle), then the operator's
 * (reset, limited, figures). Initialise with designated initialisers. */
typedef struct {
    const char *name;          /* "shm", for messages */
    /* Prepares one item before any lock or round trip: fills its refs
     * (slot keys and their hashes) and stripe, from its key, origin and
     * number of windows only, so a caller may keep them for the same
     * item later (mod_hotlimit_access.c does, per connection). A
     * "prepared" item below is one whose refs and stripe are filled,
     * by this call or copied from such a kept one. Never fails. */
    void (*prepare)(void *ctx, hl_decide_item_t *it);
    /* Decides *items[0 .. n) at now_ms (hl_decide_locked's semantics).
     * Returns 1 admitted, 0 rejected, -1 when the store cannot answer
     * (logged by the store; the caller admits), -2 when it cannot answer
     * and HotLimitStoreFailure is closed (the caller answers 503 to a
     * request a quota covers). A remote store that cannot answer with
     * HotLimitStoreFailure local returns the shared memory's answer. */
    int  (*decide)(void *ctx, hl_decide_item_t *const *items, int n,
                   int64_t now_ms);
    /* Counts a finished request of a prepared item, of cost n
     * (count=failures|status, cost=header:; hl_decide_count_locked).
     * Returns 0, or -1 when the store cannot answer. */
    int  (*count)(void *ctx, const hl_decide_item_t *it, uint32_t n,
                  int64_t now_ms);
    /* [exact count=failures|status] Gives back the unit a prepared,
     * admitted item of a count=failures|status quota took at its decision,
     * its final status not being counted (hl_decide_refund_locked's
     * semantics: only in the counter instances that still hold it, never
     * below zero; a remote store does it in its own script, not by a
     * second decision). Returns the windows given back (>= 0), or -1
     * when the store cannot answer. */
    int  (*refund)(void *ctx, const hl_decide_item_t *it, int64_t now_ms);
    /* [reserve=] Settles the reservation a prepared, admitted item of a
     * cost= quota took at its decision (it->reserve units) to the
     * request's real cost (hl_decide_settle_locked's semantics; a remote
     * store in one script call). Returns the windows touched (>= 0), or -1
     * when the store cannot answer. */
    int  (*settle)(void *ctx, const hl_decide_item_t *it, uint32_t cost,
                   int64_t now_ms);
    /* Removes every window of key ("scope|client"). Returns the number of
     * counters removed, or -1 when the store cannot answer. */
    int  (*reset)(void *ctx, const char *key, size_t len);
    /* Lists into out[0 .. max) the windows at their limit that the store
     * keeps a list of (bans nonzero: the ban counters' list), those with
     * the most time left first, and sets *total to how many there are.
     * Returns how many were listed, or -1 when it cannot answer now (the
     * caller then scans this server's counters). NULL for a store whose
     * counters are all in this server's slot table (the shared memory):
     * the caller scans that. */
    int  (*limited)(void *ctx, hl_store_limited_t *out, int max, int bans,
                    uint32_t *total);
    /* Fills *f with the store's figures. Never fails. */
    void (*figures)(void *ctx, hl_store_figures_t *f);
} hl_store_ops_t;

/* A store: its operations and their context. */
typedef struct {
    const hl_store_ops_t *ops;
    void                 *ctx;
} hl_store_t;

#endif
