/*
 * mod_hotlimit_usage.h - what mod_hotlimit_usage.c offers the other glue
 * files: cost=usage, the tokens an LLM answer reports in its body.
 */
#ifndef MOD_HOTLIMIT_USAGE_H
#define MOD_HOTLIMIT_USAGE_H

#include "mod_hotlimit_conf.h"

/*
 * Returns what the answer of r (the last request of its chain) costs under
 * a cost=usage quota: the tokens its body reported (hl_usage_cost), capped
 * at HL_COST_MAX; `missing` when none was reported, it was invalid or the
 * body was not read (a missing or invalid cost charges the reservation:
 * reserve=, else 1). Logs what it read at debug level (HL01400). Reads
 * only.
 */
uint32_t hl_usage_response_cost(request_rec *r, uint32_t missing);

/* Notes that r's client request was admitted by a cost=usage quota, so
 * that its answer's body is read (the access checker calls it), and
 * narrows r's Accept-Encoding to gzip, deflate and identity (the codings
 * whose usage can be read; q-values kept; "identity" when none is left)
 * for the backend. Never fails. */
void hl_usage_wanted(request_rec *r);

/* Registers the HOTLIMIT_USAGE output filter and its insert_filter hook
 * (register_hooks). */
void hl_usage_register(void);

#endif
