/*
 * hl_breaker.c - the remote store's circuit breaker (see hl_breaker.h).
 */
#include "hl_breaker.h"

int hl_breaker_may_try(hl_breaker_t *b, int64_t now, int64_t stale_ms)
{
    int64_t until = __atomic_load_n(&b->open_until_ms, __ATOMIC_ACQUIRE);
    uint32_t idle = 0;

    if (until == 0)
        return 1;
    if (now < until)
        return 0;
    if (!__atomic_compare_exchange_n(&b->probing, &idle, 1, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
        && now - __atomic_load_n(&b->probe_ms, __ATOMIC_ACQUIRE) < stale_ms)
        return 0;
    __atomic_store_n(&b->probe_ms, now, __ATOMIC_RELEASE);
    return 1;
}

int hl_breaker_failed(hl_breaker_t *b, int64_t now, int jitter_pct)
{
    uint32_t n = __atomic_add_fetch(&b->failures, 1, __ATOMIC_ACQ_REL);
    int64_t backoff = (int64_t)HL_BREAKER_BACKOFF_MIN_MS << (n < 6 ? n - 1 : 5);
    uint32_t max = __atomic_load_n(&b->max_ms, __ATOMIC_RELAXED);
    uint32_t was_down = 0;

    if (backoff > (max ? max : HL_BREAKER_BACKOFF_MAX_MS))
        backoff = max ? max : HL_BREAKER_BACKOFF_MAX_MS;
    if (jitter_pct < 80)
        jitter_pct = 80;
    if (jitter_pct > 120)
        jitter_pct = 120;
    backoff = backoff * jitter_pct / 100;
    __atomic_store_n(&b->open_until_ms, now + backoff, __ATOMIC_RELEASE);
    __atomic_store_n(&b->probing, 0, __ATOMIC_RELEASE);
    return __atomic_compare_exchange_n(&b->down, &was_down, 1, 0,
                                       __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

void hl_breaker_set_max(hl_breaker_t *b, uint32_t max_ms)
{
    __atomic_store_n(&b->max_ms, max_ms, __ATOMIC_RELAXED);
}

int hl_breaker_succeeded(hl_breaker_t *b)
{
    uint32_t was_down = 1;

    if (__atomic_load_n(&b->open_until_ms, __ATOMIC_ACQUIRE) == 0
        && __atomic_load_n(&b->failures, __ATOMIC_ACQUIRE) == 0)
        return 0;
    __atomic_store_n(&b->failures, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&b->open_until_ms, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&b->probing, 0, __ATOMIC_RELEASE);
    return __atomic_compare_exchange_n(&b->down, &was_down, 0, 0,
                                       __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

int hl_breaker_is_closed(const hl_breaker_t *b)
{
    return __atomic_load_n(&b->open_until_ms, __ATOMIC_ACQUIRE) == 0;
}
