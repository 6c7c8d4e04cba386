/*
 * mod_hotlimit_store_cmd.c - plain Redis commands on the active Redis
 * provider's store (mod_hotlimit_store_cmd.h): the one place that chooses
 * between redis-cluster:// (mod_hotlimit_cluster.c) and the providers of
 * one Redis server, redis:// and redis-sentinel:// (mod_hotlimit_redis.c),
 * by this generation's provider (so a graceful restart to another store
 * leaves the old Redis alone).
 */
#include <hiredis/hiredis.h>

#include "mod_hotlimit_store_cmd.h"
#include "mod_hotlimit_stores.h"
#include "mod_hotlimit_redis.h"
#include "mod_hotlimit_cluster.h"
#include "mod_hotlimit_sentinel.h"

enum { NOT_REDIS, ONE_SERVER, CLUSTER };

/* Returns which kind of Redis a store of provider p (NULL: shm) is. */
static int kind_of(const hl_store_provider_t *p)
{
    return p == &hl_cluster_provider ? CLUSTER
           : p == &hl_redis_provider || p == &hl_sentinel_provider ? ONE_SERVER
           : NOT_REDIS;
}

/* Returns which kind of Redis this generation's store is. */
static int kind(void)
{
    return kind_of(hl_stores_active());
}

int hl_store_cmd_possible(const hl_store_provider_t *p)
{
    return kind_of(p) != NOT_REDIS;
}

int hl_store_cmd_up(void)
{
    switch (kind()) {
    case CLUSTER:    return hl_cluster_where()[0] != '\0';
    case ONE_SERVER: return hl_redis_is_up();
    default:         return 0;
    }
}

size_t hl_store_cmd_name(char *out, const char *tail, size_t n)
{
    switch (kind()) {
    case CLUSTER:    return hl_cluster_hl_name(out, tail, n);
    case ONE_SERVER: return hl_redis_name(out, tail, n);
    default:         return 0;
    }
}

redisReply *hl_store_cmd_send(int argc, const char **argv, const size_t *argl,
                              const char **why)
{
    switch (kind()) {
    case CLUSTER:    return hl_cluster_hl_command(argc, argv, argl, why);
    case ONE_SERVER: return hl_redis_send(argc, argv, argl, why);
    default:         *why = "not a Redis store"; return NULL;
    }
}

const char *hl_store_cmd_where(void)
{
    switch (kind()) {
    case CLUSTER:    return hl_cluster_where();
    case ONE_SERVER: return hl_redis_where();
    default:         return "";
    }
}

server_rec *hl_store_cmd_server(void)
{
    return kind() == CLUSTER ? hl_cluster_server() : hl_redis_server();
}
