/*
 * mod_hotlimit_redis_admin.h - the Redis store's `limited` and `reset`
 * calls (hl_store.h), for its operations table in mod_hotlimit_redis.c:
 * the keys at their limit on every server sharing the Redis, and resets.
 */
#ifndef MOD_HOTLIMIT_REDIS_ADMIN_H
#define MOD_HOTLIMIT_REDIS_ADMIN_H

#include <stddef.h>
#include <stdint.h>
#include "hl_store.h"

/* Lists into out[0 .. max) the counter windows at their limit in Redis,
 * on every server sharing it (the sorted set PREFIX{hl}:limited; with
 * bans, the ban counters' own set PREFIX{hl}:bans), those with the most
 * time left first, in one round trip bounded by HotLimitStoreTimeout; sets
 * *total to how many there are. Returns how many were listed, or -1 when
 * it cannot answer now (its breaker is open: no wait; or this call failed:
 * logged, and a failed round trip is recorded on the breaker as a
 * decision's would be, the connection being the same). Nothing is
 * allocated. The store's `limited` call. */
int hl_redis_limited(void *ctx, hl_store_limited_t *out, int max,
                     int bans, uint32_t *total);

/* Resets the counters of key (len bytes) here and in Redis, takes them
 * out of the list at their limit, voids leases and this thread's
 * refused notes. Returns how many counters were removed (a failed Redis
 * call counts none there). Nothing is allocated. The store's `reset` call. */
int hl_redis_reset(void *ctx, const char *key, size_t len);

#endif
