/*
 * mod_hotlimit_redis_url.h - HotLimitStore's Redis address read at
 * configuration time: the Redis provider's parse (mod_hotlimit_redis.c).
 * Allocates only from the pool given; no connection, no shared state.
 */
#ifndef MOD_HOTLIMIT_REDIS_URL_H
#define MOD_HOTLIMIT_REDIS_URL_H

#include "apr_pools.h"

/* Parses redis://, rediss:// (refused: no TLS in this hiredis) or unix:
 * into *out (a hl_redis_conf_t from p). Returns NULL, or what is wrong.
 * The provider's parse. */
const char *hl_redis_parse_url(apr_pool_t *p, const char *url, void **out);

/* Parses one HOST:PORT of a list of nodes (a Sentinel, a cluster seed;
 * an IPv6 host in brackets) into *host (from p, brackets removed) and
 * *port. Returns NULL, or what is wrong, naming token (from p). */
const char *hl_redis_parse_hostport(apr_pool_t *p, const char *token,
                                    const char **host, int *port);

#endif
