/*
 * hl_slots_logs.h - the log pool of algo=log in the slot table (its
 * layout and eviction rule: hl_slots.h, "The log pool"), split from
 * hl_slots.c.
 */
#ifndef HL_SLOTS_LOGS_H
#define HL_SLOTS_LOGS_H

#include <stdint.h>
#include "hl_slots.h"

/*
 * Returns the log record of slot s (from hl_slots_get on t, tagged
 * HL_SLOT_TAG_LOG), taking one when it has none (an empty log; may free
 * or evict another slot, never s nor a recent one). Never NULL. The
 * record belongs to the table.
 */
hl_log_t *hl_slots_log(hl_slots_t *t, hl_slot_t *s, int64_t now_ms);

#endif
