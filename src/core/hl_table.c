/*
 * hl_table.c - the JSON quota table's image: layout, lookup of a route,
 * exempt list, plans (see hl_table.h and spec section 3). The document is
 * parsed into it by hl_table_parse.c, route entries by hl_table_entry.c;
 * the design of all three is described here.
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
#include <string.h>
#include "hl_align.h"
#include "hl_hash.h"
#include "hl_table.h"

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
int hl_table_ok(const hl_table_t *t)
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

/* Fills *v for t. Returns 1, or 0 when t is not a table (hl_table_ok) or its
 * sizes read now are not sane. */
static int view_of(const hl_table_t *t, table_view_t *v)
{
    uint32_t nb, nr;

    if (!hl_table_ok(t))
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

    if (ip == NULL || t == NULL || t->nexempt == 0 || !hl_table_ok(t))
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
int hl_table_put_rule(hl_table_t *t, const char *route, size_t len,
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

const hl_plan_t *hl_table_plan(const hl_table_t *t, const char *name,
                               size_t len)
{
    uint32_t i;

    if (!hl_table_ok(t) || name == NULL || len == 0 || len >= HL_PLAN_NAME_MAX)
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
