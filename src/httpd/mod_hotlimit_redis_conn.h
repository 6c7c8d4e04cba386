/*
 * mod_hotlimit_redis_conn.h - the child's connection to Redis, shared by
 * its threads: commands that arrive while a round trip is under way leave
 * together in the next one (one write, one read for all of them).
 */
#ifndef MOD_HOTLIMIT_REDIS_CONN_H
#define MOD_HOTLIMIT_REDIS_CONN_H

#include <hiredis/hiredis.h>

#include "mod_hotlimit_redis.h"

/* Sets where connections go (conf) and how long a wait may last
 * (timeout_ms, HotLimitStoreTimeout) (post_config, every generation).
 * conf must outlive the generation. */
void hl_redis_conn_setup(const hl_redis_conf_t *conf, int timeout_ms);

/* What hl_redis_exchange answered. */
typedef enum {
    HL_EXCHANGE_OK = 0,       /* *reply is Redis' answer */
    HL_EXCHANGE_FAILED,       /* the round trip failed: record it (breaker) */
    HL_EXCHANGE_SHARED_FAIL,  /* failed with a round trip whose failure
                                 another thread records */
    HL_EXCHANGE_BUSY          /* no turn on the connection within the
                                 timeout: nothing was sent */
} hl_exchange_t;

/*
 * Sends one command, already in the protocol's form (len bytes of RESP),
 * over this child's connection, made (with AUTH and SELECT) if needed,
 * and reads its reply. Commands of other threads waiting at the same time
 * go in the same write, their replies come back in the same read. Waits
 * for its turn at most the store's timeout; each read and write is bounded
 * by it too. Returns HL_EXCHANGE_OK with *reply set (the caller frees it
 * with freeReplyObject; it may be an error reply), or another value with
 * *reply NULL and *why set to a static reason. After a failure the
 * connection has been dropped (a hiredis context cannot be reused).
 */
hl_exchange_t hl_redis_exchange(const char *cmd, size_t len,
                                redisReply **reply, const char **why);

/* Marks the connection as bad (READONLY, a reply that does not fit): the
 * next round trip makes a new one. Never fails. */
void hl_redis_conn_discard(void);

#endif
