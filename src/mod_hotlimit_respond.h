/*
 * mod_hotlimit_respond.h - what mod_hotlimit_respond.c offers the other glue
 * files: what a limited route's responses carry: environment, RateLimit headers, the 429.
 */
#ifndef MOD_HOTLIMIT_RESPOND_H
#define MOD_HOTLIMIT_RESPOND_H

#include "mod_hotlimit_conf.h"
#include "hl_decide.h"
#include "hl_quota.h"
#include "hl_render.h"

/* One quota that applies to a request, and what the limiter said. */
typedef struct {
    hl_decide_item_t item;       /* the core's view: quota, key, decision */
    hl_quota_t    quota_copy;    /* a table rule's quota, when the match is
                                    kept past its decision for
                                    log_transaction (item.quota points here):
                                    the table may change meanwhile */
    const char   *route;         /* what clients are told: the <Location> or
                                    matched table route, else the URL path */
    const char   *scope;         /* what is counted: the section path or
                                    table route, after "host:port" in a vhost */
    const hl_dir_quota_t *dq;    /* a directive quota's precomputed texts,
                                    NULL for table rules */
    int           refs_reused;   /* item.refs and .stripe copied from the
                                    counter the connection kept
                                    (hl_last_counter_t): the store's
                                    prepare is skipped */
    int           counted_by_upgrade;  /* counted already, by the HTTP/1.1
                                    request this HTTP/2 stream replays (h2c
                                    upgrade, mod_hotlimit_upgrade.h) */
    int           by_address;    /* the key's client part is the client
                                    address (by=ip, or a key that fell back
                                    to it): only such refusals feed a ban
                                    (HotLimitBan) */
    int           banned;        /* the look at the client's ban
                                    (HotLimitBan): its refusal says
                                    "banned", not a quota */
    const char   *name_id;       /* an account key's client part ("p:" and
                                    16 hex digits), or NULL: its name is
                                    recorded when it refuses or is at its
                                    limit (HotLimitStatusNames) */
    const char   *name_value;    /* the value the client sent for it */
    size_t        name_len;
    int64_t       upgrade_marks[HL_MAX_WINDOWS];  /* [exact count=failures]
                                    counted_by_upgrade: where the upgrading
                                    request's units sit
                                    (hl_decision_t.marks), for the
                                    replay's refund */
    int64_t       admitted_ms;   /* [reserve=] when its reservation was
                                    taken (hl_mono_ms), for the route's
                                    settle estimate; 0: none */
} hl_match_t;

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
