/*
 * hl_table_entry.c - the quota table's route entries read, checked and
 * stored into the image (see hl_table_entry.h; design in hl_table.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <cJSON.h>
#include "hl_conc.h"
#include "hl_table_entry.h"
#include "hl_quota_by.h"
#include "hl_quota_text.h"

/* ---- reporting ---------------------------------------------------------- */

/* Formats a problem and hands it to the caller's callback. Counting what
 * is skipped is up to the caller (one entry may have several problems). */
void hl_table_report(hl_table_ctx_t *c, hl_problem_t sev, const char *route,
                     const char *field, const char *fmt, ...)
{
    char msg[HL_MSG_MAX];
    va_list ap;

    if (c->fn == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    c->fn(c->baton, sev, route, field, msg);
}

/* Returns a short description of a JSON value's type, for messages. */
const char *hl_table_json_kind(const cJSON *v)
{
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsNull(v))
        return "null";
    if (cJSON_IsArray(v))
        return "an array";
    if (cJSON_IsObject(v))
        return "an object";
    return "invalid";
}

/* ---- values ------------------------------------------------------------- */

/*
 * Reads v as a whole number from 1 to max (max <= 2^31 - 1). Returns 0 and
 * sets *out, or -1 with a message (naming key) in err.
 */
int hl_table_json_count(const cJSON *v, const char *key, double max,
                        uint32_t *out, char *err, size_t errlen)
{
    double d;

    if (!cJSON_IsNumber(v)) {
        snprintf(err, errlen, "'%s' must be a positive whole number, not %s",
                 key, hl_table_json_kind(v));
        return -1;
    }
    d = v->valuedouble;
    /* NaN fails both comparisons; the range check makes the cast safe */
    if (!(d >= 1.0 && d <= max) || (double)(int64_t)d != d) {
        snprintf(err, errlen, "'%s' must be a whole number from 1 to %.0f, "
                 "not %.15g", key, max, d);
        return -1;
    }
    *out = (uint32_t)d;
    return 0;
}

/* Reads v as a boolean. Returns 0/1, or -1 with a message in err. */
int hl_table_json_bool(const cJSON *v, const char *key, char *err, size_t errlen)
{
    if (!cJSON_IsBool(v)) {
        snprintf(err, errlen, "'%s' must be true or false, not %s",
                 key, hl_table_json_kind(v));
        return -1;
    }
    return cJSON_IsTrue(v) ? 1 : 0;
}

/* ---- route entries ------------------------------------------------------ */

/*
 * Reads "limits" (a non-empty array of COUNT/WINDOW strings, at most
 * HL_MAX_WINDOWS, no two of the same length) into e->q.windows.
 * Returns 0, or -1 with a message in err.
 */
int hl_table_read_limits(hl_table_entry_t *e, const cJSON *v, char *err, size_t errlen)
{
    const cJSON *it;
    char werr[HL_ERR_MAX];
    int n = 0;

    if (!cJSON_IsArray(v)) {
        snprintf(err, errlen, "'limits' must be an array of COUNT/WINDOW "
                 "strings (e.g. [\"5/1m\", \"30/1h\"]), not %s", hl_table_json_kind(v));
        return -1;
    }
    cJSON_ArrayForEach(it, v) {
        hl_window_t w;

        if (n == HL_MAX_WINDOWS) {
            snprintf(err, errlen, "more than %d windows", HL_MAX_WINDOWS);
            return -1;
        }
        if (!cJSON_IsString(it)) {
            snprintf(err, errlen, "limits[%d] must be a COUNT/WINDOW string "
                     "(e.g. \"5/1m\"), not %s", n, hl_table_json_kind(it));
            return -1;
        }
        if (hl_parse_window(it->valuestring, &w, werr, sizeof(werr)) != 0) {
            snprintf(err, errlen, "%s", werr);
            return -1;
        }
        if (hl_window_check_distinct(e->q.windows, n, &w, it->valuestring,
                                     err, errlen) != 0)
            return -1;
        e->q.windows[n++] = w;
    }
    if (n == 0) {
        snprintf(err, errlen, "'limits' is empty (give at least one "
                 "COUNT/WINDOW, e.g. \"5/1m\")");
        return -1;
    }
    e->q.nwindows = n;
    return 0;
}

/*
 * Reads "window": a whole number of seconds, or a string with a unit
 * ("60s", "1m"; a bare number is seconds). Returns 0 and sets *ms, or -1
 * with a message in err.
 */
int hl_table_read_window(const cJSON *v, uint32_t *ms, char *err, size_t errlen)
{
    uint32_t secs;

    if (cJSON_IsString(v))
        return hl_parse_duration_ms(v->valuestring, 1000, ms, err, errlen);
    if (!cJSON_IsNumber(v)) {
        snprintf(err, errlen, "'window' must be a number of seconds or a "
                 "duration string (e.g. 60 or \"1m\"), not %s", hl_table_json_kind(v));
        return -1;
    }
    if (hl_table_json_count(v, "window", (double)(HL_MAX_WINDOW_MS / 1000), &secs,
                   err, errlen) != 0)
        return -1;
    *ms = secs * 1000u;
    return 0;
}

/* Returns 1 if the n bytes of s are a header or variable name: letters,
 * digits and "-_.", not empty, shorter than HL_BY_NAME_MAX. */
int hl_table_is_selector_name(const char *s, size_t n)
{
    size_t i;

    if (n == 0 || n >= HL_BY_NAME_MAX)
        return 0;
    for (i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')
              || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_'
              || s[i] == '.'))
            return 0;
    return 1;
}

/*
 * Reads a route's "plan": "env:NAME" or "header:NAME" into *sel.
 * Returns 0, or -1 with a message in err.
 */
static int read_plan_selector(const cJSON *v, hl_plan_sel_t *sel, char *err,
                              size_t errlen)
{
    const char *s = cJSON_IsString(v) ? v->valuestring : NULL, *name;
    uint32_t from;

    if (s && strncmp(s, "env:", 4) == 0) {
        from = HL_PLAN_FROM_ENV;
        name = s + 4;
    }
    else if (s && strncmp(s, "header:", 7) == 0) {
        from = HL_PLAN_FROM_HEADER;
        name = s + 7;
    }
    else {
        snprintf(err, errlen, "'plan' must be \"env:NAME\" or "
                 "\"header:NAME\" (where the plan's name of a request "
                 "comes from), not %s%.60s%s", s ? "'" : "",
                 s ? s : hl_table_json_kind(v), s ? "'" : "");
        return -1;
    }
    if (!hl_table_is_selector_name(name, strlen(name))) {
        snprintf(err, errlen, "bad plan selector '%.100s': the name must be "
                 "1 to %d letters, digits, '-', '_' or '.'", s,
                 HL_BY_NAME_MAX - 1);
        return -1;
    }
    sel->from = from;
    memcpy(sel->name, name, strlen(name) + 1);
    return 0;
}

/*
 * Reads one field of an entry into e. Returns 0 (read), 1 (unknown key,
 * message in err), or -1 (invalid value, message in err).
 */
static int read_field(hl_table_entry_t *e, const char *key, const cJSON *v,
                      char *err, size_t errlen)
{
    int b;

    if (strcmp(key, "limits") == 0) {
        e->has_limits = 1;
        return hl_table_read_limits(e, v, err, errlen);
    }
    if (strcmp(key, "max") == 0) {
        e->has_max = 1;
        return hl_table_json_count(v, "max", HL_TABLE_INT_MAX, &e->max, err, errlen);
    }
    if (strcmp(key, "window") == 0) {
        e->has_window = 1;
        return hl_table_read_window(v, &e->window_ms, err, errlen);
    }
    if (strcmp(key, "burst") == 0)
        return hl_table_json_count(v, "burst", HL_TABLE_INT_MAX, &e->q.burst, err, errlen);
    if (strcmp(key, "cost") == 0 && cJSON_IsNumber(v) && v->valuedouble == 1)
        return hl_quota_set_cost(&e->q, "1", err, errlen);
    if (strcmp(key, "by") == 0 || strcmp(key, "algo") == 0
        || strcmp(key, "cost") == 0 || strcmp(key, "norm") == 0) {
        if (!cJSON_IsString(v)) {
            snprintf(err, errlen, "'%s' must be a string, not %s", key,
                     hl_table_json_kind(v));
            return -1;
        }
        if (key[0] == 'c')
            return hl_quota_set_cost(&e->q, v->valuestring, err, errlen);
        if (key[0] == 'n')
            return hl_quota_set_norm(&e->q, v->valuestring, err, errlen);
        return key[0] == 'b'
               ? hl_quota_set_by(&e->q, v->valuestring, err, errlen)
               : hl_quota_set_algo(&e->q, v->valuestring, err, errlen);
    }
    if (strcmp(key, "reserve") == 0) {   /* reserve= (issue 19) */
        char num[24];
        if (cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble <= HL_COST_MAX
            && v->valuedouble == (double)(uint32_t)v->valuedouble) {
            snprintf(num, sizeof(num), "%u", (unsigned)v->valuedouble);
            return hl_quota_set_reserve(&e->q, num, err, errlen);
        }
        if (!cJSON_IsString(v)) {
            snprintf(err, errlen, "'reserve' must be a whole number or a "
                     "string, not %s", hl_table_json_kind(v));
            return -1;
        }
        return hl_quota_set_reserve(&e->q, v->valuestring, err, errlen);
    }
    if (strcmp(key, "plan") == 0)
        return read_plan_selector(v, &e->sel, err, errlen);
    if (strcmp(key, "concurrency") == 0)
        return hl_table_json_count(v, "concurrency", HL_CONC_LIMIT_MAX,
                          &e->q.concurrency, err, errlen);
    if (strcmp(key, "dry_run") == 0) {
        b = hl_table_json_bool(v, "dry_run", err, errlen);
        if (b < 0)
            return -1;
        e->q.dry_run = b;
        return 0;
    }
    snprintf(err, errlen, "unknown key '%s' ignored (use limits, max, "
             "window, by, algo, burst, cost, norm, plan, concurrency, "
             "reserve or dry_run)", key);
    return 1;
}

/* Returns a bit for each known entry key (to spot repeats), 0 otherwise. */
static unsigned key_bit(const char *key)
{
    static const char *const keys[] = {
        "limits", "max", "window", "by", "algo", "burst", "dry_run", "cost",
        "norm", "plan", "concurrency", "reserve"
    };
    unsigned i;

    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (strcmp(key, keys[i]) == 0)
            return 1u << i;
    }
    return 0;
}

/*
 * Reads the entry v of route `name` (as written) into *q. Reports every
 * problem. Returns 0 when the entry is usable, -1 when it must be skipped,
 * with *bad_field (may be NULL) set to the first field at fault: a key of
 * v (valid while v is), or NULL when the entry as a whole is at fault.
 */
static int read_entry(hl_table_ctx_t *c, const char *name, const cJSON *v,
                      hl_quota_t *q, hl_plan_sel_t *sel, const char **bad_field)
{
    char err[HL_ERR_MAX];
    const char *first = NULL, *field;
    const cJSON *f;
    unsigned seen = 0;
    hl_table_entry_t e;
    int bad = 0, rc;

    if (!cJSON_IsObject(v)) {
        hl_table_report(c, HL_PROBLEM_ERROR, name, NULL, "entry must be an object "
               "(e.g. {\"limits\": [\"5/1m\"]}), not %s", hl_table_json_kind(v));
        goto skip;
    }
    memset(&e, 0, sizeof(e));
    hl_quota_init(&e.q);
    cJSON_ArrayForEach(f, v) {
        const char *key = f->string ? f->string : "";
        unsigned bit = key_bit(key);

        if (seen & bit)
            hl_table_report(c, HL_PROBLEM_WARNING, name, key, "key '%s' given more "
                   "than once; the last one wins", key);
        seen |= bit;
        rc = read_field(&e, key, f, err, sizeof(err));
        if (rc > 0) {
            hl_table_report(c, HL_PROBLEM_WARNING, name, key, "%s", err);
        } else if (rc < 0) {
            hl_table_report(c, HL_PROBLEM_ERROR, name, key, "%s", err);
            if (!bad)
                first = key;
            bad = 1;
        }
    }
    /* Past the fields, `first` changes only if no field was at fault. */
    if (e.has_limits && (e.has_max || e.has_window)) {
        field = e.has_max ? "max" : "window";
        hl_table_report(c, HL_PROBLEM_ERROR, name, field,
               "give either 'limits' or 'max' + 'window', not both");
        goto skip_at;
    }
    if (!e.has_limits && !e.has_max && !e.has_window) {
        field = NULL;
        hl_table_report(c, HL_PROBLEM_ERROR, name, NULL, "no quota: give 'limits' "
               "(e.g. [\"5/1m\"]) or 'max' + 'window'");
        goto skip_at;
    }
    if (!e.has_limits && e.has_max != e.has_window) {
        field = e.has_max ? "window" : "max";
        hl_table_report(c, HL_PROBLEM_ERROR, name, field,
               "'%s' is missing (needed with '%s')",
               field, e.has_max ? "max" : "window");
        goto skip_at;
    }
    if (bad)
        goto skip;
    if (!e.has_limits) {
        e.q.nwindows = 1;
        e.q.windows[0].count = e.max;
        e.q.windows[0].window_ms = e.window_ms;
    }
    if (hl_quota_validate(&e.q, err, sizeof(err)) != 0) {
        field = e.q.burst != 0 && e.q.algo != HL_ALGO_GCRA ? "burst"
                : e.q.norm != HL_NORM_LOWER ? "norm" : NULL;
        hl_table_report(c, HL_PROBLEM_ERROR, name, field, "%s", err);
        goto skip_at;
    }
    *q = e.q;
    if (sel != NULL)
        *sel = e.sel;
    return 0;
skip_at:
    if (!bad)
        first = field;
skip:
    if (bad_field != NULL)
        *bad_field = first;
    return -1;
}

/* Reads and stores every entry of the "routes" object (already checked to
 * be an object of at most max_rules members). Reports every problem. */
void hl_table_read_routes(hl_table_ctx_t *c, const cJSON *routes)
{
    char route[HL_ROUTE_MAX];
    const cJSON *v;

    uint32_t i = 0;

    cJSON_ArrayForEach(v, routes) {
        const char *name = v->string ? v->string : "";
        uint32_t at = i++;
        hl_quota_t q;
        hl_plan_sel_t sel;
        size_t len;

        if (name[0] == '\0') {
            hl_table_report(c, HL_PROBLEM_ERROR, name, NULL, "empty route name");
            c->nerrors++;
            continue;
        }
        /* A result cut at HL_ROUTE_MAX - 1 is at least 252 bytes long, so
         * it is refused below like any name that does not fit a rule. */
        len = hl_route_from_name(route, sizeof(route), name, strlen(name));
        if (len >= HL_TABLE_ROUTE_MAX) {
            hl_table_report(c, HL_PROBLEM_ERROR, name, NULL, "route name longer than "
                   "%d bytes once normalised", HL_TABLE_ROUTE_MAX - 1);
            c->nerrors++;
            continue;
        }
        if (read_entry(c, name, v, &q, &sel, NULL) != 0) {
            c->nerrors++;
            if (at < HL_TABLE_MAX_ROUTES)
                c->skipped[at >> 3] |= (unsigned char)(1u << (at & 7));
            continue;
        }
        if (sel.from != HL_PLAN_FROM_NONE && c->t->nplans == 0)
            hl_table_report(c, HL_PROBLEM_WARNING, name, "plan", "'plan' given, but "
                   "the table has no \"plans\": the route's own limits apply");
        if (hl_table_put_rule(c->t, route, len, &q, &sel) == 1)
            hl_table_report(c, HL_PROBLEM_WARNING, name, NULL, "same route as an "
                   "earlier entry ('%s' once normalised); this later entry "
                   "replaces it", route);
    }
}

/*
 * The carry-over of hl_table_parse_keep, a second pass over the "routes"
 * object once every entry was read: each route whose entry was skipped
 * (c->skipped) and that c->t still lacks gets its rule from c->prev, and
 * is reported as HL_PROBLEM_KEPT with the field at fault.
 */
void hl_table_keep_skipped(hl_table_ctx_t *c, const cJSON *routes)
{
    char route[HL_ROUTE_MAX], windows[HL_MAX_WINDOWS * 48];
    hl_table_report_fn *fn = c->fn;
    const cJSON *v;
    uint32_t i = 0;

    cJSON_ArrayForEach(v, routes) {
        const char *name = v->string ? v->string : "", *field = NULL;
        uint32_t at = i++;
        const hl_rule_t *old;
        hl_quota_t q;
        size_t len;

        if (at >= HL_TABLE_MAX_ROUTES
            || !(c->skipped[at >> 3] & (1u << (at & 7))))
            continue;
        len = hl_route_from_name(route, sizeof(route), name, strlen(name));
        old = hl_table_lookup(c->prev, route, len);
        if (old == NULL || hl_table_lookup(c->t, route, len) != NULL
            || hl_table_put_rule(c->t, route, len, &old->quota, &old->plan) != 0)
            continue;
        c->nkept++;
        /* The entry again, silently: which field was at fault. */
        c->fn = NULL;
        (void)read_entry(c, name, v, &q, NULL, &field);
        c->fn = fn;
        hl_table_report(c, HL_PROBLEM_KEPT, name, field, "invalid entry skipped; the "
               "route keeps its rule from the table in force (%s)",
               hl_quota_windows(&old->quota, windows, sizeof(windows)));
    }
}
