/*
 * hl_logthin.c - which refusals are logged under HotLimitLogRefusals
 * first (hl_logthin.h).
 */
#include <string.h>

#include "hl_logthin.h"

#define HL_LOGTHIN_MAGIC 0x484c4c54u   /* "HLLT" */

/* Returns the number of sets holding at least nkeys entries, >= 1. */
static uint32_t sets_for(uint32_t nkeys)
{
    uint32_t n = (nkeys + HL_LOGTHIN_WAYS - 1) / HL_LOGTHIN_WAYS;
    return n ? n : 1;
}

size_t hl_logthin_size(uint32_t nkeys)
{
    return sizeof(hl_logthin_t)
           + (size_t)sets_for(nkeys) * HL_LOGTHIN_WAYS
             * sizeof(hl_logthin_entry_t);
}

hl_logthin_t *hl_logthin_init(void *mem, uint32_t nkeys)
{
    hl_logthin_t *t = mem;

    memset(mem, 0, hl_logthin_size(nkeys));
    t->magic = HL_LOGTHIN_MAGIC;
    t->nsets = sets_for(nkeys);
    return t;
}

/* Returns the entry of set for hash, or NULL when it has none. */
static hl_logthin_entry_t *find(hl_logthin_entry_t *set, uint64_t hash)
{
    int i;

    for (i = 0; i < HL_LOGTHIN_WAYS; ++i)
        if (set[i].hash == hash)
            return &set[i];
    return NULL;
}

/* Returns the entry of set to give a new key: a free one, else one whose
 * spell has ended with nothing left to report, else the one whose spell
 * ends first. Never NULL. */
static hl_logthin_entry_t *victim(hl_logthin_entry_t *set, int64_t now_ms)
{
    hl_logthin_entry_t *best = &set[0];
    int i;

    for (i = 0; i < HL_LOGTHIN_WAYS; ++i)
        if (set[i].hash == 0)
            return &set[i];
    for (i = 0; i < HL_LOGTHIN_WAYS; ++i)
        if (set[i].pending == 0 && now_ms >= set[i].spell_end_ms)
            return &set[i];
    for (i = 1; i < HL_LOGTHIN_WAYS; ++i)
        if (set[i].spell_end_ms < best->spell_end_ms)
            best = &set[i];
    return best;
}

/* Moves into v the refusals dropped with reused entries, when there are
 * some and their last report is HL_LOGTHIN_SUMMARY_MS old. */
static void report_dropped(hl_logthin_t *t, int64_t now_ms,
                           hl_logthin_verdict_t *v)
{
    if (t->dropped == 0 || now_ms < t->dropped_at_ms)
        return;
    v->dropped = t->dropped;
    t->dropped = 0;
    t->dropped_at_ms = now_ms + HL_LOGTHIN_SUMMARY_MS;
}

void hl_logthin_note(hl_logthin_t *t, uint64_t hash, int64_t now_ms,
                     int64_t spell_ms, hl_logthin_verdict_t *v)
{
    hl_logthin_entry_t *set, *e;

    memset(v, 0, sizeof(*v));
    if (hash == 0)
        hash = 1;
    set = &t->entries[(size_t)(hash % t->nsets) * HL_LOGTHIN_WAYS];
    e = find(set, hash);
    if (!e) {
        e = victim(set, now_ms);
        t->dropped += e->pending;
        e->hash = hash;
        e->spell_end_ms = now_ms + spell_ms;
        e->summary_at_ms = now_ms + HL_LOGTHIN_SUMMARY_MS;
        e->pending = 0;
        v->first = 1;
    }
    else if (now_ms >= e->spell_end_ms) {
        /* A new spell: this refusal in full; what the last one had left
         * is summarised now if a summary is due, else carried on. */
        v->first = 1;
        e->spell_end_ms = now_ms + spell_ms;
        if (e->pending && now_ms >= e->summary_at_ms) {
            v->summary = e->pending;
            e->pending = 0;
        }
        if (!e->pending)
            e->summary_at_ms = now_ms + HL_LOGTHIN_SUMMARY_MS;
    }
    else {
        if (e->pending < UINT32_MAX)
            e->pending++;
        if (now_ms >= e->summary_at_ms) {
            v->summary = e->pending;
            e->pending = 0;
            e->summary_at_ms = now_ms + HL_LOGTHIN_SUMMARY_MS;
        }
    }
    report_dropped(t, now_ms, v);
}
