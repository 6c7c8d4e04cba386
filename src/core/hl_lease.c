/*
 * hl_lease.c - leases of the Redis store: see hl_lease.h.
 */
#include <string.h>

#include "hl_lease.h"

/* Returns key's slot (direct-mapped; key is a hash already). */
static hl_lease_t *slot_of(hl_leases_t *l, uint64_t key)
{
    return &l->slot[(key ^ (key >> 32)) % HL_LEASE_SLOTS];
}

/* Fills *d with e's granting decision as it stands at now. */
static void as_of_now(const hl_lease_t *e, int64_t now, hl_decision_t *d)
{
    int64_t passed = now - e->granted_ms;
    int i;

    *d = e->decision;
    d->admit = 1;
    d->retry_after_s = 0;
    d->remaining = UINT32_MAX;
    for (i = 0; i < d->nwindows; ++i) {
        hl_verdict_t *v = &d->windows[i];
        v->admit = 1;
        v->retry_ms = 0;
        v->remaining = v->remaining > e->used ? v->remaining - e->used : 0;
        v->reset_ms = v->reset_ms > passed ? v->reset_ms - passed : 0;
        if (v->remaining < d->remaining)
            d->remaining = v->remaining;
    }
    if (d->nwindows == 0)
        d->remaining = 0;
}

int hl_lease_take(hl_leases_t *l, uint64_t key, int64_t now, uint32_t max,
                  hl_decision_t *d, uint32_t *want)
{
    hl_lease_t *e = slot_of(l, key);
    int64_t gap;

    *want = 0;
    if (e->key != key) {
        memset(e, 0, sizeof(*e));
        e->key = key;
        e->last_ms = now;
        return 0;
    }
    if (now < e->granted_ms)
        return 0;                /* a time read before the grant: no unit */
    gap = now - e->last_ms;
    e->last_ms = now;
    if (e->units > 0 && now < e->until_ms) {
        e->units--;
        e->used++;
        as_of_now(e, now, d);
        return 1;
    }
    e->units = 0;
    if (gap < 0)
        gap = 0;                 /* a clock that went back: no pace */
    else if (gap * 2 < HL_LEASE_TTL_MS) {
        uint64_t expected = (uint64_t)HL_LEASE_TTL_MS / (uint64_t)(gap > 0 ? gap : 1);
        *want = expected / 2 > max ? max : (uint32_t)(expected / 2);
    }
    return 0;
}

void hl_lease_grant(hl_leases_t *l, uint64_t key, int64_t now, uint32_t units,
                    int64_t valid_ms, const hl_decision_t *d)
{
    hl_lease_t *e = slot_of(l, key);
    int64_t until;

    if (units == 0 || valid_ms <= 0)
        return;
    if (valid_ms > HL_LEASE_TTL_MS)
        valid_ms = HL_LEASE_TTL_MS;
    until = now + valid_ms;
    if (e->key != key) {
        memset(e, 0, sizeof(*e));
        e->key = key;
        e->last_ms = now;
    }
    if (e->units > 0 && e->until_ms > now && e->until_ms < until)
        until = e->until_ms;     /* older units end no later than before */
    else if (e->until_ms <= now)
        e->units = 0;
    e->units += units;
    e->until_ms = until;
    e->granted_ms = now;
    e->used = 0;
    e->decision = *d;
}

void hl_lease_clear(hl_leases_t *l)
{
    memset(l, 0, sizeof(*l));
}
