/*
 * hl_spool.c - HotLimitSpoolLimit's account (hl_spool.h): compare-and-swap
 * loops on the shared integers, so two processes never both take the last
 * room under the limit.
 */
#include "hl_spool.h"

/* Adds n bytes when they fit: returns 1, or 0 with nothing added. */
int hl_spool_charge(hl_spool_t *s, int64_t n)
{
    int64_t old = __atomic_load_n(&s->bytes, __ATOMIC_ACQUIRE);

    do {
        if (n > __atomic_load_n(&s->limit, __ATOMIC_ACQUIRE) - old)
            return 0;
    } while (!__atomic_compare_exchange_n(&s->bytes, &old, old + n, 0,
                                          __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
    return 1;
}

/* Gives back n bytes (never below 0). Cannot fail. */
void hl_spool_give(hl_spool_t *s, int64_t n)
{
    int64_t old = __atomic_load_n(&s->bytes, __ATOMIC_ACQUIRE);

    while (!__atomic_compare_exchange_n(&s->bytes, &old,
                                        old > n ? old - n : 0, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        ;
}

/* Counts a refusal; returns 1 when a line is due (see hl_spool.h). */
int hl_spool_refused(hl_spool_t *s, int64_t now, uint64_t *skipped)
{
    int64_t last = __atomic_load_n(&s->logged_ms, __ATOMIC_ACQUIRE);

    *skipped = 0;
    __atomic_add_fetch(&s->refused, 1, __ATOMIC_ACQ_REL);
    /* A clock that went back (now < last) logs rather than stays silent. */
    if ((last != 0 && now >= last && now - last < HL_SPOOL_LOG_MS)
        || !__atomic_compare_exchange_n(&s->logged_ms, &last, now ? now : 1, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        __atomic_add_fetch(&s->unlogged, 1, __ATOMIC_ACQ_REL);
        return 0;
    }
    *skipped = __atomic_exchange_n(&s->unlogged, 0, __ATOMIC_ACQ_REL);
    return 1;
}
