/*
 * hl_php.h - request variables read as PHP 8.2 reads them: $_GET from a
 * query string and $_COOKIE from a Cookie header, so that a route or a key
 * taken from a request is the one the PHP application sees (spec section 8).
 * Pure: no httpd headers, no allocation (callers give buffers).
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
 */
#ifndef HL_PHP_H
#define HL_PHP_H

#include <stddef.h>

#define HL_PHP_MAX_INPUT_VARS 1000   /* PHP's max_input_vars default */
#define HL_PHP_MAX_NESTING    64     /* PHP's max_input_nesting_level */

/* Which superglobal's rules apply. */
typedef enum {
    HL_PHP_GET,      /* $_GET from a query string (and parse_str) */
    HL_PHP_COOKIE    /* $_COOKIE from a Cookie header */
} hl_php_source_t;

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

#endif
