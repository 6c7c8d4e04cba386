/*
 * mod_hotlimit_cluster.h - HotLimitStore redis-cluster://: the Redis
 * store's script run on the masters of a Redis Cluster, counters spread
 * over 1024 bucket tags (hl_cluster_tags.h).
 */
#ifndef MOD_HOTLIMIT_CLUSTER_H
#define MOD_HOTLIMIT_CLUSTER_H

#include <stddef.h>
#include "mod_hotlimit_stores.h"
#include "hl_redis_call.h"

/* The provider of HotLimitStore redis-cluster:// (and rediss-cluster://,
 * refused at parse: no TLS in this hiredis). */
extern const hl_store_provider_t hl_cluster_provider;

/* Returns the bucket (0..1023) of a client key "scope|client" (len
 * bytes): of its client part, keyed by the server's secret, so that one
 * client's keys of every quota line share a slot. Never fails. */
unsigned hl_cluster_key_bucket(const char *key, size_t len);

/* Returns the script every call names (prefix, text, SHA; tag NULL), for
 * this generation. NULL before setup. */
const hl_redis_script_t *hl_cluster_script(void);

#endif
