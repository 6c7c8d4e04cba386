/*
 * hl_table.c - the JSON quota table (see hl_table.h and spec section 3).
 *
 * Design: cJSON is used only inside hl_table_parse. The document is parsed,
 * checked as a whole (an object, "routes" an object of at most max_rules
 * entries), then each entry is read into a plain hl_quota_t, validated,
 * and copied into the image; the cJSON tree is freed before returning, so
 * no cJSON pointer outlives the parse.
 *
 * The image is one caller-supplied block, 8-byte aligned:
 *
 *   hl_table_t | uint32_t buckets[nbuckets] | hl_rule_t rules[max_rules]
 *
 * Rules are found through a hash index with separate chaining: a bucket
 * holds index + 1 of its first rule (0 = empty), each rule the next one in
 * `chain`. nbuckets is a power of two >= max_rules, so chains stay short
 * and a lookup costs one probe whatever the number of rules. The image
 * holds no pointers and may be copied or mapped anywhere.
 *
 * Problems are reported through the caller's callback with the route name
 * as written in the document and the JSON key at fault. An entry with any
 * invalid field is skipped as a whole (an ERROR); unknown keys and
 * duplicates are WARNINGs and the entry still applies.
 *
 * hl_table_parse_keep adds a carry-over for HotLimitTableFailure last-good:
 * the routes members skipped as invalid are remembered (one bit each), and
 * a second pass gives each such route that the new image lacks the rule it
 * has in the previous image (KEPT). Two passes, so that a valid entry of
 * the same route anywhere in the document wins.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <cJSON.h>
#include "hl_align.h"
#include "hl_conc.h"
#include "hl_hash.h"
#include "hl_table.h"

#define HL_INT_MAX     2147483647.0            /* counts stay below 2^31 */
#define HL_MSG_MAX     (HL_ERR_MAX + 128)

/* State of one hl_table_parse call. */
typedef struct {
    hl_table_t         *t;
    hl_table_report_fn *fn;
    void               *baton;
    int                 nerrors;    /* things skipped: entries, exempt
                                       blocks, settings, the document */
    const hl_table_t   *prev;       /* carry-over source, or NULL */
    int                 nkept;      /* rules carried over from prev */
    unsigned char       skipped[HL_TABLE_MAX_ROUTES / 8];
                                    /* bit i: routes member i was skipped
                                       as an invalid entry */
} parse_ctx_t;

/* ---- image layout ------------------------------------------------------ */

/* Returns the smallest power of two >= n (n <= HL_TABLE_MAX_ROUTES). */
static uint32_t buckets_for(uint32_t n)
{
    uint32_t b = 1;

    while (b < n)
        b <<= 1;
    return b;
}

/* Returns the byte offset of the bucket array in an image. */
static size_t buckets_offset(void)
{
    return hl_align8(sizeof(hl_table_t));
}

/* Returns the byte offset of the rule array of an image of nbuckets. */
static size_t rules_offset(uint32_t nbuckets)
{
    return buckets_offset() + hl_align8((size_t)nbuckets * sizeof(uint32_t));
}

/* Returns the bucket array of t (inside the image; t owns it). */
static const uint32_t *buckets_of(const hl_table_t *t)
{
    return (const uint32_t *)(const void *)((const char *)t + buckets_offset());
}

/* Returns the rule array of t (inside the image; t owns it). */
static const hl_rule_t *rules_of(const hl_table_t *t)
{
    return (const hl_rule_t *)(const void *)
        ((const char *)t + rules_offset(t->nbuckets));
}

/*
 * Returns the bytes of an image of max_rules rules; 0 when max_rules is 0
 * or above HL_TABLE_MAX_ROUTES (no such image can be built).
 */
size_t hl_table_size(uint32_t max_rules)
{
    if (max_rules < 1 || max_rules > HL_TABLE_MAX_ROUTES)
        return 0;
    return rules_offset(buckets_for(max_rules))
           + (size_t)max_rules * sizeof(hl_rule_t);
}

/*
 * Writes an empty, enabled table into mem: header and buckets zeroed, the
 * rules left as they are (each is written in full when added). Returns the
 * table, or NULL when mem is NULL or not 8-byte aligned, max_rules is out
 * of range, or size is below hl_table_size(max_rules). Never allocates.
 */
hl_table_t *hl_table_init(void *mem, size_t size, uint32_t max_rules)
{
    size_t need = hl_table_size(max_rules);
    hl_table_t *t = mem;
    uint32_t nb;

    if (mem == NULL || need == 0 || size < need
        || ((uintptr_t)mem & 7) != 0)
        return NULL;
    nb = buckets_for(max_rules);
    memset(mem, 0, rules_offset(nb));
    t->magic = HL_TABLE_MAGIC;
    t->version = HL_TABLE_VERSION;
    t->enabled = 1;
    t->has_global = 0;
    hl_quota_init(&t->global);
    t->nrules = 0;
    t->max_rules = max_rules;
    t->nbuckets = nb;
    t->nexempt = 0;
    t->digest = 0;
    return t;
}

/* Returns 1 if t looks like an image built here (magic, sane sizes). */
static int table_ok(const hl_table_t *t)
{
    return t != NULL && t->magic == HL_TABLE_MAGIC
           && t->version == HL_TABLE_VERSION
           && t->nbuckets != 0 && (t->nbuckets & (t->nbuckets - 1)) == 0
           && t->nrules <= t->max_rules;
}

/* Returns the fixed-seed hash of a route (len bytes). */
uint64_t hl_table_route_hash(const char *route, size_t len)
{
    return hl_hash64(route, len, HL_SEED_TABLE);
}

/* Where one lookup reads an image: its sizes read once, so that a reader
 * racing a rewrite of the image (hl_table_init zeroes the header first;
 * the lock-free reader sees the rewrite afterwards and reads again) never
 * indexes with a size it did not check. */
typedef struct {
    const uint32_t  *buckets;
    const hl_rule_t *rules;
    uint32_t         mask;     /* nbuckets - 1 */
    uint32_t         nrules;
} table_view_t;

/* Fills *v for t. Returns 1, or 0 when t is not a table (table_ok) or its
 * sizes read now are not sane. */
static int view_of(const hl_table_t *t, table_view_t *v)
{
    uint32_t nb, nr;

    if (!table_ok(t))
        return 0;
    nb = __atomic_load_n(&t->nbuckets, __ATOMIC_RELAXED);
    nr = __atomic_load_n(&t->nrules, __ATOMIC_RELAXED);
    if (nb == 0 || (nb & (nb - 1)) != 0 || nr > t->max_rules)
        return 0;
    v->buckets = buckets_of(t);
    v->rules = (const hl_rule_t *)(const void *)((const char *)t + rules_offset(nb));
    v->mask = nb - 1;
    v->nrules = nr;
    return 1;
}

/*
 * Returns the rule named route (len bytes, 0 < len < HL_TABLE_ROUTE_MAX,
 * hl_table_route_hash h) in the image seen as v, or NULL. Walks one chain;
 * a damaged chain (index out of range, or longer than nrules) ends the
 * walk.
 */
static const hl_rule_t *lookup_hashed(const table_view_t *v, const char *route,
                                      size_t len, uint64_t h)
{
    uint32_t idx = v->buckets[h & v->mask], steps = 0;

    while (idx != 0 && idx <= v->nrules && steps++ < v->nrules) {
        const hl_rule_t *r = &v->rules[idx - 1];

        if (r->hash == h && memcmp(r->route, route, len) == 0
            && r->route[len] == '\0')
            return r;
        idx = r->chain;
    }
    return NULL;
}

const hl_rule_t *hl_table_lookup(const hl_table_t *t, const char *route,
                                 size_t len)
{
    table_view_t v;

    if (route == NULL || len == 0 || len >= HL_TABLE_ROUTE_MAX
        || !view_of(t, &v))
        return NULL;
    return lookup_hashed(&v, route, len, hl_table_route_hash(route, len));
}

/* Writes into lens[] the lengths of the candidates route (len bytes) and
 * its parents (hl_route_parent's), longest first, and into states[] their
 * unfinished hashes (hl_hash64_begin(HL_SEED_TABLE) fed with the
 * candidate), in one pass over route. whole: 0 when route itself is not a
 * candidate (only its parents). Returns the number written (at most
 * len / 2 + 1). */
static int route_candidates(const char *route, size_t len, int whole,
                            size_t *lens, uint64_t *states)
{
    uint64_t h = hl_hash64_begin(HL_SEED_TABLE);
    int n = 0, i, j;
    size_t k;

    for (k = 0; k < len; ++k) {
        if (route[k] == '/' && k > 0) {     /* the parent route[0 .. k) */
            lens[n] = k;
            states[n++] = h;
        }
        h = hl_hash64_byte(h, (unsigned char)route[k]);
    }
    if (whole) {
        lens[n] = len;
        states[n++] = h;
    }
    for (i = 0, j = n - 1; i < j; ++i, --j) {  /* longest first */
        size_t l = lens[i];
        uint64_t s = states[i];
        lens[i] = lens[j];
        states[i] = states[j];
        lens[j] = l;
        states[j] = s;
    }
    return n;
}

/*
 * Tries route and then each parent (hl_route_parent), one probe each,
 * hashing route once for all of them. route may be up to HL_ROUTE_MAX - 1
 * bytes; a longer string is read only up to that point and only its
 * parents that lie inside are tried. Returns the first rule found, or NULL.
 */
const hl_rule_t *hl_table_match(const hl_table_t *t, const char *route)
{
    size_t lens[HL_ROUTE_MAX / 2 + 1], len;
    uint64_t states[HL_ROUTE_MAX / 2 + 1];
    table_view_t v;
    int n, i, cut = 0;

    if (route == NULL || !view_of(t, &v))
        return NULL;
    len = strnlen(route, HL_ROUTE_MAX);
    if (len >= HL_ROUTE_MAX) {      /* not a normalised route: use parents */
        len = HL_ROUTE_MAX - 1;
        cut = 1;
    }
    n = route_candidates(route, len, !cut, lens, states);
    for (i = 0; i < n; ++i) {
        const hl_rule_t *r;

        if (lens[i] == 0 || lens[i] >= HL_TABLE_ROUTE_MAX)
            continue;
        r = lookup_hashed(&v, route, lens[i], hl_hash64_end(states[i]));
        if (r != NULL)
            return r;
    }
    return NULL;
}

/* Returns 1 if address ip lies in one of t's exempt blocks, else 0. */
int hl_table_exempt(const hl_table_t *t, const hl_cidr_t *ip)
{
    uint32_t i;

    if (ip == NULL || t == NULL || t->nexempt == 0 || !table_ok(t))
        return 0;
    for (i = 0; i < t->nexempt && i < HL_TABLE_MAX_EXEMPT; i++) {
        if (hl_cidr_match(&t->exempt[i], ip))
            return 1;
    }
    return 0;
}

const hl_rule_t *hl_table_rule(const hl_table_t *t, uint32_t i)
{
    if (i >= t->nrules || i >= t->max_rules)
        return NULL;
    return &rules_of(t)[i];
}

/* Adds or replaces the rule route (len bytes, < HL_TABLE_ROUTE_MAX) with q
 * and plan selector sel. Returns 1 if it replaced an earlier rule, 0 if
 * added, -1 when full. */
static int put_rule(hl_table_t *t, const char *route, size_t len,
                    const hl_quota_t *q, const hl_plan_sel_t *sel)
{
    hl_rule_t *rules = (hl_rule_t *)(void *)
        ((char *)t + rules_offset(t->nbuckets));
    uint32_t *buckets = (uint32_t *)(void *)((char *)t + buckets_offset());
    hl_rule_t *r = (hl_rule_t *)hl_table_lookup(t, route, len);
    uint32_t b;

    if (r != NULL) {
        r->quota = *q;
        r->plan = *sel;
        return 1;
    }
    if (t->nrules >= t->max_rules)
        return -1;
    r = &rules[t->nrules];
    memset(r, 0, sizeof(*r));
    memcpy(r->route, route, len);
    r->route[len] = '\0';
    r->hash = hl_table_route_hash(route, len);
    r->quota = *q;
    r->plan = *sel;
    b = (uint32_t)(r->hash & (t->nbuckets - 1));
    r->chain = buckets[b];
    buckets[b] = ++t->nrules;       /* index + 1 of the new rule */
    return 0;
}

/* ---- reporting ---------------------------------------------------------- */

/* Formats a problem and hands it to the caller's callback. Counting what
 * is skipped is up to the caller (one entry may have several problems). */
static void report(parse_ctx_t *c, hl_problem_t sev, const char *route,
                   const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void report(parse_ctx_t *c, hl_problem_t sev, const char *route,
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
static const char *json_kind(const cJSON *v)
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
static int json_count(const cJSON *v, const char *key, double max,
                      uint32_t *out, char *err, size_t errlen)
{
    double d;

    if (!cJSON_IsNumber(v)) {
        snprintf(err, errlen, "'%s' must be a positive whole number, not %s",
                 key, json_kind(v));
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
static int json_bool(const cJSON *v, const char *key, char *err, size_t errlen)
{
    if (!cJSON_IsBool(v)) {
        snprintf(err, errlen, "'%s' must be true or false, not %s",
                 key, json_kind(v));
        return -1;
    }
    return cJSON_IsTrue(v) ? 1 : 0;
}

/* ---- route entries ------------------------------------------------------ */

/* The fields of one entry as read, before they are combined. */
typedef struct {
    hl_quota_t q;           /* by, algo, burst, dry_run, windows of limits */
    hl_plan_sel_t sel;      /* "plan" */
    int        has_limits;
    int        has_max;
    int        has_window;
    uint32_t   max;
    uint32_t   window_ms;
} entry_t;

/*
 * Reads "limits" (a non-empty array of COUNT/WINDOW strings, at most
 * HL_MAX_WINDOWS, no two of the same length) into e->q.windows.
 * Returns 0, or -1 with a message in err.
 */
static int read_limits(entry_t *e, const cJSON *v, char *err, size_t errlen)
{
    const cJSON *it;
    char werr[HL_ERR_MAX];
    int n = 0;

    if (!cJSON_IsArray(v)) {
        snprintf(err, errlen, "'limits' must be an array of COUNT/WINDOW "
                 "strings (e.g. [\"5/1m\", \"30/1h\"]), not %s", json_kind(v));
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
                     "(e.g. \"5/1m\"), not %s", n, json_kind(it));
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
static int read_window(const cJSON *v, uint32_t *ms, char *err, size_t errlen)
{
    uint32_t secs;

    if (cJSON_IsString(v))
        return hl_parse_duration_ms(v->valuestring, 1000, ms, err, errlen);
    if (!cJSON_IsNumber(v)) {
        snprintf(err, errlen, "'window' must be a number of seconds or a "
                 "duration string (e.g. 60 or \"1m\"), not %s", json_kind(v));
        return -1;
    }
    if (json_count(v, "window", (double)(HL_MAX_WINDOW_MS / 1000), &secs,
                   err, errlen) != 0)
        return -1;
    *ms = secs * 1000u;
    return 0;
}

/* Returns 1 if the n bytes of s are a header or variable name: letters,
 * digits and "-_.", not empty, shorter than HL_BY_NAME_MAX. */
static int is_selector_name(const char *s, size_t n)
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
                 s ? s : json_kind(v), s ? "'" : "");
        return -1;
    }
    if (!is_selector_name(name, strlen(name))) {
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
static int read_field(entry_t *e, const char *key, const cJSON *v,
                      char *err, size_t errlen)
{
    int b;

    if (strcmp(key, "limits") == 0) {
        e->has_limits = 1;
        return read_limits(e, v, err, errlen);
    }
    if (strcmp(key, "max") == 0) {
        e->has_max = 1;
        return json_count(v, "max", HL_INT_MAX, &e->max, err, errlen);
    }
    if (strcmp(key, "window") == 0) {
        e->has_window = 1;
        return read_window(v, &e->window_ms, err, errlen);
    }
    if (strcmp(key, "burst") == 0)
        return json_count(v, "burst", HL_INT_MAX, &e->q.burst, err, errlen);
    if (strcmp(key, "cost") == 0 && cJSON_IsNumber(v) && v->valuedouble == 1)
        return hl_quota_set_cost(&e->q, "1", err, errlen);
    if (strcmp(key, "by") == 0 || strcmp(key, "algo") == 0
        || strcmp(key, "cost") == 0 || strcmp(key, "norm") == 0) {
        if (!cJSON_IsString(v)) {
            snprintf(err, errlen, "'%s' must be a string, not %s", key,
                     json_kind(v));
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
                     "string, not %s", json_kind(v));
            return -1;
        }
        return hl_quota_set_reserve(&e->q, v->valuestring, err, errlen);
    }
    if (strcmp(key, "plan") == 0)
        return read_plan_selector(v, &e->sel, err, errlen);
    if (strcmp(key, "concurrency") == 0)
        return json_count(v, "concurrency", HL_CONC_LIMIT_MAX,
                          &e->q.concurrency, err, errlen);
    if (strcmp(key, "dry_run") == 0) {
        b = json_bool(v, "dry_run", err, errlen);
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
static int read_entry(parse_ctx_t *c, const char *name, const cJSON *v,
                      hl_quota_t *q, hl_plan_sel_t *sel, const char **bad_field)
{
    char err[HL_ERR_MAX];
    const char *first = NULL, *field;
    const cJSON *f;
    unsigned seen = 0;
    entry_t e;
    int bad = 0, rc;

    if (!cJSON_IsObject(v)) {
        report(c, HL_PROBLEM_ERROR, name, NULL, "entry must be an object "
               "(e.g. {\"limits\": [\"5/1m\"]}), not %s", json_kind(v));
        goto skip;
    }
    memset(&e, 0, sizeof(e));
    hl_quota_init(&e.q);
    cJSON_ArrayForEach(f, v) {
        const char *key = f->string ? f->string : "";
        unsigned bit = key_bit(key);

        if (seen & bit)
            report(c, HL_PROBLEM_WARNING, name, key, "key '%s' given more "
                   "than once; the last one wins", key);
        seen |= bit;
        rc = read_field(&e, key, f, err, sizeof(err));
        if (rc > 0) {
            report(c, HL_PROBLEM_WARNING, name, key, "%s", err);
        } else if (rc < 0) {
            report(c, HL_PROBLEM_ERROR, name, key, "%s", err);
            if (!bad)
                first = key;
            bad = 1;
        }
    }
    /* Past the fields, `first` changes only if no field was at fault. */
    if (e.has_limits && (e.has_max || e.has_window)) {
        field = e.has_max ? "max" : "window";
        report(c, HL_PROBLEM_ERROR, name, field,
               "give either 'limits' or 'max' + 'window', not both");
        goto skip_at;
    }
    if (!e.has_limits && !e.has_max && !e.has_window) {
        field = NULL;
        report(c, HL_PROBLEM_ERROR, name, NULL, "no quota: give 'limits' "
               "(e.g. [\"5/1m\"]) or 'max' + 'window'");
        goto skip_at;
    }
    if (!e.has_limits && e.has_max != e.has_window) {
        field = e.has_max ? "window" : "max";
        report(c, HL_PROBLEM_ERROR, name, field,
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
        report(c, HL_PROBLEM_ERROR, name, field, "%s", err);
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
static void read_routes(parse_ctx_t *c, const cJSON *routes)
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
            report(c, HL_PROBLEM_ERROR, name, NULL, "empty route name");
            c->nerrors++;
            continue;
        }
        /* A result cut at HL_ROUTE_MAX - 1 is at least 252 bytes long, so
         * it is refused below like any name that does not fit a rule. */
        len = hl_route_from_name(route, sizeof(route), name, strlen(name));
        if (len >= HL_TABLE_ROUTE_MAX) {
            report(c, HL_PROBLEM_ERROR, name, NULL, "route name longer than "
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
            report(c, HL_PROBLEM_WARNING, name, "plan", "'plan' given, but "
                   "the table has no \"plans\": the route's own limits apply");
        if (put_rule(c->t, route, len, &q, &sel) == 1)
            report(c, HL_PROBLEM_WARNING, name, NULL, "same route as an "
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
static void keep_skipped(parse_ctx_t *c, const cJSON *routes)
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
            || put_rule(c->t, route, len, &old->quota, &old->plan) != 0)
            continue;
        c->nkept++;
        /* The entry again, silently: which field was at fault. */
        c->fn = NULL;
        (void)read_entry(c, name, v, &q, NULL, &field);
        c->fn = fn;
        report(c, HL_PROBLEM_KEPT, name, field, "invalid entry skipped; the "
               "route keeps its rule from the table in force (%s)",
               hl_quota_windows(&old->quota, windows, sizeof(windows)));
    }
}

/* ---- top level ---------------------------------------------------------- */

/* Reads the "exempt" array into c->t->exempt, skipping bad blocks. */
static void read_exempt(parse_ctx_t *c, const cJSON *v)
{
    hl_table_t *t = c->t;
    const cJSON *it;
    int i = 0, over = 0;

    if (!cJSON_IsArray(v)) {
        report(c, HL_PROBLEM_ERROR, NULL, "exempt", "'exempt' must be an "
               "array of CIDR strings (e.g. [\"10.0.0.0/8\"]), not %s; "
               "ignored", json_kind(v));
        c->nerrors++;
        return;
    }
    cJSON_ArrayForEach(it, v) {
        hl_cidr_t block;

        if (!cJSON_IsString(it)) {
            report(c, HL_PROBLEM_ERROR, NULL, "exempt", "exempt[%d] must be "
                   "a CIDR string, not %s; skipped", i, json_kind(it));
            c->nerrors++;
        } else if (hl_cidr_parse(it->valuestring, &block) != 0) {
            report(c, HL_PROBLEM_ERROR, NULL, "exempt", "bad CIDR '%.100s' "
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
        report(c, HL_PROBLEM_ERROR, NULL, "exempt", "more than %d exempt "
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
static void find_top(parse_ctx_t *c, const cJSON *doc, top_t *top)
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
            report(c, HL_PROBLEM_WARNING, NULL, key, "unknown key '%.100s' "
                   "ignored (use enabled, routes, exempt, ban, plans, or e, "
                   "m, t)", key);
            continue;
        }
        if (*slots[i] != NULL)
            report(c, HL_PROBLEM_WARNING, NULL, key, "key '%s' given more "
                   "than once; the last one wins", key);
        *slots[i] = v;
    }
}

/* Applies "enabled" and "e" (the kill switch). A bad value is an error and
 * leaves the table enabled; when both are valid but disagree, the switch
 * is off (a kill switch thrown either way is honoured), with a warning. */
static void read_switch(parse_ctx_t *c, const top_t *top)
{
    char err[HL_ERR_MAX];
    int on_enabled = -1, on_e = -1;

    if (top->enabled != NULL) {
        on_enabled = json_bool(top->enabled, "enabled", err, sizeof(err));
        if (on_enabled < 0) {
            report(c, HL_PROBLEM_ERROR, NULL, "enabled", "%s; the table "
                   "stays enabled", err);
            c->nerrors++;
        }
    }
    if (top->e != NULL) {
        on_e = json_bool(top->e, "e", err, sizeof(err));
        if (on_e < 0) {
            report(c, HL_PROBLEM_ERROR, NULL, "e", "%s; the table stays "
                   "enabled", err);
            c->nerrors++;
        }
    }
    if (on_enabled >= 0 && on_e >= 0 && on_enabled != on_e) {
        report(c, HL_PROBLEM_WARNING, NULL, "e", "'e' and 'enabled' "
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
static void read_global(parse_ctx_t *c, const top_t *top)
{
    char err[HL_ERR_MAX];
    uint32_t m = 0, t = 0;
    int ok = 1;

    if (top->m == NULL && top->t == NULL)
        return;
    if (top->m != NULL
        && json_count(top->m, "m", HL_INT_MAX, &m, err, sizeof(err)) != 0) {
        report(c, HL_PROBLEM_ERROR, NULL, "m", "%s; no global bucket", err);
        ok = 0;
    }
    if (top->t != NULL
        && json_count(top->t, "t", HL_INT_MAX, &t, err, sizeof(err)) != 0) {
        report(c, HL_PROBLEM_ERROR, NULL, "t", "%s ('t' is in "
               "milliseconds); no global bucket", err);
        ok = 0;
    }
    if (ok && (top->m == NULL || top->t == NULL)) {
        report(c, HL_PROBLEM_ERROR, NULL, top->m == NULL ? "m" : "t",
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
        report(c, HL_PROBLEM_ERROR, NULL, "t", "%s; no global bucket", err);
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
    if (read_window(v, ms, inner, sizeof(inner)) != 0) {
        snprintf(err, errlen, "'ban.%s': %.200s", name, inner);
        return -1;
    }
    return 0;
}

/* Applies the top-level "ban": {"after": N, "within": D, "for": D}
 * (HotLimitBan from the table). A bad value is an error and sets no ban. */
static void read_ban(parse_ctx_t *c, const cJSON *v)
{
    char err[HL_ERR_MAX];
    uint32_t after = 0, within = 0, span = 0;
    const cJSON *a;

    if (!cJSON_IsObject(v)) {
        snprintf(err, sizeof(err), "'ban' must be an object such as "
                 "{\"after\": 20, \"within\": \"10m\", \"for\": \"1h\"}, "
                 "not %s", json_kind(v));
        goto bad;
    }
    a = cJSON_GetObjectItemCaseSensitive(v, "after");
    if (a == NULL) {
        snprintf(err, sizeof(err), "'ban' needs 'after' (a count of refusals)");
        goto bad;
    }
    if (json_count(a, "ban.after", HL_INT_MAX, &after, err, sizeof(err)) != 0
        || read_ban_duration(cJSON_GetObjectItemCaseSensitive(v, "within"),
                             "within", &within, err, sizeof(err)) != 0
        || read_ban_duration(cJSON_GetObjectItemCaseSensitive(v, "for"),
                             "for", &span, err, sizeof(err)) != 0
        || hl_ban_set(&c->t->ban, after, within, span, err, sizeof(err)) != 0)
        goto bad;
    c->t->has_ban = 1;
    return;
bad:
    report(c, HL_PROBLEM_ERROR, NULL, "ban", "%s; no ban", err);
    c->nerrors++;
}

/* ---- plans -------------------------------------------------------------- */

/*
 * Reads one plan object v named name into *p: "limits" or "max" +
 * "window" (as a route entry), and "concurrency". Reports each problem
 * with the route "plans.NAME". Returns 0, or -1 when the plan is skipped.
 */
static int read_plan(parse_ctx_t *c, const char *name, const cJSON *v,
                     hl_plan_t *p)
{
    char err[HL_ERR_MAX], where[HL_PLAN_NAME_MAX + 8];
    const cJSON *f;
    entry_t e;
    int bad = 0;

    snprintf(where, sizeof(where), "plans.%s", name);
    if (!cJSON_IsObject(v)) {
        report(c, HL_PROBLEM_ERROR, where, NULL, "a plan must be an object "
               "(e.g. {\"limits\": [\"100/1m\"]}), not %s", json_kind(v));
        return -1;
    }
    memset(&e, 0, sizeof(e));
    memset(p, 0, sizeof(*p));
    cJSON_ArrayForEach(f, v) {
        const char *key = f->string ? f->string : "";
        int rc = 0;

        if (strcmp(key, "limits") == 0) {
            e.has_limits = 1;
            rc = read_limits(&e, f, err, sizeof(err));
        }
        else if (strcmp(key, "max") == 0) {
            e.has_max = 1;
            rc = json_count(f, "max", HL_INT_MAX, &e.max, err, sizeof(err));
        }
        else if (strcmp(key, "window") == 0) {
            e.has_window = 1;
            rc = read_window(f, &e.window_ms, err, sizeof(err));
        }
        else if (strcmp(key, "concurrency") == 0)
            rc = json_count(f, "concurrency", HL_CONC_LIMIT_MAX, &p->concurrency,
                            err, sizeof(err));
        else {
            report(c, HL_PROBLEM_WARNING, where, key, "unknown key '%.100s' "
                   "ignored (a plan has limits, max, window, concurrency)",
                   key);
            continue;
        }
        if (rc != 0) {
            report(c, HL_PROBLEM_ERROR, where, key, "%s", err);
            bad = 1;
        }
    }
    if (bad)
        return -1;
    if (e.has_limits == (e.has_max || e.has_window)
        || (!e.has_limits && e.has_max != e.has_window)) {
        report(c, HL_PROBLEM_ERROR, where, NULL, "give either 'limits' or "
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
static void read_plans(parse_ctx_t *c, const cJSON *plans)
{
    const cJSON *v;

    if (!cJSON_IsObject(plans)) {
        report(c, HL_PROBLEM_ERROR, NULL, "plans", "'plans' must be an object "
               "of plan name to limits, not %s", json_kind(plans));
        c->nerrors++;
        return;
    }
    cJSON_ArrayForEach(v, plans) {
        const char *name = v->string ? v->string : "";
        size_t n = strlen(name);

        if (n == 0 || n >= HL_PLAN_NAME_MAX || !is_selector_name(name, n)) {
            report(c, HL_PROBLEM_ERROR, NULL, "plans", "bad plan name "
                   "'%.100s': 1 to %d letters, digits, '-', '_' or '.'", name,
                   HL_PLAN_NAME_MAX - 1);
            c->nerrors++;
            continue;
        }
        if (hl_table_plan(c->t, name, n) != NULL) {
            report(c, HL_PROBLEM_WARNING, NULL, "plans", "plan '%s' given "
                   "more than once; the first one applies", name);
            continue;
        }
        if (c->t->nplans >= HL_TABLE_MAX_PLANS) {
            report(c, HL_PROBLEM_ERROR, NULL, "plans", "more than %d plans; "
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

const hl_plan_t *hl_table_plan(const hl_table_t *t, const char *name,
                               size_t len)
{
    uint32_t i;

    if (!table_ok(t) || name == NULL || len == 0 || len >= HL_PLAN_NAME_MAX)
        return NULL;
    for (i = 0; i < t->nplans && i < HL_TABLE_MAX_PLANS; i++)
        if (strncmp(t->plans[i].name, name, len) == 0
            && t->plans[i].name[len] == '\0')
            return &t->plans[i];
    return NULL;
}

void hl_table_plan_quota(const hl_quota_t *base, const hl_plan_t *p,
                         hl_quota_t *q)
{
    int n = p->nwindows;

    *q = *base;
    if (n < 1 || n > HL_MAX_WINDOWS)
        return;                 /* not from hl_table_parse: the route's */
    q->nwindows = n;
    memcpy(q->windows, p->windows, sizeof(p->windows[0]) * (size_t)n);
    if (p->concurrency)         /* HotLimitConcurrency: the plan's, if any */
        q->concurrency = p->concurrency;
}

/* Reports where cJSON stopped in doc (len bytes) as line and column. */
static void report_syntax(parse_ctx_t *c, const char *doc, size_t len,
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
    report(c, HL_PROBLEM_ERROR, NULL, NULL, "%s near line %zu, column %zu "
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
    parse_ctx_t c;
    const char *end = NULL;
    cJSON *root = NULL;
    top_t top;
    size_t i;
    int rc = -1;

    c.t = hl_table_init(mem, size, max_rules);
    c.fn = report_fn;
    c.baton = baton;
    c.nerrors = 0;
    c.prev = table_ok(prev) ? prev : NULL;
    c.nkept = 0;
    memset(c.skipped, 0, sizeof(c.skipped));
    if (c.t == NULL) {
        report(&c, HL_PROBLEM_ERROR, NULL, NULL, "no room for the table "
               "image (%zu bytes given, %zu needed)", size,
               hl_table_size(max_rules));
        goto done;
    }
    if (doc == NULL)
        len = 0;
    if (len > HL_TABLE_MAX_DOC) {
        report(&c, HL_PROBLEM_ERROR, NULL, NULL, "document of %zu bytes is "
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
        report(&c, HL_PROBLEM_ERROR, NULL, NULL, "the document must be a JSON "
               "object (e.g. {\"routes\": {...}}), not %s", json_kind(root));
        goto done;
    }
    find_top(&c, root, &top);
    if (top.routes != NULL && !cJSON_IsObject(top.routes)) {
        report(&c, HL_PROBLEM_ERROR, NULL, "routes", "'routes' must be an "
               "object of route name to entry, not %s", json_kind(top.routes));
        goto done;
    }
    if (top.routes != NULL
        && (uint32_t)cJSON_GetArraySize(top.routes) > max_rules) {
        report(&c, HL_PROBLEM_ERROR, NULL, "routes", "%d routes, more than "
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
        read_routes(&c, top.routes);
    if (top.routes != NULL && c.prev != NULL)
        keep_skipped(&c, top.routes);
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
