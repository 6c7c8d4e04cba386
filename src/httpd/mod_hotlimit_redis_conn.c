/*
 * mod_hotlimit_redis_conn.c - the child's connection to Redis, shared by
 * its threads.
 *
 * One connection per child, used by one thread at a time: the leader. A
 * thread with a command joins a queue; if no round trip is under way it
 * becomes the leader, takes every queued command (its own and those that
 * arrived meanwhile), writes them in one go, reads the replies in order,
 * hands each reply to its thread and wakes it. The first thread still
 * queued then leads the next round trip. Under load a round trip carries
 * as many commands as arrived during the previous one, so Redis and httpd
 * pay one wake-up and one write per batch instead of one per request; each
 * command is still its own script call, answered as if sent alone. Under
 * prefork (one thread) every batch holds one command.
 *
 * A waiting thread sleeps on a semaphore of its own, posted after the
 * leader has let go of the lock, so that a woken thread does not queue
 * on the lock again (each request costs one sleep and one wake).
 *
 * Bounds: a thread waits for its turn at most HotLimitStoreTimeout (then
 * nothing was sent and the caller falls back); a round trip under way is
 * bounded by the same timeout on connect and on each read and write
 * (SO_RCVTIMEO/SO_SNDTIMEO through redisSetTimeout).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE              /* sem_clockwait */
#endif
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>

#include "mod_hotlimit_redis_conn.h"

/* A command waiting for, or travelling in, a round trip: one per thread,
 * from a pool that lives as long as the process (a leader may post a
 * waiter's semaphore just after its thread saw done and went on, even
 * after that thread exited: the waiter must still be there; the next
 * thread to use it drops the stale post). Other threads touch it only
 * under lane_lock, except the semaphore. */
typedef struct hl_waiter {
    struct hl_waiter *next;
    const char       *cmd;
    size_t            len;
    redisReply       *reply;    /* set by the leader */
    const char       *why;
    hl_exchange_t     result;
    int               taken;    /* in the round trip under way */
    int               done;     /* reply, result and why are final
                                   (atomic: release store, acquire load) */
    sem_t             wake;     /* posted when done, or when it may lead */
} hl_waiter_t;

static const hl_redis_conf_t *cconf;
static int ctimeout_ms;          /* HotLimitStoreTimeout */

static pthread_mutex_t lane_lock = PTHREAD_MUTEX_INITIALIZER;
static hl_waiter_t *queue_head, *queue_tail;   /* under lane_lock */
static int in_flight;                          /* under lane_lock */
static int conn_bad;                           /* under lane_lock */
static redisContext *conn;                     /* the leader's only */

static __thread hl_waiter_t *me;               /* this thread's, or NULL */
static hl_waiter_t *free_waiters;              /* under lane_lock */
static pthread_key_t waiter_key;               /* gives one back at exit */
static int waiter_key_made;
static pthread_once_t waiter_key_once = PTHREAD_ONCE_INIT;

/* pthread key destructor: puts an exiting thread's waiter on the free
 * list (never freed: see hl_waiter_t). */
static void give_back(void *p)
{
    hl_waiter_t *w = p;

    pthread_mutex_lock(&lane_lock);
    w->next = free_waiters;
    free_waiters = w;
    pthread_mutex_unlock(&lane_lock);
}

static void make_waiter_key(void)
{
    waiter_key_made = pthread_key_create(&waiter_key, give_back) == 0;
}

/* Returns this thread's waiter, taken from the free list or made (malloc,
 * its semaphore initialised) at its first exchange; NULL when out of
 * memory. Not inlined on purpose: in a module (-fPIC) the compiler would
 * otherwise recompute the __thread address, a call into the dynamic
 * loader, at every use. */
static __attribute__((noinline)) hl_waiter_t *this_thread_waiter(void)
{
    hl_waiter_t *w = me;

    if (w)
        return w;
    pthread_once(&waiter_key_once, make_waiter_key);
    pthread_mutex_lock(&lane_lock);
    w = free_waiters;
    if (w)
        free_waiters = w->next;
    pthread_mutex_unlock(&lane_lock);
    if (!w) {
        w = calloc(1, sizeof(*w));
        if (!w)
            return NULL;
        if (sem_init(&w->wake, 0, 0) != 0) {
            free(w);
            return NULL;
        }
    }
    if (waiter_key_made)
        pthread_setspecific(waiter_key, w);
    me = w;
    return w;
}

void hl_redis_conn_setup(const hl_redis_conf_t *conf, int timeout_ms)
{
    cconf = conf;
    ctimeout_ms = timeout_ms;
}

/* ---- the connection (the leader's only) ---------------------------------- */

/* Drops the connection (after an error it cannot be reused). */
static void drop(void)
{
    if (conn) {
        redisFree(conn);
        conn = NULL;
    }
}

/* Returns 1 if reply (of a command setting the connection up, freed here)
 * is not an error; else drops the connection, sets *why to failure and
 * returns 0. */
static int setup_ok(void *reply, const char *failure, const char **why)
{
    redisReply *rp = reply;
    int ok = rp && rp->type != REDIS_REPLY_ERROR;

    if (rp)
        freeReplyObject(rp);
    if (!ok) {
        *why = failure;
        drop();
    }
    return ok;
}

/* Returns 1 if the server has closed connection cx (or sent what nobody
 * asked for) since its last reply: a peek that never waits. Redis closes
 * its clients' connections when a Sentinel demotes it (CLIENT KILL TYPE
 * normal) or when it restarts; such a connection is made anew before a
 * command is sent on it, instead of the command failing there and opening
 * the breaker for the whole server. */
static int closed_by_server(redisContext *cx)
{
    char byte;
    ssize_t n = recv(cx->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);

    return n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* Returns the connection, made (with AUTH and SELECT) if needed or if the
 * server closed it, at the address the configuration locates anew for
 * every new connection (so a failed-over master is found again), or NULL
 * with *why set. */
static redisContext *connection(const char **why)
{
    struct timeval tv;
    char located[256];
    const char *host = cconf->host, *lost;
    int port = cconf->port;

    if (conn && !closed_by_server(conn))
        return conn;
    drop();
    if (cconf->locate) {
        lost = cconf->locate(cconf, ctimeout_ms, located, sizeof(located),
                             &port);
        if (lost) {
            *why = lost;
            return NULL;
        }
        host = located;
    }
    tv.tv_sec = ctimeout_ms / 1000;
    tv.tv_usec = (ctimeout_ms % 1000) * 1000;
    conn = cconf->socket ? redisConnectUnixWithTimeout(cconf->socket, tv)
                         : redisConnectWithTimeout(host, port, tv);
    if (!conn || conn->err) {
        *why = "cannot connect";
        drop();
        return NULL;
    }
    redisSetTimeout(conn, tv);
    if (cconf->password
        && !setup_ok(cconf->user
                     ? redisCommand(conn, "AUTH %s %s", cconf->user, cconf->password)
                     : redisCommand(conn, "AUTH %s", cconf->password),
                     "AUTH refused", why))
        return NULL;
    if (cconf->db
        && !setup_ok(redisCommand(conn, "SELECT %d", cconf->db), "SELECT refused", why))
        return NULL;
    return conn;
}

/* Sends the commands of batch (a list taken off the queue) in one write
 * and reads their replies in order, filling each waiter's reply, result
 * and why. Called by the leader without lane_lock. After a failure the
 * first waiter without a reply records it (HL_EXCHANGE_FAILED), the
 * others share it, and the connection is dropped. */
static void round_trip(hl_waiter_t *batch)
{
    const char *why = NULL;
    redisContext *cx = connection(&why);
    hl_waiter_t *w;
    int recorded = 0;

    for (w = batch; cx && !why && w; w = w->next)
        if (redisAppendFormattedCommand(cx, w->cmd, w->len) != REDIS_OK)
            why = "out of memory";
    for (w = batch; w; w = w->next) {
        void *reply = NULL;

        if (!why && redisGetReply(cx, &reply) != REDIS_OK)
            why = cx->err == REDIS_ERR_IO ? "timeout or connection lost" : "no reply";
        w->reply = why ? NULL : reply;
        w->why = why;
        w->result = !why ? HL_EXCHANGE_OK
                    : recorded++ ? HL_EXCHANGE_SHARED_FAIL : HL_EXCHANGE_FAILED;
    }
    if (why)
        drop();
}

/* ---- the queue (under lane_lock) ------------------------------------------ */

/* Leads one round trip: takes the whole queue (which holds self, the
 * caller's own waiter), runs it without the lock, marks each waiter done
 * and wakes it, then ends the round trip and wakes the first waiter queued
 * meanwhile so that it leads next. Called with lane_lock held and no
 * round trip under way; returns without it. */
static void lead(hl_waiter_t *self)
{
    hl_waiter_t *batch = queue_head, *w, *next, *successor;
    int discard = conn_bad;

    in_flight = 1;
    conn_bad = 0;
    queue_head = queue_tail = NULL;
    for (w = batch; w; w = w->next)
        w->taken = 1;
    pthread_mutex_unlock(&lane_lock);

    if (discard)
        drop();
    round_trip(batch);

    /* Hand the replies over. Once a waiter's done is visible it may
     * return (woken by its timeout or a stale post) and queue again, so
     * its next is read first and nothing of it is touched after. In
     * flight stays set meanwhile: nobody else leads yet. */
    for (w = batch; w; w = next) {
        next = w->next;
        __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
        if (w != self)
            sem_post(&w->wake);
    }
    pthread_mutex_lock(&lane_lock);
    in_flight = 0;
    successor = queue_head;
    pthread_mutex_unlock(&lane_lock);
    if (successor)
        sem_post(&successor->wake);
}

/* Removes w from the queue (it timed out before any leader took it). */
static void unqueue(hl_waiter_t *w)
{
    hl_waiter_t **at, *prev = NULL;

    for (at = &queue_head; *at; prev = *at, at = &(*at)->next)
        if (*at == w) {
            *at = w->next;
            if (queue_tail == w)
                queue_tail = prev;
            return;
        }
}

/* Drops wake-ups left over from an earlier exchange of w (or of the
 * thread that had it before). */
static void drain(hl_waiter_t *w)
{
    while (sem_trywait(&w->wake) == 0)
        ;
}

/* Waits until w is done, leading a round trip when it is its turn; gives
 * up at deadline if no leader has taken w by then (result
 * HL_EXCHANGE_BUSY). Called with lane_lock held; returns without it. */
static void wait_done(hl_waiter_t *w, const struct timespec *deadline)
{
    for (;;) {
        int timed_out;

        if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE)) {
            pthread_mutex_unlock(&lane_lock);
            return;
        }
        if (!in_flight) {
            lead(w);             /* w is queued, so this round trip takes it */
            return;
        }
        if (!w->taken) {
            pthread_mutex_unlock(&lane_lock);
            timed_out = sem_clockwait(&w->wake, CLOCK_MONOTONIC, deadline) != 0
                        && errno == ETIMEDOUT;
        }
        else {
            pthread_mutex_unlock(&lane_lock);
            timed_out = 0;
            sem_wait(&w->wake);
        }
        if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE))
            return;              /* the usual wake-up: no lock needed */
        pthread_mutex_lock(&lane_lock);
        if (timed_out && !w->taken) {   /* not taken: not done either */
            unqueue(w);
            w->result = HL_EXCHANGE_BUSY;
            w->why = "no turn on the connection within HotLimitStoreTimeout";
            __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
            /* It may have been woken to lead: pass that on. */
            if (!in_flight && queue_head)
                sem_post(&queue_head->wake);
        }
    }
}

hl_exchange_t hl_redis_exchange(const char *cmd, size_t len,
                                redisReply **reply, const char **why)
{
    hl_waiter_t *w = this_thread_waiter();
    struct timespec deadline;

    *reply = NULL;
    if (!w) {
        *why = "out of memory";
        return HL_EXCHANGE_BUSY;
    }
    drain(w);
    /* Not hl_mono_ms: this deadline is for the kernel (sem_clockwait on
     * CLOCK_MONOTONIC), a wait, not a decision. */
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += ctimeout_ms / 1000;
    deadline.tv_nsec += (long)(ctimeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    w->next = NULL;
    w->cmd = cmd;
    w->len = len;
    w->reply = NULL;
    w->why = NULL;
    w->taken = 0;
    __atomic_store_n(&w->done, 0, __ATOMIC_RELAXED);

    pthread_mutex_lock(&lane_lock);
    if (queue_tail)
        queue_tail->next = w;
    else
        queue_head = w;
    queue_tail = w;
    wait_done(w, &deadline);

    *reply = w->reply;
    *why = w->why;
    return w->result;
}

void hl_redis_conn_discard(void)
{
    pthread_mutex_lock(&lane_lock);
    conn_bad = 1;
    pthread_mutex_unlock(&lane_lock);
}
