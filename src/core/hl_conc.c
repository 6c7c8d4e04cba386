/*
 * hl_conc.c - HotLimitConcurrency's table of slot holders: see hl_conc.h.
 */
#include <string.h>

#include "hl_conc.h"

size_t hl_conc_size(uint32_t capacity)
{
    return sizeof(hl_conc_table_t) + (size_t)capacity * sizeof(hl_conc_rec_t);
}

hl_conc_table_t *hl_conc_init(void *mem, uint32_t capacity)
{
    hl_conc_table_t *t = mem;

    memset(t, 0, hl_conc_size(capacity));
    t->magic = HL_CONC_MAGIC;
    t->capacity = capacity;
    return t;
}

/* Returns where key's run starts. */
static uint32_t home_of(const hl_conc_table_t *t, uint64_t key)
{
    return (uint32_t)((key ^ (key >> 29)) % t->capacity);
}

/* Returns 1 if index k lies cyclically in (i, j]. */
static int between(uint32_t i, uint32_t k, uint32_t j)
{
    return i <= j ? (i < k && k <= j) : (i < k || k <= j);
}

/* Empties record i, moving later records of the run back so that every
 * record stays reachable from its home. */
static void remove_at(hl_conc_table_t *t, uint32_t i)
{
    uint32_t j = i;

    for (;;) {
        j = (j + 1) % t->capacity;
        if (t->rec[j].key == 0)
            break;
        if (between(i, home_of(t, t->rec[j].key), j))
            continue;           /* its home is after the hole: it stays */
        t->rec[i] = t->rec[j];
        i = j;
    }
    memset(&t->rec[i], 0, sizeof(t->rec[i]));
    t->used--;
}

/* Takes record i's slots off its scope's figures, then removes it. */
static void drop_record(hl_conc_table_t *t, uint32_t i)
{
    hl_conc_rec_t *e = &t->rec[i];

    if (e->scope < HL_CONC_SCOPES) {
        hl_conc_scope_t *s = &t->scopes[e->scope];
        s->in_flight = s->in_flight > e->count ? s->in_flight - e->count : 0;
    }
    remove_at(t, i);
}

unsigned hl_conc_scope(hl_conc_table_t *t, uint64_t hash, const char *name,
                       int table, uint32_t limit)
{
    unsigned i;

    for (i = 0; i < HL_CONC_SCOPES; ++i) {
        hl_conc_scope_t *s = &t->scopes[i];
        if (s->hash == hash) {
            s->limit = limit;
            return i;
        }
        if (s->hash == 0) {
            s->hash = hash;
            s->limit = limit;
            s->table = table ? 1 : 0;
            strncpy(s->name, name, sizeof(s->name) - 1);
            s->name[sizeof(s->name) - 1] = '\0';
            return i;
        }
    }
    return HL_CONC_NO_SCOPE;
}

/* Returns 1 if record e belongs to holder me. */
static int is_mine(const hl_conc_rec_t *e, const hl_conc_holder_t *me)
{
    return e->pid == me->pid && e->start == me->start;
}

/* Sums key's slots along its run; sets *mine to me's record and *free_at
 * to the run's end (UINT32_MAX when the table is full). */
static uint32_t scan_key(const hl_conc_table_t *t, uint64_t key,
                         const hl_conc_holder_t *me, uint32_t *mine,
                         uint32_t *free_at)
{
    uint32_t i = home_of(t, key), n, sum = 0;

    *mine = UINT32_MAX;
    *free_at = UINT32_MAX;
    for (n = 0; n < t->capacity; ++n, i = (i + 1) % t->capacity) {
        const hl_conc_rec_t *e = &t->rec[i];
        if (e->key == 0) {
            *free_at = i;
            break;
        }
        if (e->key != key)
            continue;
        sum += e->count;
        if (me && is_mine(e, me))
            *mine = i;
    }
    return sum;
}

/* Drops key's records of holders other than me that alive says are gone,
 * each tested at most once per HL_CONC_CHECK_MS. Returns 1 if any was. */
static int reclaim_key(hl_conc_table_t *t, uint64_t key,
                       const hl_conc_holder_t *me, int64_t now,
                       hl_conc_alive_fn alive, void *ctx)
{
    uint32_t i = home_of(t, key), n;
    int dropped = 0;

    for (n = 0; n < t->capacity; ++n) {
        hl_conc_rec_t *e = &t->rec[i];
        if (e->key == 0)
            break;
        if (e->key == key && !is_mine(e, me)
            && (e->checked_ms == 0 || now - e->checked_ms >= HL_CONC_CHECK_MS
                || now < e->checked_ms)) {
            e->checked_ms = now;
            if (!alive(e->pid, e->start, ctx)) {
                drop_record(t, i);   /* i now holds the next record */
                dropped = 1;
                continue;
            }
        }
        i = (i + 1) % t->capacity;
    }
    return dropped;
}

int hl_conc_take(hl_conc_table_t *t, uint64_t key, const hl_conc_holder_t *me,
                 uint32_t limit, unsigned scope, int64_t now,
                 hl_conc_alive_fn alive, void *ctx)
{
    int rc = hl_conc_try(t, key, me, limit, scope, now, alive, ctx);

    if (rc == 0 && scope < HL_CONC_SCOPES)
        t->scopes[scope].refused++;
    return rc;
}

int hl_conc_try(hl_conc_table_t *t, uint64_t key, const hl_conc_holder_t *me,
                uint32_t limit, unsigned scope, int64_t now,
                hl_conc_alive_fn alive, void *ctx)
{
    hl_conc_scope_t *s = scope < HL_CONC_SCOPES ? &t->scopes[scope] : NULL;
    uint32_t mine, free_at, held;

    held = scan_key(t, key, me, &mine, &free_at);
    if (held >= limit && reclaim_key(t, key, me, now, alive, ctx))
        held = scan_key(t, key, me, &mine, &free_at);
    if (held >= limit)
        return 0;
    if (mine == UINT32_MAX) {
        /* A new record; one is always left empty so runs end. */
        if (free_at == UINT32_MAX || t->used + 1 >= t->capacity)
            return -1;
        mine = free_at;
        memset(&t->rec[mine], 0, sizeof(t->rec[mine]));
        t->rec[mine].key = key;
        t->rec[mine].pid = me->pid;
        t->rec[mine].start = me->start;
        t->rec[mine].scope = (uint16_t)(s ? scope : HL_CONC_NO_SCOPE);
        t->used++;
    }
    t->rec[mine].count++;
    if (s) {
        s->in_flight++;
        s->admitted++;
    }
    return 1;
}

int hl_conc_log_due(hl_conc_table_t *t, unsigned scope, int64_t now,
                    uint32_t *skipped)
{
    hl_conc_scope_t *s;

    *skipped = 0;
    if (scope >= HL_CONC_SCOPES)
        return 1;
    s = &t->scopes[scope];
    if (s->logged_ms != 0 && now >= s->logged_ms
        && now - s->logged_ms < HL_CONC_LOG_MS) {
        s->unlogged++;
        return 0;
    }
    *skipped = s->unlogged;
    s->unlogged = 0;
    s->logged_ms = now;
    return 1;
}

int hl_conc_give(hl_conc_table_t *t, uint64_t key, const hl_conc_holder_t *me)
{
    uint32_t mine, free_at;
    hl_conc_rec_t *e;

    scan_key(t, key, me, &mine, &free_at);
    if (mine == UINT32_MAX)
        return 0;
    e = &t->rec[mine];
    if (e->scope < HL_CONC_SCOPES && t->scopes[e->scope].in_flight > 0)
        t->scopes[e->scope].in_flight--;
    if (--e->count == 0)
        remove_at(t, mine);
    return 1;
}

uint32_t hl_conc_in_flight(const hl_conc_table_t *t, uint64_t key)
{
    uint32_t mine, free_at;

    return scan_key(t, key, NULL, &mine, &free_at);
}

uint32_t hl_conc_reap(hl_conc_table_t *t, hl_conc_alive_fn alive, void *ctx)
{
    uint32_t i = 0, given = 0, n;

    /* A removal may shift a later record into i, or wrap one from the
     * table's start to its end: each index is looked at until it holds a
     * live record or none, and the whole table is passed once more at most. */
    for (n = 0; n < 2 * t->capacity && i < t->capacity; ++n) {
        hl_conc_rec_t *e = &t->rec[i];
        if (e->key != 0 && !alive(e->pid, e->start, ctx)) {
            given += e->count;
            drop_record(t, i);
            continue;
        }
        ++i;
    }
    return given;
}

void hl_conc_note_held(hl_conc_table_t *t, unsigned scope, int64_t held_ms)
{
    hl_conc_scope_t *s;
    int64_t d = held_ms < 0 ? 0 : held_ms > 86400000 ? 86400000 : held_ms;

    if (scope >= HL_CONC_SCOPES)
        return;
    s = &t->scopes[scope];
    if (s->samples == 0)
        s->avg_ms = (uint32_t)d;
    else
        s->avg_ms = (uint32_t)((int64_t)s->avg_ms + (d - (int64_t)s->avg_ms) / 8);
    if (s->samples < UINT32_MAX)
        s->samples++;
}

long hl_conc_retry_after_s(const hl_conc_table_t *t, unsigned scope,
                           uint32_t limit, uint64_t position, uint64_t salt)
{
    uint64_t est, n = limit ? limit : 1, ms;

    if (scope >= HL_CONC_SCOPES || t->scopes[scope].samples == 0)
        return 1;            /* no slot given back yet: nothing known */
    est = t->scopes[scope].avg_ms;
    ms = est * (n + position % (2 * n)) / n;
    ms += (salt ^ (salt >> 31)) % (est / n + 1);
    ms = (ms + 999) / 1000;
    return ms < 1 ? 1 : ms > 86400 ? 86400 : (long)ms;
}
