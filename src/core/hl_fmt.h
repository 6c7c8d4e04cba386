/*
 * hl_fmt.h - decimal formatting without stdio, for the request path
 * (snprintf costs hundreds of instructions a call; this costs tens).
 */
#ifndef HL_FMT_H
#define HL_FMT_H

#include <stddef.h>
#include <stdint.h>

#define HL_FMT_U64_MAX 21   /* digits of UINT64_MAX, plus the NUL */

/* Writes v in decimal into out (at least HL_FMT_U64_MAX bytes),
 * NUL-terminated. Returns the number of digits. Never fails. */
size_t hl_fmt_u64(char *out, uint64_t v);

#define HL_FMT_GROUPED_MAX 27  /* UINT64_MAX with 6 commas, plus the NUL */

/* Writes v in decimal with its digits grouped by three ("1,234,567") into
 * out (at least HL_FMT_GROUPED_MAX bytes), NUL-terminated. Returns the
 * length. Never fails. */
size_t hl_fmt_grouped(char *out, uint64_t v);

#endif
