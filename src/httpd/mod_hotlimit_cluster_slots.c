/*
 * mod_hotlimit_cluster_slots.c - a CLUSTER SLOTS reply read into the slot
 * ranges of hl_cluster.h (see the header).
 */
#include "mod_hotlimit_cluster_slots.h"

/* Returns 1 if e is an integer reply, else 0. */
static int is_integer(const redisReply *e)
{
    return e->type == REDIS_REPLY_INTEGER;
}

size_t hl_cluster_slots_read(const redisReply *rep, hl_cluster_range_t *r,
                             size_t max)
{
    size_t i, n = 0;

    if (!rep || rep->type != REDIS_REPLY_ARRAY)
        return 0;
    for (i = 0; i < rep->elements && n < max; ++i) {
        const redisReply *e = rep->element[i], *m;

        if (e->type != REDIS_REPLY_ARRAY || e->elements < 3
            || !is_integer(e->element[0]) || !is_integer(e->element[1])
            || e->element[2]->type != REDIS_REPLY_ARRAY
            || e->element[2]->elements < 2 || !is_integer(e->element[2]->element[1]))
            continue;
        m = e->element[2];
        r[n].first = (unsigned)e->element[0]->integer;
        r[n].last = (unsigned)e->element[1]->integer;
        r[n].host = m->element[0]->type == REDIS_REPLY_STRING ? m->element[0]->str : "";
        r[n].host_len = m->element[0]->type == REDIS_REPLY_STRING ? m->element[0]->len : 0;
        r[n].port = (int)m->element[1]->integer;
        ++n;
    }
    return n;
}
