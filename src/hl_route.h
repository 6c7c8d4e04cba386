/*
 * hl_route.h - route names: normalisation (spec section 4), dotted
 * framework names, parent candidates, and reading a route or a key from a
 * query string or a Cookie header. Pure: no httpd headers, no allocation
 * (callers give buffers).
 */
#ifndef HL_ROUTE_H
#define HL_ROUTE_H

#include <stddef.h>

#define HL_ROUTE_MAX 256   /* longest route kept; longer ones are cut here */

/*
 * Normalises a decoded URL path into out (outlen bytes, >= 2): resolves "."
 * and ".." segments (never above the root), merges repeated slashes, drops
 * a trailing slash (except for "/"), prefixes "/" if missing, and stops at
 * the first NUL, '?' or '#'. A result longer than outlen-1 is cut at
 * outlen-1 bytes. Returns the length written (NUL-terminated).
 * "" and NULL give "/". Case is preserved.
 */
size_t hl_route_normalize(char *out, size_t outlen, const char *path, size_t len);

/*
 * Like hl_route_normalize, but a name with no '/' and at least one '.' is a
 * dotted framework name: "user.login" becomes "/user/login". Used for table
 * route names and for routes read from a query argument.
 */
size_t hl_route_from_name(char *out, size_t outlen, const char *name, size_t len);

/*
 * Cuts the last segment of a normalised route in place: "/user/login/sms"
 * becomes "/user/login" (returns its length). Returns 0 and leaves the route
 * as it is when it has one segment or is "/" (the module root is the last
 * candidate, and "/" is never a candidate of a longer route).
 */
size_t hl_route_parent(char *route, size_t len);

/*
 * Finds argument `name` in a raw query string ("a=1&r=site%2Flogin"), decoded
 * as PHP does ('+' is a space, %XX decoded, the last duplicate wins; a
 * decoded NUL ends the value). Writes the value into out (cut at outlen-1).
 * Returns the length, or -1 if absent or empty.
 */
long hl_query_arg(char *out, size_t outlen, const char *query, const char *name);

/*
 * Finds cookie `name` in a Cookie header ("a=1; sid=xyz"). The first
 * match wins; surrounding double quotes are removed. Writes into out (cut at
 * outlen-1). Returns the length, or -1 if absent or empty.
 */
long hl_cookie_value(char *out, size_t outlen, const char *cookie_header,
                     const char *name);

#endif
