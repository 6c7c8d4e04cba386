/*
 * mod_hotlimit_redis.h - what mod_hotlimit_redis.c offers the other glue
 * files: the Redis store.
 */
#ifndef MOD_HOTLIMIT_REDIS_H
#define MOD_HOTLIMIT_REDIS_H

#include "mod_hotlimit_conf.h"
#include "hl_store.h"
#include "mod_hotlimit_stores.h"

/* HotLimitStore redis://... (or another Redis-speaking provider's
 * address) once parsed. */
typedef struct hl_redis_conf {
    const char        *host;       /* NULL with a unix socket */
    int                port;
    const char        *socket;     /* unix:/path, or NULL */
    int                db;
    const char        *user;       /* ACL user, or NULL */
    const char        *password;   /* or NULL: no AUTH */
    const char        *prefix;     /* of every key, "hl:" */
    const char        *label;      /* where it is, for messages; NULL:
                                      host:port or the socket */
    /* Finds the server when its address is not fixed (redis-sentinel):
     * called before every new connection, within timeout_ms; writes its
     * host (hostsz bytes, NUL-terminated) and *port. Returns NULL, or why
     * not (static). NULL: host and port above. */
    const char *(*locate)(const struct hl_redis_conf *c, int timeout_ms,
                          char *host, size_t hostsz, int *port);
    const void        *locate_conf; /* locate's own settings */
} hl_redis_conf_t;

/* The provider of HotLimitStore redis://, rediss:// and unix:. */
extern const hl_store_provider_t hl_redis_provider;

/* Sets the Redis store up for this generation with conf (a
 * hl_redis_conf_t, from a Redis-speaking provider's parse; main server
 * s). Returns OK or an HTTP error after logging. The provider's
 * post_config, shared with the providers that find the server another
 * way (redis-sentinel). */
int hl_redis_post_config(apr_pool_t *pconf, server_rec *s, void *conf);

/* Returns the Redis store. The providers' store call. */
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

/* The one reader of the script's decide, count, refund and settle
 * replies, for every caller of the script: writes the reply's integers
 * to el[0 .. max) and returns how many, or -1 when it is neither one
 * string of integers (hl_redis_call_parse) nor an array. The reply stays
 * the caller's. */
long hl_redis_reply_integers(const struct redisReply *reply, long long *el,
                             size_t max);

/* For mod_hotlimit_redis_admin.c (the keys at their limit, resets): */

/* Sends the command argv[0 .. argc) (lengths argl) over the shared
 * connection. Returns the reply (the caller frees it; it may be an error
 * reply), or NULL with *why set (a failed round trip is recorded on the
 * breaker by exchange). */
struct redisReply *hl_redis_send(int argc, const char **argv,
                                 const size_t *argl, const char **why);

/* Runs the script's listing (mode "l") of PREFIX{hl}:limited, or of
 * PREFIX{hl}:bans when bans, for at most max keys, loading the script when
 * the server lost it. Returns the reply (the caller frees it; it may be an
 * error reply), or NULL with *why set. */
struct redisReply *hl_redis_list_call(int max, int bans, const char **why);

/* Returns 1 when the store is set up and its breaker closed (a call may
 * be tried now without waiting), else 0. Never fails. */
int hl_redis_is_up(void);

/* Returns where the store is, for messages ("" before setup); the string
 * lives as long as the configuration. */
const char *hl_redis_where(void);

/* Returns the main server, for logs (NULL before setup). */
server_rec *hl_redis_server(void);

/* Voids every child's leases (a reset changed the counters they were
 * granted on). Never fails. */
void hl_redis_void_leases(void);

/* For redis-cluster:// (mod_hotlimit_cluster.c), which sends the same
 * script to each master: */

/* Fills the decisions of items (n) from the script's decide reply (an
 * array). Returns 1 if admitted, 0 if not, -1 when the reply does not fit
 * the items. Allocates nothing. */
int hl_redis_read_decisions(const struct redisReply *reply,
                            hl_decide_item_t *const *items, int n);

/* Makes the shared-memory counters follow the script's reply over items
 * (n; counting: a mode "c" reply of cost), so that a fallback to the
 * local counters goes on from what the store had counted. The caller
 * calls it only under HotLimitStoreFailure local. Never fails. */
void hl_redis_follow(const struct redisReply *reply,
                     hl_decide_item_t *const *items, int n, int counting,
                     uint32_t cost);

/* The refused-until notes of this thread (also redis-cluster://'s): */

/* Returns the note key of a decision of items (n) whose refusal can be
 * noted (one item, or a ban look first), else 0. Never fails. */
uint64_t hl_redis_note_key(hl_decide_item_t *const *items, int n);

/* Returns 1 when note key (nonzero) says the first of items (n) is still
 * refused, with its decision filled (the others: not asked), else 0. */
int hl_redis_noted(uint64_t key, hl_decide_item_t *const *items, int n,
                   int64_t now);

/* Notes under key (0: nothing) that the first of items refused the
 * decision, until its longest retry (trusted a second at most). Does
 * nothing for an item in dry run or one that admitted. Never fails. */
void hl_redis_note_refused(uint64_t key, hl_decide_item_t *const *items,
                           int64_t now);

/* Forgets this thread's refused-until notes, so the next decision of each
 * client asks Redis. Never fails. */
void hl_redis_forget_refused(void);

#endif
