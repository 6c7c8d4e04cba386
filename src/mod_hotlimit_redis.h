/*
 * mod_hotlimit_redis.h - what mod_hotlimit_redis.c offers the other glue
 * files: the Redis store.
 */
#ifndef MOD_HOTLIMIT_REDIS_H
#define MOD_HOTLIMIT_REDIS_H

#include "mod_hotlimit.h"
#include "hl_store.h"

/* Parses a HotLimitStore value other than shm into *out (from p). Returns
 * NULL, or what is wrong with it. */
const char *hl_redis_parse(apr_pool_t *p, const char *url, hl_redis_conf_t **out);

/* Sets the Redis store up when configured (main server). Returns OK or an
 * HTTP error after logging. */
int hl_redis_post_config(apr_pool_t *pconf, server_rec *s);

/* Returns the Redis store, or NULL when HotLimitStore is not redis. */
const hl_store_t *hl_redis_store(void);

/* The Redis store's figures, for the status page and metrics. */
typedef struct {
    int      configured, up;
    uint64_t decisions, fallbacks, errors;
    uint64_t leased;           /* admitted by a lease (HotLimitStoreLease) */
} hl_redis_figures_t;
void hl_redis_figures(hl_redis_figures_t *f);

/* A counter window at its limit, as the Redis store lists it. */
typedef struct {
    char     key[HL_KEY_MAX];  /* its slot key (hl_limiter_slot_key: origin,
                                  window digit, "scope|client"), len bytes,
                                  not NUL-terminated */
    size_t   len;
    uint32_t count;            /* requests counted (0 for gcra) */
    int64_t  left_ms;          /* until the counter clears */
} hl_redis_limited_t;

/* Lists into out[0 .. max) the counter windows at their limit in Redis,
 * on every server sharing it (the sorted set PREFIX{hl}:limited; with
 * bans, the ban counters' own set PREFIX{hl}:bans), those with the most
 * time left first, in one round trip bounded by HotLimitStoreTimeout; sets
 * *total to how many there are. Returns how many were listed, or -1 when
 * the Redis store is not configured or cannot answer now (its breaker is
 * open: no wait; or this call failed: logged, and a failed round trip is
 * recorded on the breaker as a decision's would be, the connection being
 * the same). Nothing is allocated. */
int hl_redis_limited(hl_redis_limited_t *out, int max, int bans,
                     uint32_t *total);

/*
 * For HotLimitConcurrency: sends the command argv[0 .. argc) (lengths
 * argl) over the child's connection, unless the breaker is open. Returns
 * the reply (the caller frees it with freeReplyObject; it may be an error
 * reply), or NULL with *why set (a failed round trip is recorded on the
 * breaker). Needs hiredis' redisReply: include <hiredis/hiredis.h> first.
 */
struct redisReply;
struct redisReply *hl_redis_call(int argc, const char **argv,
                                 const size_t *argl, const char **why);

/* Writes the Redis key PREFIX{hl}: + n bytes of tail into out (room for
 * 64 + 5 + HL_KEY_MAX bytes). Returns its length, or 0 when the store is
 * not Redis or tail is too long. */
size_t hl_redis_name(char *out, const char *tail, size_t n);

#endif
