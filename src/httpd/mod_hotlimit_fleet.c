/*
 * mod_hotlimit_fleet.c - the cluster-wide view (issue 28; see
 * mod_hotlimit_fleet.h): every server sharing a Redis store shows the
 * whole attack, not its own share.
 *
 * Publishing: a refused request, in log_transaction (after its answer is
 * sent), wins at most once a second per server a compare-and-swap on an
 * integer in this server's shared memory; the winner writes the server's
 * view (hl_fleet.h: its HL_FLEET_REFUSED keys refused most now, its
 * HL_FLEET_BANS newest ban book entries) to PREFIX{hl}:view:ID, which
 * expires HL_FLEET_TTL_MS later, and lists ID in the sorted set
 * PREFIX{hl}:views (scored with the wall clock; ids not seen for an hour
 * are dropped), in one round trip. Admitted requests never pay a round
 * trip; a server that stops refusing drops out of the others' pages once
 * its view expires. ID is random, made once per httpd parent (a graceful
 * restart keeps it, so a server never counts its own old view).
 *
 * Reading: the status page reads the HL_FLEET_SERVERS most recently
 * published ids and their views (ZREVRANGE, then MGET: two round trips,
 * not while the breaker is open), leaves out its own, and forgets ids
 * whose view expired. Every key carries the {hl} tag: one slot, so under
 * any Redis provider (redis://, redis-sentinel://, redis-cluster://: the
 * master of that slot) the calls go to one server, through
 * mod_hotlimit_store_cmd.h.
 */
#include <string.h>

#include <hiredis/hiredis.h>

#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "http_protocol.h"
#include "apr_general.h"
#include "apr_strings.h"
#include "apr_shm.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_fleet.h"
#include "mod_hotlimit_store_cmd.h"
#include "mod_hotlimit_store_shm.h"
#include "mod_hotlimit_kept_shm.h"
#include "hl_redis_call.h"
#include "hl_fmt.h"

APLOG_USE_MODULE(hotlimit);

#define HL_FLEET_LIFE_KEY  "hotlimit-fleet"
#define HL_FLEET_POOL_KEY  "hotlimit-fleet-views"
#define HL_FLEET_PERIOD_MS 1000      /* a server publishes this often at most */
#define HL_FLEET_TTL_MS    5000      /* a view lives this long unrenewed */
#define HL_FLEET_FORGET_MS 3600000   /* an id unseen this long leaves the set */
#define HL_FLEET_SERVERS   64        /* views a page reads at most */
#define HL_FLEET_ID_LEN    16        /* hex digits of a server id */

/* Per httpd parent, in shared memory (kept across graceful restarts). */
typedef struct {
    int64_t next_ms;                 /* hl_mono_ms: publish again from then */
    char    id[HL_FLEET_ID_LEN + 1];
} hl_fleet_shared_t;

static hl_fleet_shared_t *fleet;

/* 1 when this generation's store speaks Redis (hl_store_cmd_possible):
 * only then may a refused request publish, and the usual server's
 * log_transaction asks nothing more. */
static int fleet_publishes;

/* The views read for one page (the pool's userdata). */
typedef struct {
    int              n;
    hl_fleet_view_t *views;
} hl_fleet_read_t;

/* Writes PREFIX{hl}:view:ID (id NUL-terminated) into out
 * (HL_REDIS_KEY_MAX bytes). Returns its length, 0 when the store is not
 * Redis. */
static size_t view_key(char *out, const char *id)
{
    char tail[8 + HL_FLEET_ID_LEN + 1];
    size_t n = (size_t)apr_snprintf(tail, sizeof(tail), "view:%s", id);

    return hl_store_cmd_name(out, tail, n);
}

/* ---- setup ---------------------------------------------------------------- */

/* post_config: finds or makes, once per httpd parent (its process pool),
 * the shared record with this server's random id. Returns OK, or an HTTP
 * error after logging (HL03300). */
static int fleet_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                             apr_pool_t *ptemp, server_rec *s)
{
    static const char hex[] = "0123456789abcdef";
    apr_pool_t *pp = s->process->pool;
    const hl_server_conf_t *sc = ap_get_module_config(s->module_config,
                                                      &hotlimit_module);
    unsigned char raw[HL_FLEET_ID_LEN / 2];
    hl_fleet_shared_t *f;
    apr_status_t rv;
    int i, created;
    (void)pconf;
    (void)plog;
    (void)ptemp;

    f = hl_kept_shm(pp, HL_FLEET_LIFE_KEY, sizeof(*f), &created, &rv);
    if (f && created && (rv = apr_generate_random_bytes(raw, sizeof(raw)))
                        == APR_SUCCESS)
        for (i = 0; i < (int)sizeof(raw); ++i) {
            f->id[2 * i] = hex[raw[i] >> 4];
            f->id[2 * i + 1] = hex[raw[i] & 15];
        }
    if (!f || rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s, "HL03300: cannot set "
                     "up the cluster-wide view's shared memory");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    fleet = f;
    fleet_publishes = hl_store_cmd_possible(sc->store);
    return OK;
}

/* ---- publishing ----------------------------------------------------------- */

/* Returns 1 if r (or a request it was internally redirected to) was
 * refused by a quota or a ban. */
static int was_refused(const request_rec *r)
{
    for (; r; r = r->next)
        if (apr_table_get(r->subprocess_env, "hotlimit-limited"))
            return 1;
    return 0;
}

/* Returns 1 if this request is the one that publishes now (at most once
 * per HL_FLEET_PERIOD_MS per server, by a compare-and-swap), else 0. */
static int my_turn(int64_t now)
{
    int64_t next = __atomic_load_n(&fleet->next_ms, __ATOMIC_RELAXED);

    return now >= next
           && __atomic_compare_exchange_n(&fleet->next_ms, &next,
                                          now + HL_FLEET_PERIOD_MS, 0,
                                          __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/* SET the view, list the id (scored ARGV[3], the wall clock), drop ids
 * unseen since ARGV[5], keep the set an hour: one atomic round trip. */
static const char publish_script[] =
    "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\n"
    "redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])\n"
    "redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[5])\n"
    "redis.call('PEXPIRE', KEYS[2], ARGV[6])\n"
    "return 1\n";

/* Writes this server's view (its refusals now and ban book at now, on
 * the monotonic clock; wall, the wall clock) to the store. Scratch memory
 * from p. Never fails: a failed call is logged at debug (HL03301) and
 * recorded on the breaker as any call's. */
static void publish(apr_pool_t *p, int64_t now, int64_t wall)
{
    hl_stats_t *st = hl_store_shm_stats();
    hl_fleet_view_t *v = apr_pcalloc(p, sizeof(*v));
    char *text = apr_palloc(p, HL_FLEET_TEXT_MAX);
    char key[HL_REDIS_KEY_MAX], set[HL_REDIS_KEY_MAX];
    char ttl[HL_FMT_U64_MAX], score[HL_FMT_U64_MAX], old[HL_FMT_U64_MAX];
    char keep[HL_FMT_U64_MAX];
    const char *argv[11], *why = "unknown";
    size_t argl[11];
    redisReply *reply;
    int i;

    if (!st)
        return;
    v->nrefused = hl_refusals_rank(&st->refusals, now, NULL, NULL,
                                   v->refused, HL_FLEET_REFUSED);
    hl_fleet_bans_from_book(&st->bans, v);
    argv[0] = "EVAL";
    argv[1] = publish_script;
    argv[2] = "2";
    argv[3] = key;
    argv[4] = set;
    argv[5] = text;
    argv[6] = ttl;
    argv[7] = score;
    argv[8] = fleet->id;
    argv[9] = old;
    argv[10] = keep;
    argl[3] = view_key(key, fleet->id);
    argl[4] = hl_store_cmd_name(set, "views", 5);
    argl[5] = hl_fleet_encode(v, text, HL_FLEET_TEXT_MAX);
    argl[6] = hl_fmt_u64(ttl, HL_FLEET_TTL_MS);
    argl[7] = hl_fmt_u64(score, (uint64_t)wall);
    argl[9] = hl_fmt_u64(old, (uint64_t)(wall > HL_FLEET_FORGET_MS
                                         ? wall - HL_FLEET_FORGET_MS : 0));
    argl[10] = hl_fmt_u64(keep, HL_FLEET_FORGET_MS);
    if (!argl[3] || !argl[4] || !argl[5])
        return;
    for (i = 0; i < 11; ++i)
        if (i < 3 || i == 8)
            argl[i] = strlen(argv[i]);
    reply = hl_store_cmd_send(11, argv, argl, &why);
    if (!reply || reply->type == REDIS_REPLY_ERROR)
        ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, hl_store_cmd_server(),
                     "HL03301: Redis store %s: cannot publish this server's "
                     "view (%s)", hl_store_cmd_where(),
                     reply && reply->str ? reply->str : why);
    if (reply)
        freeReplyObject(reply);
}

/* log_transaction: a refused request publishes this server's view when
 * it is its turn. Returns DECLINED. */
static int fleet_log_transaction(request_rec *r)
{
    int64_t now;

    if (!fleet_publishes || !fleet || !hl_store_cmd_up() || !was_refused(r))
        return DECLINED;
    now = hl_mono_ms();
    if (my_turn(now))
        publish(r->pool, now, hl_now_ms());
    return DECLINED;
}

void hl_fleet_register(void)
{
    ap_hook_post_config(fleet_post_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_log_transaction(fleet_log_transaction, NULL, NULL, APR_HOOK_LAST);
}

/* ---- reading -------------------------------------------------------------- */

/* Returns the reply to ZREVRANGE PREFIX{hl}:views 0 HL_FLEET_SERVERS-1
 * (the caller frees it), or NULL with *why set. */
static redisReply *list_ids(const char **why)
{
    char set[HL_REDIS_KEY_MAX], last[HL_FMT_U64_MAX];
    const char *argv[4] = { "ZREVRANGE", set, "0", last };
    size_t argl[4] = { 9, 0, 1, 0 };

    argl[1] = hl_store_cmd_name(set, "views", 5);
    argl[3] = hl_fmt_u64(last, HL_FLEET_SERVERS - 1);
    return hl_store_cmd_send(4, argv, argl, why);
}

/* Takes the ids of ids[0 .. n) whose views are gone (gone[i]) out of
 * PREFIX{hl}:views. Never fails (the next page tries again). */
static void forget(apr_pool_t *p, const redisReply *ids, const int *gone)
{
    const char **argv = apr_palloc(p, sizeof(*argv) * (2 + ids->elements));
    size_t *argl = apr_palloc(p, sizeof(*argl) * (2 + ids->elements));
    char set[HL_REDIS_KEY_MAX];
    const char *why = "unknown";
    redisReply *reply;
    size_t i;
    int k = 2;

    argv[0] = "ZREM";
    argl[0] = 4;
    argv[1] = set;
    argl[1] = hl_store_cmd_name(set, "views", 5);
    for (i = 0; i < ids->elements; ++i)
        if (gone[i]) {
            argv[k] = ids->element[i]->str;
            argl[k++] = ids->element[i]->len;
        }
    reply = hl_store_cmd_send(k, argv, argl, &why);
    if (reply)
        freeReplyObject(reply);
}

/* Reads the other servers' views into *out (from p). Returns 0, or -1
 * with *why set. */
static int read_views(apr_pool_t *p, hl_fleet_read_t *out, const char **why)
{
    redisReply *ids = list_ids(why), *views;
    const char **argv;
    size_t *argl, i;
    int *gone, k = 1, ngone = 0;

    if (!ids)
        return -1;
    if (ids->type != REDIS_REPLY_ARRAY) {
        *why = ids->type == REDIS_REPLY_ERROR && ids->str ? apr_pstrdup(p, ids->str)
                                                         : "not a list";
        freeReplyObject(ids);
        return -1;
    }
    out->views = apr_pcalloc(p, sizeof(*out->views) * (ids->elements + 1));
    argv = apr_palloc(p, sizeof(*argv) * (1 + ids->elements));
    argl = apr_palloc(p, sizeof(*argl) * (1 + ids->elements));
    gone = apr_pcalloc(p, sizeof(*gone) * (ids->elements + 1));
    argv[0] = "MGET";
    argl[0] = 4;
    for (i = 0; i < ids->elements; ++i) {
        const redisReply *id = ids->element[i];
        char *key = apr_palloc(p, HL_REDIS_KEY_MAX);
        if (id->type != REDIS_REPLY_STRING || id->len > HL_FLEET_ID_LEN)
            continue;
        argv[k] = key;
        argl[k++] = view_key(key, apr_pstrmemdup(p, id->str, id->len));
    }
    views = k > 1 ? hl_store_cmd_send(k, argv, argl, why) : NULL;
    if (k > 1 && !views) {
        freeReplyObject(ids);
        return -1;
    }
    for (i = 0, k = 0; views && views->type == REDIS_REPLY_ARRAY
                       && i < ids->elements; ++i) {
        const redisReply *id = ids->element[i], *v;
        if (id->type != REDIS_REPLY_STRING || id->len > HL_FLEET_ID_LEN)
            continue;
        v = (size_t)k < views->elements ? views->element[k] : NULL;
        k++;
        if (!v || v->type != REDIS_REPLY_STRING) {
            gone[i] = 1;
            ngone++;
        }
        else if ((id->len != HL_FLEET_ID_LEN || memcmp(id->str, fleet->id, id->len))
                 && hl_fleet_decode(v->str, v->len, &out->views[out->n]) == 0)
            out->n++;
    }
    if (ngone)
        forget(p, ids, gone);
    if (views)
        freeReplyObject(views);
    freeReplyObject(ids);
    return 0;
}

/* Returns the other servers' views, read once per pool p (then kept in
 * its userdata): none when the store is not Redis, its breaker is open,
 * or the read fails (logged at debug). Never NULL. */
static const hl_fleet_read_t *views_of(apr_pool_t *p)
{
    hl_fleet_read_t *got = NULL;
    const char *why = "unknown";

    apr_pool_userdata_get((void **)&got, HL_FLEET_POOL_KEY, p);
    if (got)
        return got;
    got = apr_pcalloc(p, sizeof(*got));
    if (fleet && hl_store_cmd_up() && read_views(p, got, &why) != 0) {
        got->n = 0;
        ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, hl_store_cmd_server(),
                     "HL03310: Redis store %s: cannot read the other servers' "
                     "views (%s): the page shows this server's own",
                     hl_store_cmd_where(), why);
    }
    apr_pool_userdata_setn(got, HL_FLEET_POOL_KEY, apr_pool_cleanup_null, p);
    return got;
}

int hl_fleet_add_refused(apr_pool_t *p, hl_refusal_rank_t *rank, int n,
                         int max, int (*keep)(const char *, size_t, void *),
                         void *baton, int *servers)
{
    const hl_fleet_read_t *got = views_of(p);
    int i;

    *servers = got->n;
    for (i = 0; i < got->n; ++i)
        n = hl_fleet_merge(rank, n, max, got->views[i].refused,
                           got->views[i].nrefused, keep, baton);
    return n;
}

const hl_banbook_entry_t *hl_fleet_ban_of(apr_pool_t *p, const char *key)
{
    const hl_fleet_read_t *got = views_of(p);

    return hl_fleet_find_ban(got->views, got->n, key);
}
