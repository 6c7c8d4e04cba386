/*
 * hl_lease.h - leases of the Redis store (HotLimitStoreLease): requests of
 * one decision that Redis has already counted, which a child may admit
 * without another round trip.
 *
 * A child asks for a lease only for a key it sees often (at least two
 * decisions within half of HL_LEASE_TTL_MS), and only as many units as
 * half the requests it expects within HL_LEASE_TTL_MS at that pace; Redis
 * grants at most an eighth of what is left in the window (hl_redis_script
 * .lua). Leased units are counted in Redis when granted, so a quota is
 * never exceeded; units a child does not use before its lease ends (the
 * TTL, or the end of the window they were counted in) are lost, so a quota
 * can admit up to that many fewer requests.
 *
 * Pure: no locks (the caller holds one around every call), no allocation;
 * time is passed in as now (monotonic ms).
 */
#ifndef HL_LEASE_H
#define HL_LEASE_H

#include <stdint.h>
#include "hl_limiter.h"

#define HL_LEASE_SLOTS  256    /* keys followed per child (direct-mapped) */
#define HL_LEASE_TTL_MS 1000   /* the longest a lease lasts */

/* One key's lease and pace. */
typedef struct {
    uint64_t      key;         /* the decision's hash; 0: empty */
    int64_t       last_ms;     /* this key's latest decision here */
    int64_t       granted_ms;  /* when the units were granted */
    int64_t       until_ms;    /* units usable before this */
    uint32_t      units;       /* left */
    uint32_t      used;        /* taken since the grant */
    hl_decision_t decision;    /* the granting decision (admitted) */
} hl_lease_t;

typedef struct {
    hl_lease_t slot[HL_LEASE_SLOTS];
} hl_leases_t;

/*
 * One decision of key at now. Returns 1 when a leased unit admits it: *d
 * is then the granting decision as it stands now (each window's remaining
 * lowered by the units taken since, its reset time moved on). Returns 0
 * when key has no usable unit (none granted, used up, or expired): *want
 * is then how many units to ask for with this decision's round trip, half
 * the requests expected within HL_LEASE_TTL_MS at the pace of key's
 * previous decision here, at most max; 0 for a key not seen within
 * HL_LEASE_TTL_MS / 2. Either way notes now as key's latest decision,
 * unless now is before the latest grant (a time read before it: 0, no
 * unit taken, the lease kept). Never fails.
 */
int hl_lease_take(hl_leases_t *l, uint64_t key, int64_t now, uint32_t max,
                  hl_decision_t *d, uint32_t *want);

/*
 * Adds units granted at now, usable for valid_ms (capped at
 * HL_LEASE_TTL_MS), by the admitted decision d. Units still left from an
 * earlier grant are kept, usable until the earlier of the two ends. Never
 * fails (a key that takes another's slot drops that key's units).
 */
void hl_lease_grant(hl_leases_t *l, uint64_t key, int64_t now, uint32_t units,
                    int64_t valid_ms, const hl_decision_t *d);

/* Drops every lease (a reset). */
void hl_lease_clear(hl_leases_t *l);

#endif
