/*
 * hl_slots_check.c - whether a slot table's block is consistent
 * (hl_slots_check.h): its header, class records and index, class lists,
 * free list, bucket chains and log pool, each walk bounded. hl_slots_attach
 * asks before it trusts a block that came back from disk or from a process
 * killed inside a call. Reads only; allocates nothing.
 */
#include <string.h>
#include "hl_slots_check.h"

/*
 * Returns 1 if the class records and their index agree: record 0 has hash
 * 0, records 1..nclasses-1 have distinct nonzero hashes that the index
 * finds, the index holds exactly those nclasses - 1 entries, and records
 * from nclasses on are all zero.
 */
static int classes_are_valid(const hl_slots_t *t)
{
    static const hl_slot_class_t zero;
    const hl_slots_header_t *h = t->hdr;
    uint32_t r, pos, entries = 0;

    if (h->nclasses < 1 || h->nclasses > HL_CLASSES || t->classes[0].hash != 0)
        return 0;
    for (r = h->nclasses; r < HL_CLASSES; r++) {
        if (memcmp(&t->classes[r], &zero, sizeof(zero)) != 0)
            return 0;
    }
    for (pos = 0; pos < HL_CLASS_INDEX; pos++) {
        if (t->class_index[pos] >= h->nclasses)
            return 0;
        entries += t->class_index[pos] != 0;
    }
    if (entries != h->nclasses - 1)
        return 0;
    for (r = 1; r < h->nclasses; r++) {
        if (t->classes[r].hash == 0 || hl_slots_class_record(t, t->classes[r].hash) != r)
            return 0;
    }
    return 1;
}

/*
 * Returns 1 if every class list is sound: walked from its head, every link
 * is in range, points back to the previous one and names a used slot (tag
 * != 0, key_len <= HL_KEY_MAX) of that class with the level of that list;
 * it ends at the list's tail; each class counts the slots of its
 * lists, and all lists hold `used` slots. The back-link test makes a
 * repeated slot within a list impossible; the class and level test, a slot
 * in two lists.
 */
static int lists_are_valid(const hl_slots_t *t)
{
    const hl_slots_header_t *h = t->hdr;
    uint32_t c, total = 0;

    for (c = 0; c < h->nclasses; c++) {
        const hl_slot_class_t *k = &t->classes[c];
        uint32_t in_class = 0;
        int l;

        for (l = 0; l < HL_SLOT_LEVELS; l++) {
            uint32_t idx = k->head[l], prev = 0;

            while (idx != 0) {
                const hl_slot_t *s;

                if (idx > h->capacity || total == h->used)
                    return 0;
                s = hl_slots_at(t, idx);
                if (s->lru_prev != prev || s->tag == 0 || s->key_len > HL_KEY_MAX
                    || s->cls != c || s->level != l)
                    return 0;
                prev = idx;
                idx = s->lru_next;
                in_class++;
                total++;
            }
            if (prev != k->tail[l])
                return 0;
        }
        if (in_class != k->count)
            return 0;
    }
    return total == h->used;
}

/*
 * Returns 1 if the free list is sound: in-range links to slots with tag 0,
 * ending (so without a cycle) after exactly capacity - used slots.
 */
static int free_list_is_valid(const hl_slots_t *t)
{
    const hl_slots_header_t *h = t->hdr;
    uint32_t idx = h->free_head, n = 0;

    while (idx != 0) {
        if (idx > h->capacity || n == h->capacity)
            return 0;
        if (hl_slots_at(t, idx)->tag != 0)
            return 0;
        idx = hl_slots_at(t, idx)->chain;
        n++;
    }
    return n == h->capacity - h->used;
}

/*
 * Returns 1 if the bucket chains are sound: in-range links to used slots
 * whose hash belongs to that bucket, `used` entries in all. With the lists
 * above this means every used slot is in exactly one chain.
 */
static int chains_are_valid(const hl_slots_t *t)
{
    const hl_slots_header_t *h = t->hdr;
    uint32_t b, total = 0;

    for (b = 0; b < h->nbuckets; b++) {
        uint32_t idx = t->buckets[b];

        while (idx != 0) {
            const hl_slot_t *s;

            if (idx > h->capacity || total == h->used)
                return 0;
            s = hl_slots_at(t, idx);
            if (s->tag == 0 || hl_slots_bucket(t, s->hash) != b)
                return 0;
            idx = s->chain;
            total++;
        }
    }
    return total == h->used;
}

/*
 * Returns 1 if the log pool is sound: nlogs as the capacity gives it,
 * every record either free (owner 0, on the free list exactly once, which
 * holds nothing else) or owned by a log slot that names it back, every
 * log slot naming a record it owns, and no log longer than HL_LOG_MAX.
 */
static int logs_are_valid(const hl_slots_t *t)
{
    const hl_slots_header_t *h = t->hdr;
    uint32_t r, i, nfree = 0, owned = 0;

    if (h->nlogs != hl_slots_nlogs(h->capacity) || h->log_free > h->nlogs
        || h->log_hand >= h->nlogs)
        return 0;
    for (r = 0; r < h->nlogs; r++) {
        const hl_log_t *l = &t->logs[r];

        if (l->n > HL_LOG_MAX || l->next > h->nlogs)
            return 0;
        if (l->owner == 0)
            continue;
        if (l->owner > h->capacity
            || hl_slots_at(t, l->owner)->tag != HL_SLOT_TAG_LOG
            || hl_slots_at(t, l->owner)->bucket.prev_count != r + 1)
            return 0;
        owned++;
    }
    for (r = h->log_free; r != 0; r = t->logs[r - 1].next) {
        if (t->logs[r - 1].owner != 0 || ++nfree > h->nlogs)
            return 0;
    }
    for (i = 0; i < h->capacity; i++) {
        const hl_slot_t *s = &t->slots[i];

        if (s->tag == HL_SLOT_TAG_LOG && s->bucket.prev_count != 0
            && (s->bucket.prev_count > h->nlogs
                || t->logs[s->bucket.prev_count - 1].owner != i + 1))
            return 0;
    }
    return nfree + owned == h->nlogs;
}

/* See hl_slots_check.h. */
int hl_slots_check(const hl_slots_t *t, uint32_t capacity)
{
    const hl_slots_header_t *h = t->hdr;
    int i;

    if (h->magic != HL_SLOTS_MAGIC || h->version != HL_SLOTS_VERSION
        || h->capacity != capacity || h->nbuckets != hl_slots_nbuckets(capacity))
        return 0;
    if (h->used > capacity || h->free_head > capacity
        || (h->used == capacity) != (h->free_head == 0)
        || h->recent_pos >= HL_SLOTS_RECENT)
        return 0;
    for (i = 0; i < HL_SLOTS_RECENT; i++) {
        if (h->recent[i] > capacity)
            return 0;
    }
    if (!classes_are_valid(t) || h->sweep >= h->nclasses)
        return 0;
    return lists_are_valid(t) && free_list_is_valid(t) && chains_are_valid(t)
           && logs_are_valid(t);
}
