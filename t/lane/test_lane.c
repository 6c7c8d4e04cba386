/*
 * test_lane.c - the Redis connection shared by a child's threads
 * (src/httpd/mod_hotlimit_redis_conn.c), against a stand-in for hiredis: 12
 * threads exchange commands for a few seconds while the stand-in answers
 * after random delays, now and then fails a whole round trip, and the
 * semaphore posts are sometimes slowed down (so that a woken thread runs
 * before its waker goes on: how a reviewer found a lost wake-up that left
 * threads waiting for ever). Checks: no thread waits longer than a second
 * (the timeout is 3 ms), every reply goes to the thread whose command it
 * answers, the connection is never used by two threads at once, and each
 * failed round trip is reported as FAILED to exactly one thread. Threads
 * exit and are replaced all along, so waiters outlive their threads and
 * are reused (under ASan, a post into an exited thread's waiter would be
 * a use after free).
 *
 * Built with -Wl,--wrap=sem_post; links no hiredis.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mod_hotlimit_redis_conn.h"
#include "hl_tap.h"

#define THREADS  12
#define SECONDS  3

/* ---- the stand-in for hiredis ------------------------------------------- */

static int users;                       /* threads inside a hiredis call */
static int overlaps;                    /* times two were */
static const char *sent[THREADS * 4];   /* this round trip's commands */
static int nsent, nread;
static long failed_trips;               /* round trips the stand-in failed */
static int failing;                     /* this round trip fails */
static __thread unsigned seed;

static void enter(void)
{
    if (__atomic_add_fetch(&users, 1, __ATOMIC_ACQ_REL) > 1)
        __atomic_add_fetch(&overlaps, 1, __ATOMIC_RELAXED);
}

static void leave(void)
{
    __atomic_sub_fetch(&users, 1, __ATOMIC_ACQ_REL);
}

redisContext *redisConnectWithTimeout(const char *ip, int port, const struct timeval tv)
{
    (void)ip; (void)port; (void)tv;
    return calloc(1, sizeof(redisContext));
}

redisContext *redisConnectUnixWithTimeout(const char *path, const struct timeval tv)
{
    (void)path; (void)tv;
    return calloc(1, sizeof(redisContext));
}

int redisSetTimeout(redisContext *c, const struct timeval tv)
{
    (void)c; (void)tv;
    return REDIS_OK;
}

void redisFree(redisContext *c)
{
    free(c);
}

void *redisCommand(redisContext *c, const char *format, ...)
{
    (void)c; (void)format;
    return NULL;
}

void freeReplyObject(void *reply)
{
    free(reply);
}

int redisAppendFormattedCommand(redisContext *c, const char *cmd, size_t len)
{
    (void)c; (void)len;
    enter();
    if (nsent < (int)(sizeof(sent) / sizeof(sent[0])))
        sent[nsent++] = cmd;
    leave();
    return REDIS_OK;
}

/* Answers the commands in the order sent, each reply carrying the address
 * of the command it answers; the first read of a round trip waits 0-2 ms
 * and, once in 40 round trips, fails the rest of it. */
int redisGetReply(redisContext *c, void **reply)
{
    redisReply *r;

    enter();
    if (nread == 0) {
        usleep((useconds_t)(rand_r(&seed) % 2000));
        failing = rand_r(&seed) % 40 == 0;
        if (failing)
            failed_trips++;
    }
    if (failing || nread >= nsent) {
        c->err = REDIS_ERR_IO;
        nsent = nread = 0;
        leave();
        return REDIS_ERR;
    }
    r = calloc(1, sizeof(*r));
    r->type = REDIS_REPLY_INTEGER;
    r->integer = (long long)(intptr_t)sent[nread++];
    if (nread == nsent)
        nsent = nread = 0;
    *reply = r;
    leave();
    return REDIS_OK;
}

/* sem_post, now and then followed by a pause: the woken thread runs first. */
int __real_sem_post(sem_t *s);
int __wrap_sem_post(sem_t *s)
{
    int rc = __real_sem_post(s);

    if (rand_r(&seed) % 4 == 0)
        usleep(1500);
    return rc;
}

/* ---- the threads ------------------------------------------------------------ */

static hl_redis_conf_t conf;
static int stop;                         /* atomic */
static long progress[THREADS];            /* exchanges finished */
static int64_t entered_ms[THREADS];       /* in an exchange since, or 0 */
static long ok_n, failed_n, shared_n, busy_n, wrong_reply;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long threads_made;                 /* workers started, over all slots */

/* One worker thread: exchanges commands until stop, or until it has done
 * its share (20-200 exchanges), then exits; its slot starts another, so
 * waiters of exited threads are reused. */
static void *worker(void *arg)
{
    long id = (long)arg, share;
    char cmd[16];                          /* this thread's command: its address is its tag */

    seed = (unsigned)id * 7919u + 1 + (unsigned)__atomic_add_fetch(&threads_made, 1, __ATOMIC_RELAXED);
    share = 20 + rand_r(&seed) % 181;
    memset(cmd, 'x', sizeof(cmd));
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED) && share-- > 0) {
        redisReply *reply;
        const char *why;
        hl_exchange_t rc;

        __atomic_store_n(&entered_ms[id], now_ms(), __ATOMIC_RELAXED);
        rc = hl_redis_exchange(cmd, sizeof(cmd), &reply, &why);
        __atomic_store_n(&entered_ms[id], 0, __ATOMIC_RELAXED);
        if (rc == HL_EXCHANGE_OK) {
            if (!reply || reply->integer != (long long)(intptr_t)cmd)
                __atomic_add_fetch(&wrong_reply, 1, __ATOMIC_RELAXED);
            __atomic_add_fetch(&ok_n, 1, __ATOMIC_RELAXED);
            freeReplyObject(reply);
        }
        else if (reply != NULL)
            __atomic_add_fetch(&wrong_reply, 1, __ATOMIC_RELAXED);
        else if (rc == HL_EXCHANGE_FAILED)
            __atomic_add_fetch(&failed_n, 1, __ATOMIC_RELAXED);
        else if (rc == HL_EXCHANGE_SHARED_FAIL)
            __atomic_add_fetch(&shared_n, 1, __ATOMIC_RELAXED);
        else
            __atomic_add_fetch(&busy_n, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&progress[id], 1, __ATOMIC_RELAXED);
        if (rand_r(&seed) % 8 == 0)
            usleep((useconds_t)(rand_r(&seed) % 200));
    }
    return NULL;
}

/* One slot: starts a worker, waits for it to exit, starts the next. */
static void *slot(void *arg)
{
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker, arg) != 0)
            break;
        pthread_join(t, NULL);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    int64_t longest = 0, end;
    long i, total = 0;

    conf.host = "127.0.0.1";
    conf.port = 6379;
    conf.prefix = "hl:";
    hl_redis_conn_setup(&conf, 3);
    for (i = 0; i < THREADS; ++i)
        pthread_create(&t[i], NULL, slot, (void *)i);
    end = now_ms() + SECONDS * 1000;
    while (now_ms() < end && longest < 1000) {
        usleep(20000);
        for (i = 0; i < THREADS; ++i) {
            int64_t since = __atomic_load_n(&entered_ms[i], __ATOMIC_RELAXED);
            if (since && now_ms() - since > longest)
                longest = now_ms() - since;
        }
    }
    okf(longest < 1000, "no thread waited a second or more in an exchange (longest %lld ms, timeout 3 ms)",
        (long long)longest);
    if (longest >= 1000) {
        /* Threads stuck for good cannot be joined: report and leave. */
        ok(0, "threads stopped");
        return done_testing();
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (i = 0; i < THREADS; ++i)
        pthread_join(t[i], NULL);
    for (i = 0; i < THREADS; ++i)
        total += progress[i];
    okf(total > 1000, "the threads exchanged commands (%ld: %ld answered, %ld failed, %ld shared a failure, %ld found no turn)",
        total, ok_n, failed_n, shared_n, busy_n);
    okf(threads_made > 2 * THREADS, "threads came and went, their waiters reused (%ld threads)", threads_made);
    okf(ok_n > total / 2, "most exchanges were answered (%ld of %ld)", ok_n, total);
    okf(shared_n > 0, "round trips carried several commands: failures were shared (%ld)", shared_n);
    is_int(wrong_reply, 0, "every reply went to the thread whose command it answers");
    is_int(overlaps, 0, "the connection was never used by two threads at once");
    okf(failed_n == failed_trips, "each failed round trip was reported to exactly one thread (%ld, %ld failed)",
        failed_n, failed_trips);
    return done_testing();
}
