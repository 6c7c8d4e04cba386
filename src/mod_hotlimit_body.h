/*
 * mod_hotlimit_body.h - what mod_hotlimit_body.c offers the other glue
 * files: request bodies read for param: routes and keys, handed on unchanged.
 */
#ifndef MOD_HOTLIMIT_BODY_H
#define MOD_HOTLIMIT_BODY_H

#include "mod_hotlimit.h"

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

#endif
