/*
 * mod_hotlimit_status.h - what mod_hotlimit_status.c offers the other glue
 * files: the hotlimit-status handler.
 */
#ifndef MOD_HOTLIMIT_STATUS_H
#define MOD_HOTLIMIT_STATUS_H

#include "mod_hotlimit_conf.h"

int hl_status_handler(request_rec *r);

/* Directive handler of HotLimitStatus On|Off (server config, <Location>,
 * <Directory>; no override class, so never .htaccess). Returns NULL. */
const char *hl_status_set(cmd_parms *cmd, void *dconf, int on);

/*
 * post_config: records, once per httpd parent (in the process pool, so
 * graceful and full restarts keep it), when the counters started, for
 * uptime. Always returns OK.
 */
int hl_status_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                          apr_pool_t *ptemp, server_rec *s);

/* The limiter at a glance, for mod_status (copied out under the lock). */
typedef struct {
    uint32_t slots_used, slots_capacity;
    uint64_t evictions;
    uint64_t table_generation;
    int64_t  table_loaded_ms;     /* wall clock of the last publication, 0 = never */
    const char *table_source;     /* "" without a quota table */
    const char *table_result;     /* "ok", "unchanged", "failed" or "none" */
    const char *table_message;    /* the last result, human readable */
    uint64_t reloads_failed;
    uint64_t decisions[HL_DECISION_KINDS];        /* summed over routes, by hl_decision_kind_t */
    int64_t  started_ms;          /* wall clock when the counters started */
    int64_t  uptime_s;            /* since then, by the monotonic clock */
} hl_status_summary_t;

/*
 * Returns a summary of the store allocated from r->pool (strings too), or
 * NULL when the store is not set up or cannot be locked (the lock logs).
 */
hl_status_summary_t *hl_status_summary(request_rec *r);

#endif
