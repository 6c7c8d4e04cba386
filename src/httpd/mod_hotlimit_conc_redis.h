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

/* How the slots reach Redis: the Redis store's one connection (NULL
 * below), or another Redis-speaking provider's (redis-cluster://). */
struct redisReply;
typedef struct {
    /* Writes the set's name for tail (n bytes) into out (room for
     * sizeof(hl_store_slot_t.key)). Returns its length, 0 when it cannot. */
    size_t (*name)(char *out, const char *tail, size_t n);
    /* Sends argv[0 .. argc) (lengths argl), whose one key is key (klen
     * bytes). Returns the reply (the caller frees it), or NULL with *why
     * set. */
    struct redisReply *(*command)(const char *key, size_t klen, int argc,
                                  const char **argv, const size_t *argl,
                                  const char **why);
    int per_key;   /* 1: refresh each held slot in its own call (the keys
                      live in different cluster slots) */
} hl_conc_redis_via_t;

/* hl_conc_redis_take and hl_conc_redis_give through via (NULL: the Redis
 * store). A child's slots all go one way (the active provider's). */
int hl_conc_redis_take_via(const hl_conc_redis_via_t *via, request_rec *r,
                           uint64_t key, uint32_t limit,
                           hl_conc_redis_slot_t *slot);
void hl_conc_redis_give_via(const hl_conc_redis_via_t *via,
                            hl_conc_redis_slot_t *slot);

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
