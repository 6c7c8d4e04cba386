/*
 * mod_hotlimit_conc_redis.h - HotLimitConcurrency slots shared through the
 * Redis store (HotLimitStore redis://), so several servers hold at most N
 * requests of one key in flight together.
 */
#ifndef MOD_HOTLIMIT_CONC_REDIS_H
#define MOD_HOTLIMIT_CONC_REDIS_H

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_stores.h"

#define HL_CONC_REDIS_TTL_MS   30000  /* a slot nobody refreshes expires */
#define HL_CONC_REDIS_EVERY_MS 5000   /* held slots are refreshed this often */

/* A slot held in Redis: its set and its member there. */
typedef hl_store_slot_t hl_conc_redis_slot_t;

/*
 * [the Redis providers' conc_take] Takes a slot of key (its hash) in Redis, at most limit held on every
 * server sharing it, in one round trip. Returns 1 taken (*slot filled:
 * give it back with hl_conc_redis_give; refreshed meanwhile by this
 * child), 0 refused, -1 when Redis cannot answer (logged by the store;
 * the caller decides on its own counts).
 */
int hl_conc_redis_take(request_rec *r, uint64_t key, uint32_t limit,
                       hl_conc_redis_slot_t *slot);

/* Gives slot back (ZREM) and stops refreshing it. Never fails: a slot
 * Redis cannot be told of expires after HL_CONC_REDIS_TTL_MS. */
void hl_conc_redis_give(hl_conc_redis_slot_t *slot);

#endif
