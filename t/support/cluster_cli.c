/*
 * cluster_cli.c - a tiny Redis Cluster client on hl_cluster.c and hiredis,
 * for t/94-cluster-client.t: it runs 2-key scripts through the algorithm
 * of src/core/hl_cluster.h (slot map from CLUSTER SLOTS, MOVED, ASK with
 * ASKING in the same write, TRYAGAIN, NOSCRIPT, a breaker per master)
 * against a real cluster, as the redis-cluster:// provider will.
 *
 *   cluster_cli HOST PORT tags              CLUSTER KEYSLOT of every bucket
 *                                           tag: prints "tags BAD" (mismatches)
 *   cluster_cli HOST PORT key N               prints client N's two keys and
 *                                           their slot
 *   cluster_cli HOST PORT run SECS CLIENTS TIMEOUT_MS
 *       decisions for SECS seconds (0: one for each client) over CLIENTS
 *       client keys, round robin;
 *       each INCRs {TAG}:CLIENT:a and {TAG}:CLIENT:b in one script. Prints
 *       "decisions N ok N fallback N moved N ask N tryagain N noscript N
 *       refresh N max_ms N", one "node HOST:PORT ok N fallback N" per
 *       master, and "sum N": the counters' total read back from every
 *       master (2 per decision that was answered, if nothing was lost).
 *
 * Build (the test does): cc -Isrc/core t/support/cluster_cli.c src/core/hl_cluster.c
 * src/core/hl_cluster_tags.c src/core/hl_siphash.c src/core/hl_breaker.c -lhiredis
 */
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hl_breaker.h"
#include "hl_cluster.h"
#include "hl_cluster_tags.h"
#include "hl_siphash.h"
#include "mod_hotlimit_cluster_slots.h"

static const char script[] =
    "local a = redis.call('INCR', KEYS[1]) redis.call('INCR', KEYS[2]) return a";
static char sha[41];

static const unsigned char secret[HL_SIPHASH_KEY_BYTES] = "cluster-cli-key";
static hl_siphash_key_t key;
static hl_cluster_map_t map;
static redisContext *conn[HL_CLUSTER_NODES_MAX];
static hl_breaker_t breaker[HL_CLUSTER_NODES_MAX];
static long node_ok[HL_CLUSTER_NODES_MAX], node_fallback[HL_CLUSTER_NODES_MAX];
static long n_moved, n_ask, n_tryagain, n_noscript, n_refresh;
static const char *seed_host;
static int seed_port, timeout_ms = 200;

/* Returns the monotonic time in milliseconds. */
static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Returns a connection to host:port with the timeout, or NULL. */
static redisContext *connect_to(const char *host, int port)
{
    struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
    redisContext *c = redisConnectWithTimeout(host, port, tv);

    if (c == NULL || c->err) {
        if (c)
            redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
    return c;
}

/* Returns node's connection, made if needed, or NULL. */
static redisContext *node_conn(int node)
{
    if (conn[node] == NULL)
        conn[node] = connect_to(map.nodes[node].host, map.nodes[node].port);
    return conn[node];
}

/* Drops node's connection (after any error). */
static void node_drop(int node)
{
    if (conn[node])
        redisFree(conn[node]);
    conn[node] = NULL;
}

/* Fills the map from CLUSTER SLOTS of c (host: its host). Returns 0/-1. */
static int refresh_from(redisContext *c, const char *host)
{
    static hl_cluster_range_t r[HL_CLUSTER_SLOTS];
    redisReply *rep = redisCommand(c, "CLUSTER SLOTS");
    size_t i, n = 0;
    int rc = -1, k;

    if (rep == NULL)
        return -1;
    if (rep->type == REDIS_REPLY_ARRAY) {
        n = hl_cluster_slots_read(rep, r, HL_CLUSTER_SLOTS);
        rc = hl_cluster_map_fill(&map, r, n, host, strlen(host));
        if (rc == 1)
            for (k = 0; k < HL_CLUSTER_NODES_MAX; ++k) {
                node_drop(k);
                memset(&breaker[k], 0, sizeof(breaker[k]));
            }
    }
    freeReplyObject(rep);
    return rc < 0 ? -1 : 0;
}

/* Refreshes the map if due: from a known master, else from the seed. */
static void maybe_refresh(void)
{
    redisContext *c;
    unsigned i;

    if (!hl_cluster_map_refresh_due(&map, now_ms()))
        return;
    ++n_refresh;
    for (i = 0; i < map.n_nodes; ++i)
        if (hl_breaker_is_closed(&breaker[i]) && node_conn((int)i)
            && refresh_from(conn[i], map.nodes[i].host) == 0)
            return;
    c = connect_to(seed_host, seed_port);
    if (c) {
        refresh_from(c, seed_host);
        redisFree(c);
    }
}

/* Sends the script for keys k1, k2 as a says (ASKING first, EVAL or
 * EVALSHA) and returns the script's reply (caller frees), or NULL on a
 * transport failure (the connection is dropped). */
static redisReply *send_script(const hl_cluster_attempt_t *a,
                               const char *k1, const char *k2)
{
    redisContext *c = node_conn(a->node);
    redisReply *rep = NULL;

    if (c == NULL)
        return NULL;
    if (a->asking)
        redisAppendCommand(c, "ASKING");
    if (a->eval)
        redisAppendCommand(c, "EVAL %s 2 %s %s", script, k1, k2);
    else
        redisAppendCommand(c, "EVALSHA %s 2 %s %s", sha, k1, k2);
    if (a->asking) {
        if (redisGetReply(c, (void **)&rep) != REDIS_OK) {
            node_drop(a->node);
            return NULL;
        }
        freeReplyObject(rep);
    }
    if (redisGetReply(c, (void **)&rep) != REDIS_OK) {
        node_drop(a->node);
        return NULL;
    }
    return rep;
}

/* Counts a redirect or retry the algorithm was given (err: its text). */
static void count_error(const char *err, size_t len)
{
    hl_cluster_error_t e;

    switch (hl_cluster_parse_error(err, len, &e)) {
    case HL_CLUSTER_ERR_MOVED: ++n_moved; break;
    case HL_CLUSTER_ERR_ASK: ++n_ask; break;
    case HL_CLUSTER_ERR_TRYAGAIN: ++n_tryagain; break;
    case HL_CLUSTER_ERR_NOSCRIPT: ++n_noscript; break;
    default: break;
    }
}

/* Runs one decision on the client's two keys; returns 1 if answered, 0 if
 * it fell back. *home: the node first chosen (for the per-node counts). */
static int decide(const char *k1, const char *k2, int *home)
{
    hl_cluster_attempt_t a;
    hl_cluster_action_t act;
    int64_t t;

    maybe_refresh();
    act = hl_cluster_attempt_begin(&map, &a, hl_cluster_keyslot(k1, strlen(k1)));
    *home = a.node;
    while (act == HL_CLUSTER_SEND) {
        redisReply *rep;

        t = now_ms();
        if (!hl_breaker_may_try(&breaker[a.node], t, 4 * timeout_ms)) {
            act = HL_CLUSTER_FALLBACK;
            break;
        }
        if (a.wait_ms > 0)
            usleep((useconds_t)a.wait_ms * 1000);
        rep = send_script(&a, k1, k2);
        if (rep == NULL) {
            hl_breaker_failed(&breaker[a.node], now_ms(), 100);
            act = hl_cluster_attempt_failed(&map, &a);
            break;
        }
        if (rep->type == REDIS_REPLY_ERROR) {
            count_error(rep->str, rep->len);
            act = hl_cluster_attempt_reply(&map, &a, rep->str, rep->len);
        } else {
            act = hl_cluster_attempt_reply(&map, &a, NULL, 0);
        }
        freeReplyObject(rep);
        if (act == HL_CLUSTER_DONE)
            hl_breaker_succeeded(&breaker[a.node]);
        else if (act == HL_CLUSTER_FALLBACK && a.node_down)
            hl_breaker_failed(&breaker[a.node], now_ms(), 100);
    }
    return act == HL_CLUSTER_DONE;
}

/* Returns the total of every counter on every master (read back). */
static long long sum_all(void)
{
    long long sum = 0;
    unsigned i;
    size_t j;

    for (i = 0; i < map.n_nodes; ++i) {
        redisContext *c = connect_to(map.nodes[i].host, map.nodes[i].port);
        redisReply *keys, *v;

        if (c == NULL)
            return -1;
        keys = redisCommand(c, "KEYS *");
        for (j = 0; keys && keys->type == REDIS_REPLY_ARRAY && j < keys->elements; ++j) {
            v = redisCommand(c, "GET %b", keys->element[j]->str, keys->element[j]->len);
            if (v && v->type == REDIS_REPLY_STRING)
                sum += atoll(v->str);
            if (v)
                freeReplyObject(v);
        }
        if (keys)
            freeReplyObject(keys);
        redisFree(c);
    }
    return sum;
}

/* Writes client n's address and two keys (64 bytes each). */
static void client_keys(const hl_siphash_key_t *key, int n, char *k1, char *k2)
{
    char client[32];
    int len = snprintf(client, sizeof(client), "10.0.%d.%d", (n / 256) % 256, n % 256);
    unsigned b = hl_cluster_bucket(hl_siphash24(key, client, (size_t)len));

    snprintf(k1, 64, "hlt:{%s}:%s:a", hl_cluster_bucket_tag(b), client);
    snprintf(k2, 64, "hlt:{%s}:%s:b", hl_cluster_bucket_tag(b), client);
}

/* The run mode: see the top of the file. */
static int run(int secs, int clients)
{
    long decisions = 0, answered = 0, fallback = 0;
    int64_t end = now_ms() + (int64_t)secs * 1000, max_ms = 0;
    unsigned i;
    int n = 0;

    while (secs > 0 ? now_ms() < end : decisions < clients) {
        char k1[64], k2[64];
        int64_t t0 = now_ms(), took;
        int home;

        client_keys(&key, n, k1, k2);
        if (decide(k1, k2, &home)) {
            ++answered;
            if (home >= 0)
                ++node_ok[home];
        } else {
            ++fallback;
            if (home >= 0)
                ++node_fallback[home];
        }
        took = now_ms() - t0;
        if (took > max_ms)
            max_ms = took;
        ++decisions;
        n = (n + 1) % clients;
    }
    printf("decisions %ld ok %ld fallback %ld moved %ld ask %ld tryagain %ld "
           "noscript %ld refresh %ld max_ms %lld\n", decisions, answered,
           fallback, n_moved, n_ask, n_tryagain, n_noscript, n_refresh,
           (long long)max_ms);
    for (i = 0; i < map.n_nodes; ++i)
        printf("node %s:%d ok %ld fallback %ld\n", map.nodes[i].host,
               map.nodes[i].port, node_ok[i], node_fallback[i]);
    printf("sum %lld\n", sum_all());
    return 0;
}

/* The tags mode: CLUSTER KEYSLOT of every bucket tag against 16 x B. */
static int tags(void)
{
    redisContext *c = connect_to(seed_host, seed_port);
    unsigned b, bad = 0;

    if (c == NULL)
        return 2;
    for (b = 0; b < HL_CLUSTER_BUCKETS; ++b) {
        redisReply *rep = redisCommand(c, "CLUSTER KEYSLOT {%s}:x", hl_cluster_bucket_tag(b));

        if (rep == NULL || rep->type != REDIS_REPLY_INTEGER || rep->integer != (long long)b * 16)
            ++bad;
        if (rep)
            freeReplyObject(rep);
    }
    redisFree(c);
    printf("tags %u\n", bad);
    return 0;
}

int main(int argc, char **argv)
{
    redisContext *c;
    redisReply *rep;

    if (argc < 4) {
        fprintf(stderr, "usage: cluster_cli HOST PORT tags|run SECS CLIENTS TIMEOUT_MS\n");
        return 2;
    }
    seed_host = argv[1];
    seed_port = atoi(argv[2]);
    hl_cluster_map_init(&map);
    hl_siphash_key(&key, secret);
    if (strcmp(argv[3], "tags") == 0)
        return tags();
    if (strcmp(argv[3], "key") == 0 && argc > 4) {
        char k1[64], k2[64];

        client_keys(&key, atoi(argv[4]), k1, k2);
        printf("%s %s %u\n", k1, k2, hl_cluster_keyslot(k1, strlen(k1)));
        return 0;
    }
    if (strcmp(argv[3], "run") != 0 || argc < 7)
        return 2;
    timeout_ms = atoi(argv[6]);
    c = connect_to(seed_host, seed_port);
    if (c == NULL)
        return 2;
    rep = redisCommand(c, "SCRIPT LOAD %s", script);   /* only for its SHA */
    if (rep == NULL || rep->type != REDIS_REPLY_STRING || rep->len != 40)
        return 2;
    memcpy(sha, rep->str, 41);
    freeReplyObject(rep);
    redisFree(c);
    return run(atoi(argv[4]), atoi(argv[5]));
}
