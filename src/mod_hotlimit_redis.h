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

#endif
