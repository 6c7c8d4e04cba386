/*
 * hl_fixture.h - for unit tests of decisions: one slot table (every
 * decision's tables[] names it), started afresh by fresh(), and items of
 * one request decided on it. Header-only, like hl_tap.h; include after
 * hl_tap.h and hl_decide.h.
 */
#ifndef HL_FIXTURE_H
#define HL_FIXTURE_H

#include <string.h>
#include "hl_decide.h"
#include "hl_limiter_calls.h"

#define FIXTURE_CAPACITY 256

static void *mem;
static hl_slots_t table;
static hl_slots_t *tables[HL_DECIDE_MAX];

/* Starts a test on an empty table. */
static void fresh(void)
{
    size_t size = hl_slots_size(FIXTURE_CAPACITY);
    int i;

    free(mem);
    mem = tap_calloc(size);
    for (i = 0; i < HL_DECIDE_MAX; ++i)
        tables[i] = &table;
    hl_slots_attach(&table, mem, size, FIXTURE_CAPACITY, 11);
}

/* Fills item it for quota q and key ("scope|client"), its refs
 * computed (hl_decide_prepare). */
static void item(hl_decide_item_t *it, const hl_quota_t *q, const char *key)
{
    size_t scope = (size_t)(strchr(key, '|') - key);

    memset(it, 0, sizeof(*it));
    it->quota = q;
    it->origin = HL_ORIGIN_DIRECTIVE;
    it->key = key;
    it->key_len = strlen(key);
    it->cls = limiter_class(HL_ORIGIN_DIRECTIVE, key, scope);
    hl_decide_prepare(&table, it);
}

/* Decides one request of a fresh copy of item proto at now: *out is the
 * request's own item (its decision and marks). Returns admitted. */
static int arrive(const hl_decide_item_t *proto, hl_decide_item_t *out,
                  int64_t now)
{
    hl_decide_item_t *items[1] = { out };

    *out = *proto;
    return hl_decide_locked(tables, items, 1, now);
}

#endif
