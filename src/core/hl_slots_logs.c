/*
 * hl_slots_logs.c - the log pool of the slot table (hl_slots_logs.h; the
 * pool's layout and rule in hl_slots.h): a log slot's record, taken from
 * the free records, else freed from an expired log, else evicted as the
 * slot table evicts. The caller holds the table's lock.
 */
#include <string.h>
#include "hl_slots_logs.h"

/* Returns the least recently used slot owning a log, not a recent one,
 * of class c in its lowest level that has one (looking at no more than
 * HL_LOG_WALK slots from the tail of each list: a class may hold slots of
 * other algorithms), and sets *level to that level; 0 (and *level
 * HL_SLOT_LEVELS) if none was found. */
#define HL_LOG_WALK 64
static uint32_t log_evictable(const hl_slots_t *t, uint32_t c, int *level)
{
    int l;

    for (l = 0; l < HL_SLOT_LEVELS; l++) {
        uint32_t idx = t->classes[c].tail[l], n;

        for (n = 0; idx != 0 && n < HL_LOG_WALK; n++) {
            if (hl_slots_owns_log(t, hl_slots_at(t, idx)) && !hl_slots_is_recent(t, idx)) {
                *level = l;
                return idx;
            }
            idx = hl_slots_at(t, idx)->lru_prev;
        }
    }
    *level = HL_SLOT_LEVELS;
    return 0;
}

/* Returns the class owning the most log records; on a tie the requester's
 * class rc. O(nclasses). */
static uint32_t log_victim_class(const hl_slots_t *t, uint32_t rc)
{
    uint32_t c, best = rc;

    for (c = 0; c < t->hdr->nclasses; c++) {
        if (t->classes[c].logs > t->classes[best].logs)
            best = c;
    }
    return best;
}

/* Returns the slot whose log to evict for a new log of class rc, by the
 * slot table's rule (choose_eviction): the least filled, least recently
 * used of the class owning the most records, or rc's own when less
 * filled; else that of the first class that has one; 0 if none. */
static uint32_t log_eviction(const hl_slots_t *t, uint32_t rc)
{
    uint32_t v = log_victim_class(t, rc), idx, c;
    int lv, lr;

    idx = log_evictable(t, v, &lv);
    if (v != rc) {
        uint32_t own = log_evictable(t, rc, &lr);

        if (own != 0 && lr < lv)
            idx = own;
    }
    for (c = 0; idx == 0 && c < t->hdr->nclasses; c++)
        idx = log_evictable(t, c, &lv);
    return idx;
}

/* Frees the slot of one log record to make room for a new log of class
 * rc: the first, among HL_LOG_SCAN records from the hand on (bounded
 * work per new key in a flood), whose slot is not recent and expired by
 * now_ms (a reclaim; the hand moves past it); else the slot log_eviction
 * names (an eviction); else, only if no list walk found one, the least
 * filled non-recent one the hand saw. Returns 0 if nothing could be freed
 * (every record looked at is free or recent: only when nlogs is small,
 * then all of them are looked at). */
#define HL_LOG_SCAN 16
static int log_reclaim(hl_slots_t *t, uint32_t rc, int64_t now_ms)
{
    hl_slots_header_t *h = t->hdr;
    uint32_t k, r, victim = 0, seen = 0, idx;
    int level = HL_SLOT_LEVELS;

    for (k = 0; k < h->nlogs && (seen < HL_LOG_SCAN || victim == 0); k++) {
        hl_slot_t *owner;

        r = (h->log_hand + k) % h->nlogs;
        if (t->logs[r].owner == 0 || hl_slots_is_recent(t, t->logs[r].owner))
            continue;
        seen++;
        owner = hl_slots_at(t, t->logs[r].owner);
        if (owner->expires_ms <= now_ms) {
            h->log_hand = (r + 1) % h->nlogs;
            hl_slots_free_slot(t, t->logs[r].owner);
            h->reclaims++;
            return 1;
        }
        if (owner->level < level) {
            level = owner->level;
            victim = r + 1;
        }
    }
    h->log_hand = (h->log_hand + k) % h->nlogs;
    idx = log_eviction(t, rc);
    if (idx == 0 && victim != 0)
        idx = t->logs[victim - 1].owner;
    if (idx == 0)
        return 0;
    hl_slots_free_slot(t, idx);
    h->evictions++;
    return 1;
}

/* See hl_slots_logs.h. */
hl_log_t *hl_slots_log(hl_slots_t *t, hl_slot_t *s, int64_t now_ms)
{
    hl_slots_header_t *h = t->hdr;
    uint32_t r = s->bucket.prev_count, idx = (uint32_t)(s - t->slots) + 1;

    if (r != 0 && r <= h->nlogs && t->logs[r - 1].owner == idx)
        return &t->logs[r - 1];
    /* Always frees one: nlogs > HL_SLOTS_RECENT and s owns none. */
    if (h->log_free == 0 && !log_reclaim(t, s->cls, now_ms))
        return &t->logs[0];   /* corrupt table only: share a record */
    r = h->log_free;
    h->log_free = t->logs[r - 1].next;
    memset(&t->logs[r - 1], 0, sizeof(hl_log_t));
    t->logs[r - 1].owner = idx;
    s->bucket.prev_count = r;
    t->classes[s->cls].logs++;
    return &t->logs[r - 1];
}
