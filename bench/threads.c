/*
 * bench/threads.c - the counter store's core under many threads, without
 * httpd: the same slot tables, decision (hl_decide) and striping rule as
 * mod_hotlimit_store_shm.c, with one pthread mutex per stripe.
 *
 *   threads THREADS STRIPES SECONDS   prints decisions per second, and
 *                                      checks exactness: every key of a
 *                                      quota hammered by all threads is
 *                                      admitted exactly its quota.
 *
 * Built and run by bench/threads (see bench/README.md). Not a test: the
 * exactness check exits non-zero when it fails, so it can be one.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hl_decide.h"
#include "hl_quota.h"
#include "hl_table.h"

#define CAPACITY   65536
#define MAX_STRIPE 16
#define KEYS       4096      /* distinct client keys in the speed run */
#define EXACT_KEYS 64        /* keys of the exactness run */
#define EXACT_Q    500       /* their quota */

static hl_slots_t stripes[MAX_STRIPE];
/* One lock per cache line, as in httpd where each is a mapping of its own. */
static struct { pthread_mutex_t m; char pad[64 - sizeof(pthread_mutex_t) % 64]; } locks[MAX_STRIPE];
static hl_stats_t stats;
static unsigned nstripes;
static volatile int stop;

/* Returns a monotonic time in seconds. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Builds the tables: nstripes stripes sharing one seed. */
static void setup(unsigned n)
{
    unsigned i, per = CAPACITY / n;

    nstripes = n;
    for (i = 0; i < n; ++i) {
        size_t size = hl_slots_size(per);
        void *mem = calloc(1, size);
        if (!mem)
            exit(2);
        hl_slots_attach(&stripes[i], mem, size, per, 12345);
        pthread_mutex_init(&locks[i].m, NULL);
    }
    hl_stats_clear(&stats);
}

/* Decides one request of key for q the way the shm store does. Returns 1
 * if admitted. */
static int decide(const hl_quota_t *q, const char *key, int64_t now_ms)
{
    hl_decide_item_t it, *items[1] = { &it };
    hl_slots_t *tables[1];
    int admit;

    memset(&it, 0, sizeof(it));
    it.quota = q;
    it.origin = HL_ORIGIN_DIRECTIVE;
    it.key = key;
    it.key_len = strlen(key);
    it.cls = hl_limiter_class_of(HL_ORIGIN_DIRECTIVE, 0,
                                 hl_table_route_hash("/bench", 6));
    it.stats_hash = 42;
    it.stats_name = "/bench";
    hl_decide_prepare(&stripes[0], &it);
    it.stripe = (unsigned)((it.refs[0].hash >> 40) % nstripes);
    tables[0] = &stripes[it.stripe];
    pthread_mutex_lock(&locks[it.stripe].m);
    admit = hl_decide_locked(tables, items, 1, now_ms);
    pthread_mutex_unlock(&locks[it.stripe].m);
    hl_decide_stats(&stats, items, 1, now_ms);
    return admit;
}

typedef struct {
    unsigned        seed;
    const hl_quota_t *q;
    int             exact;        /* exactness run: cycle EXACT_KEYS keys */
    long            ops, admitted[EXACT_KEYS];
} worker_t;

static void *work(void *arg)
{
    worker_t *w = arg;
    char key[64];
    unsigned r = w->seed;

    while (!stop) {
        int k;
        r = r * 1103515245u + 12345u;
        /* Exactness: every thread asks each key EXACT_Q times (round
         * robin from its own start), so each key is asked at least its
         * quota and must admit exactly that. */
        k = w->exact ? (int)((w->ops + w->seed) % EXACT_KEYS)
                     : (int)(r >> 8) % KEYS;
        snprintf(key, sizeof(key), "/bench|10.0.%d.%d", k / 256, k % 256);
        if (decide(w->q, key, 1000000) && w->exact)
            w->admitted[k]++;
        w->ops++;
        if (w->exact && w->ops >= EXACT_Q * EXACT_KEYS)
            break;
    }
    return NULL;
}

/* Runs threads for seconds (or, exact, until each did its share). Returns
 * decisions per second; fills admitted[] summed over threads. */
static double run(int threads, double seconds, const hl_quota_t *q, int exact,
                  long *admitted)
{
    pthread_t tid[64];
    worker_t w[64];
    double t0, t1;
    long ops = 0;
    int i, k;

    stop = 0;
    t0 = now_s();
    for (i = 0; i < threads; ++i) {
        memset(&w[i], 0, sizeof(w[i]));
        w[i].seed = 7919u * (unsigned)(i + 1);
        w[i].q = q;
        w[i].exact = exact;
        pthread_create(&tid[i], NULL, work, &w[i]);
    }
    if (!exact) {
        struct timespec ts = { (time_t)seconds, 0 };
        nanosleep(&ts, NULL);
        stop = 1;
    }
    for (i = 0; i < threads; ++i) {
        pthread_join(tid[i], NULL);
        ops += w[i].ops;
        for (k = 0; exact && k < EXACT_KEYS; ++k)
            admitted[k] += w[i].admitted[k];
    }
    t1 = now_s();
    return (double)ops / (t1 - t0);
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    unsigned n = argc > 2 ? (unsigned)atoi(argv[2]) : 1;
    double seconds = argc > 3 ? atof(argv[3]) : 2;
    hl_quota_t never, exactq;
    long admitted[EXACT_KEYS] = { 0 };
    double rate;
    int k, bad = 0;

    if (threads < 1 || threads > 64 || n < 1 || n > MAX_STRIPE) {
        fprintf(stderr, "usage: threads THREADS(1-64) STRIPES(1-16) SECONDS\n");
        return 2;
    }
    hl_quota_init(&never);
    never.nwindows = 1;
    never.windows[0].count = 2000000000u;
    never.windows[0].window_ms = 3600000u;
    exactq = never;
    exactq.windows[0].count = EXACT_Q;

    setup(n);
    rate = run(threads, seconds, &never, 0, NULL);
    setup(n);
    run(threads, 0, &exactq, 1, admitted);
    for (k = 0; k < EXACT_KEYS; ++k)
        if (admitted[k] != EXACT_Q)
            bad++;
    printf("threads=%d stripes=%u decisions_per_s=%.0f exact=%s"
           " (%d keys x %d requests per thread, quota %d)\n",
           threads, n, rate, bad ? "FAIL" : "yes", EXACT_KEYS, EXACT_Q, EXACT_Q);
    return bad ? 1 : 0;
}
