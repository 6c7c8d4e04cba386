/*
 * mod_hotlimit_store_cmd.h - plain Redis commands on the active Redis
 * provider's store, for keys tagged {hl} (one slot): redis:// and
 * redis-sentinel:// over their one connection, redis-cluster:// on the
 * master of the {hl} slot. The cluster-wide view (mod_hotlimit_fleet.c)
 * reaches the store only through these.
 */
#ifndef MOD_HOTLIMIT_STORE_CMD_H
#define MOD_HOTLIMIT_STORE_CMD_H

#include <stddef.h>
#include "httpd.h"

/* Returns 1 when the active store speaks Redis and a call may be tried
 * now without waiting (redis://: its breaker closed; redis-cluster://: it
 * is set up, and each call checks its master's breaker), else 0. */
int hl_store_cmd_up(void);

/* Returns 1 if a store of provider p (HotLimitStore's; NULL: the shared
 * memory) speaks Redis, so that hl_store_cmd_up may say 1 in the
 * generation it is active; else 0. Reads only. */
struct hl_store_provider;
int hl_store_cmd_possible(const struct hl_store_provider *p);

/* Writes the key PREFIX{hl}: + n bytes of tail (the active provider's
 * prefix) into out (HL_REDIS_KEY_MAX bytes). Returns its length, or 0
 * when the store is not Redis or tail is too long. */
size_t hl_store_cmd_name(char *out, const char *tail, size_t n);

/* Sends argv[0 .. argc) (lengths argl; every key tagged {hl}) to the
 * active store, bounded by HotLimitStoreTimeout. Returns the reply (the
 * caller frees it with freeReplyObject; it may be an error reply), or
 * NULL with *why set (also when the store is not Redis). Needs
 * <hiredis/hiredis.h> first. */
struct redisReply;
struct redisReply *hl_store_cmd_send(int argc, const char **argv,
                                     const size_t *argl, const char **why);

/* Returns where the active Redis store is, for messages ("" when none),
 * and the main server for logs (NULL before setup). */
const char *hl_store_cmd_where(void);
server_rec *hl_store_cmd_server(void);

#endif
