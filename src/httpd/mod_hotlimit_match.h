/*
 * mod_hotlimit_match.h - the request's central record: one quota that
 * applies to a request and what the limiter said (hl_match_t). The access
 * checker (mod_hotlimit_access.c) fills it; the respond, shape, delay,
 * upgrade, concurrency and refusal-log files read it.
 */
#ifndef MOD_HOTLIMIT_MATCH_H
#define MOD_HOTLIMIT_MATCH_H

#include <stdint.h>

#include "mod_hotlimit_conf.h"
#include "hl_decide.h"
#include "hl_quota.h"

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

#endif
