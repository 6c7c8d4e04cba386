/*
 * mod_hotlimit_conf.h - what every httpd glue file shares: the module
 * record, the per-server and per-directory configuration records, and the
 * client request of a request (hl_client_request). What each glue file
 * offers the others is in its own header; the pure core is src/core/hl_*.c
 * (no httpd headers), and its clocks are hl_clock.h.
 *
 * Every file and its job, in the order a request meets them (check, key,
 * store, decide, respond), is in doc/layout.md (t/unit/test_layout.sh keeps
 * it true to the tree).
 *
 * Log tags: HL00001-HL00099 mod_hotlimit.c, HL00100-HL00199 access
 * (HL00100 rejected, HL00101 dry run, HL00102 ban started, HL00103 refused
 * while banned), HL00200-HL00299 store, HL00300-HL00399 status page and
 * mod_status section, HL00400-HL00499 table, HL00500-HL00599 fetch,
 * HL00600-HL00699 request body (param:), HL00700-HL00799 Redis store,
 * HL00800-HL00899 expressions, HL01100-HL01149 bounded bodies,
 * HL01150-HL01179 refusal log, HL01180-HL01199 status handler scope,
 * HL01200-HL01249 eviction and the Redis mirror, HL01250-HL01299 table
 * validators, HL01300-HL01349 count=failures refunds, HL01350-HL01399
 * device cookies, HL01400-HL01449 cost=usage, HL01500-HL01549
 * concurrency, HL01550-HL01599 JSON bodies, HL01600-HL01649 status page,
 * HL01650-HL01699 reserve=, HL01700-HL01749 algo=log, HL02200-HL02249
 * bodies read whole for concurrency keys and HotLimitSpoolLimit,
 * HL02050-HL02099 keyed hashes and the server secret, HL02400-HL02449
 * provider shapes (mod_hotlimit_shape.c), HL02800-HL02849 store providers
 * and Redis Sentinel.
 */
#ifndef MOD_HOTLIMIT_CONF_H
#define MOD_HOTLIMIT_CONF_H

#include "hl_clock.h"
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
    HL_ROUTE_FROM_PATH = 0,      /* the default */
    HL_ROUTE_FROM_QUERY,
    HL_ROUTE_FROM_PATH_INFO,
    HL_ROUTE_FROM_PARAM,         /* param:NAME, $_REQUEST[NAME] */
    HL_ROUTE_FROM_JSON           /* json:PATH, a JSON body's value */
} hl_route_from_t;

/* A HotLimitQuota with the scope (section path) it was declared in. */
typedef struct {
    hl_quota_t  quota;
    const char *scope;      /* the section's path: "/user/login" for a
                               <Location>, a directory or file pattern for
                               <Directory>, <Files> and .htaccess; never NULL */
    const char *count_scope;  /* what its counters and statistics are named
                               by: scope, or for a section's second and third
                               HotLimitQuota, scope + "#2" / "#3" */
    int         url_scope;  /* 1 for <Location>/<LocationMatch>: the scope
                               may be shown to clients as the route */
    int         lasting;    /* 1 when read from the configuration files: it
                               lives as long as they do; 0 for a .htaccess
                               line, read per request from its pool (its
                               address may be another quota's later) */
    const char *spec;       /* the directive's arguments, for messages */
    /* Precomputed at configuration time, so a request formats little: */
    size_t      scope_len;              /* strlen(count_scope) */
    uint64_t    scope_hash;             /* hl_table_route_hash(count_scope) */
    uint64_t    main_cls;               /* its eviction class and */
    uint64_t    main_stats_hash;        /* statistics hash in the main
                                           server (hl_limiter_class_of) */
    const char *main_key_prefix;        /* its counters' keys in the main
                                           server start so: scope "|" */
    size_t      main_key_prefix_len;
    const char *names[HL_MAX_WINDOWS];  /* window names, "5/1m" */
    const char *limits[HL_MAX_WINDOWS]; /* COUNT in decimal, "5" */
    const char *rl_prefix[HL_MAX_WINDOWS];  /* RateLimit start, "\"5/1m\";r=" */
    size_t      rl_prefix_len[HL_MAX_WINDOWS];
    const char *policy_header;          /* RateLimit-Policy */
    /* Status page (issue 21): */
    const char *where;      /* "FILE:LINE" of the HotLimitQuota line */
} hl_dir_quota_t;

/* HotLimitStatus On, set in the main server's configuration (its page
 * shows every server's counters) or in a virtual host's (only its own). */
#define HL_STATUS_ON_MAIN  1
#define HL_STATUS_ON_VHOST 2

#define HL_DIR_QUOTAS_MAX 3   /* HotLimitQuota lines in one section */
#define HL_MERGE_MEMOS 2      /* parents a section's merge is kept with */

/* Which settings a per-directory record sets itself (hl_dir_conf_t.set):
 * a merge takes these from the child, the others from the parent. */
#define HL_DIR_SET_ENGINE         (1u << 0)
#define HL_DIR_SET_DRY_RUN        (1u << 1)
#define HL_DIR_SET_HEADERS        (1u << 2)
#define HL_DIR_SET_ROUTE_FROM     (1u << 3)   /* route_from and route_arg */
#define HL_DIR_SET_BODY_LIMIT     (1u << 4)
#define HL_DIR_SET_ERROR_FORMAT   (1u << 5)
#define HL_DIR_SET_LOG_REFUSALS   (1u << 6)
#define HL_DIR_SET_STATUS         (1u << 7)
#define HL_DIR_SET_BODY_OVERFLOW  (1u << 8)
#define HL_DIR_SET_PROMPT_ESTIMATE (1u << 16)

/* Per-directory configuration. Every record holds final values, read as
 * they are: a fresh one the defaults (create_dir_conf), a merged one the
 * child's settings where it sets them (set) and the parent's elsewhere;
 * so the server's own record, used unmerged by a request outside every
 * section, is complete too. */
typedef struct {
    unsigned              set;         /* HL_DIR_SET_*: set here, not
                                          inherited or defaulted */
    int                   engine;      /* HotLimitEngine: 0 off, else on */
    int                   dry_run;     /* HotLimitDryRun: 1 on, else off */
    int                   headers;     /* HotLimitHeaders: HL_HEADERS_*
                                          bits, 0 off */
    hl_route_from_t       route_from;  /* HotLimitRouteFrom */
    const char           *route_arg;   /* query:NAME, param:NAME, json:PATH */
    long                  body_limit;  /* HotLimitBodyLimit, bytes */
    int                   nquotas;     /* HotLimitQuota lines, each counted */
    const hl_dir_quota_t *quotas[HL_DIR_QUOTAS_MAX];  /* apart; a child's
                                                         replace them all */
    int                   error_format;  /* HotLimitErrorFormat: an
                                            hl_error_format_t */
    /* Log flood and status scope (issue 18): */
    int                   log_refusals; /* HotLimitLogRefusals,
                                           HL_LOG_REFUSALS_* */
    int                   status;       /* HotLimitStatus (not .htaccess):
                                           > 0 the status handler answers
                                           here, and nothing is limited or
                                           banned here (HL_STATUS_ON_*:
                                           where On was set); 0: off */
    /* Request bodies (mod_hotlimit_body.c): */
    int                   body_overflow;  /* HotLimitBodyOverflow,
                                             HL_BODY_OVERFLOW_* */
    int                   prompt_estimate; /* HotLimitPromptEstimate:
                                              body bytes per prompt token
                                              (reserve=max_tokens) */
    /* Device cookies (HotLimitDeviceCookie, mod_hotlimit_device.c): */
    const char           *device_name;    /* cookie name; NULL: inherit */
    int                   device_max_age; /* its Max-Age, seconds */
    /* HotLimitConcurrency (mod_hotlimit_conc.h): NULL unset, inherited */
    const struct hl_dir_conc *conc;
    /* Merges kept per process (mod_hotlimit_merge_memo.c): not settings */
    int                   stable;   /* made while reading the configuration */
    struct hl_merge_memo *memo[HL_MERGE_MEMOS];  /* with this as the child */
} hl_dir_conf_t;

/* HotLimitErrorFormat: the 429 body chosen by Accept (auto), or fixed. */
typedef enum {
    HL_ERROR_FORMAT_AUTO = 0,
    HL_ERROR_FORMAT_HTML,
    HL_ERROR_FORMAT_JSON,
    HL_ERROR_FORMAT_PROBLEM,
    HL_ERROR_FORMAT_OPENAI,      /* {"error":{"message":...}} */
    HL_ERROR_FORMAT_ANTHROPIC    /* {"type":"error","error":{...}} */
} hl_error_format_t;

/* HotLimitHeaders: which rate-limit headers responses carry (bits). */
#define HL_HEADERS_DRAFT     1u  /* RateLimit-Policy, RateLimit (On) */
#define HL_HEADERS_OPENAI    2u  /* x-ratelimit-*, retry-after-ms on a 429 */
#define HL_HEADERS_ANTHROPIC 4u  /* anthropic-ratelimit-* */
#define HL_HEADERS_PROVIDERS (HL_HEADERS_OPENAI | HL_HEADERS_ANTHROPIC)

/* HotLimitBodyOverflow: what a body over HotLimitBodyLimit gets. */
#define HL_BODY_OVERFLOW_REFUSE 0   /* 413 (the default) */
#define HL_BODY_OVERFLOW_PATH   1   /* the query alone, or the path */

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

/* Per-server configuration. Server-wide settings are read from the main
 * server only (documented per directive). */
typedef struct {
    int                 slots;            /* HotLimitSlots */
    int                 persist;          /* HotLimitPersist */
    int                 ipv6_prefix;      /* HotLimitIPv6Prefix */
    apr_array_header_t *exempt;           /* of hl_cidr_t (HotLimitExempt) */
    const char         *error_template;   /* file contents, or NULL */
    const struct hl_store_provider *store; /* HotLimitStore's provider
                                             (mod_hotlimit_stores.h); NULL:
                                             shm (the default) */
    void               *store_conf;       /* its settings, as it parsed them */
    int                 store_timeout;    /* HotLimitStoreTimeout, ms */
    int                 store_lease;      /* HotLimitStoreLease, units */
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
    const char         *ban_where;        /* its "FILE:LINE", with ban */
    /* Resolved once in post_config (resolve_servers), for every server: */
    int                 v6_prefix;        /* ipv6_prefix or its default */
    const char         *tag;              /* "host:port" of a vhost, "" */
    size_t              tag_len;
    uint64_t            tag_hash;         /* 0 for the main server */
    /* Request bodies (mod_hotlimit_body.c): */
    long                body_memory;      /* HotLimitBodyMemory, 0: unset */
    long                log_rate;         /* HotLimitLogRate, main server
                                             only; 0: unset (10) */
    /* Device cookies (HotLimitSecretFile, mod_hotlimit_device.c): */
    const unsigned char *device_secret;   /* the key read, or NULL: the
                                             generated one (a vhost
                                             inherits the main server's) */
    size_t              device_secret_len;
    int                 status_names;     /* HotLimitStatusNames: 0 unset
                                             (On), HL_STATUS_NAMES_* */
} hl_server_conf_t;

#define HL_STATUS_NAMES_ON  1
#define HL_STATUS_NAMES_OFF 2

extern module AP_MODULE_DECLARE_DATA hotlimit_module;

/* The clocks (hl_now_ms, hl_mono_ms) are the core's: hl_clock.h. */

/* Returns the request the client sent: r walked up through internal
 * redirects (prev) and subrequests (main). Never NULL. */
static inline request_rec *hl_client_request(request_rec *r)
{
    while (r->main || r->prev)
        r = r->main ? r->main : r->prev;
    return r;
}

#endif
