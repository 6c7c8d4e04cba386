/*
 * hl_limiter_calls.h - for unit tests of the limiter: one call that takes
 * a key ("scope|client") and decides or counts it, its slot keys and
 * eviction class worked out on the spot. The module never needs these:
 * it computes an item's slot keys once (hl_decide_prepare, kept per
 * connection) and calls the _refs forms (hl_limiter.h). Header-only, like
 * hl_tap.h; include after hl_limiter.h.
 */
#ifndef HL_LIMITER_CALLS_H
#define HL_LIMITER_CALLS_H

#include <stdlib.h>
#include "hl_limiter.h"
#include "hl_table.h"

/* Returns a fresh empty table of capacity slots (calloc'd: the caller
 * frees t.hdr), seed 42. */
static inline hl_slots_t limiter_table(uint32_t capacity)
{
    hl_slots_t t;
    size_t size = hl_slots_size(capacity);
    void *mem = calloc(1, size);

    hl_slots_attach(&t, mem, size, capacity, 42);
    return t;
}

/* Returns the eviction class of the quota with this origin and scope
 * (scope_len bytes) in the main server: hl_limiter_class_of with host
 * hash 0. Never 0. */
static inline uint64_t limiter_class(hl_origin_t origin, const char *scope,
                                     size_t scope_len)
{
    return hl_limiter_class_of(origin, 0,
                               hl_table_route_hash(scope, scope_len));
}

/* Decides on one request of key (keylen bytes, any length: compacted to
 * fit a slot) against every window of q at now_ms, as
 * hl_limiter_decide_refs does; the first scope_len bytes of key are the
 * quota's scope, which with origin names the eviction class. Never
 * fails. */
static inline void limiter_decide(hl_slots_t *t, const hl_quota_t *q,
                                  hl_origin_t origin, const char *key,
                                  size_t keylen, size_t scope_len,
                                  int64_t now_ms, int commit,
                                  hl_decision_t *d)
{
    hl_slot_ref_t refs[HL_MAX_WINDOWS];

    hl_limiter_refs(t, origin, q->nwindows, key, keylen, refs);
    hl_limiter_decide_refs(t, q, refs,
                           limiter_class(origin, key, scope_len < keylen
                                                      ? scope_len : keylen),
                           now_ms, commit, d);
}

/* Counts one finished request of key in every window of q, as
 * hl_limiter_count_refs does; key and scope_len as for limiter_decide.
 * Never fails. */
static inline void limiter_count(hl_slots_t *t, const hl_quota_t *q,
                                 hl_origin_t origin, const char *key,
                                 size_t keylen, size_t scope_len,
                                 int64_t now_ms)
{
    hl_slot_ref_t refs[HL_MAX_WINDOWS];

    hl_limiter_refs(t, origin, q->nwindows, key, keylen, refs);
    hl_limiter_count_refs(t, q, refs,
                          limiter_class(origin, key, scope_len < keylen
                                                     ? scope_len : keylen),
                          now_ms, NULL);
}

#endif
