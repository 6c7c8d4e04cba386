/*
 * hl_php.h - request variables read as PHP 8.2 reads them: $_GET from a
 * query string and $_COOKIE from a Cookie header, so that a route or a key
 * taken from a request is the one the PHP application sees (spec section 8).
 * Pure: no httpd headers; no allocation (callers give buffers), except for
 * a multipart part's Content-Disposition over 2 KiB, freed before returning.
 *
 * The rules, as php_default_treat_data and php_register_variable_ex apply
 * them with PHP's defaults (checked against php8.2 8.2.36, see
 * t/unit/test_route.c):
 *
 *  - The input is cut into tokens at '&' ($_GET) or ';' ($_COOKIE); empty
 *    tokens are skipped. A cookie token is skipped too when, once its
 *    leading white space is dropped, it is empty or starts with '='.
 *  - Only the first max_input_vars (1000) remaining tokens are read; every
 *    one counts, with or without '=', whatever its name.
 *  - A token is NAME=VALUE or NAME (the value is ""). $_GET names and
 *    values are urldecoded ('+' is a space, %XX a byte, a bad '%' stays);
 *    cookie names are not decoded and cookie values are rawurldecoded ('+'
 *    stays '+').
 *  - A name ends at a decoded NUL; leading spaces are dropped; ' ' and '.'
 *    read as '_'; "a[k]" is an element of the array a (nested up to 64
 *    levels; a deeper name deletes a), "a[]" an appended one, and a '['
 *    without a ']' after it reads as '_' (with ' ', '.' and '[' after it).
 *    A name or key that mangling made start with "__Host-" or
 *    "__Secure-" is dropped.
 *  - Duplicates: the last one wins, except a cookie that is not an array
 *    element: there the first one wins. An array replaces a string of the
 *    same name.
 *  - Values are binary: a decoded NUL is kept.
 *
 * $_POST from an application/x-www-form-urlencoded body (php_std_post_handler)
 * follows the $_GET rules but with its own counting: empty tokens ("a&&b")
 * are not skipped but read as nameless variables, and every token counts
 * after it is read, so the first max_input_vars + 1 tokens are registered.
 * The body is read by length: a raw NUL ends a name, not the input.
 *
 * $_POST from a multipart/form-data body (main/rfc1867.c, with PHP's
 * defaults; checked against mod_php by t/46-multipart-php.t): the boundary
 * is what follows "boundary=" in the Content-Type (quoted, or up to ',' or
 * ';'); PHP reads no body with a boundary over 5,116 bytes. PHP reads the
 * body through a buffer of 5,120 bytes (the boundary's length + 6 if
 * larger), and this reader follows that buffer byte for byte:
 *  - Lines end at '\n' (a '\r' before it dropped) and are C strings (cut
 *    at a NUL); a line that fills the buffer without a '\n' is cut there,
 *    and what follows is a line of its own.
 *  - A part starts at a line equal to "--BOUNDARY"; its headers end at an
 *    empty line; a header line that starts with white space or has no ':'
 *    continues the header before. The first Content-Disposition (of any
 *    length) gives name= (quoted or not, '\' escaping the quote) and
 *    filename=, the last of each winning.
 *  - A part without a Content-Disposition is passed over and not counted;
 *    the 1,021st with one ends the reading (max_multipart_body_parts), and
 *    so does one with neither name= nor filename= ("garbled").
 *  - A text field (name=, no filename=) runs up to "\n--BOUNDARY" (a '\r'
 *    before it dropped) or the end of the body; it is raw, its name
 *    mangled like any other; the first max_input_vars (1000) register.
 *  - A file part's data is read up to "\n--BOUNDARY" too, except when PHP
 *    leaves it unread and the next part is looked for line by line: with
 *    filename="", after the 20th file (max_file_uploads), and when its
 *    name's brackets are not closed or text follows a ']' (and then for
 *    every later file part: PHP never clears that flag); a file cut short
 *    by MAX_FILE_SIZE or upload_max_filesize (2M) stops being read after
 *    the piece that went over, and one more.
 * Not followed: session upload progress (its callback can cancel a file).
 *
 * $_REQUEST with request_order "GP": $_GET, then $_POST over it; a string
 * replaces, two arrays are merged with the $_GET keys first.
 */
#ifndef HL_PHP_H
#define HL_PHP_H

#include <stddef.h>

#define HL_PHP_MAX_INPUT_VARS 1000   /* PHP's max_input_vars default */
#define HL_PHP_MAX_NESTING    64     /* PHP's max_input_nesting_level */
#define HL_PHP_KEY_MAX        256    /* the first array key kept, bytes */
#define HL_PHP_BOUNDARY_MAX   5116   /* longest boundary PHP 8.2 accepts ("Boundary too large") */

/* Which superglobal's rules apply. */
typedef enum {
    HL_PHP_GET,      /* $_GET from a query string (and parse_str) */
    HL_PHP_COOKIE,   /* $_COOKIE from a Cookie header */
    HL_PHP_POST      /* $_POST from an urlencoded body */
} hl_php_source_t;

/* The request bodies PHP reads into $_POST. */
typedef enum {
    HL_PHP_FORM_NONE = 0,        /* any other: PHP leaves $_POST empty */
    HL_PHP_FORM_URLENCODED,      /* application/x-www-form-urlencoded */
    HL_PHP_FORM_MULTIPART        /* multipart/form-data; boundary=... */
} hl_php_form_t;

/*
 * Finds what PHP holds in $_GET[name] (or $_COOKIE[name]) for the raw
 * input, when it is a string; with key != NULL, in $_GET[name][key]
 * instead ("name[key]=v" in the input). Writes the value into out, cut at
 * outlen-1 bytes and NUL-terminated; a value may hold NUL bytes of its own.
 * Returns the number of bytes written (0 for an empty value), or -1 if the
 * variable is absent or not a string (an array) or an argument is invalid
 * (out NULL, outlen < 2, input or name NULL, name or key ""), with "" in
 * out if outlen > 0. Owns nothing; reads input up to its NUL.
 */
long hl_php_var(char *out, size_t outlen, const char *input,
                hl_php_source_t source, const char *name, const char *key);

/* hl_php_var(out, outlen, query, HL_PHP_GET, name, NULL): $_GET[name]. */
long hl_query_arg(char *out, size_t outlen, const char *query, const char *name);

/* hl_php_var(out, outlen, cookie_header, HL_PHP_COOKIE, name, NULL):
 * $_COOKIE[name]. */
long hl_cookie_value(char *out, size_t outlen, const char *cookie_header,
                     const char *name);

/*
 * Returns the kind of body a request with this Content-Type carries for
 * PHP (the type before any ';', ',' or ' ', compared without case), and for
 * multipart writes the boundary into boundary (boundary_size bytes),
 * "boundary" found as PHP finds it (with its case, else without). A
 * multipart type without a usable boundary (none, unterminated quote,
 * longer than HL_PHP_BOUNDARY_MAX or the buffer) is HL_PHP_FORM_NONE; an
 * empty one is usable, as in PHP (the delimiter line is "--"). content_type may be NULL. Owns nothing.
 */
hl_php_form_t hl_php_form_type(const char *content_type, char *boundary,
                               size_t boundary_size);

/*
 * Finds what PHP holds in $_REQUEST[name] for a request with this query
 * string (NULL: none) and body (body_len bytes, NULL: none) of type form
 * (boundary: from hl_php_form_type for multipart). When it is a string,
 * writes it (as hl_php_var does); when it is an array and array_key is
 * set, writes its first key instead ("do[login]=x" gives "login"), cut at
 * HL_PHP_KEY_MAX bytes. Returns the bytes written, or -1 (with "" in out
 * if outlen > 0) if absent, an array without array_key, or on a bad
 * argument (out NULL, outlen < 2, name NULL or ""). Owns nothing; borrows
 * query and body for the call.
 */
long hl_php_request_param(char *out, size_t outlen, const char *query,
                          const char *body, size_t body_len,
                          hl_php_form_t form, const char *boundary,
                          const char *name, int array_key);

/*
 * A request body the readers pull from by offset, so that it need not be
 * in memory: either mem (len bytes, borrowed), or, with mem NULL, read
 * through read(ctx, off, buf, n), which copies body[off, off + n) into buf
 * and returns 0 (-1 on failure: failed is set and zeros are read). The
 * readers keep one block of it in cache (cache_size bytes, the caller's);
 * a multipart body is read in PHP's 5,120-byte windows, an urlencoded one
 * a token at a time, each value once more when it is written out.
 */
typedef struct {
    const char *mem;
    size_t      len;
    int       (*read)(void *ctx, size_t off, char *buf, size_t n);
    void       *ctx;
    char       *cache;
    size_t      cache_size;
    size_t      cache_off;       /* what cache holds: [cache_off, */
    size_t      cache_len;       /*  cache_off + cache_len) */
    int         failed;          /* a read failed */
} hl_php_src_t;

#define HL_PHP_TOO_BIG   (-2)    /* a multipart header over mem_max */
#define HL_PHP_READ_FAIL (-3)    /* body->read failed */

/*
 * hl_php_request_param for a body read through src (NULL: none): the
 * same answer, with at most mem_max bytes held for a multipart part's
 * Content-Disposition (HL_PHP_TOO_BIG beyond: the caller refuses the
 * request rather than guess). Returns as hl_php_request_param, or
 * HL_PHP_TOO_BIG, or HL_PHP_READ_FAIL. Owns nothing.
 */
long hl_php_request_param_src(char *out, size_t outlen, const char *query,
                              hl_php_src_t *body, hl_php_form_t form,
                              const char *boundary, const char *name,
                              int array_key, size_t mem_max);

#endif
