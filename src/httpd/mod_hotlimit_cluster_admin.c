/*
 * mod_hotlimit_cluster_admin.c - redis-cluster://'s keys at their limit
 * and resets (see mod_hotlimit_cluster_admin.h). The listing asks each
 * master, in one pipeline, the script's listing (mode "l") of every
 * bucket whose slot it serves, after SCRIPT LOAD in the same write (the
 * script cache is per node): 1024 small calls over the whole cluster.
 */
#include <string.h>
#include <stdlib.h>

#include <hiredis/hiredis.h>

#include "httpd.h"
#include "http_config.h"
#include "http_log.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_cluster.h"
#include "mod_hotlimit_cluster_conn.h"
#include "mod_hotlimit_cluster_admin.h"
#include "mod_hotlimit_redis.h"
#include "mod_hotlimit_store_shm.h"
#include "hl_cluster.h"
#include "hl_cluster_tags.h"
#include "hl_limiter.h"
#include "hl_fmt.h"
#include "hl_clock.h"

APLOG_USE_MODULE(hotlimit);

#define SLOT_OF(b) ((b) * (HL_CLUSTER_SLOTS / HL_CLUSTER_BUCKETS))

/* Keeps e in out (n of max used), dropping the one with the least time
 * left when full. Returns the new n. */
static int keep(hl_store_limited_t *out, int n, int max, const hl_store_limited_t *e)
{
    int i, least = 0;

    if (n < max) {
        out[n] = *e;
        return n + 1;
    }
    for (i = 1; i < n; ++i)
        if (out[i].left_ms < out[least].left_ms)
            least = i;
    if (n > 0 && e->left_ms > out[least].left_ms)
        out[least] = *e;
    return n;
}

/* qsort: the most time left first. */
static int by_left(const void *a, const void *b)
{
    int64_t x = ((const hl_store_limited_t *)a)->left_ms;
    int64_t y = ((const hl_store_limited_t *)b)->left_ms;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Adds the entries of bucket's listing reply to out (n of max), their
 * number to *total. Returns the new n. */
static int read_listing(const redisReply *reply, unsigned bucket,
                        hl_store_limited_t *out, int n, int max, uint32_t *total)
{
    const hl_redis_script_t *s = hl_cluster_script();
    char head[HL_REDIS_KEY_MAX];
    size_t hlen = hl_redis_key_tag(head, s->prefix, hl_cluster_bucket_tag(bucket), "", 0), i;
    hl_store_limited_t e;
    int64_t now;

    if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 2
        || reply->element[0]->type != REDIS_REPLY_INTEGER
        || reply->element[1]->type != REDIS_REPLY_INTEGER)
        return n;
    now = reply->element[0]->integer;
    if (reply->element[1]->integer > 0)
        *total += (uint32_t)reply->element[1]->integer;
    for (i = 2; i + 2 < reply->elements; i += 3) {
        const redisReply *key = reply->element[i];
        if (key->type != REDIS_REPLY_STRING || key->len <= hlen
            || memcmp(key->str, head, hlen) || key->len - hlen > HL_KEY_MAX
            || reply->element[i + 1]->type != REDIS_REPLY_INTEGER
            || reply->element[i + 2]->type != REDIS_REPLY_INTEGER)
            continue;
        e.len = key->len - hlen;
        memcpy(e.key, key->str + hlen, e.len);
        e.left_ms = reply->element[i + 1]->integer - now;
        e.count = reply->element[i + 2]->integer > 0
                  ? (uint32_t)reply->element[i + 2]->integer : 0;
        n = keep(out, n, max, &e);
    }
    return n;
}

/* Formats the listing call of bucket (EVALSHA ... l max) into *cmd (the
 * caller frees it with redisFreeCommand). Returns its length, or -1. */
static int list_command(char **cmd, unsigned bucket, int max, int bans)
{
    const hl_redis_script_t *s = hl_cluster_script();
    char zkey[HL_REDIS_KEY_MAX], num[HL_FMT_U64_MAX];
    const char *argv[6] = { "EVALSHA", s->sha, "1", zkey, "l", num };
    size_t argl[6] = { 7, 40, 1, 0, 1, 0 };
    const char *tag = hl_cluster_bucket_tag(bucket);

    argl[3] = bans ? hl_redis_key_tag(zkey, s->prefix, tag, "bans", 4)
                   : hl_redis_key_tag(zkey, s->prefix, tag, "limited", 7);
    argl[5] = hl_fmt_u64(num, (uint64_t)max);
    return redisFormatCommandArgv(cmd, 6, argv, argl);
}

/* Asks the master of node (the buckets of it in b[0 .. nb)) for their
 * listings, adding them to out. Returns the new n, or -1 when it did not
 * answer. */
static int list_node(const unsigned *b, int nb, hl_store_limited_t *out, int n,
                     int max, int bans, uint32_t *total, int64_t deadline)
{
    const hl_redis_script_t *s = hl_cluster_script();
    char **cmd = calloc((size_t)nb + 1, sizeof(*cmd));
    size_t *len = calloc((size_t)nb + 1, sizeof(*len));
    redisReply **rep = calloc((size_t)nb + 1, sizeof(*rep));
    const char *load[3] = { "SCRIPT", "LOAD", s->script }, *why = "unknown";
    size_t loadl[3] = { 6, 4, strlen(s->script) };
    int i, ok = cmd && len && rep;

    for (i = 0; ok && i <= nb; ++i) {
        int l = i == 0 ? redisFormatCommandArgv(&cmd[0], 3, load, loadl)
                       : list_command(&cmd[i], b[i - 1], max, bans);
        ok = l > 0;
        len[i] = ok ? (size_t)l : 0;
    }
    if (ok && hl_cluster_pipeline(SLOT_OF(b[0]), (const char *const *)cmd, len,
                                  nb + 1, rep, deadline, &why) == 0) {
        for (i = 1; i <= nb; ++i)
            n = read_listing(rep[i], b[i - 1], out, n, max, total);
        for (i = 0; i <= nb; ++i)
            freeReplyObject(rep[i]);
    }
    else {
        ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, NULL,
                     "HL03206: Redis Cluster: a master did not list its keys "
                     "at their limit (%s)", why);
        n = -1;
    }
    for (i = 0; cmd && i <= nb; ++i)
        if (cmd[i])
            redisFreeCommand(cmd[i]);
    free(cmd);
    free(len);
    free(rep);
    return n;
}

int hl_cluster_limited(void *ctx, hl_store_limited_t *out, int max, int bans,
                       uint32_t *total)
{
    int node_of[HL_CLUSTER_BUCKETS], done[HL_CLUSTER_BUCKETS];
    unsigned b[HL_CLUSTER_BUCKETS], i, j;
    int64_t deadline;
    int n = 0, answered = 0;
    (void)ctx;

    if (!hl_cluster_script() || max <= 0)
        return -1;
    *total = 0;
    deadline = hl_mono_ms() + hl_cluster_timeout_ms();
    for (i = 0; i < HL_CLUSTER_BUCKETS; ++i) {
        node_of[i] = hl_cluster_slot_node(SLOT_OF(i), deadline);
        done[i] = node_of[i] < 0;
    }
    for (i = 0; i < HL_CLUSTER_BUCKETS; ++i) {
        int nb = 0, got;
        if (done[i])
            continue;
        for (j = i; j < HL_CLUSTER_BUCKETS; ++j)
            if (!done[j] && node_of[j] == node_of[i]) {
                b[nb++] = j;
                done[j] = 1;
            }
        got = list_node(b, nb, out, n, max, bans, total,
                        hl_mono_ms() + hl_cluster_timeout_ms());
        if (got >= 0) {
            n = got;
            answered = 1;
        }
    }
    if (!answered)
        return -1;
    qsort(out, (size_t)n, sizeof(*out), by_left);
    return n;
}

/* Sends argv (argc, lengths argl) to the master of slot. Returns the
 * integer it answered, or -1. */
static long long send_keys(unsigned slot, int argc, const char **argv,
                           const size_t *argl, int64_t deadline)
{
    const char *why = "unknown";
    redisReply *reply = hl_cluster_command(slot, argc, argv, argl, deadline, &why);
    long long out = -1;

    if (reply && reply->type == REDIS_REPLY_INTEGER)
        out = reply->integer;
    if (reply)
        freeReplyObject(reply);
    return out;
}

int hl_cluster_reset(void *ctx, const char *key, size_t len)
{
    static const hl_origin_t origins[] = { HL_ORIGIN_DIRECTIVE, HL_ORIGIN_TABLE };
    enum { NKEYS = 2 * HL_MAX_WINDOWS };
    const hl_store_t *local = hl_store_shm();
    const hl_redis_script_t *s = hl_cluster_script();
    unsigned bucket = hl_cluster_key_bucket(key, len);
    const char *tag = hl_cluster_bucket_tag(bucket), *argv[2 + NKEYS];
    char full[NKEYS][HL_REDIS_KEY_MAX], zkey[HL_REDIS_KEY_MAX];
    size_t argl[2 + NKEYS];
    int removed = local->ops->reset(local->ctx, key, len), o, w, k = 0;
    int64_t deadline = hl_mono_ms() + hl_cluster_timeout_ms();
    long long got;
    (void)ctx;

    if (!s)
        return removed;
    for (o = 0; o < 2; ++o)
        for (w = 0; w < HL_MAX_WINDOWS; ++w, ++k) {
            char skey[HL_KEY_MAX];
            size_t slen = hl_limiter_slot_key(skey, origins[o], w, key, len);
            argv[2 + k] = full[k];
            argl[2 + k] = hl_redis_key_tag(full[k], s->prefix, tag, skey, slen);
        }
    argv[1] = "DEL";
    argl[1] = 3;
    got = send_keys(SLOT_OF(bucket), 1 + NKEYS, argv + 1, argl + 1, deadline);
    if (got > 0)
        removed += (int)got;
    if (got >= 0) {
        argv[0] = "ZREM";
        argl[0] = 4;
        argv[1] = zkey;
        argl[1] = hl_redis_key_tag(zkey, s->prefix, tag, "limited", 7);
        send_keys(SLOT_OF(bucket), 2 + NKEYS, argv, argl, deadline);
    }
    hl_redis_forget_refused();
    return removed;
}
