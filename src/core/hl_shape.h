/*
 * hl_shape.h - a refusal in the shapes LLM providers' clients read: the
 * OpenAI and Anthropic 429 bodies (HotLimitErrorFormat openai|anthropic),
 * and the values of their rate-limit headers (HotLimitHeaders openai,
 * anthropic): Go-style durations ("6m0s", "120ms") and RFC 3339 times.
 * Uses an APR pool for the bodies; no httpd headers.
 */
#ifndef HL_SHAPE_H
#define HL_SHAPE_H

#include <stddef.h>
#include <stdint.h>
#include <apr_pools.h>
#include "hl_render.h"

/* Room for any text hl_shape_duration or hl_shape_time writes, NUL included. */
#define HL_SHAPE_TEXT_MAX 40

/*
 * Returns the English sentence both provider bodies carry: which limit
 * refused (route, requests or tokens, the window's name) and how long to
 * wait in words; for a banned client, that it is banned and for how long.
 * Allocated from p. Never NULL.
 */
char *hl_shape_message(apr_pool_t *p, const hl_reject_info_t *info);

/*
 * Returns the OpenAI error body: {"error":{"message":"...","type":
 * "requests" or "tokens" (info->tokens),"param":null,"code":
 * "rate_limit_exceeded"}}, the message hl_shape_message's, JSON-escaped.
 * Allocated from p. Never NULL.
 */
char *hl_shape_openai_json(apr_pool_t *p, const hl_reject_info_t *info);

/*
 * Returns the Anthropic error body: {"type":"error","error":{"type":
 * "rate_limit_error","message":"..."}}. Allocated from p. Never NULL.
 */
char *hl_shape_anthropic_json(apr_pool_t *p, const hl_reject_info_t *info);

/*
 * Writes ms as Go's time.Duration prints it, as OpenAI's
 * x-ratelimit-reset-* headers do: "0s", "120ms", "1s", "1.5s", "6m0s",
 * "1h2m3s" (a negative ms as "0s"). out holds HL_SHAPE_TEXT_MAX bytes.
 * Returns the length written (NUL not counted). Never fails.
 */
size_t hl_shape_duration(char *out, int64_t ms);

/*
 * Writes the UTC time unix_ms (milliseconds since 1970, rounded up to the
 * second) as RFC 3339, "2026-01-02T03:04:05Z", as Anthropic's
 * anthropic-ratelimit-*-reset headers do. out holds HL_SHAPE_TEXT_MAX
 * bytes. Returns the length written; 0 (out "") when the time cannot be
 * represented.
 */
size_t hl_shape_time(char *out, int64_t unix_ms);

/*
 * Returns the index of the policy of v[0 .. n) whose tokens flag equals
 * tokens and which binds tightest among them (hl_tightest_beats: least
 * remaining, then the longest reset), or -1 when none has that flag.
 */
int hl_shape_pick(const hl_policy_view_t *v, int n, int tokens);

/* Returns v's reset in milliseconds: reset_ms when known, else
 * reset_s * 1000; never negative. */
int64_t hl_shape_reset_ms(const hl_policy_view_t *v);

#endif
