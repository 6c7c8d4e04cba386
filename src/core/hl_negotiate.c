/*
 * hl_negotiate.c - content negotiation for the 429 response: which body
 * (HTML, JSON, problem+json) from Accept and X-Requested-With, and which
 * page language from Accept-Language.
 *
 * Both headers are comma-separated lists of "RANGE *( OWS ; OWS PARAM )"
 * (RFC 9110 12.4.2 / 12.5.1 / 12.5.4). One scanner reads them: it walks
 * the string once, never backs up and copies nothing, so a hostile header
 * of any length costs linear time and no buffer. q-values are integers
 * 0..1000 (thousandths), never floats. A malformed element (bad range,
 * bad q, stray characters) is skipped as a whole.
 *
 * Pure: no allocation, no APR calls, no httpd headers. The languages
 * are those of the built-in page (hl_render_language).
 */
#include <stddef.h>
#include <string.h>
#include "hl_negotiate.h"
#include "hl_render.h"
#include "hl_text.h"

/* One list element as the scanner sees it (points into the header). */
typedef struct {
    const char *range;      /* media range or language range, not terminated */
    size_t      range_len;
    int         q;          /* 0..1000; 1000 when no q parameter */
} hl_entry_t;

/* Returns 1 for optional whitespace (SP, HTAB). */
static int is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* Returns c lowered if it is an ASCII capital letter. */
static char ascii_lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* Returns 1 if s[0..len) equals the lower-case literal lit, ignoring ASCII case. */
static int eq_nocase(const char *s, size_t len, const char *lit)
{
    size_t i;

    if (strlen(lit) != len)
        return 0;
    for (i = 0; i < len; i++) {
        if (ascii_lower(s[i]) != lit[i])
            return 0;
    }
    return 1;
}

/*
 * Parses an RFC 9110 qvalue ("0", "0.5", "0.125", "1", "1.000") from
 * v[0..len) into *q as thousandths (0..1000). Returns 0, or -1 (and leaves
 * *q alone) for anything else: "1.5", ".5", "0.1234", "-0", "".
 */
static int parse_q(const char *v, size_t len, int *q)
{
    int whole, frac = 0, scale = 100;
    size_t i;

    if (len < 1 || len > 5 || (v[0] != '0' && v[0] != '1'))
        return -1;
    whole = v[0] - '0';
    if (len > 1 && v[1] != '.')
        return -1;
    for (i = 2; i < len; i++) {
        if (v[i] < '0' || v[i] > '9' || (whole == 1 && v[i] != '0'))
            return -1;
        frac += (v[i] - '0') * scale;
        scale /= 10;
    }
    *q = whole * 1000 + frac;
    return 0;
}

/*
 * Reads the parameters after a range, from *sp up to the element's end
 * (',' or NUL, not consumed). The first "q" parameter sets e->q; other
 * parameters are skipped, quoted values included. Returns 0, or -1 when
 * the parameters are malformed (bad q, quoted q, q without value, a
 * nameless parameter, an unterminated quote, stray characters). *sp always
 * advances monotonically.
 */
static int read_params(const char **sp, hl_entry_t *e)
{
    const char *s = *sp, *name, *val;
    size_t nlen, vlen;
    int seen_q = 0, is_q;

    for (;;) {
        while (is_ows(*s))
            s++;
        if (*s == ',' || *s == '\0')
            break;
        if (*s != ';') {
            *sp = s;
            return -1;
        }
        s++;
        while (is_ows(*s))
            s++;
        if (*s == ',' || *s == '\0')
            break;                      /* a trailing ";" is harmless */
        if (*s == ';')
            continue;                   /* so is an empty parameter ";;" */
        name = s;
        while (hl_is_tchar(*s))
            s++;
        nlen = (size_t)(s - name);
        if (nlen == 0) {
            *sp = s;
            return -1;
        }
        is_q = eq_nocase(name, nlen, "q");
        if (*s != '=') {
            if (is_q) {
                *sp = s;
                return -1;
            }
            continue;                   /* a value-less parameter: ignored */
        }
        s++;
        if (*s == '"') {
            s++;
            while (*s != '"' && *s != '\0')
                s += (s[0] == '\\' && s[1] != '\0') ? 2 : 1;
            if (*s != '"' || is_q) {
                *sp = s;
                return -1;
            }
            s++;
            continue;
        }
        val = s;
        while (hl_is_tchar(*s))
            s++;
        vlen = (size_t)(s - val);
        if (vlen == 0 || (is_q && !seen_q && parse_q(val, vlen, &e->q) != 0)) {
            *sp = s;
            return -1;
        }
        if (is_q)
            seen_q = 1;
    }
    *sp = s;
    return 0;
}

/*
 * Reads the next element of a list header starting at *sp, and moves *sp
 * past it and its comma. Returns 1 with *e filled for a well-formed
 * element, 0 for a malformed one (skipped up to the next comma), -1 at the
 * end of the string. A range is a run of tchars and '/'; the callers check
 * its shape. Empty elements (",,") are skipped silently.
 */
static int next_entry(const char **sp, hl_entry_t *e)
{
    const char *s = *sp;
    int bad;

    while (is_ows(*s) || *s == ',')
        s++;
    if (*s == '\0') {
        *sp = s;
        return -1;
    }
    e->range = s;
    while (hl_is_tchar(*s) || *s == '/')
        s++;
    e->range_len = (size_t)(s - e->range);
    e->q = 1000;
    bad = e->range_len == 0 || read_params(&s, e) != 0;
    if (bad) {
        while (*s != ',' && *s != '\0')
            s++;
    }
    if (*s == ',')
        s++;
    *sp = s;
    return bad ? 0 : 1;
}

/* ---- Accept ------------------------------------------------------------ */

/* The media ranges that matter, in the order of hl_media[]. */
enum { M_HTML, M_XHTML, M_JSON, M_PROBLEM, M_TEXT_ANY, M_APP_ANY, M_ANY, M_COUNT };

static const char *const hl_media[M_COUNT] = {
    "text/html", "application/xhtml+xml", "application/json",
    "application/problem+json", "text/*", "application/*", "*/*"
};

/* What the header says about one range or one body kind. */
typedef struct {
    int q;      /* 0..1000, or -1 when the header does not mention it */
    int spec;   /* 2 exact type, 1 type/x, 0 x/x (for a kind) */
    int pos;    /* index of the element, for "the earlier one" */
} hl_pref_t;

/*
 * Returns the preference of a body kind: from its exact range(s) if the
 * header names one, else from its type wildcard, else from the full
 * wildcard, else q = -1. exact2 may be -1 (only HTML has two exact types:
 * the better of them counts).
 */
static hl_pref_t kind_pref(const hl_pref_t *seen, int exact1, int exact2, int type_any)
{
    hl_pref_t r = seen[exact1];

    if (exact2 >= 0 && seen[exact2].q > r.q)
        r = seen[exact2];
    if (r.q >= 0) {
        r.spec = 2;
        return r;
    }
    r = seen[type_any];
    r.spec = 1;
    if (r.q >= 0)
        return r;
    r = seen[M_ANY];
    r.spec = 0;
    return r;
}

/* Returns 1 if a is preferred to b: higher q, then more specific, then earlier. */
static int pref_better(hl_pref_t a, hl_pref_t b)
{
    if (a.q != b.q)
        return a.q > b.q;
    if (a.spec != b.spec)
        return a.spec > b.spec;
    return a.pos < b.pos;
}

/* Returns 1 if v is "XMLHttpRequest" (any case, surrounding blanks allowed). */
static int is_xhr(const char *v)
{
    const char *end;

    if (v == NULL)
        return 0;
    while (is_ows(*v))
        v++;
    end = v + strlen(v);
    while (end > v && is_ows(end[-1]))
        end--;
    return eq_nocase(v, (size_t)(end - v), "xmlhttprequest");
}

/*
 * Body negotiation; see hl_negotiate.h. Each kind takes the q of its most
 * specific range in the header (RFC 9110 12.5.1), so "text/html;q=0" next
 * to a full wildcard excludes HTML. The kind with the highest q wins, then the more specific,
 * then the earlier; a full tie (one wildcard matching several kinds) goes to
 * HTML, then JSON, then problem+json. When every kind is excluded, HTML.
 * X-Requested-With: XMLHttpRequest turns an HTML result into JSON unless
 * JSON has q=0 or text/html (or xhtml) is named with a higher q than JSON,
 * or at equal q while JSON only comes from a wildcard. Never fails.
 */
hl_body_kind_t hl_negotiate_body(const char *accept, const char *x_requested_with)
{
    hl_pref_t seen[M_COUNT], kinds[3];
    hl_entry_t e;
    const char *s = accept ? accept : "";
    int i, rc, pos = 0, named = 0, best = -1, xhr = is_xhr(x_requested_with);
    hl_body_kind_t kind;

    for (i = 0; i < M_COUNT; i++) {
        seen[i].q = -1;
        seen[i].spec = 0;
        seen[i].pos = 0;
    }
    while ((rc = next_entry(&s, &e)) >= 0) {
        pos++;
        if (rc == 0)
            continue;
        for (i = 0; i < M_COUNT; i++) {
            if (eq_nocase(e.range, e.range_len, hl_media[i])) {
                if (e.q > seen[i].q) {
                    seen[i].q = e.q;
                    seen[i].pos = pos;
                }
                named = 1;
                break;
            }
        }
    }
    if (!named)
        return xhr ? HL_BODY_JSON : HL_BODY_HTML;

    kinds[HL_BODY_HTML] = kind_pref(seen, M_HTML, M_XHTML, M_TEXT_ANY);
    kinds[HL_BODY_JSON] = kind_pref(seen, M_JSON, -1, M_APP_ANY);
    kinds[HL_BODY_PROBLEM] = kind_pref(seen, M_PROBLEM, -1, M_APP_ANY);
    for (i = 0; i < 3; i++) {
        if (kinds[i].q > 0 && (best < 0 || pref_better(kinds[i], kinds[best])))
            best = i;
    }
    kind = best < 0 ? HL_BODY_HTML : (hl_body_kind_t)best;

    if (kind == HL_BODY_HTML && xhr && kinds[HL_BODY_JSON].q != 0) {
        hl_pref_t h = kinds[HL_BODY_HTML], j = kinds[HL_BODY_JSON];
        int html_explicit = h.spec == 2 && h.q > 0
                            && (h.q > j.q || (h.q == j.q && j.spec < 2));
        if (!html_explicit)
            kind = HL_BODY_JSON;
    }
    return kind;
}

/* ---- Accept-Language --------------------------------------------------- */

/*
 * Returns the built-in language that language range r[0..len) asks for
 * ("*" is en; otherwise its primary subtag, any case), or NULL when none
 * matches or the range is malformed (it must be "*" or 1-8 letters followed
 * by "-" 1-8 letters/digits subtags).
 */
static const char *lang_of_range(const char *r, size_t len)
{
    size_t i, k, primary = 0, sub = 0;
    const char *code;

    if (len == 1 && r[0] == '*')
        return "en";
    for (i = 0; i < len; i++) {
        char c = ascii_lower(r[i]);
        if (r[i] == '-') {
            if (sub == 0)
                return NULL;
            if (primary == 0)
                primary = i;
            sub = 0;
        } else if ((c >= 'a' && c <= 'z') || (primary > 0 && c >= '0' && c <= '9')) {
            if (++sub > 8)
                return NULL;
        } else {
            return NULL;
        }
    }
    if (sub == 0)
        return NULL;
    if (primary == 0)
        primary = len;
    for (k = 0; (code = hl_render_language(k)) != NULL; k++) {
        if (eq_nocase(r, primary, code))
            return code;
    }
    return NULL;
}

/*
 * Language negotiation; see hl_negotiate.h. The element with the highest
 * q > 0 that names a built-in language wins; ties go to the earlier one.
 * Returns a static string, "en" when nothing matches.
 */
const char *hl_negotiate_lang(const char *accept_language)
{
    const char *s = accept_language ? accept_language : "", *best = NULL, *l;
    hl_entry_t e;
    int rc, best_q = 0;

    while ((rc = next_entry(&s, &e)) >= 0) {
        if (rc == 0 || e.q <= best_q)
            continue;
        l = lang_of_range(e.range, e.range_len);
        if (l != NULL) {
            best = l;
            best_q = e.q;
        }
    }
    return best ? best : "en";
}
