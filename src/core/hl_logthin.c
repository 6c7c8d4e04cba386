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
        v->fresh = 1;
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

/* Counts one held refusal of addr among the busiest: its entry, else a
 * free one, else the least counted one takes addr and its count + 1
 * (space saving: every count is an upper bound). */
static void top_add(hl_logthin_t *t, const char *addr)
{
    hl_logthin_top_t *least = &t->top[0];
    int i;

    for (i = 0; i < HL_LOGTHIN_TOP; ++i) {
        hl_logthin_top_t *e = &t->top[i];

        if (e->n > 0 && strncmp(e->addr, addr, HL_LOGTHIN_ADDR_MAX - 1) == 0) {
            e->n++;
            return;
        }
        if (e->n < least->n)
            least = e;
    }
    strncpy(least->addr, addr, HL_LOGTHIN_ADDR_MAX - 1);
    least->addr[HL_LOGTHIN_ADDR_MAX - 1] = '\0';
    least->err = least->n;
    least->n++;
}

/* Moves the held count and the busiest addresses into v (by their sure
 * count n - err, busiest first; only those surely refused at least twice:
 * one refusal does not make an address busy), emptying them. */
static void report_held(hl_logthin_t *t, int64_t now_ms,
                        hl_logthin_verdict_t *v)
{
    int i, j;

    v->held = t->held;
    v->held_keys = t->held_keys;
    v->ntop = 0;
    for (i = 0; i < HL_LOGTHIN_TOP; ++i) {
        uint32_t sure = t->top[i].n - t->top[i].err;

        if (t->top[i].n < t->top[i].err || sure < 2)
            continue;
        for (j = v->ntop; j > 0 && v->top[j - 1].n < sure; --j)
            v->top[j] = v->top[j - 1];
        v->top[j] = t->top[i];
        v->top[j].n = sure;
        v->top[j].err = 0;
        v->ntop++;
    }
    memset(t->top, 0, sizeof(t->top));
    t->held = 0;
    t->held_keys = 0;
    t->held_at_ms = now_ms + HL_LOGTHIN_SUMMARY_MS;
}

void hl_logthin_gate(hl_logthin_t *t, int64_t now_ms, int64_t wall_s,
                     uint32_t rate, const char *addr, hl_logthin_verdict_t *v)
{
    if (v->first) {
        if (wall_s != t->rate_sec) {
            t->rate_sec = wall_s;
            t->rate_used = 0;
        }
        if (t->rate_used < rate)
            t->rate_used++;
        else {
            v->first = 0;
            if (t->held == 0 && t->held_at_ms < now_ms + HL_LOGTHIN_SUMMARY_MS)
                t->held_at_ms = now_ms + HL_LOGTHIN_SUMMARY_MS;
            t->held++;
            t->held_keys += v->fresh ? 1 : 0;
            if (addr != NULL && *addr != '\0')
                top_add(t, addr);
        }
    }
    if (t->held > 0 && now_ms >= t->held_at_ms)
        report_held(t, now_ms, v);
}
