/*
 * mod_hotlimit_sentinel.h - the provider of HotLimitStore
 * redis-sentinel://: the Redis store (mod_hotlimit_redis.c), its master
 * found through Redis Sentinel.
 */
#ifndef MOD_HOTLIMIT_SENTINEL_H
#define MOD_HOTLIMIT_SENTINEL_H

#include "mod_hotlimit_stores.h"

#define HL_SENTINEL_MAX 16   /* Sentinels one URL may list */

/* redis-sentinel://[USER:PASSWORD@]MASTER@HOST:PORT[,HOST:PORT...][/DB] */
extern const hl_store_provider_t hl_sentinel_provider;

#endif
