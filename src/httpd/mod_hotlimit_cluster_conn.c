/*
 * mod_hotlimit_cluster_conn.c - reaching the masters of a Redis Cluster
 * (see mod_hotlimit_cluster_conn.h).
 *
 * The slot map is the child's, under map_lock, made on first use (never
 * before fork) and refreshed from CLUSTER SLOTS at most once a second
 * (hl_cluster_map_refresh_due), asking the known masters whose breaker is
 * closed, then the seeds, each on a short-lived connection bounded by the
 * time left. Connections are the thread's: one per master (node index),
 * made on first use with AUTH, dropped after any error, and all dropped
 * when the map's node indexes change (map_gen).
 */
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include <pthread.h>
#include <sys/time.h>

#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "apr_shm.h"
#include "apr_strings.h"

#include "mod_hotlimit_cluster_conn.h"
#include "mod_hotlimit_cluster_slots.h"
#include "mod_hotlimit_kept_shm.h"
#include "hl_breaker.h"
#include "hl_clock.h"
#include "hl_hash.h"

APLOG_USE_MODULE(hotlimit);

#define HL_CLUSTER_LIFE_KEY "hotlimit-cluster"
#define BREAKERS 128          /* masters ever seen by this httpd */

/* A master's breaker, keyed by the hash of its "host:port" (0: free). */
typedef struct {
    uint64_t     id;
    hl_breaker_t b;
} hl_node_breaker_t;

typedef struct {
    hl_cluster_figures_t figures;
    hl_node_breaker_t    brk[BREAKERS];
} hl_cluster_shared_t;

static const hl_cluster_conf_t *conf;
static int timeout_ms = 50;
static server_rec *cserver;
static hl_cluster_shared_t *shared;
static uint32_t brk_max;            /* HOTLIMIT_TEST_BREAKER_MAX_MS */

/* Per child: the map, under map_lock; map_gen changes when node indexes
 * do (every connection of every thread is then dropped). */
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t refresh_lock = PTHREAD_MUTEX_INITIALIZER;  /* one fetch */
static hl_cluster_map_t map;
static int map_ready;
static unsigned map_gen;

/* Per thread: a connection per node index, valid for cx_gen. */
static __thread redisContext *cx[HL_CLUSTER_NODES_MAX];
static __thread unsigned cx_gen;

/* ---- setup ------------------------------------------------------------ */

/* Reads HOTLIMIT_TEST_BREAKER_MAX_MS (1..5000; for tests only, as the
 * Redis store does) into brk_max, 0 when unset or invalid. */
static void test_breaker_max(void)
{
    const char *env = getenv("HOTLIMIT_TEST_BREAKER_MAX_MS");
    char *end = NULL;
    long ms = env ? strtol(env, &end, 10) : 0;

    brk_max = (env && *env && !*end && ms >= 1 && ms <= HL_BREAKER_BACKOFF_MAX_MS)
              ? (uint32_t)ms : 0;
}

int hl_cluster_conn_setup(const hl_cluster_conf_t *c, int tmo, server_rec *s)
{
    apr_pool_t *pp = s->process->pool;
    apr_status_t rv;
    int created;

    conf = c;
    timeout_ms = tmo;
    cserver = s;
    test_breaker_max();
    shared = hl_kept_shm(pp, HL_CLUSTER_LIFE_KEY, sizeof(hl_cluster_shared_t),
                         &created, &rv);
    if (!shared) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "HL03203: cannot create the Redis Cluster store's "
                     "shared memory");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    return OK;
}

int hl_cluster_timeout_ms(void)
{
    return timeout_ms;
}

hl_cluster_figures_t *hl_cluster_figures(void)
{
    return shared ? &shared->figures : NULL;
}

/* ---- breakers ------------------------------------------------------------ */

/* Returns the breaker of host:port, claiming a free entry for a master
 * never seen (a full table shares entries: a breaker too many, never
 * none). Never NULL after setup. */
static hl_breaker_t *breaker_of(const char *host, int port)
{
    uint64_t id = hl_hash64(host, strlen(host), (uint64_t)port * 0x9e3779b97f4a7c15ULL) | 1;
    unsigned i, at = (unsigned)(id % BREAKERS);

    for (i = 0; i < BREAKERS; ++i) {
        hl_node_breaker_t *e = &shared->brk[(at + i) % BREAKERS];
        uint64_t seen = __atomic_load_n(&e->id, __ATOMIC_ACQUIRE), zero = 0;

        if (seen == id)
            return &e->b;
        if (seen == 0 && __atomic_compare_exchange_n(&e->id, &zero, id, 0,
                                                     __ATOMIC_ACQ_REL,
                                                     __ATOMIC_ACQUIRE)) {
            hl_breaker_set_max(&e->b, brk_max);
            return &e->b;
        }
        if (zero == id)
            return &e->b;
    }
    return &shared->brk[at].b;
}

/* Records a failed call to host:port (why: for the log) on its breaker. */
static void node_failed(const char *host, int port, const char *why)
{
    int64_t now = hl_mono_ms();

    __atomic_add_fetch(&shared->figures.errors, 1, __ATOMIC_RELAXED);
    if (hl_breaker_failed(breaker_of(host, port), now, 80 + rand() % 41))
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, cserver,
                     "HL03200: Redis Cluster master %s:%d unavailable (%s): "
                     "its keys are decided by HotLimitStoreFailure until it "
                     "answers again; the other masters go on", host, port, why);
}

/* Records a call host:port answered. */
static void node_succeeded(const char *host, int port)
{
    __atomic_add_fetch(&shared->figures.decisions, 1, __ATOMIC_RELAXED);
    if (hl_breaker_succeeded(breaker_of(host, port)))
        ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, cserver,
                     "HL03201: Redis Cluster master %s:%d answers again: "
                     "counting there", host, port);
}

/* Returns 1 if host:port may be called now (hl_breaker_may_try). */
static int node_may_try(const char *host, int port, int64_t now)
{
    return hl_breaker_may_try(breaker_of(host, port), now,
                              2 * (int64_t)timeout_ms + 1000);
}

int hl_cluster_all_up(void)
{
    unsigned i, n;
    int up = 1;

    pthread_mutex_lock(&map_lock);
    n = map_ready ? map.n_nodes : 0;
    for (i = 0; i < n && up; ++i)
        up = hl_breaker_is_closed(breaker_of(map.nodes[i].host, map.nodes[i].port));
    pthread_mutex_unlock(&map_lock);
    return up;
}

/* ---- connections ------------------------------------------------------------ */

/* Sets tv to the time left until deadline (at least 1 ms). */
static void time_left(struct timeval *tv, int64_t deadline)
{
    int64_t ms = deadline - hl_mono_ms();

    if (ms < 1)
        ms = 1;
    tv->tv_sec = (long)(ms / 1000);
    tv->tv_usec = (long)(ms % 1000) * 1000;
}

/* Connects to host:port and authenticates, by deadline. Returns the
 * context (the caller frees it with redisFree), or NULL with *why set. */
static redisContext *connect_node(const char *host, int port, int64_t deadline,
                                  const char **why)
{
    struct timeval tv;
    redisContext *c;
    redisReply *r;

    time_left(&tv, deadline);
    c = redisConnectWithTimeout(host, port, tv);
    if (!c || c->err) {
        *why = "cannot connect";
        if (c)
            redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
    if (!conf->password)
        return c;
    r = conf->user ? redisCommand(c, "AUTH %s %s", conf->user, conf->password)
                   : redisCommand(c, "AUTH %s", conf->password);
    if (!r || r->type == REDIS_REPLY_ERROR) {
        *why = r ? "AUTH refused" : "no answer to AUTH";
        if (r)
            freeReplyObject(r);
        redisFree(c);
        return NULL;
    }
    freeReplyObject(r);
    return c;
}

/* Drops this thread's connections when the map's node indexes changed
 * (call under map_lock). */
static void check_gen(void)
{
    int i;

    if (cx_gen == map_gen)
        return;
    for (i = 0; i < HL_CLUSTER_NODES_MAX; ++i)
        if (cx[i]) {
            redisFree(cx[i]);
            cx[i] = NULL;
        }
    cx_gen = map_gen;
}

/* Drops this thread's connection to node. */
static void drop(int node)
{
    if (cx[node]) {
        redisFree(cx[node]);
        cx[node] = NULL;
    }
}

/* ---- the slot map -------------------------------------------------------------- */

/* Asks host:port for CLUSTER SLOTS by deadline and fills the map from it.
 * Returns 1 if the map was filled, else 0. */
static int fetch_from(const char *host, int port, int64_t deadline)
{
    const char *why = NULL;
    redisContext *c = connect_node(host, port, deadline, &why);
    hl_cluster_range_t *r = NULL;
    redisReply *reply;
    size_t n = 0;
    int rc, ok = 0;

    if (!c)
        return 0;
    reply = redisCommand(c, "CLUSTER SLOTS");
    if (reply && reply->type == REDIS_REPLY_ARRAY && reply->elements > 0
        && (r = calloc(reply->elements, sizeof(*r))) != NULL
        && (n = hl_cluster_slots_read(reply, r, reply->elements)) > 0) {
        pthread_mutex_lock(&map_lock);
        rc = hl_cluster_map_fill(&map, r, n, host, strlen(host));
        if (rc == 1)
            ++map_gen;
        pthread_mutex_unlock(&map_lock);
        ok = rc >= 0;
    }
    free(r);
    if (reply)
        freeReplyObject(reply);
    redisFree(c);
    return ok;
}

/* Makes the map on first use and refreshes it when due: the known
 * masters whose breaker is closed first, then the seeds, by deadline. One
 * thread of the child fetches (refresh_lock); while the map is still empty
 * (the child's first requests) the others wait for it, so that they are
 * not sent to the fallback meanwhile; else they go on with the map they
 * have. Never fails (a map that cannot be fetched stays as it was). */
static void refresh_if_due(int64_t deadline)
{
    hl_cluster_node_t *known = NULL;
    unsigned n = 0, i;
    int due, empty;

    pthread_mutex_lock(&map_lock);
    if (!map_ready) {
        hl_cluster_map_init(&map);
        map_ready = 1;
    }
    due = map.refresh_wanted;
    empty = map.n_nodes == 0;
    pthread_mutex_unlock(&map_lock);
    if (!due)
        return;
    if (empty)
        pthread_mutex_lock(&refresh_lock);
    else if (pthread_mutex_trylock(&refresh_lock) != 0)
        return;
    pthread_mutex_lock(&map_lock);
    due = hl_cluster_map_refresh_due(&map, hl_mono_ms());
    if (due && map.n_nodes && (known = malloc(map.n_nodes * sizeof(*known))) != NULL) {
        n = map.n_nodes;
        memcpy(known, map.nodes, n * sizeof(*known));
    }
    pthread_mutex_unlock(&map_lock);
    if (!due)
        goto done;
    for (i = 0; i < n; ++i)
        if (hl_mono_ms() < deadline
            && node_may_try(known[i].host, known[i].port, hl_mono_ms())
            && fetch_from(known[i].host, known[i].port, deadline))
            goto done;
    for (i = 0; i < (unsigned)conf->n_seeds && hl_mono_ms() < deadline; ++i)
        if (fetch_from(conf->seed_host[i], conf->seed_port[i], deadline))
            goto done;
    ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, cserver,
                 "HL03204: Redis Cluster %s: no node gave its slot map "
                 "(CLUSTER SLOTS); asking again in a second", conf->label);
done:
    pthread_mutex_unlock(&refresh_lock);
    free(known);
}

int hl_cluster_slot_node(unsigned slot, int64_t deadline)
{
    int node;

    refresh_if_due(deadline);
    pthread_mutex_lock(&map_lock);
    node = hl_cluster_map_lookup(&map, slot);
    pthread_mutex_unlock(&map_lock);
    return node;
}

/* Copies node's address (under map_lock). */
static void node_addr(int node, hl_cluster_node_t *out)
{
    pthread_mutex_lock(&map_lock);
    *out = map.nodes[node];
    check_gen();
    pthread_mutex_unlock(&map_lock);
}

/* ---- calls -------------------------------------------------------------------- */

/* Writes cmd (len bytes; after ASKING when asking) to node over this
 * thread's connection, made if needed, and reads its reply into *reply.
 * Returns 0, or -1 with *why set (the connection dropped). */
static int exchange(int node, const hl_cluster_node_t *a, int asking,
                    const char *cmd, size_t len, int64_t deadline,
                    redisReply **reply, const char **why)
{
    struct timeval tv;
    void *r = NULL;

    *reply = NULL;
    if (!cx[node] && !(cx[node] = connect_node(a->host, a->port, deadline, why)))
        return -1;
    time_left(&tv, deadline);
    redisSetTimeout(cx[node], tv);
    if ((asking && redisAppendCommand(cx[node], "ASKING") != REDIS_OK)
        || redisAppendFormattedCommand(cx[node], cmd, len) != REDIS_OK)
        goto failed;
    if (asking) {
        if (redisGetReply(cx[node], &r) != REDIS_OK)
            goto failed;
        freeReplyObject(r);
    }
    if (redisGetReply(cx[node], &r) != REDIS_OK)
        goto failed;
    *reply = r;
    return 0;
failed:
    *why = cx[node]->err == REDIS_ERR_IO ? "timeout or I/O error" : "connection lost";
    drop(node);
    return -1;
}

redisReply *hl_cluster_call(unsigned slot, hl_cluster_build_fn build,
                            void *arg, int64_t deadline, const char **why)
{
    hl_cluster_attempt_t at;
    hl_cluster_action_t act;
    hl_cluster_node_t a;
    redisReply *reply;
    const char *cmd;
    size_t len;
    int asked = -1;

    refresh_if_due(deadline);
    pthread_mutex_lock(&map_lock);
    act = hl_cluster_attempt_begin(&map, &at, slot);
    pthread_mutex_unlock(&map_lock);
    if (act != HL_CLUSTER_SEND) {
        *why = "no master known for the slot";
        return NULL;
    }
    for (;;) {
        if (at.wait_ms > 0)
            usleep((useconds_t)at.wait_ms * 1000);
        node_addr(at.node, &a);
        /* Once per node of this call: the call may be the breaker's probe,
         * which a second look would take for another's. */
        if (at.node != asked && !node_may_try(a.host, a.port, hl_mono_ms())) {
            *why = "its breaker is open";
            return NULL;
        }
        asked = at.node;
        if (hl_mono_ms() >= deadline) {
            *why = "out of time (HotLimitStoreTimeout)";
            return NULL;
        }
        if (build(arg, at.eval, &cmd, &len) != 0) {
            *why = "out of memory";
            return NULL;
        }
        if (exchange(at.node, &a, at.asking, cmd, len, deadline, &reply, why) != 0) {
            pthread_mutex_lock(&map_lock);
            hl_cluster_attempt_failed(&map, &at);
            pthread_mutex_unlock(&map_lock);
            node_failed(a.host, a.port, *why);
            return NULL;
        }
        pthread_mutex_lock(&map_lock);
        act = hl_cluster_attempt_reply(&map, &at,
                                       reply->type == REDIS_REPLY_ERROR ? reply->str : NULL,
                                       reply->type == REDIS_REPLY_ERROR ? reply->len : 0);
        pthread_mutex_unlock(&map_lock);
        if (act == HL_CLUSTER_DONE) {
            node_succeeded(a.host, a.port);
            return reply;
        }
        if (act == HL_CLUSTER_FALLBACK) {
            ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, cserver,
                         "HL03205: Redis Cluster master %s:%d answered: %s",
                         a.host, a.port, reply->type == REDIS_REPLY_ERROR
                         ? reply->str : "(not an error)");
            *why = "the cluster cannot serve the slot";
            if (at.node_down)
                node_failed(a.host, a.port, "CLUSTERDOWN or failover");
            freeReplyObject(reply);
            return NULL;
        }
        freeReplyObject(reply);
    }
}

/* A command already formatted (hl_cluster_command). */
typedef struct {
    const char *cmd;
    size_t      len;
} fixed_t;

/* hl_cluster_build_fn of a fixed_t. */
static int fixed_build(void *arg, int eval, const char **cmd, size_t *len)
{
    const fixed_t *f = arg;
    (void)eval;
    *cmd = f->cmd;
    *len = f->len;
    return 0;
}

redisReply *hl_cluster_command(unsigned slot, int argc, const char **argv,
                               const size_t *argl, int64_t deadline,
                               const char **why)
{
    char *cmd = NULL;
    int l = redisFormatCommandArgv(&cmd, argc, argv, argl);
    redisReply *reply;
    fixed_t f;

    if (l < 0) {
        *why = "out of memory";
        return NULL;
    }
    f.cmd = cmd;
    f.len = (size_t)l;
    reply = hl_cluster_call(slot, fixed_build, &f, deadline, why);
    redisFreeCommand(cmd);
    return reply;
}

int hl_cluster_pipeline(unsigned slot, const char *const *cmd,
                        const size_t *len, int n, redisReply **replies,
                        int64_t deadline, const char **why)
{
    hl_cluster_node_t a;
    struct timeval tv;
    int node = hl_cluster_slot_node(slot, deadline), i, got = 0;

    if (node < 0) {
        *why = "no master known for the slot";
        return -1;
    }
    node_addr(node, &a);
    if (!node_may_try(a.host, a.port, hl_mono_ms())) {
        *why = "its breaker is open";
        return -1;
    }
    if (!cx[node] && !(cx[node] = connect_node(a.host, a.port, deadline, why)))
        goto failed;
    time_left(&tv, deadline);
    redisSetTimeout(cx[node], tv);
    for (i = 0; i < n; ++i)
        if (redisAppendFormattedCommand(cx[node], cmd[i], len[i]) != REDIS_OK)
            break;
    for (got = 0; i == n && got < n; ++got)
        if (redisGetReply(cx[node], (void **)&replies[got]) != REDIS_OK)
            break;
    if (got == n) {
        node_succeeded(a.host, a.port);
        return 0;
    }
    *why = "timeout or I/O error";
    drop(node);
    while (got > 0)
        freeReplyObject(replies[--got]);
failed:
    node_failed(a.host, a.port, *why);
    return -1;
}
