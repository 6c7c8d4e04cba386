/*
 * hl_negotiate.h - choosing the 429 body from Accept / X-Requested-With and
 * its language from Accept-Language, q-values honoured. Pure, no allocation.
 */
#ifndef HL_NEGOTIATE_H
#define HL_NEGOTIATE_H

typedef enum {
    HL_BODY_HTML = 0,   /* browsers, and anything not asking for JSON */
    HL_BODY_JSON,       /* application/json preferred, or XMLHttpRequest */
    HL_BODY_PROBLEM     /* application/problem+json preferred */
} hl_body_kind_t;

/*
 * Picks the body kind. accept and x_requested_with may be NULL.
 * Among text/html, application/xhtml+xml, application/json and
 * application/problem+json (and the wildcards "any", "application/any" and
 * "text/any", written with a star),
 * the type with the highest q wins; at equal q the more specific one, then
 * the earlier one. q=0 excludes a type. A missing or empty Accept, or one
 * naming none of these, gives HTML, unless X-Requested-With is
 * "XMLHttpRequest" (case-insensitive), which gives JSON when JSON is not
 * excluded and HTML is not preferred over it explicitly. Malformed parts are
 * skipped. Never fails.
 */
hl_body_kind_t hl_negotiate_body(const char *accept, const char *x_requested_with);

/*
 * Picks the page language among the built-in ones (en zh es fr de ar ja, see
 * hl_render_language) from an Accept-Language header (may be NULL):
 * highest q wins, ties go to the earlier entry; "zh-CN" matches "zh",
 * "*" matches en. Returns a static string; "en" when nothing matches.
 */
const char *hl_negotiate_lang(const char *accept_language);

#endif
