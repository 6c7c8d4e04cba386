/*
 * hl_shmlock.h - a lock that lives in shared memory: one 32-bit word on a
 * cache line of its own holding the owner's process id (0: free; the top
 * bit: someone sleeps on it), taken with a compare-and-swap and slept on
 * with a shared futex. The counter stripes take one per decision, so it
 * is the cheapest lock that still excludes every thread of every child
 * (no file lock, no second thread mutex, no call through APR; a robust
 * pthread mutex costs ~100 instructions more per lock and unlock). A
 * holder that dies (a child killed mid-decision) does not block the
 * others: a waiter that has slept HL_SHMLOCK_CHECK_MS finds its process
 * gone and takes the lock over, and is told so.
 * Linux only (futex); pure: no APR, no httpd.
 */
#ifndef HL_SHMLOCK_H
#define HL_SHMLOCK_H

#include <stdint.h>

#define HL_SHMLOCK_TRIES    32    /* trylock + yield rounds before sleeping */
#define HL_SHMLOCK_CHECK_MS 20    /* sleep before asking if the holder lives */

#define HL_SHMLOCK_WAITERS 0x80000000u  /* the word's top bit */

/* One lock, alone on its cache line (two stripes' locks never share one). */
typedef union {
    uint32_t word;       /* owner pid | HL_SHMLOCK_WAITERS, or 0 */
    char     line[64];
} hl_shmlock_t;

/* What hl_shmlock_lock returns besides 0 and an errno value: the lock is
 * held, and its previous holder died holding it (what it guarded may be
 * half-updated: the caller's data must stay usable anyway). */
#define HL_SHMLOCK_RECOVERED (-1)

/* Initialises the lock at l (free), in memory shared by the processes
 * that will use it, before any of them uses it. Never fails; the caller
 * owns the memory. */
void hl_shmlock_init(hl_shmlock_t *l);

/*
 * Takes the lock for process pid (the caller's getpid(), > 0, below 2^31:
 * it names the holder, so every thread of a process passes the same).
 * Tries HL_SHMLOCK_TRIES times with a yield between tries before sleeping
 * (the critical sections are short). Returns 0, or HL_SHMLOCK_RECOVERED
 * (held, taken over from a holder that died), or EINVAL for a bad pid
 * (not held). Inline for the usual case, a free lock taken with one
 * compare-and-swap; hl_shmlock_lock_slow (hl_shmlock.c) does the rest.
 */
int hl_shmlock_lock_slow(hl_shmlock_t *l, uint32_t pid);
static inline int hl_shmlock_lock(hl_shmlock_t *l, uint32_t pid)
{
    uint32_t free_word = 0;

    if (pid != 0 && !(pid & HL_SHMLOCK_WAITERS)
        && __atomic_compare_exchange_n(&l->word, &free_word, pid, 0,
                                       __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return 0;
    return hl_shmlock_lock_slow(l, pid);
}

/* Lets go of the lock (held by the caller's process), waking one sleeper
 * if any (hl_shmlock_wake, a futex call). Never fails. */
void hl_shmlock_wake(hl_shmlock_t *l);
static inline void hl_shmlock_unlock(hl_shmlock_t *l)
{
    if (__atomic_exchange_n(&l->word, 0, __ATOMIC_RELEASE) & HL_SHMLOCK_WAITERS)
        hl_shmlock_wake(l);
}

#endif
