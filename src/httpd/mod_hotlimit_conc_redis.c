/*
 * mod_hotlimit_conc_redis.c - HotLimitConcurrency slots in Redis: see
 * mod_hotlimit_conc_redis.h.
 *
 * One sorted set per key, PREFIX{hl}:conc:<key hash>: each member is one
 * request in flight on some server ("<child nonce>:<pid>:<seq>"), scored
 * with the time (Redis' clock, TIME) it expires. Taking prunes the
 * expired members, counts the rest and adds one if there is room, in one
 * script call. Each child refreshes the members it holds every
 * HL_CONC_REDIS_EVERY_MS (a thread started at its first slot), so a
 * request that runs for minutes keeps its slot, and the slots of a server
 * or child that dies come back HL_CONC_REDIS_TTL_MS after its last
 * refresh. Giving back is a ZREM.
 *
 * The local table (mod_hotlimit_conc.c) still holds a slot for each of
 * them, so a server never has more than N of a key in flight even while
 * Redis cannot answer.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "apr_strings.h"
#include "apr_general.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_conc_redis.h"
#include "mod_hotlimit_redis.h"

APLOG_USE_MODULE(hotlimit);

#define HL_CONC_REDIS_HELD 256     /* slots one child refreshes */

/* KEYS[1] the set; ARGV limit, ttl_ms, member. Returns {taken 1|0, held}. */
static const char take_script[] =
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "local limit, ttl = tonumber(ARGV[1]), tonumber(ARGV[2])\n"
    "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n"
    "local n = redis.call('ZCARD', KEYS[1])\n"
    "if n >= limit then return {0, n} end\n"
    "redis.call('ZADD', KEYS[1], now + ttl, ARGV[3])\n"
    "redis.call('PEXPIRE', KEYS[1], ttl)\n"
    "return {1, n + 1}\n";

/* KEYS the sets; ARGV[1] ttl_ms, ARGV[i + 1] the member held in KEYS[i].
 * Moves each member still there to now + ttl. Returns #KEYS. */
static const char refresh_script[] =
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "local ttl = tonumber(ARGV[1])\n"
    "for i = 1, #KEYS do\n"
    "  if redis.call('ZSCORE', KEYS[i], ARGV[i + 1]) then\n"
    "    redis.call('ZADD', KEYS[i], 'XX', now + ttl, ARGV[i + 1])\n"
    "    redis.call('PEXPIRE', KEYS[i], ttl)\n"
    "  end\n"
    "end\n"
    "return #KEYS\n";

/* The Redis store's command (its one key is implied). */
static redisReply *store_command(const char *key, size_t klen, int argc,
                                 const char **argv, const size_t *argl,
                                 const char **why)
{
    (void)key;
    (void)klen;
    return hl_redis_command(argc, argv, argl, why);
}

static const hl_conc_redis_via_t store_via = { hl_redis_name, store_command, 0 };
static const hl_conc_redis_via_t *via = &store_via;   /* the refresher's */

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static hl_conc_redis_slot_t *held[HL_CONC_REDIS_HELD];  /* NULL: free */
static pthread_once_t refresher_once = PTHREAD_ONCE_INIT;
static uint64_t nonce;             /* this child's, made at its first slot */
static pid_t nonce_pid;
static uint32_t seq;

/* Refreshes the n slots of copy one call each (their keys live in
 * different cluster slots), ttl their new lifetime (ms, as text). */
static void refresh_each(const hl_conc_redis_slot_t *copy, int n, const char *ttl)
{
    const char *argv[6], *why;
    size_t argl[6];
    int i;

    argv[0] = "EVAL";
    argv[1] = refresh_script;
    argv[2] = "1";
    argv[4] = ttl;
    argl[0] = 4;
    argl[1] = strlen(refresh_script);
    argl[2] = 1;
    argl[4] = strlen(ttl);
    for (i = 0; i < n; ++i) {
        redisReply *reply;
        argv[3] = copy[i].key;
        argl[3] = copy[i].key_len;
        argv[5] = copy[i].member;
        argl[5] = copy[i].member_len;
        reply = via->command(copy[i].key, copy[i].key_len, 6, argv, argl, &why);
        if (reply)
            freeReplyObject(reply);
    }
}

/* The refresher thread: every HL_CONC_REDIS_EVERY_MS, moves the expiry of
 * every slot this child holds, in one script call. Runs until the child
 * exits. */
static void *refresher(void *arg)
{
    static hl_conc_redis_slot_t copy[HL_CONC_REDIS_HELD];
    const char *argv[3 + 2 * HL_CONC_REDIS_HELD], *why;
    size_t argl[3 + 2 * HL_CONC_REDIS_HELD];
    char nkeys[16], ttl[16];
    int i, n;
    (void)arg;

    for (;;) {
        usleep(HL_CONC_REDIS_EVERY_MS * 1000);
        pthread_mutex_lock(&held_lock);
        for (i = 0, n = 0; i < HL_CONC_REDIS_HELD; ++i)
            if (held[i])
                copy[n++] = *held[i];
        pthread_mutex_unlock(&held_lock);
        if (n == 0)
            continue;
        snprintf(ttl, sizeof(ttl), "%d", HL_CONC_REDIS_TTL_MS);
        if (via->per_key) {
            refresh_each(copy, n, ttl);
            continue;
        }
        snprintf(nkeys, sizeof(nkeys), "%d", n);
        argv[0] = "EVAL";
        argv[1] = refresh_script;
        argv[2] = nkeys;
        for (i = 0; i < n; ++i) {
            argv[3 + i] = copy[i].key;
            argl[3 + i] = copy[i].key_len;
            argv[4 + n + i] = copy[i].member;
            argl[4 + n + i] = copy[i].member_len;
        }
        argv[3 + n] = ttl;
        argl[3 + n] = strlen(ttl);
        for (i = 0; i < 3; ++i)
            argl[i] = strlen(argv[i]);
        {
            redisReply *reply = via->command(copy[0].key, copy[0].key_len,
                                             4 + 2 * n, argv, argl, &why);
            if (reply)
                freeReplyObject(reply);
        }
    }
    return NULL;
}

/* Starts the refresher (once per child). */
static void start_refresher(void)
{
    pthread_t t;
    pthread_attr_t attr;

    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_create(&t, &attr, refresher, NULL);
    pthread_attr_destroy(&attr);
}

/* Adds slot to the refreshed ones (dropped silently when
 * HL_CONC_REDIS_HELD are: it then expires after HL_CONC_REDIS_TTL_MS). */
static void hold(hl_conc_redis_slot_t *slot)
{
    int i;

    pthread_once(&refresher_once, start_refresher);
    pthread_mutex_lock(&held_lock);
    for (i = 0; i < HL_CONC_REDIS_HELD; ++i)
        if (!held[i]) {
            held[i] = slot;
            break;
        }
    pthread_mutex_unlock(&held_lock);
}

int hl_conc_redis_take(request_rec *r, uint64_t key, uint32_t limit,
                       hl_conc_redis_slot_t *slot)
{
    return hl_conc_redis_take_via(NULL, r, key, limit, slot);
}

void hl_conc_redis_give(hl_conc_redis_slot_t *slot)
{
    hl_conc_redis_give_via(NULL, slot);
}

int hl_conc_redis_take_via(const hl_conc_redis_via_t *how, request_rec *r,
                           uint64_t key, uint32_t limit,
                           hl_conc_redis_slot_t *slot)
{
    const char *argv[7], *why = "unknown";
    size_t argl[7];
    char tail[32], lim[16], ttl[16];
    redisReply *reply;
    int i, rc = -1;

    snprintf(tail, sizeof(tail), "conc:%016llx", (unsigned long long)key);
    if (!how)
        how = &store_via;
    via = how;
    slot->key_len = how->name(slot->key, tail, strlen(tail));
    if (slot->key_len == 0 || slot->key_len >= sizeof(slot->key))
        return -1;
    if (nonce_pid != getpid()) {
        if (apr_generate_random_bytes((unsigned char *)&nonce,
                                      sizeof(nonce)) != APR_SUCCESS)
            nonce = (uint64_t)apr_time_now();
        nonce_pid = getpid();
    }
    slot->member_len = (size_t)snprintf(slot->member, sizeof(slot->member),
                               "%016llx:%ld:%u", (unsigned long long)nonce,
                               (long)nonce_pid,
                               __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
    snprintf(lim, sizeof(lim), "%u", (unsigned)limit);
    snprintf(ttl, sizeof(ttl), "%d", HL_CONC_REDIS_TTL_MS);
    argv[0] = "EVAL";
    argv[1] = take_script;
    argv[2] = "1";
    argv[3] = slot->key;
    argv[4] = lim;
    argv[5] = ttl;
    argv[6] = slot->member;
    for (i = 0; i < 7; ++i)
        argl[i] = strlen(argv[i]);
    argl[3] = slot->key_len;
    argl[6] = slot->member_len;
    reply = how->command(slot->key, slot->key_len, 7, argv, argl, &why);
    if (!reply) {
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r,
                      "HL01505: HotLimitConcurrency: Redis cannot answer "
                      "(%s): this server's own count decides", why);
        return -1;
    }
    if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 2
        && reply->element[0]->type == REDIS_REPLY_INTEGER)
        rc = reply->element[0]->integer == 1 ? 1 : 0;
    else
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                      "HL01506: HotLimitConcurrency: unexpected Redis reply "
                      "(%s): this server's own count decides",
                      reply->type == REDIS_REPLY_ERROR && reply->str
                      ? reply->str : "not {taken, held}");
    freeReplyObject(reply);
    if (rc == 1)
        hold(slot);
    return rc;
}

void hl_conc_redis_give_via(const hl_conc_redis_via_t *how,
                            hl_conc_redis_slot_t *slot)
{
    const char *argv[3], *why;
    size_t argl[3];
    redisReply *reply;
    int i;

    pthread_mutex_lock(&held_lock);
    for (i = 0; i < HL_CONC_REDIS_HELD; ++i)
        if (held[i] == slot)
            held[i] = NULL;
    pthread_mutex_unlock(&held_lock);
    argv[0] = "ZREM";
    argv[1] = slot->key;
    argv[2] = slot->member;
    argl[0] = 4;
    argl[1] = slot->key_len;
    argl[2] = slot->member_len;
    reply = (how ? how : &store_via)->command(slot->key, slot->key_len, 3,
                                              argv, argl, &why);
    if (reply)
        freeReplyObject(reply);
}
