/*
 * hl_table_parse.c - a JSON quota table document parsed into an image (see
 * hl_table_parse.h; design in hl_table.c): the document as a whole, its
 * top-level members ("exempt", "enabled", "global", "ban", "plans"), and
 * the carry-over of HotLimitTableFailure last-good. Route entries are read
 * by hl_table_entry.c.
 */
#include <stdio.h>
#include <string.h>
#include <cJSON.h>
#include "hl_conc.h"
#include "hl_hash.h"
#include "hl_table_entry.h"
#include "hl_table_parse.h"

/* ---- top level ---------------------------------------------------------- */

/* Reads the "exempt" array into c->t->exempt, skipping bad blocks. */
static void read_exempt(hl_table_ctx_t *c, const cJSON *v)
{
    hl_table_t *t = c->t;
    const cJSON *it;
    int i = 0, over = 0;

    if (!cJSON_IsArray(v)) {
        hl_table_report(c, HL_PROBLEM_ERROR, NULL, "exempt", "'exempt' must be an "
               "array of CIDR strings (e.g. [\"10.0.0.0/8\"]), not %s; "
               "ignored", hl_table_json_kind(v));
        c->nerrors++;
        return;
    }
    cJSON_ArrayForEach(it, v) {
        hl_cidr_t block;

        if (!cJSON_IsString(it)) {
            hl_table_report(c, HL_PROBLEM_ERROR, NULL, "exempt", "exempt[%d] must be "
                   "a CIDR string, not %s; skipped", i, hl_table_json_kind(it));
            c->nerrors++;
        } else if (hl_cidr_parse(it->valuestring, &block) != 0) {
            hl_table_report(c, HL_PROBLEM_ERROR, NULL, "exempt", "bad CIDR '%.100s' "
                   "(e.g. 10.0.0.0/8 or 2001:db8::/32); skipped",
                   it->valuestring);
            c->nerrors++;
        } else if (t->nexempt >= HL_TABLE_MAX_EXEMPT) {
            over++;
        } else {
            t->exempt[t->nexempt++] = block;
        }
        i++;
    }
    c->nerrors += over;
    if (over > 0)
        hl_table_report(c, HL_PROBLEM_ERROR, NULL, "exempt", "more than %d exempt "
               "blocks; the last %d skipped", HL_TABLE_MAX_EXEMPT, over);
}

/* The top-level members of a document, found once each. */
typedef struct {
    const cJSON *enabled, *e, *m, *t, *routes, *exempt, *ban, *plans;
} top_t;

/*
 * Sorts the members of the object doc into *top, warning about unknown and
 * repeated keys (the last one wins, as in most JSON readers).
 */
static void find_top(hl_table_ctx_t *c, const cJSON *doc, top_t *top)
{
    static const char *const names[] = {
        "enabled", "e", "m", "t", "routes", "exempt", "ban", "plans"
    };
    const cJSON **slots[8];
    const cJSON *v;
    size_t i;

    memset(top, 0, sizeof(*top));
    slots[0] = &top->enabled;
    slots[1] = &top->e;
    slots[2] = &top->m;
    slots[3] = &top->t;
    slots[4] = &top->routes;
    slots[5] = &top->exempt;
    slots[6] = &top->ban;
    slots[7] = &top->plans;
    cJSON_ArrayForEach(v, doc) {
        const char *key = v->string ? v->string : "";

        for (i = 0; i < 8; i++) {
            if (strcmp(key, names[i]) == 0)
                break;
        }
        if (i == 8) {
            hl_table_report(c, HL_PROBLEM_WARNING, NULL, key, "unknown key '%.100s' "
                   "ignored (use enabled, routes, exempt, ban, plans, or e, "
                   "m, t)", key);
            continue;
        }
        if (*slots[i] != NULL)
            hl_table_report(c, HL_PROBLEM_WARNING, NULL, key, "key '%s' given more "
                   "than once; the last one wins", key);
        *slots[i] = v;
    }
}

/* Applies "enabled" and "e" (the kill switch). A bad value is an error and
 * leaves the table enabled; when both are valid but disagree, the switch
 * is off (a kill switch thrown either way is honoured), with a warning. */
static void read_switch(hl_table_ctx_t *c, const top_t *top)
{
    char err[HL_ERR_MAX];
    int on_enabled = -1, on_e = -1;

    if (top->enabled != NULL) {
        on_enabled = hl_table_json_bool(top->enabled, "enabled", err, sizeof(err));
        if (on_enabled < 0) {
            hl_table_report(c, HL_PROBLEM_ERROR, NULL, "enabled", "%s; the table "
                   "stays enabled", err);
            c->nerrors++;
        }
    }
    if (top->e != NULL) {
        on_e = hl_table_json_bool(top->e, "e", err, sizeof(err));
        if (on_e < 0) {
            hl_table_report(c, HL_PROBLEM_ERROR, NULL, "e", "%s; the table stays "
                   "enabled", err);
            c->nerrors++;
        }
    }
    if (on_enabled >= 0 && on_e >= 0 && on_enabled != on_e) {
        hl_table_report(c, HL_PROBLEM_WARNING, NULL, "e", "'e' and 'enabled' "
               "disagree; the table is disabled");
        c->t->enabled = 0;
        return;
    }
    if (on_enabled >= 0)
        c->t->enabled = (uint32_t)on_enabled;
    if (on_e >= 0)
        c->t->enabled = (uint32_t)on_e;
}

/* Applies the compact "m" (requests) and "t" (milliseconds) global bucket;
 * both must be given and valid, else it is an error and no bucket is set. */
static void read_global(hl_table_ctx_t *c, const top_t *top)
{
    char err[HL_ERR_MAX];
    uint32_t m = 0, t = 0;
    int ok = 1;

    if (top->m == NULL && top->t == NULL)
        return;
    if (top->m != NULL
        && hl_table_json_count(top->m, "m", HL_TABLE_INT_MAX, &m, err, sizeof(err)) != 0) {
        hl_table_report(c, HL_PROBLEM_ERROR, NULL, "m", "%s; no global bucket", err);
        ok = 0;
    }
    if (top->t != NULL
        && hl_table_json_count(top->t, "t", HL_TABLE_INT_MAX, &t, err, sizeof(err)) != 0) {
        hl_table_report(c, HL_PROBLEM_ERROR, NULL, "t", "%s ('t' is in "
               "milliseconds); no global bucket", err);
        ok = 0;
    }
    if (ok && (top->m == NULL || top->t == NULL)) {
        hl_table_report(c, HL_PROBLEM_ERROR, NULL, top->m == NULL ? "m" : "t",
               "'m' (requests) and 't' (milliseconds) go together; '%s' is "
               "missing, no global bucket", top->m == NULL ? "m" : "t");
        ok = 0;
    }
    if (!ok) {
        c->nerrors++;
        return;
    }
    hl_quota_init(&c->t->global);
    c->t->global.nwindows = 1;
    c->t->global.windows[0].count = m;
    c->t->global.windows[0].window_ms = t;
    c->t->global.by = HL_BY_GLOBAL;
    c->t->global.algo = HL_ALGO_FIXED;
    if (hl_quota_validate(&c->t->global, err, sizeof(err)) != 0) {
        hl_table_report(c, HL_PROBLEM_ERROR, NULL, "t", "%s; no global bucket", err);
        hl_quota_init(&c->t->global);
        c->nerrors++;
        return;
    }
    c->t->has_global = 1;
}

/*
 * Reads one duration member of "ban" (a number of seconds or a string with
 * a unit, as "window"). Returns 0, or -1 with a message in err naming it.
 */
static int read_ban_duration(const cJSON *v, const char *name, uint32_t *ms,
                             char *err, size_t errlen)
{
    char inner[HL_ERR_MAX];

    if (v == NULL) {
        snprintf(err, errlen, "'ban' needs '%s' (e.g. \"10m\")", name);
        return -1;
    }
    if (hl_table_read_window(v, ms, inner, sizeof(inner)) != 0) {
        snprintf(err, errlen, "'ban.%s': %.200s", name, inner);
        return -1;
    }
    return 0;
}

/* Applies the top-level "ban": {"after": N, "within": D, "for": D}
 * (HotLimitBan from the table). A bad value is an error and sets no ban. */
static void read_ban(hl_table_ctx_t *c, const cJSON *v)
{
    char err[HL_ERR_MAX];
    uint32_t after = 0, within = 0, span = 0;
    const cJSON *a;

    if (!cJSON_IsObject(v)) {
        snprintf(err, sizeof(err), "'ban' must be an object such as "
                 "{\"after\": 20, \"within\": \"10m\", \"for\": \"1h\"}, "
                 "not %s", hl_table_json_kind(v));
        goto bad;
    }
    a = cJSON_GetObjectItemCaseSensitive(v, "after");
    if (a == NULL) {
        snprintf(err, sizeof(err), "'ban' needs 'after' (a count of refusals)");
        goto bad;
    }
    if (hl_table_json_count(a, "ban.after", HL_TABLE_INT_MAX, &after, err, sizeof(err)) != 0
        || read_ban_duration(cJSON_GetObjectItemCaseSensitive(v, "within"),
                             "within", &within, err, sizeof(err)) != 0
        || read_ban_duration(cJSON_GetObjectItemCaseSensitive(v, "for"),
                             "for", &span, err, sizeof(err)) != 0
        || hl_ban_set(&c->t->ban, after, within, span, err, sizeof(err)) != 0)
        goto bad;
    c->t->has_ban = 1;
    return;
bad:
    hl_table_report(c, HL_PROBLEM_ERROR, NULL, "ban", "%s; no ban", err);
    c->nerrors++;
}

/* ---- plans -------------------------------------------------------------- */

/*
 * Reads one plan object v named name into *p: "limits" or "max" +
 * "window" (as a route entry), and "concurrency". Reports each problem
 * with the route "plans.NAME". Returns 0, or -1 when the plan is skipped.
 */
static int read_plan(hl_table_ctx_t *c, const char *name, const cJSON *v,
                     hl_plan_t *p)
{
    char err[HL_ERR_MAX], where[HL_PLAN_NAME_MAX + 8];
    const cJSON *f;
    hl_table_entry_t e;
    int bad = 0;

    snprintf(where, sizeof(where), "plans.%s", name);
    if (!cJSON_IsObject(v)) {
        hl_table_report(c, HL_PROBLEM_ERROR, where, NULL, "a plan must be an object "
               "(e.g. {\"limits\": [\"100/1m\"]}), not %s", hl_table_json_kind(v));
        return -1;
    }
    memset(&e, 0, sizeof(e));
    memset(p, 0, sizeof(*p));
    cJSON_ArrayForEach(f, v) {
        const char *key = f->string ? f->string : "";
        int rc = 0;

        if (strcmp(key, "limits") == 0) {
            e.has_limits = 1;
            rc = hl_table_read_limits(&e, f, err, sizeof(err));
        }
        else if (strcmp(key, "max") == 0) {
            e.has_max = 1;
            rc = hl_table_json_count(f, "max", HL_TABLE_INT_MAX, &e.max, err, sizeof(err));
        }
        else if (strcmp(key, "window") == 0) {
            e.has_window = 1;
            rc = hl_table_read_window(f, &e.window_ms, err, sizeof(err));
        }
        else if (strcmp(key, "concurrency") == 0)
            rc = hl_table_json_count(f, "concurrency", HL_CONC_LIMIT_MAX, &p->concurrency,
                            err, sizeof(err));
        else {
            hl_table_report(c, HL_PROBLEM_WARNING, where, key, "unknown key '%.100s' "
                   "ignored (a plan has limits, max, window, concurrency)",
                   key);
            continue;
        }
        if (rc != 0) {
            hl_table_report(c, HL_PROBLEM_ERROR, where, key, "%s", err);
            bad = 1;
        }
    }
    if (bad)
        return -1;
    if (e.has_limits == (e.has_max || e.has_window)
        || (!e.has_limits && e.has_max != e.has_window)) {
        hl_table_report(c, HL_PROBLEM_ERROR, where, NULL, "give either 'limits' or "
               "'max' + 'window'");
        return -1;
    }
    if (!e.has_limits) {
        e.q.nwindows = 1;
        e.q.windows[0].count = e.max;
        e.q.windows[0].window_ms = e.window_ms;
    }
    p->nwindows = e.q.nwindows;
    memcpy(p->windows, e.q.windows, sizeof(p->windows));
    memcpy(p->name, name, strlen(name) + 1);
    return 0;
}

/* Reads the top-level "plans" object into c->t->plans; a plan with a bad
 * name or field is skipped (an error), the others apply. */
static void read_plans(hl_table_ctx_t *c, const cJSON *plans)
{
    const cJSON *v;

    if (!cJSON_IsObject(plans)) {
        hl_table_report(c, HL_PROBLEM_ERROR, NULL, "plans", "'plans' must be an object "
               "of plan name to limits, not %s", hl_table_json_kind(plans));
        c->nerrors++;
        return;
    }
    cJSON_ArrayForEach(v, plans) {
        const char *name = v->string ? v->string : "";
        size_t n = strlen(name);

        if (n == 0 || n >= HL_PLAN_NAME_MAX || !hl_table_is_selector_name(name, n)) {
            hl_table_report(c, HL_PROBLEM_ERROR, NULL, "plans", "bad plan name "
                   "'%.100s': 1 to %d letters, digits, '-', '_' or '.'", name,
                   HL_PLAN_NAME_MAX - 1);
            c->nerrors++;
            continue;
        }
        if (hl_table_plan(c->t, name, n) != NULL) {
            hl_table_report(c, HL_PROBLEM_WARNING, NULL, "plans", "plan '%s' given "
                   "more than once; the first one applies", name);
            continue;
        }
        if (c->t->nplans >= HL_TABLE_MAX_PLANS) {
            hl_table_report(c, HL_PROBLEM_ERROR, NULL, "plans", "more than %d plans; "
                   "'%s' and later ones skipped", HL_TABLE_MAX_PLANS, name);
            c->nerrors++;
            return;
        }
        if (read_plan(c, name, v, &c->t->plans[c->t->nplans]) != 0) {
            c->nerrors++;
            continue;
        }
        c->t->nplans++;
    }
}

static void report_syntax(hl_table_ctx_t *c, const char *doc, size_t len,
                          const char *at, const char *what)
{
    size_t pos = 0, i, line = 1, col = 1;

    if (at != NULL && at >= doc && at <= doc + len)
        pos = (size_t)(at - doc);
    for (i = 0; i < pos; i++) {
        if (doc[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    hl_table_report(c, HL_PROBLEM_ERROR, NULL, NULL, "%s near line %zu, column %zu "
           "(byte %zu)", what, line, col, pos);
}

/*
 * Parses doc into the image at mem: see hl_table.h. The image is
 * initialised first, so even on -1 it is an empty, enabled table (unless
 * mem itself was unusable). The cJSON tree is freed before returning.
 */
int hl_table_parse(void *mem, size_t size, uint32_t max_rules,
                   const char *doc, size_t len,
                   hl_table_report_fn *report_fn, void *baton, int *nerrors)
{
    return hl_table_parse_keep(mem, size, max_rules, doc, len, NULL,
                               report_fn, baton, nerrors, NULL);
}

uint64_t hl_table_digest(const char *doc, size_t len)
{
    return hl_hash64(doc, len, HL_SEED_TABLE);
}

/*
 * hl_table_parse with carry-over from prev: see hl_table.h. The carry-over
 * runs only on a usable document and only for entries of "routes".
 */
int hl_table_parse_keep(void *mem, size_t size, uint32_t max_rules,
                        const char *doc, size_t len, const hl_table_t *prev,
                        hl_table_report_fn *report_fn, void *baton,
                        int *nerrors, int *nkept)
{
    hl_table_ctx_t c;
    const char *end = NULL;
    cJSON *root = NULL;
    top_t top;
    size_t i;
    int rc = -1;

    c.t = hl_table_init(mem, size, max_rules);
    c.fn = report_fn;
    c.baton = baton;
    c.nerrors = 0;
    c.prev = hl_table_ok(prev) ? prev : NULL;
    c.nkept = 0;
    memset(c.skipped, 0, sizeof(c.skipped));
    if (c.t == NULL) {
        hl_table_report(&c, HL_PROBLEM_ERROR, NULL, NULL, "no room for the table "
               "image (%zu bytes given, %zu needed)", size,
               hl_table_size(max_rules));
        goto done;
    }
    if (doc == NULL)
        len = 0;
    if (len > HL_TABLE_MAX_DOC) {
        hl_table_report(&c, HL_PROBLEM_ERROR, NULL, NULL, "document of %zu bytes is "
               "larger than the %u bytes accepted", len, HL_TABLE_MAX_DOC);
        goto done;
    }
    c.t->digest = hl_table_digest(doc, len);
    if (len > 0)
        root = cJSON_ParseWithLengthOpts(doc, len, &end, 0);
    if (root == NULL) {
        report_syntax(&c, doc, len, end, len == 0 ? "empty document, not JSON"
                      : "not valid JSON");
        goto done;
    }
    for (i = (size_t)(end - doc); i < len; i++) {
        if (doc[i] != ' ' && doc[i] != '\t' && doc[i] != '\n'
            && doc[i] != '\r') {
            report_syntax(&c, doc, len, doc + i,
                          "not valid JSON: text after the end of the value");
            goto done;
        }
    }
    if (!cJSON_IsObject(root)) {
        hl_table_report(&c, HL_PROBLEM_ERROR, NULL, NULL, "the document must be a JSON "
               "object (e.g. {\"routes\": {...}}), not %s", hl_table_json_kind(root));
        goto done;
    }
    find_top(&c, root, &top);
    if (top.routes != NULL && !cJSON_IsObject(top.routes)) {
        hl_table_report(&c, HL_PROBLEM_ERROR, NULL, "routes", "'routes' must be an "
               "object of route name to entry, not %s", hl_table_json_kind(top.routes));
        goto done;
    }
    if (top.routes != NULL
        && (uint32_t)cJSON_GetArraySize(top.routes) > max_rules) {
        hl_table_report(&c, HL_PROBLEM_ERROR, NULL, "routes", "%d routes, more than "
               "the %u this table holds", cJSON_GetArraySize(top.routes),
               (unsigned)max_rules);
        goto done;
    }
    read_switch(&c, &top);
    read_global(&c, &top);
    if (top.ban != NULL)
        read_ban(&c, top.ban);
    if (top.exempt != NULL)
        read_exempt(&c, top.exempt);
    if (top.plans != NULL)
        read_plans(&c, top.plans);
    if (top.routes != NULL)
        hl_table_read_routes(&c, top.routes);
    if (top.routes != NULL && c.prev != NULL)
        hl_table_keep_skipped(&c, top.routes);
    rc = 0;
done:
    cJSON_Delete(root);
    if (rc != 0)
        c.nerrors++;            /* the whole document was skipped */
    if (nerrors != NULL)
        *nerrors = c.nerrors;
    if (nkept != NULL)
        *nkept = c.nkept;
    return rc;
}
