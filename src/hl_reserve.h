/*
 * hl_reserve.h - reserve= (issue 19): how many units a cost= request takes
 * at admission. reserve=N takes N; reserve=max_tokens[:DEFAULT] takes the
 * request body's max_tokens (or max_completion_tokens, max_output_tokens:
 * the OpenAI Chat Completions, Responses and Anthropic names, a top-level
 * number of a JSON object), DEFAULT when it has none, plus the body's
 * length / 4 for the prompt.
 *
 * Pure core: no httpd headers, no allocation; reads only what it is given.
 */
#ifndef HL_RESERVE_H
#define HL_RESERVE_H

#include <stddef.h>
#include <stdint.h>
#include "hl_quota.h"

/*
 * Looks in the first len bytes of a JSON text for a top-level member
 * max_tokens, max_completion_tokens or max_output_tokens whose value is a
 * whole number (the first of them met), without building the document:
 * one pass, no memory, nesting followed by a counter. Returns 1 and sets
 * *out (capped at HL_COST_MAX) when found; 0 when absent, not a whole
 * number, not a JSON object, or cut off before it (len may be a prefix of
 * the body).
 */
int hl_reserve_find_max_tokens(const char *json, size_t len, uint32_t *out);

/*
 * Returns the units a request of quota q reserves: q->reserve for
 * reserve=N; for reserve=max_tokens, the max_tokens found in the body's
 * first head_len bytes (head: NULL when the body was not read), else
 * q->reserve (DEFAULT), plus body_len / 4; at least 1, capped at
 * HL_COST_MAX. 0 when q reserves nothing. Reads only.
 */
uint32_t hl_reserve_units(const hl_quota_t *q, const char *head,
                          size_t head_len, uint64_t body_len);

#endif
