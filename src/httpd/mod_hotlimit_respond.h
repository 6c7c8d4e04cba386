/*
 * mod_hotlimit_respond.h - what mod_hotlimit_respond.c offers the other glue
 * files: what a limited route's responses carry: environment, RateLimit headers, the 429.
 */
#ifndef MOD_HOTLIMIT_RESPOND_H
#define MOD_HOTLIMIT_RESPOND_H

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_match.h"
#include "hl_render.h"

/*
 * Sets HOTLIMIT_ROUTE, HOTLIMIT_LIMIT and HOTLIMIT_REMAINING in
 * r->subprocess_env from all[primary] (the refusing or tightest of the n
 * matches of r) and, when headers is nonzero, RateLimit-Policy (every
 * window of all n matches, with distinct names) and RateLimit (the policy
 * with the least remaining) in r->err_headers_out (so they survive error
 * responses), replacing any earlier value.
 */
void hl_respond_annotate(request_rec *r, const hl_match_t *all, int n,
                         int primary, int headers);

/* Returns the views of m's windows with its decision (remaining, reset_s,
 * reset_ms, violated), allocated from r->pool. Never NULL. */
hl_policy_view_t *hl_respond_views(request_rec *r, const hl_match_t *m);

/*
 * Sends the 429 for match m (its decision rejected): Retry-After,
 * Cache-Control, Vary (and retry-after-ms under HotLimitHeaders openai),
 * then a problem+json, json, OpenAI, Anthropic or HTML body as Accept and
 * HotLimitErrorFormat ask (an explicit problem+json Accept wins); HTML comes from ErrorDocument 429 when configured, else the
 * HotLimitErrorTemplate, else the built-in page. Returns the value the
 * hook must return (DONE, or HTTP_TOO_MANY_REQUESTS for ErrorDocument).
 */
int hl_respond_reject(request_rec *r, const hl_match_t *m);

#endif
