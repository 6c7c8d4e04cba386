/*
 * mod_hotlimit_cluster.c - HotLimitStore
 * redis-cluster://[USER:PASSWORD@]HOST:PORT[,HOST:PORT...][?prefix=P]: the
 * Redis store's decisions (its script, call and reply reading,
 * mod_hotlimit_redis.c and hl_redis_call.c) on a Redis Cluster.
 *
 * Each item's keys carry the tag of its client key's bucket,
 * PREFIX{hl:B.S}:slotkey (hl_cluster_key_bucket), so one client's keys
 * share a slot and clients spread evenly over the masters. A decision
 * whose items live in different buckets runs one script per bucket, each
 * on its slot's master, in the order of the items; once one refuses, the
 * later ones are not asked, and the units the admitted ones took are
 * given back (the script's refund "r", or settle "s" to 0 for a
 * reservation, by the marks they returned), so a refused request is
 * counted nowhere once its decision ends. What one script did not allow:
 * between a group's admission and its give-back, another server may see
 * that unit taken and be refused where it would have been admitted (a
 * refusal too many, never an admission too many).
 *
 * A group whose master cannot be asked (its breaker open, a timeout, no
 * master known) is decided by HotLimitStoreFailure (local: with the local
 * counters, after the groups the cluster decided), so a down or stalled
 * master sends only its own keys to the fallback. A refused client
 * carries the Redis store's "refused until T" note (per thread, trusted a
 * second at most), so a flood of refused requests does not each cost a
 * round trip. No lease here (every other decision asks its masters).
 * HotLimitConcurrency's slots are the Redis store's
 * (mod_hotlimit_conc_redis.c), each key's set under its bucket's tag on
 * its master, refreshed one call per slot.
 */
#include <string.h>
#include <stdlib.h>

#include <hiredis/hiredis.h>

#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "apr_strings.h"
#include "apr_sha1.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_cluster.h"
#include "mod_hotlimit_cluster_conn.h"
#include "mod_hotlimit_cluster_admin.h"
#include "mod_hotlimit_redis.h"
#include "mod_hotlimit_redis_url.h"
#include "mod_hotlimit_store_shm.h"
#include "mod_hotlimit_conc_redis.h"
#include "mod_hotlimit_device.h"
#include "hl_redis_script.h"
#include "hl_cluster.h"
#include "hl_cluster_tags.h"
#include "hl_clock.h"

APLOG_USE_MODULE(hotlimit);

#define SCHEME "redis-cluster://"

static const hl_server_conf_t *csc;      /* HotLimitStoreTimeout, ...Failure */
static char script_sha[41];
static hl_redis_script_t script;         /* prefix, text, SHA; tag per call */
static const char *cwhere = "";          /* the conf's label, for messages */
static server_rec *cmain;                /* the main server, for logs */

/* ---- configuration ------------------------------------------------------ */

/* Parses HOST:PORT (IPv6 in brackets) token into seed c->n_seeds.
 * Returns NULL, or what is wrong (from p). */
static const char *parse_seed(apr_pool_t *p, hl_cluster_conf_t *c,
                              const char *token)
{
    const char *host, *why;
    int port;

    if ((why = hl_redis_parse_hostport(p, token, &host, &port)) != NULL)
        return apr_pstrcat(p, "node ", why, NULL);
    if (c->n_seeds == HL_CLUSTER_SEEDS_MAX)
        return apr_psprintf(p, "node '%s': at most %d seed nodes", token,
                            HL_CLUSTER_SEEDS_MAX);
    c->seed_host[c->n_seeds] = host;
    c->seed_port[c->n_seeds++] = port;
    return NULL;
}

/* Parses ?prefix=P (opts, from p) into c. Returns NULL, or what is
 * wrong. */
static const char *parse_options(apr_pool_t *p, hl_cluster_conf_t *c, char *opts)
{
    char *opt, *last;

    for (opt = apr_strtok(opts, "&", &last); opt; opt = apr_strtok(NULL, "&", &last)) {
        if (strncmp(opt, "prefix=", 7) || !opt[7])
            return apr_psprintf(p, "unknown option '%s' (use prefix=P)", opt);
        c->prefix = opt + 7;
    }
    if (!hl_cluster_prefix_ok(c->prefix, strlen(c->prefix)))
        return apr_psprintf(p, "prefix '%s' holds '{': Redis would hash it "
                            "instead of the bucket tag after it, putting "
                            "every key in one slot", c->prefix);
    if (strlen(c->prefix) > HL_REDIS_PREFIX_MAX || strpbrk(c->prefix, "} \t\r\n"))
        return apr_psprintf(p, "prefix '%s': at most %d bytes, without braces "
                            "or spaces", c->prefix, HL_REDIS_PREFIX_MAX);
    return NULL;
}

/* Parses redis-cluster://[USER:PASSWORD@]HOST:PORT[,HOST:PORT...][?prefix=P]
 * into *out (a hl_cluster_conf_t from p). Returns NULL, or what is wrong.
 * The provider's parse. */
static const char *cluster_parse(apr_pool_t *p, const char *url, void **out)
{
    hl_cluster_conf_t *c = apr_pcalloc(p, sizeof(*c));
    const char *rest, *at, *q, *why;
    char *list, *tok, *last;
    int i;

    if (!strncmp(url, "rediss-cluster://", 17))
        return "rediss-cluster:// (TLS) needs hiredis with SSL support, which "
               "Debian 12's hiredis 0.14 does not have: use redis-cluster:// "
               "over a trusted network or a TLS tunnel";
    if (strncmp(url, SCHEME, sizeof(SCHEME) - 1))
        return "use " SCHEME "[USER:PASSWORD@]HOST:PORT[,HOST:PORT...][?prefix=P]";
    rest = url + sizeof(SCHEME) - 1;
    q = strchr(rest, '?');
    at = strchr(rest, '@');
    if (at && (!q || at < q)) {
        char *cred = apr_pstrmemdup(p, rest, (apr_size_t)(at - rest));
        char *colon = strchr(cred, ':');
        if (colon) {
            *colon = '\0';
            c->user = *cred ? cred : NULL;
            c->password = colon + 1;
        }
        else
            c->password = cred;
        rest = at + 1;
    }
    list = q ? apr_pstrmemdup(p, rest, (apr_size_t)(q - rest)) : apr_pstrdup(p, rest);
    if (!*list || strchr(list, '/'))
        return "needs HOST:PORT[,HOST:PORT...] (no /DB: a cluster has database 0 only)";
    for (tok = apr_strtok(list, ",", &last); tok; tok = apr_strtok(NULL, ",", &last))
        if ((why = parse_seed(p, c, tok)) != NULL)
            return why;
    c->prefix = "hl:";
    if (q && (why = parse_options(p, c, apr_pstrdup(p, q + 1))) != NULL)
        return why;
    c->label = apr_psprintf(p, "cluster %s:%d", c->seed_host[0], c->seed_port[0]);
    for (i = 1; i < c->n_seeds; ++i)
        c->label = apr_psprintf(p, "%s,%s:%d", c->label, c->seed_host[i], c->seed_port[i]);
    *out = c;
    return NULL;
}

/* ---- keys and calls ------------------------------------------------------------ */

unsigned hl_cluster_key_bucket(const char *key, size_t len)
{
    const char *bar = memchr(key, '|', len);
    const char *client = bar ? bar + 1 : key;

    return hl_cluster_bucket(hl_secret_hash(client, len - (size_t)(client - key)));
}

const hl_redis_script_t *hl_cluster_script(void)
{
    return csc ? &script : NULL;
}

size_t hl_cluster_hl_name(char *out, const char *tail, size_t n)
{
    return csc ? hl_redis_key_tag(out, script.prefix, NULL, tail, n) : 0;
}

redisReply *hl_cluster_hl_command(int argc, const char **argv,
                                  const size_t *argl, const char **why)
{
    if (!csc) {
        *why = "not configured";
        return NULL;
    }
    return hl_cluster_command(hl_cluster_keyslot("{hl}", 4), argc, argv, argl,
                              hl_mono_ms() + csc->store_timeout, why);
}

const char *hl_cluster_where(void)
{
    return cwhere;
}

server_rec *hl_cluster_server(void)
{
    return cmain;
}

/* Each thread keeps its call buffer for its life (hl_redis_call.h). */
static __thread hl_redis_call_t thread_call;

/* Returns this thread's call buffer (not inlined: see mod_hotlimit_redis.c). */
static __attribute__((noinline)) hl_redis_call_t *this_thread_call(void)
{
    return &thread_call;
}

/* One script call of items[0 .. n), all of bucket. */
typedef struct {
    hl_decide_item_t *const *items;
    int                      n;
    unsigned                 bucket;
    const char              *mode;
    uint32_t                 cost;
} call_t;

/* hl_cluster_build_fn of a call_t. */
static int build(void *arg, int eval, const char **cmd, size_t *len)
{
    const call_t *k = arg;
    hl_redis_call_t *c = this_thread_call();
    hl_redis_script_t s = script;

    s.tag = hl_cluster_bucket_tag(k->bucket);
    if (hl_redis_call_build(c, &s, eval, k->items, k->n, k->mode, k->cost, 0) != 0)
        return -1;
    *cmd = c->buf + c->start;
    *len = c->len - c->start;
    return 0;
}

/* Runs the script (mode, cost) over items (n, all of bucket) on their
 * master within HotLimitStoreTimeout. Returns its reply, a string of
 * integers or an array (hl_redis_reply_integers reads both; the caller
 * frees it), or NULL with *why set. */
static redisReply *run(hl_decide_item_t *const *items, int n, unsigned bucket,
                       const char *mode, uint32_t cost, const char **why)
{
    call_t k = { items, n, bucket, mode, cost };
    redisReply *reply = hl_cluster_call(bucket * (HL_CLUSTER_SLOTS / HL_CLUSTER_BUCKETS),
                                        build, &k, hl_mono_ms() + csc->store_timeout, why);

    if (reply && reply->type != REDIS_REPLY_ARRAY && reply->type != REDIS_REPLY_STRING) {
        *why = "script error";
        freeReplyObject(reply);
        return NULL;
    }
    return reply;
}

/* Counts one decision (or part) left to HotLimitStoreFailure. */
static void count_fallback(void)
{
    __atomic_add_fetch(&hl_cluster_figures()->fallbacks, 1, __ATOMIC_RELAXED);
}

/* Gives back what the admitted it took at its decision on bucket's
 * master (refund, or settle to 0 for a reservation), by its marks.
 * Never fails: a give-back that cannot reach the master leaves the units
 * counted there (a refusal too many, never an admission). */
static void give_back(hl_decide_item_t *it, unsigned bucket)
{
    hl_decide_item_t *one[1];
    const char *why = "unknown";
    redisReply *reply;
    int j, marked = 0;

    for (j = 0; j < it->quota->nwindows && j < HL_MAX_WINDOWS; ++j)
        marked |= it->decision.marks[j] != 0;
    if (!marked || hl_decide_units(it) == 0)
        return;
    one[0] = it;
    reply = run(one, 1, bucket, it->reserve > 0 ? "s" : "r", 0, &why);
    if (reply)
        freeReplyObject(reply);
}

/* ---- the decision -------------------------------------------------------------- */

/* Decides the items left to HotLimitStoreFailure (n): 1/0 from the local
 * store, 1 (open), or -2 (closed). */
static int fallback(hl_decide_item_t *const *items, int n, int64_t now)
{
    const hl_store_t *local = hl_store_shm();
    int i;

    count_fallback();
    if (csc->store_failure == HL_STORE_FAIL_CLOSED)
        return -2;
    if (csc->store_failure == HL_STORE_FAIL_LOCAL)
        return local->ops->decide(local->ctx, items, n, now);
    for (i = 0; i < n; ++i) {
        memset(&items[i]->decision, 0, sizeof(items[i]->decision));
        items[i]->decision.admit = 1;
        items[i]->decision.nwindows = items[i]->quota->nwindows;
    }
    hl_decide_stats(hl_store_shm_stats(), items, n, now);
    return 1;
}

/* The items of one decision sorted into groups of one bucket each, in
 * the order of their first item. */
typedef struct {
    hl_decide_item_t *item[HL_DECIDE_MAX];
    int               start[HL_DECIDE_MAX], len[HL_DECIDE_MAX];
    unsigned          bucket[HL_DECIDE_MAX];
    int               n;
} groups_t;

/* Fills g from items (n). */
static void group(hl_decide_item_t *const *items, int n, groups_t *g)
{
    unsigned b[HL_DECIDE_MAX];
    int i, k, at = 0;

    g->n = 0;
    for (i = 0; i < n; ++i)
        b[i] = hl_cluster_key_bucket(items[i]->key, items[i]->key_len);
    for (i = 0; i < n; ++i) {
        for (k = 0; k < g->n && g->bucket[k] != b[i]; ++k)
            ;
        if (k < g->n)
            continue;
        g->bucket[g->n] = b[i];
        g->start[g->n] = at;
        for (k = i; k < n; ++k)
            if (b[k] == b[i])
                g->item[at++] = items[k];
        g->len[g->n] = at - g->start[g->n];
        g->n++;
    }
}

/* The store's `decide` call (hl_store.h): one script per bucket of the
 * items, on its master, in order; a refusal ends it and gives back what
 * the admitted groups took; groups whose master cannot answer are decided
 * together by HotLimitStoreFailure. Returns 1, 0, or -2 (closed). Every
 * reply is freed here. */
static int cluster_decide(void *ctx, hl_decide_item_t *const *items, int n,
                          int64_t now)
{
    groups_t g;
    redisReply *reply[HL_DECIDE_MAX] = { NULL };
    hl_decide_item_t *local[HL_DECIDE_MAX], *asked[HL_DECIDE_MAX];
    int admit[HL_DECIDE_MAX], nlocal = 0, nasked = 0, refused = 0, result, k, i;
    const char *why = "unknown";
    uint64_t note = hl_redis_note_key(items, n);
    (void)ctx;

    if (hl_redis_noted(note, items, n, now)) {   /* refused a moment ago */
        hl_decide_stats(hl_store_shm_stats(), items, n, now);
        return 0;
    }
    group(items, n, &g);
    for (k = 0; k < g.n; ++k) {
        hl_decide_item_t **gi = g.item + g.start[k];

        admit[k] = -1;
        if (refused) {
            for (i = 0; i < g.len[k]; ++i)
                hl_decide_not_asked(gi[i]);
            continue;
        }
        if (!(reply[k] = run(gi, g.len[k], g.bucket[k], "d", 1, &why))
            || (admit[k] = hl_redis_read_decisions(reply[k], gi, g.len[k])) < 0) {
            if (reply[k])            /* a reply that does not fit */
                freeReplyObject(reply[k]);
            reply[k] = NULL;
            for (i = 0; i < g.len[k]; ++i)
                local[nlocal++] = gi[i];
            continue;
        }
        for (i = 0; i < g.len[k]; ++i)
            asked[nasked++] = gi[i];
        if (admit[k] == 0) {
            refused = 1;
            if (g.len[k] > 1 && gi[0]->peek && !gi[0]->dry_run && !gi[0]->decision.admit)
                for (i = 1; i < g.len[k]; ++i)   /* a ban refused: not asked */
                    hl_decide_not_asked(gi[i]);
        }
    }
    result = !refused;
    if (nlocal > 0) {
        if (refused)
            for (i = 0; i < nlocal; ++i)
                hl_decide_not_asked(local[i]);
        else
            result = fallback(local, nlocal, now);
    }
    for (k = 0; k < g.n; ++k) {
        if (!reply[k])
            continue;
        if (result != 1 && admit[k] == 1)   /* counted nowhere once refused */
            for (i = 0; i < g.len[k]; ++i)
                give_back(g.item[g.start[k] + i], g.bucket[k]);
        else if (csc->store_failure == HL_STORE_FAIL_LOCAL)
            hl_redis_follow(reply[k], g.item + g.start[k], g.len[k], 0, 0);
        freeReplyObject(reply[k]);
    }
    if (nasked > 0)
        hl_decide_stats(hl_store_shm_stats(), asked, nasked, now);
    if (result == 0 && nlocal == 0)
        hl_redis_note_refused(note, items, now);
    return result;
}

/* Runs mode ("c" count, "r" refund, "s" settle) of cost for it on its
 * master, or on the local counters under HotLimitStoreFailure local when
 * the master cannot be asked. Returns the first integer of the reply
 * (count: 0), or the local store's answer. */
static int one_item(const hl_decide_item_t *it, const char *mode, uint32_t cost,
                    int64_t now)
{
    const hl_store_t *local = hl_store_shm();
    hl_decide_item_t *one[1];
    unsigned bucket = hl_cluster_key_bucket(it->key, it->key_len);
    const char *why = "unknown";
    redisReply *reply;
    int out = 0;

    one[0] = (hl_decide_item_t *)it;
    reply = run(one, 1, bucket, mode, cost, &why);
    if (!reply) {
        /* The master cannot be asked (its breaker open, or this call
         * failed): the local counters, where a decision of the outage
         * counted it (a mark of the cluster's never matches a local
         * counter: nothing is given back where it was not taken). */
        if (csc->store_failure != HL_STORE_FAIL_LOCAL)
            return 0;
        return mode[0] == 'c' ? local->ops->count(local->ctx, it, cost, now)
               : mode[0] == 'r' ? local->ops->refund(local->ctx, it, now)
               : local->ops->settle(local->ctx, it, cost, now);
    }
    if (mode[0] == 'c') {
        if (csc->store_failure == HL_STORE_FAIL_LOCAL)
            hl_redis_follow(reply, one, 1, 1, cost);
    }
    else {
        long long el[1];
        if (hl_redis_reply_integers(reply, el, 1) == 1)
            out = (int)el[0];
    }
    freeReplyObject(reply);
    return out;
}

/* The store's `count` call: mode "c" on its master (one_item). */
static int cluster_count(void *ctx, const hl_decide_item_t *it, uint32_t cost,
                         int64_t now)
{
    (void)ctx;
    return one_item(it, "c", cost, now);
}

/* The store's `refund` call: mode "r" by its marks, 0 when nothing was
 * counted. Returns the windows given back. */
static int cluster_refund(void *ctx, const hl_decide_item_t *it, int64_t now)
{
    int j, marked = 0;
    (void)ctx;

    for (j = 0; j < it->quota->nwindows && j < HL_MAX_WINDOWS; ++j)
        marked |= it->decision.marks[j] != 0;
    return marked ? one_item(it, "r", 0, now) : 0;
}

/* The store's `settle` call: mode "s" when the reservation has something
 * to settle. Returns the windows touched. */
static int cluster_settle(void *ctx, const hl_decide_item_t *it, uint32_t cost,
                          int64_t now)
{
    (void)ctx;
    if (it->reserve == 0
        || (cost == it->reserve && it->quota->algo != HL_ALGO_FIXED))
        return 0;
    return one_item(it, "s", cost, now);
}

/* The store's `prepare` call: the shared memory's slot keys (the
 * cluster's keys are made of them). Never fails. */
static void cluster_prepare(void *ctx, hl_decide_item_t *it)
{
    const hl_store_t *local = hl_store_shm();
    (void)ctx;
    local->ops->prepare(local->ctx, it);   /* slot keys: the cluster's too */
}

/* The store's `figures` call. */
static void cluster_figures(void *ctx, hl_store_figures_t *f)
{
    const hl_cluster_figures_t *s = hl_cluster_figures();
    (void)ctx;

    memset(f, 0, sizeof(*f));
    if (!s)
        return;
    f->configured = 1;
    f->up = hl_cluster_all_up();
    f->decisions = __atomic_load_n(&s->decisions, __ATOMIC_RELAXED);
    f->fallbacks = __atomic_load_n(&s->fallbacks, __ATOMIC_RELAXED);
    f->errors = __atomic_load_n(&s->errors, __ATOMIC_RELAXED);
}

static const hl_store_ops_t cluster_ops = {
    .name    = "redis-cluster",
    .prepare = cluster_prepare,
    .decide  = cluster_decide,
    .count   = cluster_count,
    .refund  = cluster_refund,
    .settle  = cluster_settle,
    .reset   = hl_cluster_reset,
    .limited = hl_cluster_limited,
    .figures = cluster_figures,
};
static const hl_store_t cluster_store = { &cluster_ops, NULL };

/* ---- concurrency slots (mod_hotlimit_conc_redis.c, through the cluster) ---- */

/* The via's name: PREFIX{bucket tag}:tail, the bucket of tail (a
 * "conc:<key hash>") keyed by the server's secret. */
static size_t conc_name(char *out, const char *tail, size_t n)
{
    char full[HL_REDIS_KEY_MAX];
    size_t len;

    if (!csc)
        return 0;
    len = hl_redis_key_tag(full, script.prefix,
                           hl_cluster_bucket_tag(hl_cluster_bucket(hl_secret_hash(tail, n))),
                           tail, n);
    if (len == 0 || len >= sizeof(((hl_store_slot_t *)0)->key))
        return 0;
    memcpy(out, full, len);
    return len;
}

/* The via's command: on the master of key's slot. */
static redisReply *conc_command(const char *key, size_t klen, int argc,
                                const char **argv, const size_t *argl,
                                const char **why)
{
    return hl_cluster_command(hl_cluster_keyslot(key, klen), argc, argv, argl,
                              hl_mono_ms() + csc->store_timeout, why);
}

static const hl_conc_redis_via_t conc_via = { conc_name, conc_command, 1 };

/* The provider's conc_take. */
static int cluster_conc_take(request_rec *r, uint64_t key, uint32_t limit,
                             hl_store_slot_t *slot)
{
    return hl_conc_redis_take_via(&conc_via, r, key, limit, slot);
}

/* The provider's conc_give. */
static void cluster_conc_give(hl_store_slot_t *slot)
{
    hl_conc_redis_give_via(&conc_via, slot);
}

/* ---- setup ------------------------------------------------------------------ */

/* The provider's post_config. */
static int cluster_post_config(apr_pool_t *pconf, server_rec *s, void *conf)
{
    const hl_cluster_conf_t *c = conf;
    unsigned char digest[APR_SHA1_DIGESTSIZE];
    apr_sha1_ctx_t sha;
    int i, rc;
    (void)pconf;

    csc = ap_get_module_config(s->module_config, &hotlimit_module);
    rc = hl_cluster_conn_setup(c, csc->store_timeout, s);
    if (rc != OK)
        return rc;
    apr_sha1_init(&sha);
    apr_sha1_update(&sha, hl_redis_script, (unsigned int)strlen(hl_redis_script));
    apr_sha1_final(digest, &sha);
    for (i = 0; i < APR_SHA1_DIGESTSIZE; ++i)
        apr_snprintf(script_sha + 2 * i, 3, "%02x", digest[i]);
    script.prefix = c->prefix;
    script.script = hl_redis_script;
    script.sha = script_sha;
    script.tag = NULL;
    cwhere = c->label;
    cmain = s;
    ap_log_error(APLOG_MARK, APLOG_INFO, 0, s,
                 "HL03202: counters in Redis %s (timeout %d ms, on failure: "
                 "%s, per master)", c->label, csc->store_timeout,
                 csc->store_failure == HL_STORE_FAIL_OPEN ? "open"
                 : csc->store_failure == HL_STORE_FAIL_CLOSED ? "closed" : "local");
    if (csc->store_lease > 0)
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s,
                     "HL03207: HotLimitStoreLease %d has no effect with %s: "
                     "every decision asks its master (leases are the "
                     "redis:// and redis-sentinel:// stores' only)",
                     csc->store_lease, c->label);
    return OK;
}

/* The provider's store call. */
static const hl_store_t *cluster_store_get(void)
{
    return &cluster_store;
}

const hl_store_provider_t hl_cluster_provider = {
    "redis-cluster", cluster_parse, cluster_post_config, cluster_store_get,
    cluster_conc_take, cluster_conc_give
};
