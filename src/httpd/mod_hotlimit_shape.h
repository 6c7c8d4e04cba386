/*
 * mod_hotlimit_shape.h - what mod_hotlimit_shape.c offers the other glue
 * files: the rate-limit headers of LLM providers' APIs (HotLimitHeaders
 * openai, anthropic) on a limited route's responses, and retry-after-ms on
 * its 429s.
 */
#ifndef MOD_HOTLIMIT_SHAPE_H
#define MOD_HOTLIMIT_SHAPE_H

#include "mod_hotlimit_match.h"

/*
 * Sets, in r->err_headers_out (so they survive error responses), the
 * provider headers that formats (HL_HEADERS_* bits) asks for, from every
 * window of the n matches all: for requests, the window of a quota without
 * cost= that has the least remaining; for tokens, the one of a cost= quota.
 * openai: x-ratelimit-{limit,remaining,reset}-{requests,tokens} (reset as a
 * Go duration, "6m0s"); anthropic: anthropic-ratelimit-{requests,tokens}-
 * {limit,remaining,reset} (reset as an RFC 3339 time). A class with no
 * window gets no header. Allocates from r->pool; never fails.
 */
void hl_shape_put_headers(request_rec *r, const hl_match_t *all, int n,
                          unsigned formats);

/*
 * Sets retry-after-ms on the 429 of r for match m: the milliseconds until
 * the refusing window admits again (never more than Retry-After's
 * seconds), so that clients that read it (the OpenAI SDKs) wait no longer
 * than needed. Allocates from r->pool; never fails.
 */
void hl_shape_put_retry_ms(request_rec *r, const hl_match_t *m);

#endif
