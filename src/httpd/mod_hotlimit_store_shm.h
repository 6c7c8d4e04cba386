/*
 * mod_hotlimit_store_shm.h - what mod_hotlimit_store_shm.c offers the other glue
 * files: the counters' store in shared memory (stripes, locks, persistence) and the store interface.
 */
#ifndef MOD_HOTLIMIT_STORE_SHM_H
#define MOD_HOTLIMIT_STORE_SHM_H

#include "mod_hotlimit_conf.h"
#include "hl_slots.h"
#include "hl_stats.h"
#include "hl_store.h"
#include "mod_hotlimit_stores.h"

#define HL_SHARED_MAGIC   0x484c5348u  /* "HLSH" */
#define HL_SHARED_VERSION 6u   /* 3: per-route history, 4: table status moved
                                  out, 5: refusals per key and rule, start,
                                  6: banned, refused by another rule, ban book */

/* The shared segment's header; the slot tables follow it. The quota
 * table's status is the table's own (mod_hotlimit_table.h), so that it
 * does not change this layout. */
typedef struct {
    uint32_t   magic;
    uint32_t   version;
    uint32_t   capacity;
    uint32_t   pad;
    hl_stats_t stats;
    int64_t    counters_started_ms;   /* wall clock when these counters
                                         started (kept with them across
                                         restarts and persistence) */
} hl_shared_t;

/* Returns OK, or HTTP_INTERNAL_SERVER_ERROR after logging (post_config). */
int hl_store_shm_pre_config(apr_pool_t *pconf);
int hl_store_shm_post_config(apr_pool_t *pconf, server_rec *s);
void hl_store_shm_child_init(apr_pool_t *pchild, server_rec *s);

/*
 * Locks the store's header (table status; hl_shared_t) and returns it in
 * *shared, valid until hl_store_shm_unlock. The counters themselves are in
 * stripes with locks of their own (hl_store_get, hl_store_shm_scan). Returns
 * APR_SUCCESS, or an error after logging (the caller then admits the
 * request: a broken lock must not take the site down).
 */
apr_status_t hl_store_shm_lock(server_rec *s, hl_shared_t **shared);
void hl_store_shm_unlock(server_rec *s);

/* Totals over every stripe of the counter table. */
typedef struct {
    uint32_t used, capacity, classes, stripes;
    uint64_t evictions, reclaims;
} hl_store_shm_totals_t;

/* Fills *t, taking each stripe's lock in turn. Never fails (a stripe that
 * cannot be locked is left out, logged). */
void hl_store_shm_totals(hl_store_shm_totals_t *t);

/* Calls fn for every used slot, stripe by stripe, holding a stripe's lock
 * for at most 4,096 slots at a time (a slot may be seen twice or not at
 * all when keys move meanwhile). fn must not call the store. */
void hl_store_shm_scan(int (*fn)(const hl_slot_t *s, void *baton), void *baton);

/* Returns the shared-memory store: the store when no remote one is
 * configured (mod_hotlimit_stores.c chooses), and a remote one's local
 * fallback. Never NULL. */
const hl_store_t *hl_store_shm(void);

/*
 * Makes the shared-memory counters of a prepared item (its refs and
 * stripe filled, hl_store.h) follow what a remote store answered at
 * now_ms: v[0 .. nwindows) its checks, then n requests counted there
 * (hl_limiter_follow_refs), under the item's stripe lock.
 * Returns 0, or -1 when the mutex failed (logged).
 */
int hl_store_shm_follow(hl_decide_item_t *it, const hl_verdict_t *v, uint32_t n,
                    int64_t now_ms);

/* The provider of HotLimitStore shm (the default): this server's shared
 * memory alone; concurrency in the local slot table only. */
extern const hl_store_provider_t hl_store_shm_provider;

/* Returns the per-route statistics in shared memory (lock-free). */
hl_stats_t *hl_store_shm_stats(void);

#endif
