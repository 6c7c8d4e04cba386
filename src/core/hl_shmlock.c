/*
 * hl_shmlock.c - the counter stripes' lock (see hl_shmlock.h): a futex
 * word holding its owner's pid, after Drepper's "Futexes Are Tricky"
 * (mutex 3), with the waiters' state in the top bit instead of a value 2.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#include "hl_shmlock.h"

void hl_shmlock_init(hl_shmlock_t *l)
{
    memset(l, 0, sizeof(*l));
}

/* Returns 1 if word w is held by a process that no longer exists. A
 * process of another user answers EPERM: alive. */
static int holder_died(uint32_t w)
{
    pid_t pid = (pid_t)(w & ~HL_SHMLOCK_WAITERS);

    return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

/* Sleeps while the word at l is still `expect`, for HL_SHMLOCK_CHECK_MS
 * at most (or until woken, or a signal). Returns nothing useful: the
 * caller looks at the word again. */
static void sleep_on(hl_shmlock_t *l, uint32_t expect)
{
    struct timespec ts = { 0, HL_SHMLOCK_CHECK_MS * 1000000L };

    /* FUTEX_WAIT (not _PRIVATE): the word is shared between processes. */
    syscall(SYS_futex, &l->word, FUTEX_WAIT, expect, &ts, NULL, 0);
}

/* hl_shmlock_lock when the first try found the lock taken (or a bad
 * pid): returns what hl_shmlock_lock returns. */
int hl_shmlock_lock_slow(hl_shmlock_t *l, uint32_t pid)
{
    uint32_t c;
    int i;

    if (pid == 0 || (pid & HL_SHMLOCK_WAITERS))
        return EINVAL;
    for (i = 0; i < HL_SHMLOCK_TRIES; ++i) {
        sched_yield();
        c = 0;
        if (__atomic_compare_exchange_n(&l->word, &c, pid, 0,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return 0;
    }
    /* Sleep. Whoever takes the lock from here on marks it as having
     * waiters (it cannot know that none is left), so every unlock while
     * anyone sleeps wakes one. */
    for (;;) {
        c = __atomic_load_n(&l->word, __ATOMIC_RELAXED);
        if (c == 0) {
            if (__atomic_compare_exchange_n(&l->word, &c,
                                            pid | HL_SHMLOCK_WAITERS, 0,
                                            __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
                return 0;
            continue;
        }
        if (!(c & HL_SHMLOCK_WAITERS)) {
            uint32_t marked = c | HL_SHMLOCK_WAITERS;

            if (!__atomic_compare_exchange_n(&l->word, &c, marked, 0,
                                             __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                continue;
            c = marked;
        }
        sleep_on(l, c);
        if (__atomic_load_n(&l->word, __ATOMIC_RELAXED) == c && holder_died(c)
            && __atomic_compare_exchange_n(&l->word, &c,
                                           pid | HL_SHMLOCK_WAITERS, 0,
                                           __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return HL_SHMLOCK_RECOVERED;
    }
}

/* Wakes one sleeper of l (hl_shmlock_unlock found the waiters' bit). */
void hl_shmlock_wake(hl_shmlock_t *l)
{
    syscall(SYS_futex, &l->word, FUTEX_WAKE, 1, NULL, NULL, 0);
}
