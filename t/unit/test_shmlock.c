/* test_shmlock.c - the counter stripes' lock (hl_shmlock.c): exclusion
 * across processes and threads, sleepers woken, a dead holder's lock
 * taken over. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "hl_tap.h"
#include "hl_shmlock.h"

#define PROCS   4
#define THREADS 3
#define ROUNDS  20000

typedef struct {
    hl_shmlock_t lock;
    volatile long counter;
    volatile int inside;      /* holders at once: must stay 0 or 1 */
    volatile int overlap;     /* set if two were inside at once */
} shared_t;

static shared_t *sh;

/* Returns ms of the monotonic clock. */
static long mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Increments the shared counter ROUNDS times under the lock, as a read,
 * a yield now and then, and a write: unguarded, increments would be lost. */
static void *hammer(void *arg)
{
    uint32_t pid = (uint32_t)getpid();
    long i, v;
    (void)arg;

    for (i = 0; i < ROUNDS; ++i) {
        if (hl_shmlock_lock(&sh->lock, pid) != 0)
            abort();
        if (++sh->inside != 1)
            sh->overlap = 1;
        v = sh->counter;
        if (i % 512 == 0)
            sched_yield();
        sh->counter = v + 1;
        --sh->inside;
        hl_shmlock_unlock(&sh->lock);
    }
    return NULL;
}

/* One process of the exactness test: THREADS threads hammering. */
static void process_hammer(void)
{
    pthread_t t[THREADS];
    int i;

    for (i = 0; i < THREADS; ++i)
        pthread_create(&t[i], NULL, hammer, NULL);
    for (i = 0; i < THREADS; ++i)
        pthread_join(t[i], NULL);
}

int main(void)
{
    pid_t kids[PROCS], kid;
    uint32_t me = (uint32_t)getpid();
    int i, status, rv;
    long t0;

    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        return 1;
    hl_shmlock_init(&sh->lock);

    ok(hl_shmlock_lock(&sh->lock, 0) == EINVAL, "pid 0: refused");
    ok(hl_shmlock_lock(&sh->lock, 0x80000001u) == EINVAL,
       "a pid with the waiters' bit: refused");
    ok(hl_shmlock_lock(&sh->lock, me) == 0 && sh->lock.word == me,
       "a free lock is taken; the word holds the owner's pid");
    hl_shmlock_unlock(&sh->lock);
    ok(sh->lock.word == 0, "unlocked: the word is 0 again");

    /* Exclusion: PROCS processes of THREADS threads each. */
    for (i = 0; i < PROCS; ++i) {
        kids[i] = fork();
        if (kids[i] == 0) {
            process_hammer();
            _exit(0);
        }
    }
    for (i = 0; i < PROCS; ++i)
        waitpid(kids[i], &status, 0);
    okf(sh->counter == (long)PROCS * THREADS * ROUNDS && !sh->overlap,
       "%d processes x %d threads x %d increments: exact (%ld), never two "
       "holders at once", PROCS, THREADS, ROUNDS, sh->counter);
    ok(sh->lock.word == 0, "free after the run");

    /* A sleeper is woken when another process lets go. */
    kid = fork();
    if (kid == 0) {
        struct timespec hold = { 0, 150 * 1000000L };

        hl_shmlock_lock(&sh->lock, (uint32_t)getpid());
        sh->counter = -1;
        nanosleep(&hold, NULL);
        hl_shmlock_unlock(&sh->lock);
        pause();               /* alive: the lock must not be taken over */
        _exit(0);
    }
    while (sh->counter != -1)
        sched_yield();
    t0 = mono_ms();
    rv = hl_shmlock_lock(&sh->lock, me);
    okf(rv == 0 && mono_ms() - t0 >= 100,
       "a waiter sleeps while a live holder keeps the lock, then gets it "
       "(rv %d after %ld ms)", rv, mono_ms() - t0);
    hl_shmlock_unlock(&sh->lock);
    kill(kid, SIGKILL);
    waitpid(kid, &status, 0);

    /* A holder that dies holding the lock. */
    kid = fork();
    if (kid == 0) {
        hl_shmlock_lock(&sh->lock, (uint32_t)getpid());
        _exit(0);              /* dies holding it */
    }
    waitpid(kid, &status, 0);
    ok(sh->lock.word == (uint32_t)kid, "the dead child still holds the word");
    t0 = mono_ms();
    rv = hl_shmlock_lock(&sh->lock, me);
    okf(rv == HL_SHMLOCK_RECOVERED && mono_ms() - t0 < 2000,
       "its lock is taken over, and the taker is told (rv %d after %ld ms)",
       rv, mono_ms() - t0);
    hl_shmlock_unlock(&sh->lock);
    ok(hl_shmlock_lock(&sh->lock, me) == 0, "then it is an ordinary lock");
    hl_shmlock_unlock(&sh->lock);
    return done_testing();
}
