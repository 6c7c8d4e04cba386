/*
 * hl_wait.c - the requests the server holds instead of refusing them: see
 * hl_wait.h.
 */
#include <string.h>

#include "hl_wait.h"

uint32_t hl_wait_count(const hl_wait_table_t *t, uint64_t key)
{
    uint32_t i, n = 0;

    for (i = 0; i < HL_WAIT_MAX; ++i)
        if (t->rec[i].seq && t->rec[i].key == key)
            ++n;
    return n;
}

uint64_t hl_wait_join(hl_wait_table_t *t, uint64_t key,
                      const hl_conc_holder_t *me, uint32_t queue_max,
                      uint32_t total_max, int *why)
{
    uint32_t i;

    *why = 0;
    if (t->used >= total_max || t->used >= HL_WAIT_MAX) {
        *why = HL_WAIT_SERVER_FULL;
        return 0;
    }
    if (queue_max && hl_wait_count(t, key) >= queue_max) {
        *why = HL_WAIT_LINE_FULL;
        return 0;
    }
    for (i = 0; i < HL_WAIT_MAX && t->rec[i].seq; ++i)
        ;
    if (i == HL_WAIT_MAX) {          /* used disagrees: trust the records */
        *why = HL_WAIT_SERVER_FULL;
        return 0;
    }
    t->rec[i].key = key;
    t->rec[i].seq = ++t->next_seq;
    t->rec[i].pid = me->pid;
    t->rec[i].start = me->start;
    t->used++;
    return t->rec[i].seq;
}

uint32_t hl_wait_ahead(const hl_wait_table_t *t, uint64_t key, uint64_t seq)
{
    uint32_t i, n = 0;

    for (i = 0; i < HL_WAIT_MAX; ++i)
        if (t->rec[i].seq && t->rec[i].key == key && t->rec[i].seq < seq)
            ++n;
    return n;
}

/* Empties record i. */
static void drop(hl_wait_table_t *t, uint32_t i)
{
    memset(&t->rec[i], 0, sizeof(t->rec[i]));
    if (t->used > 0)
        t->used--;
}

int hl_wait_leave(hl_wait_table_t *t, uint64_t seq)
{
    uint32_t i;

    for (i = 0; seq && i < HL_WAIT_MAX; ++i)
        if (t->rec[i].seq == seq) {
            drop(t, i);
            return 1;
        }
    return 0;
}

uint32_t hl_wait_reap(hl_wait_table_t *t, hl_conc_alive_fn alive, void *ctx)
{
    uint32_t i, n = 0;

    for (i = 0; i < HL_WAIT_MAX; ++i)
        if (t->rec[i].seq && !alive(t->rec[i].pid, t->rec[i].start, ctx)) {
            drop(t, i);
            ++n;
        }
    return n;
}
