/*
 * hl_encoding.h - the content codings cost=usage can read (issue 25): a
 * response's Content-Encoding told apart, and a request's Accept-Encoding
 * narrowed to them before it is forwarded to the backend.
 *
 * Pure core: no httpd headers, no allocation.
 */
#ifndef HL_ENCODING_H
#define HL_ENCODING_H

#include <stddef.h>

typedef enum {
    HL_ENC_IDENTITY = 0,   /* none, empty or "identity" */
    HL_ENC_GZIP,           /* "gzip" or "x-gzip" */
    HL_ENC_DEFLATE,        /* "deflate" */
    HL_ENC_OTHER           /* anything else (br, zstd, a list): unreadable */
} hl_encoding_t;

/* Returns what Content-Encoding value ce (NULL: none) is, compared
 * without case, white space around it allowed. */
hl_encoding_t hl_encoding_of(const char *ce);

/*
 * Writes into out (size bytes: at least 2 * strlen(ae) + 9) the
 * Accept-Encoding value ae keeping only the codings the module can read
 * (gzip, x-gzip, deflate, identity), each element as sent (its q-value
 * kept), joined by ", "; "identity" when none is left. Returns the length
 * written (out NUL-terminated), or 0 (out "") when out is too small.
 */
size_t hl_accept_encoding_narrow(const char *ae, char *out, size_t size);

#endif
