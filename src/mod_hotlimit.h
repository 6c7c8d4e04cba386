/*
 * mod_hotlimit.h - what the httpd glue files share: configuration records,
 * the shared-memory store and the functions each glue file offers.
 *
 * Glue files (httpd headers allowed): mod_hotlimit.c (module, directives,
 * config merge, hook registration), mod_hotlimit_store.c (counters segment + mutex),
 * mod_hotlimit_access.c (the access-checker decision), mod_hotlimit_respond.c
 * (429 responses and headers), mod_hotlimit_status.c (status handler),
 * mod_hotlimit_modstatus.c (a section in mod_status's server-status),
 * mod_hotlimit_table.c (quota table reload and publication),
 * mod_hotlimit_body.c ($_REQUEST[NAME] and the request body it needs).
 * The pure core lives in src/hl_*.c.
 *
 * Log tags: HL00001-HL00099 mod_hotlimit.c, HL00100-HL00199 access
 * (HL00100 rejected, HL00101 dry run, HL00102 ban started, HL00103 refused
 * while banned),
 * HL00200-HL00299 store, HL00300-HL00399 status and mod_status section,
 * HL00400-HL00499 table,
 * HL00500-HL00599 fetch, HL00600-HL00699 request body (param:),
 * HL00700-HL00799 the Redis store.
 */
#ifndef MOD_HOTLIMIT_H
#define MOD_HOTLIMIT_H

#include "httpd.h"
#include "http_config.h"
#include "apr_global_mutex.h"

#include "hl_quota.h"
#include "hl_cidr.h"
#include "hl_slots.h"
#include "hl_stats.h"
#include "hl_limiter.h"
#include "hl_hash.h"
#include "hl_decide.h"
#include "hl_store.h"
#include "hl_table.h"
#include "hl_ban.h"

#define HL_UNSET (-1)
/* Defaults of the server settings, applied once in post_config. */
#define HL_DEFAULT_V6_PREFIX        64     /* HotLimitIPv6Prefix */
#define HL_DEFAULT_SLOTS            65536  /* HotLimitSlots */
#define HL_DEFAULT_RELOAD_INTERVAL  10     /* HotLimitReloadInterval, s */
#define HL_DEFAULT_FETCH_TIMEOUT    5      /* HotLimitFetchTimeout, s */
#define HL_DEFAULT_STORE_TIMEOUT    50     /* HotLimitStoreTimeout, ms */

/* Where the route of a request comes from (HotLimitRouteFrom). */
typedef enum {
    HL_ROUTE_FROM_UNSET = 0,
    HL_ROUTE_FROM_PATH,
    HL_ROUTE_FROM_QUERY,
    HL_ROUTE_FROM_PATH_INFO,
    HL_ROUTE_FROM_PARAM          /* param:NAME, $_REQUEST[NAME] */
} hl_route_from_t;

/* A HotLimitQuota with the scope (section path) it was declared in. */
typedef struct {
    hl_quota_t  quota;
    const char *scope;      /* the section's path: "/user/login" for a
                               <Location>, a directory or file pattern for
                               <Directory>, <Files> and .htaccess; never NULL */
    int         url_scope;  /* 1 for <Location>/<LocationMatch>: the scope
                               may be shown to clients as the route */
    const char *spec;       /* the directive's arguments, for messages */
    /* Precomputed at configuration time, so a request formats little: */
    size_t      scope_len;
    uint64_t    scope_hash;             /* hl_table_route_hash(scope) */
    const char *names[HL_MAX_WINDOWS];  /* window names, "5/1m" */
    const char *limits[HL_MAX_WINDOWS]; /* COUNT in decimal, "5" */
    const char *rl_prefix[HL_MAX_WINDOWS];  /* RateLimit start, "\"5/1m\";r=" */
    const char *policy_header;          /* RateLimit-Policy */
} hl_dir_quota_t;

/* Per-directory configuration; HL_UNSET fields inherit from the parent. */
typedef struct {
    int                   engine;      /* HotLimitEngine */
    int                   dry_run;     /* HotLimitDryRun */
    int                   headers;     /* HotLimitHeaders */
    hl_route_from_t       route_from;  /* HotLimitRouteFrom */
    const char           *route_arg;   /* query:NAME, param:NAME */
    long                  body_limit;  /* HotLimitBodyLimit, HL_UNSET */
    const hl_dir_quota_t *quota;       /* HotLimitQuota; a child's replaces */
} hl_dir_conf_t;

/* Table failure policy (HotLimitTableFailure). */
typedef enum {
    HL_FAIL_UNSET = 0,
    HL_FAIL_OPEN,
    HL_FAIL_LAST_GOOD
} hl_table_failure_t;

/* HotLimitStoreFailure: what decides while a remote store cannot. */
typedef enum {
    HL_STORE_FAIL_UNSET = 0,
    HL_STORE_FAIL_LOCAL,      /* the local shared-memory counters */
    HL_STORE_FAIL_OPEN,       /* admit */
    HL_STORE_FAIL_CLOSED      /* refuse with 503 */
} hl_store_failure_t;

/* HotLimitStore redis://... once parsed. */
typedef struct {
    const char        *host;       /* NULL with a unix socket */
    int                port;
    const char        *socket;     /* unix:/path, or NULL */
    int                db;
    const char        *user;       /* ACL user, or NULL */
    const char        *password;   /* or NULL: no AUTH */
    const char        *prefix;     /* of every key, "hl:" */
    int                timeout_ms; /* HotLimitStoreTimeout */
    hl_store_failure_t failure;    /* HotLimitStoreFailure */
} hl_redis_conf_t;

/* Per-server configuration. Server-wide settings are read from the main
 * server only (documented per directive). */
typedef struct {
    int                 slots;            /* HotLimitSlots */
    int                 persist;          /* HotLimitPersist */
    int                 ipv6_prefix;      /* HotLimitIPv6Prefix */
    apr_array_header_t *exempt;           /* of hl_cidr_t (HotLimitExempt) */
    const char         *error_template;   /* file contents, or NULL */
    const char         *store;            /* HotLimitStore */
    hl_redis_conf_t    *redis;            /* HotLimitStore redis://, or NULL */
    int                 store_timeout;    /* HotLimitStoreTimeout, ms */
    hl_store_failure_t  store_failure;    /* HotLimitStoreFailure */
    const char         *table_source;     /* HotLimitQuotaTable */
    int                 reload_interval;  /* seconds */
    int                 fetch_timeout;    /* seconds */
    hl_table_failure_t  table_failure;
    apr_array_header_t *quotas;           /* of const hl_dir_quota_t *: the
                                             HotLimitQuota lines of this
                                             server's configuration files
                                             (not .htaccess), for the
                                             status page; not merged */
    const hl_ban_t     *ban;              /* HotLimitBan; NULL: none (a vhost
                                             inherits the main server's) */
    /* Resolved once in post_config (hl_resolve_server), for every server: */
    int                 v6_prefix;        /* ipv6_prefix or its default */
    const char         *tag;              /* "host:port" of a vhost, "" */
    size_t              tag_len;
    uint64_t            tag_hash;         /* 0 for the main server */
} hl_server_conf_t;

extern module AP_MODULE_DECLARE_DATA hotlimit_module;

/* ---- mod_hotlimit_store.c: counters in shared memory ------------------ */

#define HL_SHARED_MAGIC   0x484c5348u  /* "HLSH" */
#define HL_SHARED_VERSION 3u   /* 2: table_skipped, 3: per-route history */
#define HL_TEXT_MAX       256

/* Results of a quota table reload, indexes of hl_shared_t.reloads. */
typedef enum {
    HL_RELOAD_OK = 0,        /* a new table was published */
    HL_RELOAD_UNCHANGED,     /* source not modified (mtime, 304) */
    HL_RELOAD_FAILED,        /* unreadable, HTTP error, bad JSON */
    HL_RELOAD_RESULTS
} hl_reload_result_t;

/* The shared segment's header; the slot table follows it. Written under
 * the global mutex only. */
typedef struct {
    uint32_t   magic;
    uint32_t   version;
    uint32_t   capacity;
    uint32_t   table_enabled;        /* 0: kill switch thrown */
    uint64_t   table_generation;     /* bumped at each publication */
    int64_t    table_loaded_ms;      /* last publication, 0 = never */
    int64_t    table_checked_ms;     /* last reload attempt, 0 = never */
    uint64_t   reloads[HL_RELOAD_RESULTS];
    int32_t    table_last_result;    /* hl_reload_result_t, -1 = none yet */
    uint32_t   table_routes;         /* rules in the published table */
    uint32_t   table_skipped;        /* entries skipped as invalid in the
                                        published table (kept ones too) */
    char       table_source[HL_TEXT_MAX];
    char       table_message[HL_TEXT_MAX]; /* last result, human readable */
    hl_stats_t stats;
} hl_shared_t;

/* Returns OK, or HTTP_INTERNAL_SERVER_ERROR after logging (post_config). */
int hl_store_pre_config(apr_pool_t *pconf);
int hl_store_post_config(apr_pool_t *pconf, server_rec *s);
void hl_store_child_init(apr_pool_t *pchild, server_rec *s);

/*
 * Locks the store's header (table status; hl_shared_t) and returns it in
 * *shared, valid until hl_store_unlock. The counters themselves are in
 * stripes with locks of their own (hl_store_get, hl_store_scan). Returns
 * APR_SUCCESS, or an error after logging (the caller then admits the
 * request: a broken lock must not take the site down).
 */
apr_status_t hl_store_lock(server_rec *s, hl_shared_t **shared);
void hl_store_unlock(server_rec *s);

/* Totals over every stripe of the counter table. */
typedef struct {
    uint32_t used, capacity, classes, stripes;
    uint64_t evictions, reclaims;
} hl_store_totals_t;

/* Fills *t, taking each stripe's lock in turn. Never fails (a stripe that
 * cannot be locked is left out, logged). */
void hl_store_totals(hl_store_totals_t *t);

/* Calls fn for every used slot, stripe by stripe, holding a stripe's lock
 * for at most 4,096 slots at a time (a slot may be seen twice or not at
 * all when keys move meanwhile). fn must not call the store. */
void hl_store_scan(int (*fn)(const hl_slot_t *s, void *baton), void *baton);

/* Returns the counter store requests are decided against (Redis when
 * HotLimitStore says so, else the shared memory): never NULL after
 * post_config. decide() returns -2 when the request must be refused with
 * 503 (HotLimitStoreFailure closed). */
const hl_store_t *hl_store_get(void);

/* Returns the shared-memory store (the local fallback of a remote one). */
const hl_store_t *hl_store_shm(void);

/* Returns the per-route statistics in shared memory (lock-free). */
hl_stats_t *hl_store_stats(void);

/* ---- mod_hotlimit_redis.c: the Redis store ------------------------------ */

/* Parses a HotLimitStore value other than shm into *out (from p). Returns
 * NULL, or what is wrong with it. */
const char *hl_redis_parse(apr_pool_t *p, const char *url, hl_redis_conf_t **out);

/* Sets the Redis store up when configured (main server). Returns OK or an
 * HTTP error after logging. */
int hl_redis_post_config(apr_pool_t *pconf, server_rec *s);

/* Returns the Redis store, or NULL when HotLimitStore is not redis. */
const hl_store_t *hl_redis_store(void);

/* The Redis store's figures, for the status page and metrics. */
typedef struct {
    int      configured, up;
    uint64_t decisions, fallbacks, errors;
} hl_redis_figures_t;
void hl_redis_figures(hl_redis_figures_t *f);
/* ---- mod_hotlimit_ban.c: the bans in force ----------------------------- */

/* One ban in force. */
typedef struct {
    const char *key;       /* "ban|CLIENT", after "host:port" in a vhost:
                              POST reset=KEY lifts it */
    int64_t     left_ms;   /* > 0 */
} hl_ban_entry_t;

/* Returns the bans in force at now_ms (hl_mono_ms), of hl_ban_entry_t,
 * allocated from p (empty without HotLimitBan). Never NULL. */
apr_array_header_t *hl_ban_list(apr_pool_t *p, int64_t now_ms);

/* Writes the ?json field "bans":[{"key":...,"left_s":N},...] to r. */
void hl_ban_write_json(request_rec *r);

/* Writes the ?metrics gauge hotlimit_bans_active (bans in force) to r. */
void hl_ban_write_metrics(request_rec *r);

/* Lifts every ban in force of client address key `client` ("203.0.113.7",
 * in any virtual host). Returns the counters removed (0: not banned), or
 * -1 when the store cannot answer. Scratch memory from p. */
int hl_ban_reset_client(apr_pool_t *p, const char *client);

/* ---- mod_hotlimit_access.c: the decision ------------------------------- */
int hl_access_checker(request_rec *r);

/* ---- mod_hotlimit_body.c ---- */

#define HL_DEFAULT_BODY_LIMIT 65536   /* HotLimitBodyLimit */

/*
 * Returns what PHP would hold in $_REQUEST[name] for r, when it is a string
 * (or, with array_key, an array: then its first key), and sets *len; the
 * body is read for it on first use (a POST form, at most HotLimitBodyLimit
 * bytes of r's scope) and handed on unchanged; when the body cannot be
 * used (too big, unreadable), only the query is read. Returns NULL when
 * absent (or empty array). The value is allocated from r->pool (the caller may change it);
 * NUL-terminated, but may hold NULs.
 */
char *hl_request_param(request_rec *r, const char *name, int array_key,
                       apr_size_t *len);

/* Registers the body filter and its insert_filter hook (register_hooks). */
void hl_body_register(void);
int hl_fixups(request_rec *r);
int hl_log_transaction(request_rec *r);

/* ---- mod_hotlimit_respond.c: headers, environment and the 429 ---------- */

/* One quota that applies to a request, and what the limiter said. */
typedef struct {
    hl_decide_item_t item;       /* the core's view: quota, key, decision */
    hl_quota_t    quota_copy;    /* a table rule's quota (item.quota points
                                    here): the table may change meanwhile */
    const char   *route;         /* what clients are told: the <Location> or
                                    matched table route, else the URL path */
    const char   *scope;         /* what is counted: the section path or
                                    table route, after "host:port" in a vhost */
    const hl_dir_quota_t *dq;    /* a directive quota's precomputed texts,
                                    NULL for table rules */
} hl_match_t;

/*
 * Sets HOTLIMIT_ROUTE, HOTLIMIT_LIMIT and HOTLIMIT_REMAINING in
 * r->subprocess_env and, when headers is nonzero, RateLimit-Policy and
 * RateLimit in r->err_headers_out (so they survive error responses).
 * first: nonzero when r carries none of them yet (they are then added
 * without searching the tables).
 */
void hl_respond_annotate(request_rec *r, const hl_match_t *m, int headers,
                         int first);

/*
 * Sends the 429 for match m (its decision rejected): Retry-After,
 * Cache-Control, Vary, then a problem+json, json or HTML body as Accept
 * asks; HTML comes from ErrorDocument 429 when configured, else the
 * HotLimitErrorTemplate, else the built-in page. Returns the value the
 * hook must return (DONE, or HTTP_TOO_MANY_REQUESTS for ErrorDocument).
 */
int hl_respond_reject(request_rec *r, const hl_match_t *m);

/* ---- mod_hotlimit_table.c: the quota table ---------------------------- */

/* What the table says about one request (copied out of shared memory). */
typedef struct {
    int         enabled;     /* 0: kill switch: admit everything */
    int         exempt;      /* client in the table's exempt list */
    int         has_rule;
    hl_quota_t  rule;        /* the first candidate route's quota */
    uint64_t    route_hash;  /* its hl_table_route_hash */
    char        route[HL_TABLE_ROUTE_MAX];  /* its route */
    int         has_global;  /* the compact e/m/t global bucket */
    hl_quota_t  global;
    int         has_ban;     /* the table's "ban" (overrides HotLimitBan) */
    hl_ban_t    ban;
} hl_table_hit_t;

/* Returns 1 if HotLimitQuotaTable is configured (after post_config). */
int hl_table_configured(void);

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
 * lock fails (logged by hl_store_lock).
 */
int hl_table_routes(request_rec *r, int max, hl_table_route_t **out);

/* ---- mod_hotlimit_fetch.c: the only file that touches libcurl --------- */

/* Validators of the last good response, sent back as conditional GET. */
typedef struct {
    char etag[256];
    char last_modified[64];
} hl_fetch_validators_t;

typedef struct {
    int         not_modified;  /* 1: 304, nothing new */
    long        http_status;   /* 0 when no response arrived */
    char       *body;          /* 200: the document, NUL-terminated, in pool */
    apr_size_t  len;
    const char *error;         /* failure: one line, in pool */
} hl_fetch_result_t;

/* Initialises libcurl once, in the parent. Returns APR_SUCCESS or
 * APR_EGENERAL. Never cleaned up: mod_md or PHP may share libcurl. */
apr_status_t hl_fetch_global_init(void);

/*
 * Fetches url with a whole-transfer timeout of timeout_s seconds and at most
 * max_size bytes, conditionally on *v. Follows up to 3 redirects, each only
 * within url's origin (scheme, host, port; never https to http); a redirect
 * elsewhere is refused before any request is sent there (logged HL00501).
 * On 200 updates *v and returns the body in res; on 304 sets
 * res->not_modified. Returns APR_SUCCESS for both; any other outcome (DNS,
 * connect, timeout, HTTP status, too large, a refused redirect) returns an
 * error with res->error set. Blocking: call from the watchdog only.
 * Everything is allocated from p.
 */
apr_status_t hl_fetch_url(apr_pool_t *p, const char *url, int timeout_s,
                          apr_size_t max_size, hl_fetch_validators_t *v,
                          hl_fetch_result_t *res);

/* ---- mod_hotlimit_status.c -------------------------------------------- */
int hl_status_handler(request_rec *r);

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
    uint64_t decisions[3];        /* summed over routes, by hl_decision_kind_t */
    int64_t  started_ms;          /* wall clock when the counters started */
    int64_t  uptime_s;            /* since then, by the monotonic clock */
} hl_status_summary_t;

/*
 * Returns a summary of the store allocated from r->pool (strings too), or
 * NULL when the store is not set up or cannot be locked (the lock logs).
 */
hl_status_summary_t *hl_status_summary(request_rec *r);

/* Returns secs as "42 s", "5 min 3 s", "2 h 7 min" or "3 d 2 h 7 min",
 * allocated from p; never NULL. */
const char *hl_status_duration(apr_pool_t *p, int64_t secs);

/* ---- mod_hotlimit_modstatus.c: mod_status's status_hook ---------------- */

/*
 * Adds the hotlimit section to server-status: HTML, or "HotLimit...: value"
 * lines when flags has AP_STATUS_SHORT (?auto). Always returns OK.
 */
int hl_modstatus_hook(request_rec *r, int flags);

/* Returns the wall clock in ms since the epoch: for display and for
 * translating saved counters, never for deciding. */
int64_t hl_now_ms(void);

/* Returns the decision clock in ms: monotonic, counting suspended time
 * (CLOCK_BOOTTIME), offset by HL_MONO_BASE_MS so that times of the boot
 * before (rebased saved counters) stay positive. Steps of the system
 * clock (NTP, date -s) never move it. */
#define HL_MONO_BASE_MS ((int64_t)1 << 40)
int64_t hl_mono_ms(void);

#endif
