/*
 * hl_align.h - rounding for the images the core lays out in one
 * caller-supplied block (the slot table, hl_slots.c; the quota table image,
 * hl_table.c): each part starts on an 8-byte boundary so that the 64-bit
 * fields of the next part are aligned wherever the block is mapped.
 */
#ifndef HL_ALIGN_H
#define HL_ALIGN_H

#include <stddef.h>

/* Returns n rounded up to a multiple of 8 (wraps to 0 within 7 of
 * SIZE_MAX: callers pass sizes of fixed parts). Never fails. */
size_t hl_align8(size_t n);

#endif
