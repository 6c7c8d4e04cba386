/*
 * hl_route.h - route names: normalisation (spec section 4), dotted
 * framework names and parent candidates. Pure: no httpd headers, no
 * allocation (callers give buffers). A route or key read from a query
 * string or a Cookie header is read by hl_php.h.
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

#endif
