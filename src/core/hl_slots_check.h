/*
 * hl_slots_check.h - the consistency check of a slot table's block
 * (hl_slots.h), split from hl_slots.c: the table's operations stay in one
 * file, the walk that decides whether a block can be trusted in another.
 */
#ifndef HL_SLOTS_CHECK_H
#define HL_SLOTS_CHECK_H

#include <stdint.h>
#include "hl_slots.h"

/*
 * Returns 1 if t (mapped by hl_slots_map) holds a table of this capacity
 * and version whose header, class records and index, lists, free list,
 * bucket chains and log pool are consistent, else 0; never fails
 * otherwise, and every walk is bounded, so a bad block cannot hang the
 * caller. O(capacity + nbuckets + HL_CLASSES + HL_CLASS_INDEX + nlogs).
 * Reads only.
 */
int hl_slots_check(const hl_slots_t *t, uint32_t capacity);

#endif
