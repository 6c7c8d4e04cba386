/*
 * mod_hotlimit_fetch.h - what mod_hotlimit_fetch.c offers the other glue
 * files: fetching a table over http(s): the only file that uses libcurl.
 */
#ifndef MOD_HOTLIMIT_FETCH_H
#define MOD_HOTLIMIT_FETCH_H

#include "mod_hotlimit_conf.h"

/* Validators of the last good response, sent back as conditional GET;
 * a weak one (from the same second as the response) is left empty. */
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
 * On 200 sets *v to the response's strong validators (a weak one is
 * left empty: see hl_validator_usable) and returns the body in res; on
 * 304 sets
 * res->not_modified. Returns APR_SUCCESS for both; any other outcome (DNS,
 * connect, timeout, HTTP status, too large, a refused redirect) returns an
 * error with res->error set. Blocking: call from the watchdog only.
 * Everything is allocated from p.
 */
apr_status_t hl_fetch_url(apr_pool_t *p, const char *url, int timeout_s,
                          apr_size_t max_size, hl_fetch_validators_t *v,
                          hl_fetch_result_t *res);

#endif
