/*
 * mod_hotlimit_spool.h - HotLimitSpoolLimit: what mod_hotlimit_spool.c
 * offers the body reader (a charge per spooled body, given back when its
 * pool goes), the status page and the module (directive, hooks).
 */
#ifndef MOD_HOTLIMIT_SPOOL_H
#define MOD_HOTLIMIT_SPOOL_H

#include "httpd.h"
#include "http_config.h"

#define HL_DEFAULT_SPOOL_LIMIT  ((apr_int64_t)512 * 1024 * 1024)  /* 512M */
#define HL_SPOOL_RETRY_AFTER    "5"   /* seconds, on the 503 */

/* The bytes one body charged to the server's spool account. */
typedef struct hl_spool_hold hl_spool_hold_t;

/* Returns a new charge for a body spooled from pool, given back whole by
 * a cleanup of pool (request end, abort, error: however the pool goes).
 * Allocated from pool; never NULL. */
hl_spool_hold_t *hl_spool_hold(apr_pool_t *pool);

/* Charges n more bytes to hold. Returns 1, or 0 when the server's spooled
 * bytes would go over HotLimitSpoolLimit (nothing charged). Without the
 * shared account (before post_config), always 1. */
int hl_spool_grow(hl_spool_hold_t *hold, apr_size_t n);

/* Counts r's body refused for the limit, and logs it (HL02201, at most one
 * line a second for the server); sets Retry-After on the answer of r and
 * of its client request. */
void hl_spool_refuse(request_rec *r);

/* Writes ?json's "spool":{"bytes":N,"limit":N,"refused":N} to r (zeros
 * without the account). */
void hl_spool_write_json(request_rec *r);

/* HotLimitSpoolLimit BYTES (main server only): a number, or with K, M or
 * G; 0 (never spool) up to 1024G. Returns NULL or the error message
 * (allocated from cmd->pool). */
const char *hl_spool_set_limit(cmd_parms *cmd, void *dconf, const char *arg);

/* Registers the pre_config and post_config hooks that reset the configured
 * limit and make (once per parent) the shared account (register_hooks). */
void hl_spool_register(void);

#endif
