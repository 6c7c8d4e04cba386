/*
 * mod_hotlimit_conc.h - HotLimitConcurrency N [by=KEY] [norm=HOW]: at most
 * N requests of one key in flight at once in a scope. What
 * mod_hotlimit_conc.c offers the module record and the status handler.
 */
#ifndef MOD_HOTLIMIT_CONC_H
#define MOD_HOTLIMIT_CONC_H

#include "mod_hotlimit_conf.h"
#include "hl_conc.h"

/* One scope's HotLimitConcurrency, fixed once configured. */
typedef struct hl_dir_conc {
    uint32_t    limit;       /* N */
    uint32_t    queue;       /* queue=Q: may wait in line beyond N; 0 none */
    uint32_t    wait_ms;     /* wait=: the longest one waits */
    hl_quota_t  key;         /* only by, by_name and norm are used */
    const char *scope;       /* the section, as HotLimitQuota names it */
    size_t      scope_len;
    int         url_scope;   /* a <Location>: shown to clients as the route */
} hl_dir_conc_t;

/*
 * The directive: parses argv (N, then by= and norm= tokens) for the
 * section named scope (url_scope: a <Location>) into dconf. Returns NULL,
 * or a message naming the directive and the bad token (from cmd->pool).
 */
const char *hl_conc_configure(cmd_parms *cmd, void *dconf, const char *scope,
                              int url_scope, int argc, const char *const *argv);

/* post_config (real pass): makes the holders' segment once per parent
 * process (kept across restarts, so old and new children share it).
 * Returns OK, or !OK after logging (HL01504). */
int hl_conc_post_config(apr_pool_t *pconf, server_rec *s);

/* child_init: notes this process's identity (pid and start time). */
void hl_conc_child_init(apr_pool_t *pchild, server_rec *s);

/* Access checker and fixups hooks: take a slot for the request's key,
 * wait in its line for one (queue=), or refuse it (429, Retry-After: the
 * scope's typical time until a slot frees, spread). Return DECLINED, the
 * 429 outcome, or DONE when the client went away while waiting. */
int hl_conc_check_access(request_rec *r);
int hl_conc_fixups(request_rec *r);

/* protocol_switch hook (before mod_http2's): a request that switches its
 * connection mid-request (h2c: mod_http2 runs the whole HTTP/2 session
 * inside it and replays it as stream 1, which takes a slot of its own)
 * gives its slots back now, not when the session ends. Returns DECLINED. */
int hl_conc_protocol_switch(conn_rec *c, request_rec *r, server_rec *s,
                            const char *protocol);

/*
 * Holds r for ms (HotLimitQuota ... delay=), among the requests
 * HotLimitMaxWaiting counts, sleeping in small steps while watching its
 * client. Returns 0 once held ms, 1 when the server holds its most
 * already (r was not held: refuse it), -1 when the client went away.
 */
int hl_conc_hold(request_rec *r, int64_t ms);

/* register_hooks: registers the output filter that gives a request's
 * slots back when the end of its response passes (HOTLIMIT_CONC_END). */
void hl_conc_register(void);

/* The status handler's parts: "\"concurrency\":[...]" (no comma) and the
 * hotlimit_concurrency_* metrics. Dead holders are reaped first. */
void hl_conc_write_json(request_rec *r);
void hl_conc_write_metrics(request_rec *r);

#endif
