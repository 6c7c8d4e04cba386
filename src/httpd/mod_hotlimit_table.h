/*
 * mod_hotlimit_table.h - what mod_hotlimit_table.c offers the other glue
 * files: the quota table: load, lock-free lookup, publication, reloads.
 */
#ifndef MOD_HOTLIMIT_TABLE_H
#define MOD_HOTLIMIT_TABLE_H

#include "ap_slotmem.h"
#include "mod_watchdog.h"

#include "mod_hotlimit_conf.h"
#include "hl_quota.h"
#include "hl_cidr.h"
#include "hl_table.h"

#define HL_TEXT_MAX 256

/* Results of a quota table reload, indexes of hl_shared_t.reloads. */
typedef enum {
    HL_RELOAD_OK = 0,        /* a new table was published */
    HL_RELOAD_UNCHANGED,     /* source not modified (mtime, 304) */
    HL_RELOAD_FAILED,        /* unreadable, HTTP error, bad JSON */
    HL_RELOAD_RESULTS
} hl_reload_result_t;

/* The quota table's status: what the last reloads did. Kept with the
 * published table (its shared region), written by the reloader under the
 * store's header lock (hl_store_shm_lock). */
typedef struct {
    uint32_t table_enabled;        /* 0: kill switch thrown */
    uint32_t table_routes;         /* rules in the published table */
    uint64_t table_generation;     /* bumped at each publication */
    int64_t  table_loaded_ms;      /* last publication, 0 = never */
    int64_t  table_checked_ms;     /* last reload attempt, 0 = never */
    uint64_t reloads[HL_RELOAD_RESULTS];
    int32_t  table_last_result;    /* hl_reload_result_t, -1 = none yet */
    uint32_t table_skipped;        /* entries skipped as invalid in the
                                      published table (kept ones too) */
    char     table_source[HL_TEXT_MAX];
    char     table_message[HL_TEXT_MAX]; /* last result, human readable */
} hl_table_status_t;

/* Copies the table's status into *out (under the store's header lock);
 * without a table: enabled, generation 0, no result (-1). Never fails. */
void hl_table_status(server_rec *s, hl_table_status_t *out);


/* What the table says about one request (copied out of shared memory). */
typedef struct {
    int         enabled;     /* 0: kill switch: admit everything */
    int         exempt;      /* client in the table's exempt list */
    int         has_rule;
    hl_quota_t  rule;        /* the first candidate route's quota */
    uint64_t    route_hash;  /* its hl_table_route_hash */
    hl_plan_sel_t plan;      /* its "plan" selector (from 0: none) */
    char        route[HL_TABLE_ROUTE_MAX];  /* its route */
    int         has_global;  /* the compact e/m/t global bucket */
    hl_quota_t  global;
    int         has_ban;     /* the table's "ban" (overrides HotLimitBan) */
    hl_ban_t    ban;
} hl_table_hit_t;

/* Returns mod_slotmem_shm's provider, which holds the table, or NULL when
 * that module is not loaded. Logs nothing: the caller says what it means
 * where it asks (configtest, start). */
const ap_slotmem_provider_t *hl_table_slotmem(void);

/* What the quota table says when a module it needs is missing: the
 * configuration test (HL00010, HL00011) and the start (HL00201, HL00407)
 * log the same words. */
#define HL_TABLE_NEEDS_SLOTMEM "HotLimitQuotaTable needs mod_slotmem_shm, " \
    "which is not loaded (a2enmod slotmem_shm, or LoadModule " \
    "slotmem_shm_module)"
#define HL_TABLE_NEEDS_WATCHDOG "HotLimitQuotaTable needs mod_watchdog, " \
    "which is not loaded (LoadModule watchdog_module)"

/* mod_watchdog's functions, which run the table's reloader. */
typedef struct {
    APR_OPTIONAL_FN_TYPE(ap_watchdog_get_instance)      *get_instance;
    APR_OPTIONAL_FN_TYPE(ap_watchdog_register_callback) *register_callback;
} hl_watchdog_fns_t;

/* Fills *fns with mod_watchdog's functions. Returns 1, or 0 when
 * mod_watchdog is not loaded (a function is missing). Logs nothing, as
 * hl_table_slotmem. */
int hl_table_watchdog(hl_watchdog_fns_t *fns);

/* Nonzero while a HotLimitQuotaTable is configured (set with its shared
 * memory at post_config): read through hl_table_configured. */
extern int hl_table_present;

/* Returns 1 if HotLimitQuotaTable is configured (after post_config).
 * Inline: every request asks, most servers have no table. */
static APR_INLINE int hl_table_configured(void)
{
    return hl_table_present != 0;
}

/* Registers the table's mutex type ("hotlimit-table", so a Mutex
 * directive may name it). Returns OK, or an HTTP error after logging. */
int hl_table_pre_config(apr_pool_t *pconf);

/* Attaches the table's mutex in a child. Never fails (logged). */
void hl_table_child_init(apr_pool_t *pchild, server_rec *s);

/*
 * Creates the shared table, loads a local file at once and registers the
 * reloader with mod_watchdog. Returns OK, or an HTTP error after logging.
 */
int hl_table_post_config(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s);

/*
 * Checks that the table source path (as given to HotLimitQuotaTable;
 * relative to ServerRoot) could be read now: it exists, is a regular file
 * (not a FIFO, device or directory) and opens for reading without
 * blocking; an http:// or https:// URL always passes (it is fetched in
 * the background). Returns APR_SUCCESS, or the error with a one-line
 * reason naming the file in *why (from p). Opens and closes the file; reads
 * nothing. For check_config (apachectl configtest).
 */
apr_status_t hl_table_check_source(apr_pool_t *p, const char *path,
                                   const char **why);

/*
 * Looks route (normalised) and client address ip (may be NULL) up in the
 * published table, without a lock: the lookup is retried when the reloader
 * switched or rewrote a bank meanwhile (a sequence counter), and done under
 * the store lock after a few tries. Returns 1 and fills *hit, or 0 when
 * there is no table (then *hit says enabled, no match).
 */
int hl_table_find(request_rec *r, const char *route, const hl_cidr_t *ip,
                  hl_table_hit_t *hit);

/*
 * Copies into *out the published table's plan named name (len bytes),
 * without a lock as hl_table_find does. Returns 1 if found, 0 when there is
 * no table or no such plan. Never fails otherwise.
 */
int hl_table_find_plan(request_rec *r, const char *name, size_t len,
                       hl_plan_t *out);

/*
 * Returns the published table's version: it changes whenever the reloader
 * starts rewriting a bank or switches banks, so what hl_table_find answered
 * after the version was read stays the table's answer while the version is
 * the same. 0 without a table. No lock; never fails.
 */
uint32_t hl_table_version(void);

/* A route of the published table with its quota, as the status page lists it. */
typedef struct {
    char       route[HL_TABLE_ROUTE_MAX];
    hl_quota_t quota;
} hl_table_route_t;

/*
 * Copies the first max routes of the published table (in the order they
 * were first added) with their quotas into an array allocated from
 * r->pool, under the store lock (the active bank cannot switch under it).
 * Returns the number copied and sets *out; 0 when there is no table or the
 * lock fails (logged by hl_store_shm_lock).
 */
int hl_table_routes(request_rec *r, int max, hl_table_route_t **out);

#endif
