/*
 * hl_table.h - the JSON quota table (spec section 3): parsing a document
 * into a flat, pointer-free image, and looking routes up in it.
 *
 * The image is what the reloader publishes in shared memory for every
 * child: fixed-size rules with their route inline, a hash index of 32-bit
 * slot numbers, the exempt blocks and the kill switch. No cJSON pointer
 * outlives hl_table_parse. Lookup cost does not depend on the number of
 * routes: one hash probe per candidate route.
 */
#ifndef HL_TABLE_H
#define HL_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include "hl_quota.h"
#include "hl_cidr.h"
#include "hl_route.h"
#include "hl_ban.h"

#define HL_TABLE_MAGIC      0x484c5442u   /* "HLTB" */
#define HL_TABLE_VERSION    4u            /* 2: cost_name, ban; 3: plans; 4: concurrency */
#define HL_TABLE_MAX_ROUTES 16384         /* rules per table */
#define HL_TABLE_MAX_EXEMPT 256           /* exempt blocks per table */
#define HL_TABLE_MAX_DOC    (8u << 20)    /* largest document accepted */
#define HL_TABLE_ROUTE_MAX  128           /* bytes of a rule's route, NUL incl. */
#define HL_TABLE_GLOBAL_ROUTE "*"         /* route name of the e/m/t bucket */
#define HL_TABLE_MAX_PLANS  32            /* "plans" per table */
#define HL_PLAN_NAME_MAX    48            /* bytes of a plan's name, NUL incl. */

/* Where a route's "plan" selector reads the plan's name of a request. */
typedef enum {
    HL_PLAN_FROM_NONE = 0,    /* no "plan": the route's own limits */
    HL_PLAN_FROM_ENV,         /* "env:NAME": a variable (SetEnvIf, auth) */
    HL_PLAN_FROM_HEADER       /* "header:NAME": a request header */
} hl_plan_from_t;

/* A route's "plan" selector. */
typedef struct {
    uint32_t from;                        /* hl_plan_from_t */
    char     name[HL_BY_NAME_MAX];        /* the variable or header */
} hl_plan_sel_t;

/* One of the table's "plans": limits that replace a route's own for the
 * requests whose selector names it. */
typedef struct {
    char        name[HL_PLAN_NAME_MAX];   /* NUL-terminated */
    int32_t     nwindows;                 /* 1..HL_MAX_WINDOWS */
    hl_window_t windows[HL_MAX_WINDOWS];
    uint32_t    concurrency;              /* "concurrency", 0 = none */
} hl_plan_t;

typedef struct {
    char       route[HL_TABLE_ROUTE_MAX];  /* normalised, NUL-terminated */
    uint32_t   chain;                      /* next rule in bucket: index+1 */
    uint32_t   pad;
    uint64_t   hash;
    hl_quota_t quota;                      /* quota.dry_run: -1/0/1 */
    hl_plan_sel_t plan;                    /* "plan": where a request's
                                              plan name comes from */
} hl_rule_t;

/* The image: this header, then uint32_t buckets[nbuckets], then
 * hl_rule_t rules[max_rules]. Build it with hl_table_parse. */
typedef struct {
    uint32_t   magic;
    uint32_t   version;
    uint32_t   enabled;          /* 0: kill switch, admit everything */
    uint32_t   has_global;       /* 1: the compact e/m/t global bucket */
    hl_quota_t global;           /* by=global, one window (m per t ms) */
    uint32_t   nrules;
    uint32_t   max_rules;
    uint32_t   nbuckets;         /* power of two */
    uint32_t   nexempt;
    hl_cidr_t  exempt[HL_TABLE_MAX_EXEMPT];
    uint64_t   digest;           /* hl_table_digest of the document parsed
                                    (0 in an image from hl_table_init) */
    uint32_t   has_ban;          /* 1: "ban" given, overrides HotLimitBan */
    uint32_t   pad;
    hl_ban_t   ban;
    uint32_t   nplans;           /* "plans", in document order */
    uint32_t   pad2;
    hl_plan_t  plans[HL_TABLE_MAX_PLANS];
} hl_table_t;

/* Severity of a problem reported while parsing. */
typedef enum {
    HL_PROBLEM_WARNING = 0,   /* applied anyway (unknown key, duplicate) */
    HL_PROBLEM_ERROR,         /* entry skipped, or whole document refused */
    HL_PROBLEM_KEPT           /* a skipped entry's route keeps its rule from
                                 the previous table (hl_table_parse_keep) */
} hl_problem_t;

/*
 * Receives each problem: route is the route name as written in the
 * document (NULL for document-level problems), field the JSON key at fault
 * (NULL when none), msg a one-line explanation. Strings are valid only
 * during the call.
 */
typedef void hl_table_report_fn(void *baton, hl_problem_t severity,
                                const char *route, const char *field,
                                const char *msg);

/* Returns the bytes of an image holding max_rules rules (>= 1). */
size_t hl_table_size(uint32_t max_rules);

/* Makes mem (size bytes from hl_table_size(max_rules)) an empty, enabled
 * table. Returns the table, or NULL when size is too small. */
hl_table_t *hl_table_init(void *mem, size_t size, uint32_t max_rules);

/* Returns the rule named exactly route (normalised, len bytes), or NULL. */
const hl_rule_t *hl_table_lookup(const hl_table_t *t, const char *route,
                                 size_t len);

/*
 * Returns the first rule among the candidates of route (normalised): the
 * route itself, then each parent down to its first segment ("/user");
 * "/" is a candidate only of "/" itself. NULL when none matches.
 */
const hl_rule_t *hl_table_match(const hl_table_t *t, const char *route);

/* Returns rule i of t (0 .. t->nrules - 1, in the order they were first
 * added), or NULL when there is no such rule. The table owns it. */
const hl_rule_t *hl_table_rule(const hl_table_t *t, uint32_t i);

/* Returns the plan named name (len bytes, compared exactly), or NULL when
 * the table has none of that name. The table owns it. */
const hl_plan_t *hl_table_plan(const hl_table_t *t, const char *name,
                               size_t len);

/* Sets *q to rule quota base with the windows of plan p, and p's
 * concurrency when it has one: what a request of base's route counts
 * under when its selector names p (by, algo and the rest stay the
 * route's). Never fails. */
void hl_table_plan_quota(const hl_quota_t *base, const hl_plan_t *p,
                         hl_quota_t *q);

/* Returns 1 if address ip is in the table's exempt list. */
int hl_table_exempt(const hl_table_t *t, const hl_cidr_t *ip);

/* Returns the hash of a route or counted scope (len bytes): the one a rule
 * of route carries in hl_rule_t.hash, and the hash of a scope (a quota's,
 * a ban's) and of a virtual host's tag that eviction classes and
 * statistics are made of (hl_limiter_class_of). Fixed, so it may name a
 * route anywhere; persisted with the slot table and the statistics. */
uint64_t hl_table_route_hash(const char *route, size_t len);

/* For the parser (hl_table_entry.c, hl_table_parse.c): */

/* Returns 1 if t looks like an image built here (magic, sane sizes). */
int hl_table_ok(const hl_table_t *t);

/* Adds or replaces the rule route (len bytes, < HL_TABLE_ROUTE_MAX) with q
 * and plan selector sel. Returns 1 if it replaced an earlier rule, 0 if
 * added, -1 when full. */
int hl_table_put_rule(hl_table_t *t, const char *route, size_t len,
                      const hl_quota_t *q, const hl_plan_sel_t *sel);

#endif
