/*
 * mod_hotlimit_body.h - what mod_hotlimit_body.c offers the other glue
 * files: request bodies read for param: and json: routes and keys, handed
 * on unchanged.
 */
#ifndef MOD_HOTLIMIT_BODY_H
#define MOD_HOTLIMIT_BODY_H

#include "mod_hotlimit_conf.h"

#define HL_DEFAULT_BODY_LIMIT  8388608  /* HotLimitBodyLimit: 8M */
#define HL_DEFAULT_BODY_MEMORY 65536    /* HotLimitBodyMemory: 64K */

/*
 * Returns what PHP would hold in $_REQUEST[name] for r, when it is a string
 * (or, with array_key, an array: then its first key), and sets *len; the
 * body is read for it on first use (a POST form, at most HotLimitBodyLimit
 * bytes of r's scope, at most HotLimitBodyMemory of it in memory) and
 * handed on as the handler would have read it; when the body cannot be
 * used (over the limit under HotLimitBodyOverflow path, unreadable, or
 * refused: see hl_body_refusal), only the query is read. A value is cut at
 * HotLimitBodyMemory bytes. Returns NULL when absent (or empty array). The
 * value is allocated from r->pool (the caller may change it);
 * NUL-terminated, but may hold NULs.
 */
char *hl_request_param(request_rec *r, const char *name, int array_key,
                       apr_size_t *len);

/*
 * Returns the string or number at JSON path (a checked path: "phone",
 * "user.email") of r's body, as PHP's json_decode($body, true) gives it
 * (hl_json_path.h), and sets *len; the body is read for it on first use
 * when its Content-Type is JSON (any method), with the bounds, refusals
 * and hand-on of hl_request_param. A value is cut at HotLimitBodyMemory
 * bytes. Returns NULL when the body is not JSON, not read, invalid, or has
 * no string or number at path. The value is allocated from r->pool;
 * NUL-terminated, but may hold NULs.
 */
char *hl_request_json(request_rec *r, const char *path, apr_size_t *len);

/*
 * Returns DECLINED, or what a hook must return to end r because its
 * client request's body was refused when it was read: 413 (over
 * HotLimitBodyLimit, or a multipart header over HotLimitBodyMemory), 500
 * (the spool cannot be read), or DONE (HTTP_IN refused it and has sent
 * the error: LimitRequestBody, a bad chunk). The status is returned once
 * per client request (an ErrorDocument it leads to runs as usual).
 */
int hl_body_refusal_of(request_rec *r);

/*
 * [HotLimitConcurrency keyed by a client-sent value] Reads r's client
 * request body whole, whatever its type and method, before a slot is
 * taken, so a trickled body holds no slot: at most HotLimitBodyLimit bytes
 * (an over-limit body is refused 413 even under HotLimitBodyOverflow
 * path), HotLimitBodyMemory of them in memory, the rest spooled, and
 * handed on unchanged. Returns DECLINED when the body is in (or there is
 * none, or HotLimitBodyLimit is 0, or the client is banned: the access
 * checker refuses it), else the status that ends r, once (as
 * hl_body_refusal_of): 413, 400 or 408 (not received in full), 500, 503
 * (HotLimitSpoolLimit), DONE.
 */
int hl_body_whole(request_rec *r);

/* Nonzero once this process has read a request body (hl_body_refusal
 * has nothing to say before: no call per request). */
extern int hl_body_records;

static APR_INLINE int hl_body_refusal(request_rec *r)
{
    return hl_body_records ? hl_body_refusal_of(r) : DECLINED;
}

/* Takes the next n bytes of a body (not owned: valid during the call). */
typedef void hl_body_feed_fn(void *ctx, const char *data, size_t n);

/*
 * [reserve=] Reads r's client request body when its Content-Type names
 * JSON (same bounds and hand-on as for a form: at most HotLimitBodyLimit
 * bytes, HotLimitBodyMemory of them in memory, the rest spooled; an
 * over-limit body refused unless HotLimitBodyOverflow path, see
 * hl_body_refusal) and hands all of it to fn, in order, in pieces.
 * Returns 1 with *body_len (the whole body) when the body was read to its
 * end and fed; 0 otherwise (no body, another type, refused, the spool
 * unreadable: then r is refused with 500, or out of memory), fn perhaps
 * fed a part.
 */
int hl_request_json_feed(request_rec *r, hl_body_feed_fn *fn, void *ctx,
                         apr_off_t *body_len);

/* Registers the body filter and its insert_filter hook (register_hooks). */
void hl_body_register(void);

/* The look at a client's ban that a body read asks first
 * (hl_ban_gate_banned): returns 1 if the client of r is banned now, so its
 * body is never read. */
typedef int hl_body_banned_fn(request_rec *r);

/* Hands the body reader the ban look (register_hooks, before any request;
 * NULL, the default: no look). */
void hl_body_set_ban_check(hl_body_banned_fn *fn);

#endif
