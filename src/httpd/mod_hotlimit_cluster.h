/*
 * mod_hotlimit_cluster.h - HotLimitStore redis-cluster://: the Redis
 * store's script run on the masters of a Redis Cluster, counters spread
 * over 1024 bucket tags (hl_cluster_tags.h).
 */
#ifndef MOD_HOTLIMIT_CLUSTER_H
#define MOD_HOTLIMIT_CLUSTER_H

#include <stddef.h>
#include "httpd.h"
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

/* For the cluster-wide view (mod_hotlimit_store_cmd.c), whose keys all
 * carry the tag {hl}: one slot, on one master. */

/* Writes PREFIX{hl}: + n bytes of tail (the cluster's prefix) into out
 * (HL_REDIS_KEY_MAX bytes). Returns its length, or 0 before setup or when
 * tail is too long. */
size_t hl_cluster_hl_name(char *out, const char *tail, size_t n);

/* Sends argv[0 .. argc) (lengths argl), whose keys all carry {hl}, to the
 * master of that slot within HotLimitStoreTimeout (hl_cluster_command: no
 * wait while its breaker is open). Returns the reply (the caller frees it
 * with freeReplyObject; it may be an error reply), or NULL with *why set.
 * Needs <hiredis/hiredis.h> first. */
struct redisReply;
struct redisReply *hl_cluster_hl_command(int argc, const char **argv,
                                         const size_t *argl, const char **why);

/* Returns where the cluster is, for messages ("" before setup), and the
 * main server (NULL before setup). */
const char *hl_cluster_where(void);
server_rec *hl_cluster_server(void);

#endif
