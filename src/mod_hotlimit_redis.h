/*
 * mod_hotlimit_redis.h - what mod_hotlimit_redis.c offers the other glue
 * files: the Redis store.
 */
#ifndef MOD_HOTLIMIT_REDIS_H
#define MOD_HOTLIMIT_REDIS_H

#include "mod_hotlimit_conf.h"
#include "hl_store.h"

/* Parses a HotLimitStore value other than shm into *out (from p). Returns
 * NULL, or what is wrong with it. */
const char *hl_redis_parse(apr_pool_t *p, const char *url, hl_redis_conf_t **out);

/* Sets the Redis store up when configured (main server). Returns OK or an
 * HTTP error after logging. */
int hl_redis_post_config(apr_pool_t *pconf, server_rec *s);

/* Returns the Redis store, or NULL when HotLimitStore is not redis. */
const hl_store_t *hl_redis_store(void);

/*
 * For HotLimitConcurrency: sends the command argv[0 .. argc) (lengths
 * argl) over the child's connection, unless the breaker is open. Returns
 * the reply (the caller frees it with freeReplyObject; it may be an error
 * reply), or NULL with *why set (a failed round trip is recorded on the
 * breaker). Needs hiredis' redisReply: include <hiredis/hiredis.h> first.
 */
struct redisReply;
struct redisReply *hl_redis_command(int argc, const char **argv,
                                    const size_t *argl, const char **why);

/* Writes the Redis key PREFIX{hl}: + n bytes of tail into out (room for
 * 64 + 5 + HL_KEY_MAX bytes). Returns its length, or 0 when the store is
 * not Redis or tail is too long. */
size_t hl_redis_name(char *out, const char *tail, size_t n);

#endif
