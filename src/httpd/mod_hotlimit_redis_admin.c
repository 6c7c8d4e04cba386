/*
 * mod_hotlimit_redis_admin.c - the Redis store's keys at their limit (the
 * status page's listing of PREFIX{hl}:limited and PREFIX{hl}:bans) and
 * resets (the counters deleted on every server sharing the Redis, the
 * list cleaned); see mod_hotlimit_redis_admin.h. Calls go through
 * mod_hotlimit_redis.c's connection and breaker.
 */
#include <string.h>

#include <hiredis/hiredis.h>

#include "httpd.h"
#include "http_config.h"
#include "http_log.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_redis.h"
#include "mod_hotlimit_redis_admin.h"
#include "mod_hotlimit_store_shm.h"
#include "hl_redis_call.h"
#include "hl_ban.h"

APLOG_USE_MODULE(hotlimit);

/* Takes the n counter keys (Redis keys, lengths keyl) out of
 * PREFIX{hl}:limited (ZREM), after a reset deleted them. Never fails: the
 * list drops a member whose counter is gone anyway. */
static void unlist(const char *const *keys, const size_t *keyl, int n)
{
    enum { MAXN = HL_LIMITER_RESET_KEYS };
    const char *argv[2 + MAXN], *why = "unknown";
    size_t argl[2 + MAXN];
    char zkey[HL_REDIS_KEY_MAX];
    redisReply *reply;
    int i;

    argv[0] = "ZREM";
    argl[0] = 4;
    argv[1] = zkey;
    argl[1] = hl_redis_name(zkey, "limited", 7);
    for (i = 0; i < n && i < MAXN; ++i) {
        argv[2 + i] = keys[i];
        argl[2 + i] = keyl[i];
    }
    reply = hl_redis_send(2 + i, argv, argl, &why);
    if (reply)
        freeReplyObject(reply);
}

/* Fills out[0 .. max) from a listing reply. Returns how many, with *total
 * set, or -1 when the reply is not a listing. */
static int read_listing(const redisReply *reply, hl_store_limited_t *out,
                        int max, uint32_t *total)
{
    char head[HL_REDIS_KEY_MAX];
    size_t hlen = hl_redis_name(head, "", 0), i;
    int64_t now;
    int n = 0;

    if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 2
        || (reply->elements - 2) % 3 || reply->element[0]->type != REDIS_REPLY_INTEGER
        || reply->element[1]->type != REDIS_REPLY_INTEGER)
        return -1;
    now = reply->element[0]->integer;
    *total = reply->element[1]->integer > 0 ? (uint32_t)reply->element[1]->integer : 0;
    for (i = 2; i + 2 < reply->elements && n < max; i += 3) {
        const redisReply *key = reply->element[i];
        size_t len;

        if (key->type != REDIS_REPLY_STRING || key->len <= hlen
            || memcmp(key->str, head, hlen) || key->len - hlen > HL_KEY_MAX
            || reply->element[i + 1]->type != REDIS_REPLY_INTEGER
            || reply->element[i + 2]->type != REDIS_REPLY_INTEGER)
            continue;
        len = key->len - hlen;
        memcpy(out[n].key, key->str + hlen, len);
        out[n].len = len;
        out[n].left_ms = reply->element[i + 1]->integer - now;
        out[n].count = reply->element[i + 2]->integer > 0
                       ? (uint32_t)reply->element[i + 2]->integer : 0;
        n++;
    }
    return n;
}

/* Lists into out[0 .. max) the counter windows at their limit in Redis,
 * on every server sharing it (the sorted set PREFIX{hl}:limited; with
 * bans, the ban counters' own set PREFIX{hl}:bans), those with the most
 * time left first, in one round trip bounded by HotLimitStoreTimeout; sets
 * *total to how many there are. Returns how many were listed, or -1 when
 * it cannot answer now (its breaker is open: no wait; or this call failed:
 * logged, and a failed round trip is recorded on the breaker as a
 * decision's would be, the connection being the same). Nothing is
 * allocated. The store's `limited` call. */
int hl_redis_limited(void *ctx, hl_store_limited_t *out, int max,
                     int bans, uint32_t *total)
{
    const char *why = "unknown";
    redisReply *reply;
    int n;

    (void)ctx;
    /* While the breaker is open the page does not wait for Redis. */
    if (!hl_redis_is_up())
        return -1;
    reply = hl_redis_list_call(max, bans, &why);
    if (!reply) {
        ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, hl_redis_server(),
                     "HL00711: Redis store %s: cannot list the keys at their "
                     "limit (%s)", hl_redis_where(), why);
        return -1;
    }
    n = read_listing(reply, out, max, total);
    if (n < 0)
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, hl_redis_server(),
                     "HL00710: Redis store %s: cannot list the keys at their "
                     "limit (%s): the status page lists this server's own",
                     hl_redis_where(), reply->type == REDIS_REPLY_ERROR && reply->str
                     ? reply->str : "not a listing");
    freeReplyObject(reply);
    return n;
}

/* Resets the counters of key (len bytes) here and in Redis, takes them
 * out of the list at their limit, voids leases and this thread's
 * refused notes. Returns how many counters were removed (a failed Redis
 * call counts none there). Nothing is allocated. The store's `reset` call. */
int hl_redis_reset(void *ctx, const char *key, size_t len)
{
    enum { NKEYS = HL_LIMITER_RESET_KEYS };
    const hl_store_t *local = hl_store_shm();
    const char *why = "unknown", *argv[1 + NKEYS];
    char full[NKEYS][HL_REDIS_KEY_MAX], skeys[NKEYS][HL_KEY_MAX];
    size_t argl[1 + NKEYS], slens[NKEYS];
    redisReply *reply;
    int removed = local->ops->reset(local->ctx, key, len);
    int n = hl_limiter_reset_keys(skeys, slens, key, len), k;
    (void)ctx;

    /* Every child's leases are void from now (before the DEL, so that a
     * grant counted in the old counters is not kept: keep_lease); a ban's
     * own counters are never leased and leave them alone (bans start
     * often under attack, when leases matter most). */
    if (!hl_ban_key_is_counter(key, len))
        hl_redis_void_leases();
    argv[0] = "DEL";
    argl[0] = 3;
    for (k = 0; k < n; ++k) {   /* the slot keys every store removes */
        argv[1 + k] = full[k];
        argl[1 + k] = hl_redis_name(full[k], skeys[k], slens[k]);
    }
    reply = hl_redis_send(1 + n, argv, argl, &why);
    if (reply && reply->type == REDIS_REPLY_INTEGER)
        removed += (int)reply->integer;
    if (reply) {
        freeReplyObject(reply);
        unlist(argv + 1, argl + 1, n);
    }
    hl_redis_forget_refused();
    return removed;
}
