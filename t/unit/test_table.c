/*
 * test_table.c - unit tests of the JSON quota table (hl_table.c), printing
 * TAP: the spec example, dotted names, candidates, the kill switch, the
 * compact e/m/t form, every invalid field, whole-document failures, a
 * 10,000-route table whose lookup cost does not grow with its size, and
 * the carry-over of hl_table_parse_keep (last-good per route).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "hl_tap.h"
#include "hl_table.h"
#include "hl_table_parse.h"

/* ---- helpers ------------------------------------------------------------ */

#define MAX_PROBLEMS 64

/* One problem as reported by hl_table_parse (strings copied). */
typedef struct {
    hl_problem_t sev;
    int          has_route, has_field;
    char         route[300];
    char         field[64];
    char         msg[512];
} problem_t;

/* Problems collected by collect(). */
typedef struct {
    int       n;
    int       errors, warnings;
    problem_t p[MAX_PROBLEMS];
} problems_t;

/* hl_table_report_fn: copies each problem into the problems_t baton. */
static void collect(void *baton, hl_problem_t sev, const char *route,
                    const char *field, const char *msg)
{
    problems_t *ps = baton;
    problem_t *p;

    if (sev == HL_PROBLEM_ERROR)
        ps->errors++;
    else
        ps->warnings++;
    if (ps->n == MAX_PROBLEMS)
        return;
    p = &ps->p[ps->n++];
    p->sev = sev;
    p->has_route = route != NULL;
    p->has_field = field != NULL;
    snprintf(p->route, sizeof(p->route), "%s", route ? route : "");
    snprintf(p->field, sizeof(p->field), "%s", field ? field : "");
    snprintf(p->msg, sizeof(p->msg), "%s", msg ? msg : "");
}

/* Returns a calloc'd image for max_rules rules (size in *size); exits on OOM. */
static void *new_image(uint32_t max_rules, size_t *size)
{
    *size = hl_table_size(max_rules);
    return tap_calloc(*size);
}

static void *img;                /* shared 64-rule image */
static size_t img_size;
static problems_t probs;
static int nerr;

/* Parses doc (a C string) into the shared image; returns hl_table_parse's rc. */
static int parse(const char *doc)
{
    memset(&probs, 0, sizeof(probs));
    nerr = -1;
    return hl_table_parse(img, img_size, 64, doc, strlen(doc), collect,
                          &probs, &nerr);
}

/* Parses doc (a C string) into mem; returns hl_table_parse's rc. */
static int parse_in(void *mem, size_t size, uint32_t max_rules, const char *doc)
{
    memset(&probs, 0, sizeof(probs));
    nerr = -1;
    return hl_table_parse(mem, size, max_rules, doc, strlen(doc), collect,
                          &probs, &nerr);
}

static const hl_table_t *T(void)
{
    return img;
}

/* Returns the route of the rule matching route in the shared image, or NULL. */
static const char *match(const char *route)
{
    const hl_rule_t *r = hl_table_match(T(), route);

    return r ? r->route : NULL;
}

/* Returns the rule named route in the shared image, or NULL. */
static const hl_rule_t *rule(const char *route)
{
    return hl_table_lookup(T(), route, strlen(route));
}

/* Returns 1 if the address text is exempt in the shared image. */
static int exempt(const char *ip)
{
    hl_cidr_t a;

    return hl_ip_parse(ip, &a) == 0 && hl_table_exempt(T(), &a);
}

static const char spec_doc[] =
    "{\n"
    "  \"enabled\": true,\n"
    "  \"routes\": {\n"
    "    \"/user/login\":  { \"limits\": [\"5/1m\", \"30/1h\"] },\n"
    "    \"/user/sms\":    { \"max\": 1, \"window\": \"60s\" },\n"
    "    \"/api/chat\":    { \"limits\": [\"10/1m\", \"200/1d\"], "
    "\"by\": \"header:Authorization\" },\n"
    "    \"/api\":         { \"max\": 600, \"window\": 60, \"algo\": \"gcra\", "
    "\"burst\": 100 }\n"
    "  },\n"
    "  \"exempt\": [\"10.0.0.0/8\", \"2001:db8::/32\"]\n"
    "}\n";

/* ---- tests -------------------------------------------------------------- */

static void test_layout(void)
{
    char small[64] __attribute__((aligned(8)));
    void *mem;
    size_t size;

    is_int(hl_table_size(0), 0, "size: no image of 0 rules");
    is_int(hl_table_size(HL_TABLE_MAX_ROUTES + 1), 0,
           "size: no image above HL_TABLE_MAX_ROUTES");
    ok(hl_table_size(1) >= sizeof(hl_table_t) + 4 + sizeof(hl_rule_t),
       "size: header, a bucket and a rule");
    ok(hl_table_init(small, sizeof(small), 1) == NULL, "init: too small");
    ok(hl_table_init(NULL, 1 << 20, 1) == NULL, "init: NULL memory");
    mem = new_image(5, &size);
    ok(hl_table_init(mem, size - 1, 5) == NULL, "init: one byte short");
    ok(hl_table_init((char *)mem + 1, size, 5) == NULL, "init: misaligned");
    ok(hl_table_init(mem, size, 5) == mem, "init: exact size");
    is_int(((hl_table_t *)mem)->nbuckets, 8, "init: 8 buckets for 5 rules");
    is_int(((hl_table_t *)mem)->enabled, 1, "init: enabled");
    is_int(((hl_table_t *)mem)->nrules, 0, "init: empty");
    ok(hl_table_match(mem, "/user") == NULL, "init: empty table matches none");
    free(mem);
}

/* "cost": "header:NAME" (and "cost": 1 / "1") in a route entry. */
static void test_cost(void)
{
    const hl_rule_t *r;

    is_int(parse("{\"routes\": {\"/api/chat\": {\"limits\": [\"20000/1h\"], "
                 "\"by\": \"header:Authorization\", "
                 "\"cost\": \"header:X-LLM-Tokens\"}, "
                 "\"/one\": {\"max\": 5, \"window\": 60, \"cost\": 1}}}"),
           0, "cost: parses");
    is_int(nerr, 0, "cost: no errors");
    r = rule("/api/chat");
    is_str(r ? r->quota.cost_name : "", "X-LLM-Tokens", "cost: header kept");
    r = rule("/one");
    is_str(r ? r->quota.cost_name : "?", "", "cost 1: no header");

    /* "reserve" (issue 19): a number or "max_tokens[:DEFAULT]". */
    is_int(parse("{\"routes\": {\"/n\": {\"limits\": [\"1000/1m\"], "
                 "\"cost\": \"usage\", \"reserve\": 400}, "
                 "\"/m\": {\"limits\": [\"1000/1m\"], \"cost\": \"usage\", "
                 "\"reserve\": \"max_tokens:512\"}}}"),
           0, "reserve: parses");
    is_int(nerr, 0, "reserve: no errors");
    r = rule("/n");
    ok(r && r->quota.reserve == 400 && !r->quota.reserve_max_tokens,
       "reserve: 400 kept");
    r = rule("/m");
    ok(r && r->quota.reserve == 512 && r->quota.reserve_max_tokens,
       "reserve: max_tokens:512 kept");

    is_int(parse("{\"routes\": {\"/sms\": {\"max\": 1, \"window\": 60, "
                 "\"by\": \"param:phone\", \"norm\": \"digits\"}, "
                 "\"/fr\": {\"max\": 1, \"window\": 60, \"by\": \"json:phone\", \"norm\": \"digits:33\"}, "
                 "\"/plain\": {\"max\": 1, \"window\": 60, \"by\": \"param:u\"}}}"),
           0, "norm: parses");
    is_int(nerr, 0, "norm: no errors");
    r = rule("/sms");
    is_int(r ? (int)r->quota.norm : -1, HL_NORM_DIGITS, "norm: digits kept");
    r = rule("/fr");
    ok(r && r->quota.norm == HL_NORM_DIGITS && r->quota.norm_cc == 33, "norm: digits:33 kept");
    r = rule("/plain");
    is_int(r ? (int)r->quota.norm : -1, HL_NORM_LOWER, "norm: lower by default");

    /* "concurrency" (HotLimitConcurrency from the table). */
    is_int(parse("{\"routes\": {\"/chat\": {\"limits\": [\"100/1m\"], "
                 "\"by\": \"header:X-Key\", \"concurrency\": 2}, "
                 "\"/one\": {\"max\": 5, \"window\": 60}}}"),
           0, "concurrency: parses");
    is_int(nerr, 0, "concurrency: no errors");
    r = rule("/chat");
    is_int(r ? (int)r->quota.concurrency : -1, 2, "concurrency: kept");
    r = rule("/one");
    is_int(r ? (int)r->quota.concurrency : -1, 0, "concurrency: none by default");
}

/* "plans" and a route's "plan" selector. */
static void test_plans(void)
{
    const hl_rule_t *r;
    const hl_plan_t *p;
    hl_quota_t q;

    is_int(parse("{\"routes\": {\"/api\": {\"limits\": [\"1/1m\"], "
                 "\"by\": \"header:X-Key\", \"plan\": \"env:HOTLIMIT_PLAN\"}, "
                 "\"/h\": {\"max\": 1, \"window\": 60, \"plan\": \"header:X-Plan\"}}, "
                 "\"plans\": {\"free\": {\"limits\": [\"10/1m\", \"200/1d\"]}, "
                 "\"pro\": {\"max\": 100, \"window\": \"1m\", \"concurrency\": 4}}}"),
           0, "plans: parse");
    is_int(nerr, 0, "plans: no errors");
    is_int((int)T()->nplans, 2, "plans: two");
    r = rule("/api");
    is_int(r ? (int)r->plan.from : -1, HL_PLAN_FROM_ENV, "plan selector: env");
    is_str(r ? r->plan.name : "", "HOTLIMIT_PLAN", "plan selector: its name");
    r = rule("/h");
    is_int(r ? (int)r->plan.from : -1, HL_PLAN_FROM_HEADER, "plan selector: header");
    p = hl_table_plan(T(), "free", 4);
    ok(p && p->nwindows == 2 && p->windows[0].count == 10
       && p->windows[1].window_ms == 86400000u, "plan free: its limits");
    p = hl_table_plan(T(), "pro", 3);
    ok(p && p->nwindows == 1 && p->windows[0].count == 100 && p->concurrency == 4,
       "plan pro: max + window, concurrency");
    ok(hl_table_plan(T(), "pr", 2) == NULL && hl_table_plan(T(), "Pro", 3) == NULL
       && hl_table_plan(T(), "proX", 4) == NULL && hl_table_plan(T(), "", 0) == NULL
       && hl_table_plan(NULL, "pro", 3) == NULL, "unknown plans: NULL");
    r = rule("/api");
    hl_table_plan_quota(&r->quota, hl_table_plan(T(), "free", 4), &q);
    ok(q.nwindows == 2 && q.windows[0].count == 10 && q.by == HL_BY_HEADER
       && strcmp(q.by_name, "X-Key") == 0, "plan quota: the plan's windows, the route's key");

    /* Bad plans are skipped, the rest applies. */
    is_int(parse("{\"routes\": {\"/a\": {\"max\": 1, \"window\": 60}}, "
                 "\"plans\": {\"ok\": {\"limits\": [\"5/1m\"]}, "
                 "\"bad window\": {\"limits\": [\"5/1m\"]}, "
                 "\"nolimits\": {\"concurrency\": 2}, "
                 "\"both\": {\"limits\": [\"5/1m\"], \"max\": 3}, "
                 "\"zero\": {\"max\": 0, \"window\": 60}, "
                 "\"str\": \"5/1m\"}}"), 0, "bad plans: the document applies");
    is_int((int)T()->nplans, 1, "bad plans: only the good one kept");
    is_int(nerr, 5, "bad plans: five skipped");
    ok(rule("/a") != NULL, "bad plans: the routes apply");

    /* Bad selectors skip their route. */
    is_int(parse("{\"routes\": {\"/a\": {\"max\": 1, \"window\": 60, \"plan\": \"query:x\"}, "
                 "\"/b\": {\"max\": 1, \"window\": 60, \"plan\": \"env:\"}, "
                 "\"/c\": {\"max\": 1, \"window\": 60, \"plan\": 5}, "
                 "\"/d\": {\"max\": 1, \"window\": 60, \"plan\": \"header:a b\"}, "
                 "\"/e\": {\"max\": 1, \"window\": 60}}, "
                 "\"plans\": {\"x\": {\"limits\": [\"5/1m\"]}}}"), 0, "bad selectors: parse");
    is_int(nerr, 4, "bad selectors: four routes skipped");
    ok(rule("/a") == NULL && rule("/b") == NULL && rule("/c") == NULL
       && rule("/d") == NULL && rule("/e") != NULL, "bad selectors: only /e applies");

    /* A selector without plans: a warning, the route's limits. */
    is_int(parse("{\"routes\": {\"/a\": {\"max\": 1, \"window\": 60, "
                 "\"plan\": \"env:P\"}}}"), 0, "selector without plans: parse");
    is_int(nerr, 0, "selector without plans: no error");
    ok(rule("/a") != NULL, "selector without plans: the route applies");

    /* More than HL_TABLE_MAX_PLANS. */
    {
        char doc[4096];
        size_t n;
        int i;

        n = (size_t)snprintf(doc, sizeof(doc), "{\"plans\": {");
        for (i = 0; i < HL_TABLE_MAX_PLANS + 2; i++)
            n += (size_t)snprintf(doc + n, sizeof(doc) - n, "%s\"p%d\": {\"limits\": [\"1/1m\"]}",
                                  i ? ", " : "", i);
        snprintf(doc + n, sizeof(doc) - n, "}}");
        is_int(parse(doc), 0, "many plans: parse");
        is_int((int)T()->nplans, HL_TABLE_MAX_PLANS, "many plans: the first 32 kept");
        ok(hl_table_plan(T(), "p31", 3) != NULL && hl_table_plan(T(), "p32", 3) == NULL,
           "many plans: later ones skipped");
    }
}

/* The top-level "ban" (HotLimitBan from the table). */
static void test_ban(void)
{
    is_int(parse("{\"ban\": {\"after\": 20, \"within\": \"10m\", "
                 "\"for\": \"1h\"}}"), 0, "ban: parses");
    is_int(nerr, 0, "ban: no errors");
    is_int((int)T()->has_ban, 1, "ban: set");
    is_int((int)T()->ban.rejections.windows[0].count, 20, "ban: after 20");
    is_int((int)T()->ban.rejections.windows[0].window_ms, 600000,
           "ban: within 10m");
    is_int((int)T()->ban.ban.windows[0].window_ms, 3600000, "ban: for 1h");
    is_int(parse("{\"ban\": {\"after\": 3, \"within\": 60, \"for\": 5}}"),
           0, "ban in seconds: parses");
    is_int((int)T()->ban.ban.windows[0].window_ms, 5000, "ban: for 5 s");
    is_int(parse("{\"ban\": {\"after\": 0, \"within\": 60, \"for\": 5}}"),
           0, "bad ban: the document still applies");
    is_int((int)T()->has_ban, 0, "after 0: no ban");
    is_int(nerr, 1, "after 0: one error");
    ok(probs.n >= 1 && probs.p[0].has_field && !strcmp(probs.p[0].field, "ban"),
       "reported under field ban");
    parse("{\"ban\": {\"after\": 3, \"for\": \"1h\"}}");
    is_int((int)T()->has_ban, 0, "no within: no ban");
    ok(probs.n >= 1 && strstr(probs.p[0].msg, "'ban' needs 'within'") != NULL,
       "message names the missing member");
    parse("{\"ban\": {\"after\": 3, \"within\": \"1x\", \"for\": \"1h\"}}");
    ok(probs.n >= 1 && strstr(probs.p[0].msg, "'ban.within'") != NULL,
       "a bad unit names ban.within");
    parse("{\"ban\": true}");
    is_int((int)T()->has_ban, 0, "ban: true is refused");
    parse("{}");
    is_int((int)T()->has_ban, 0, "no ban by default");
}

static void test_spec_example(void)
{
    const hl_rule_t *r;
    uint64_t digest;

    is_int(parse(spec_doc), 0, "spec: parses");
    is_int(nerr, 0, "spec: no errors");
    is_int(probs.n, 0, "spec: no problems reported");
    is_int(T()->nrules, 4, "spec: 4 routes");
    is_int(T()->nexempt, 2, "spec: 2 exempt blocks");
    is_int(T()->enabled, 1, "spec: enabled");
    is_int(T()->has_global, 0, "spec: no global bucket");
    is_int(T()->magic, HL_TABLE_MAGIC, "spec: magic");
    is_int(T()->max_rules, 64, "spec: max_rules");
    is_int(T()->nbuckets, 64, "spec: 64 buckets");

    r = rule("/user/login");
    ok(r != NULL, "spec: /user/login present");
    if (r) {
        is_int(r->quota.nwindows, 2, "/user/login: two windows");
        is_int(r->quota.windows[0].count, 5, "/user/login: 5");
        is_int(r->quota.windows[0].window_ms, 60000, "/user/login: per minute");
        is_int(r->quota.windows[1].count, 30, "/user/login: 30");
        is_int(r->quota.windows[1].window_ms, 3600000, "/user/login: per hour");
        is_int(r->quota.by, HL_BY_IP, "/user/login: by ip");
        is_int(r->quota.algo, HL_ALGO_FIXED, "/user/login: fixed");
        is_int(r->quota.dry_run, -1, "/user/login: dry_run unset");
    }
    r = rule("/user/sms");
    ok(r != NULL, "spec: /user/sms present");
    if (r) {
        is_int(r->quota.nwindows, 1, "/user/sms: one window");
        is_int(r->quota.windows[0].count, 1, "/user/sms: 1");
        is_int(r->quota.windows[0].window_ms, 60000, "/user/sms: per 60s");
    }
    r = rule("/api/chat");
    ok(r != NULL, "spec: /api/chat present");
    if (r) {
        is_int(r->quota.by, HL_BY_HEADER, "/api/chat: by header");
        is_str(r->quota.by_name, "Authorization", "/api/chat: Authorization");
        is_int(r->quota.nwindows, 2, "/api/chat: two windows");
        is_int(r->quota.windows[0].count, 10, "/api/chat: 10");
        is_int(r->quota.windows[0].window_ms, 60000, "/api/chat: per minute");
        is_int(r->quota.windows[1].count, 200, "/api/chat: 200");
        is_int(r->quota.windows[1].window_ms, 86400000, "/api/chat: per day");
    }
    r = rule("/api");
    ok(r != NULL, "spec: /api present");
    if (r) {
        is_int(r->quota.algo, HL_ALGO_GCRA, "/api: gcra");
        is_int(r->quota.burst, 100, "/api: burst 100");
        is_int(r->quota.nwindows, 1, "/api: one window");
        is_int(r->quota.windows[0].count, 600, "/api: 600");
        is_int(r->quota.windows[0].window_ms, 60000, "/api: per 60000 ms");
        is_int(r->quota.by, HL_BY_IP, "/api: by ip");
    }
    ok(exempt("10.1.2.3"), "spec: 10.1.2.3 exempt");
    ok(exempt("2001:db8:1::7"), "spec: 2001:db8:1::7 exempt");
    ok(exempt("::ffff:10.9.9.9"), "spec: mapped 10.9.9.9 exempt");
    ok(!exempt("192.0.2.1"), "spec: 192.0.2.1 not exempt");
    ok(!exempt("2001:db9::1"), "spec: 2001:db9::1 not exempt");

    digest = T()->digest;
    parse(spec_doc);
    ok(T()->digest == digest, "digest: same document, same digest");
    ok(digest == hl_table_digest(spec_doc, strlen(spec_doc)),
       "digest: the image holds hl_table_digest of the document");
    ok(hl_table_init(img, img_size, 64)->digest == 0, "digest: 0 in an empty image");
    parse(spec_doc);
    parse("{\"routes\": {}}");
    ok(T()->digest != digest, "digest: another document, another digest");
    is_int(T()->nrules, 0, "reparse: the old rules are gone");
    ok(rule("/api") == NULL, "reparse: /api no longer found");
}

static void test_names(void)
{
    is_int(parse("{\"routes\": {"
                 "\"user.login\": {\"limits\": [\"5/1m\"]},"
                 "\"/shop//cart/\": {\"limits\": [\"6/1m\"]},"
                 "\"api\": {\"limits\": [\"7/1m\"]},"
                 "\"/\": {\"limits\": [\"8/1m\"]},"
                 "\"/a/./b/../c\": {\"limits\": [\"9/1m\"]}"
                 "}}"), 0, "names: parses");
    is_int(T()->nrules, 5, "names: 5 rules");
    ok(rule("/user/login") != NULL, "names: user.login is /user/login");
    ok(rule("/shop/cart") != NULL, "names: /shop//cart/ is /shop/cart");
    ok(rule("/api") != NULL, "names: api is /api");
    ok(rule("/") != NULL, "names: / kept");
    ok(rule("/a/c") != NULL, "names: dot segments resolved");
    ok(rule("user.login") == NULL, "names: the dotted form is not stored");
    is_int(probs.n, 0, "names: no problems");

    /* duplicates after normalisation: warning, the later one wins */
    is_int(parse("{\"routes\": {"
                 "\"/user/login\": {\"limits\": [\"5/1m\"]},"
                 "\"user.login\": {\"limits\": [\"9/1h\"]}"
                 "}}"), 0, "duplicate: parses");
    is_int(nerr, 0, "duplicate: not an error");
    is_int(T()->nrules, 1, "duplicate: one rule");
    ok(rule("/user/login") && rule("/user/login")->quota.windows[0].count == 9,
       "duplicate: the later entry replaces the earlier");
    is_int(probs.n, 1, "duplicate: one problem");
    is_int(probs.p[0].sev, HL_PROBLEM_WARNING, "duplicate: a warning");
    is_str(probs.p[0].route, "user.login", "duplicate: names the later route");
    ok(probs.p[0].has_route, "duplicate: route given");

    /* a later invalid duplicate is skipped, the earlier one stays */
    parse("{\"routes\": {\"/a\": {\"limits\": [\"5/1m\"]},"
          "\"a/\": {\"limits\": [\"0/1m\"]}}}");
    ok(rule("/a") && rule("/a")->quota.windows[0].count == 5,
       "duplicate: an invalid later entry leaves the earlier");
    is_int(nerr, 1, "duplicate: the invalid one is an error");
}

static void test_long_names(void)
{
    char doc[1200], name[400], route[400];
    size_t i;

    /* exactly HL_TABLE_ROUTE_MAX - 1 bytes: accepted */
    name[0] = '/';
    for (i = 1; i < HL_TABLE_ROUTE_MAX - 1; i++)
        name[i] = 'a';
    name[i] = '\0';
    snprintf(doc, sizeof(doc), "{\"routes\": {\"%s\": {\"max\": 1, "
             "\"window\": 1}}}", name);
    is_int(parse(doc), 0, "long: 127-byte route parses");
    is_int(T()->nrules, 1, "long: 127-byte route kept");
    ok(rule(name) != NULL, "long: 127-byte route found");
    is_str(match(name), name, "long: 127-byte route matches itself");

    /* one byte more: refused */
    strcat(name, "b");
    snprintf(doc, sizeof(doc), "{\"routes\": {\"%s\": {\"max\": 1, "
             "\"window\": 1}, \"/ok\": {\"max\": 1, \"window\": 1}}}", name);
    is_int(parse(doc), 0, "long: 128-byte route, document still usable");
    is_int(T()->nrules, 1, "long: 128-byte route skipped");
    is_int(nerr, 1, "long: one error");
    is_str(probs.p[0].route, name, "long: names the route as written");

    /* long only before normalisation: fine */
    snprintf(doc, sizeof(doc), "{\"routes\": {\"/x/%0200d/../y\": "
             "{\"max\": 1, \"window\": 1}}}", 0);
    is_int(parse(doc), 0, "long: resolves to a short route");
    ok(rule("/x/y") != NULL, "long: normalised before the length check");

    /* a cut at the buffer must not let a 300-byte name pass */
    snprintf(doc, sizeof(doc), "{\"routes\": {\"/%0252d/b/c\": "
             "{\"max\": 1, \"window\": 1}}}", 0);
    parse(doc);
    is_int(T()->nrules, 0, "long: a 257-byte name refused");

    /* requests longer than a rule match through a parent */
    parse("{\"routes\": {\"/long\": {\"max\": 1, \"window\": 1}}}");
    snprintf(route, sizeof(route), "/long/%0200d", 7);
    is_str(match(route), "/long", "long: 206-byte request matches /long");
    snprintf(route, sizeof(route), "/long/%0350d/z", 7);
    is_str(match(route), "/long", "long: 358-byte string matches /long");
    snprintf(route, sizeof(route), "/long%0350d", 7);
    ok(match(route) == NULL, "long: 355-byte single segment matches none");
}

static void test_candidates(void)
{
    is_int(parse("{\"routes\": {"
                 "\"/user/login\": {\"limits\": [\"5/1m\"]},"
                 "\"/user\": {\"limits\": [\"50/1m\"]},"
                 "\"/\": {\"limits\": [\"500/1m\"]},"
                 "\"/a/b\": {\"limits\": [\"1/1s\"]}"
                 "}}"), 0, "candidates: parses");
    is_str(match("/user/login/sms"), "/user/login",
           "candidates: /user/login/sms -> /user/login");
    is_str(match("/user/login"), "/user/login", "candidates: exact");
    is_str(match("/user/x"), "/user", "candidates: /user/x -> /user");
    is_str(match("/user"), "/user", "candidates: /user exact");
    ok(match("/other") == NULL, "candidates: /other -> none ('/' is not a parent)");
    ok(match("/other/deep/x") == NULL, "candidates: /other/deep/x -> none");
    is_str(match("/"), "/", "candidates: '/' matches only '/'");
    ok(match("/username") == NULL, "candidates: /username is not /user");
    ok(match("/User/login") == NULL, "candidates: case-sensitive");
    is_str(match("/a/b/c/d/e"), "/a/b", "candidates: /a/b/c/d/e -> /a/b");
    ok(match("/a") == NULL, "candidates: /a -> none");
    ok(match("") == NULL, "candidates: empty -> none");
    ok(hl_table_match(T(), NULL) == NULL, "candidates: NULL -> none");
    ok(hl_table_match(NULL, "/user") == NULL, "candidates: no table -> none");

    parse("{\"routes\": {"
          "\"/user/login\": {\"limits\": [\"5/1m\"]},"
          "\"/user/login/sms\": {\"limits\": [\"1/1m\"]}}}");
    is_str(match("/user/login/sms"), "/user/login/sms",
           "candidates: exact wins over the parent");
    is_str(match("/user/login/sms/x"), "/user/login/sms",
           "candidates: the nearest parent wins");
    ok(match("/user/x") == NULL, "candidates: no /user rule");
}

static void test_switch(void)
{
    is_int(parse("{\"enabled\": false, \"routes\": "
                 "{\"/a\": {\"limits\": [\"1/1s\"]}}}"), 0, "kill: parses");
    is_int(T()->enabled, 0, "kill: disabled");
    is_int(T()->nrules, 1, "kill: rules still read");
    is_int(parse("{\"enabled\": true}"), 0, "enabled: parses");
    is_int(T()->enabled, 1, "enabled: on");
    is_int(parse("{}"), 0, "empty object: parses");
    is_int(T()->enabled, 1, "empty object: enabled by default");
    is_int(T()->nrules, 0, "empty object: no rules");

    is_int(parse("{\"enabled\": \"false\"}"), 0, "enabled string: usable");
    is_int(nerr, 1, "enabled string: an error");
    is_str(probs.p[0].field, "enabled", "enabled string: names the field");
    is_int(T()->enabled, 1, "enabled string: stays enabled");

    is_int(parse("{\"e\": true, \"m\": 100, \"t\": 60000}"), 0,
           "compact: parses");
    is_int(probs.n, 0, "compact: no problems");
    is_int(T()->enabled, 1, "compact: enabled");
    is_int(T()->has_global, 1, "compact: global bucket");
    is_int(T()->global.nwindows, 1, "compact: one window");
    is_int(T()->global.windows[0].count, 100, "compact: m = 100");
    is_int(T()->global.windows[0].window_ms, 60000, "compact: t = 60000 ms");
    is_int(T()->global.by, HL_BY_GLOBAL, "compact: by global");
    is_int(T()->global.algo, HL_ALGO_FIXED, "compact: fixed");
    is_int(T()->nrules, 0, "compact: no rules");

    is_int(parse("{\"e\": false}"), 0, "compact off: parses");
    is_int(T()->enabled, 0, "compact off: disabled");
    is_int(T()->has_global, 0, "compact off: no global bucket");
    is_int(probs.n, 0, "compact off: no problems");

    is_int(parse("{\"m\": 5, \"t\": 500}"), 0, "compact m/t alone: parses");
    is_int(T()->has_global, 1, "compact m/t alone: global bucket");
    is_int(T()->global.windows[0].window_ms, 500, "compact: t in milliseconds");

    parse("{\"e\": true, \"m\": 100}");
    is_int(T()->has_global, 0, "compact m without t: no bucket");
    is_int(nerr, 1, "compact m without t: an error");
    is_str(probs.p[0].field, "t", "compact m without t: names t");
    ok(!probs.p[0].has_route, "compact m without t: no route");

    parse("{\"t\": 1000}");
    is_int(T()->has_global, 0, "compact t without m: no bucket");
    is_str(probs.p[0].field, "m", "compact t without m: names m");

    parse("{\"m\": 0, \"t\": 1000}");
    is_int(T()->has_global, 0, "compact m 0: no bucket");
    is_str(probs.p[0].field, "m", "compact m 0: names m");
    parse("{\"m\": 1.5, \"t\": 1000}");
    is_int(T()->has_global, 0, "compact m 1.5: no bucket");
    parse("{\"m\": 10, \"t\": \"60s\"}");
    is_int(T()->has_global, 0, "compact t string: no bucket");
    is_str(probs.p[0].field, "t", "compact t string: names t");
    parse("{\"m\": 10, \"t\": -5}");
    is_int(T()->has_global, 0, "compact t negative: no bucket");
    parse("{\"m\": 10, \"t\": 2147483648}");
    is_int(T()->has_global, 0, "compact t 2^31: no bucket");
    parse("{\"e\": 1}");
    is_int(T()->enabled, 1, "compact e 1: not a boolean, stays enabled");
    is_str(probs.p[0].field, "e", "compact e 1: names e");
    parse("{\"e\": false, \"enabled\": true}");
    is_int(T()->enabled, 0, "e and enabled disagree: disabled");
    is_int(probs.warnings, 1, "e and enabled disagree: a warning");
}

/* An invalid entry and the field its report must name (NULL: none). */
static const struct {
    const char *entry;
    const char *field;
    const char *msg;        /* a part of the message, or NULL */
} bad_entries[] = {
    { "{\"max\": 1, \"window\": 60, \"by\": \"param:phone\", \"norm\": \"upper\"}", "norm", "bad norm 'upper'" },
    { "{\"max\": 1, \"window\": 60, \"norm\": \"digits\"}", "norm", "needs by=" },
    { "{\"max\": 1, \"window\": 60, \"by\": \"param:phone\", \"norm\": \"digits:999\"}", "norm", "no trunk-prefix rules" },
    { "{\"max\": 1, \"window\": 60, \"by\": \"json:user..phone\"}", "by", "a JSON path" },
    { "{\"max\": 1, \"window\": 60, \"by\": \"param:phone\", \"norm\": 3}", "norm", "must be a string" },
    { "{\"max\": 1, \"window\": 60, \"concurrency\": 0}", "concurrency", "from 1 to 100000" },
    { "{\"max\": 1, \"window\": 60, \"concurrency\": \"2\"}", "concurrency", "not a string" },
    { "{\"max\": 0, \"window\": 60}", "max", NULL },
    { "{\"max\": -1, \"window\": 60}", "max", NULL },
    { "{\"max\": 1.5, \"window\": 60}", "max", "1.5" },
    { "{\"max\": \"5\", \"window\": 60}", "max", "not a string" },
    { "{\"max\": 2147483648, \"window\": 60}", "max", NULL },
    { "{\"max\": 1e300, \"window\": 60}", "max", NULL },
    { "{\"max\": null, \"window\": 60}", "max", NULL },
    { "{\"max\": 1, \"window\": \"60x\"}", "window",
      "unknown unit in '60x' (use ms, s, m, h or d)" },
    { "{\"max\": 1, \"window\": 0}", "window", NULL },
    { "{\"max\": 1, \"window\": -60}", "window", NULL },
    { "{\"max\": 1, \"window\": 1.5}", "window", NULL },
    { "{\"max\": 1, \"window\": 2592001}", "window", NULL },
    { "{\"max\": 1, \"window\": \"31d\"}", "window", NULL },
    { "{\"max\": 1, \"window\": \"\"}", "window", NULL },
    { "{\"max\": 1, \"window\": true}", "window", NULL },
    { "{\"max\": 1, \"window\": [60]}", "window", NULL },
    { "{\"max\": 1}", "window", "missing" },
    { "{\"window\": 60}", "max", "missing" },
    { "{\"limits\": []}", "limits", "empty" },
    { "{\"limits\": \"5/1m\"}", "limits", NULL },
    { "{\"limits\": [\"5/1x\"]}", "limits", "unknown unit" },
    { "{\"limits\": [\"0/1m\"]}", "limits", NULL },
    { "{\"limits\": [\"1.5/1m\"]}", "limits", NULL },
    { "{\"limits\": [\"5\"]}", "limits", NULL },
    { "{\"limits\": [5]}", "limits", NULL },
    { "{\"limits\": [\"1/1s\", \"2/2s\", \"3/3s\", \"4/4s\", \"5/5s\"]}",
      "limits", "more than 4" },
    { "{\"limits\": [\"5/1m\", \"10/60s\"]}", "limits", "duplicate" },
    { "{\"limits\": [\"5/1m\"], \"max\": 5, \"window\": 60}", "max", "not both" },
    { "{\"limits\": [\"5/1m\"], \"window\": 60}", "window", "not both" },
    { "{\"limits\": [\"5/1m\"], \"by\": \"nobody\"}", "by", "unknown by" },
    { "{\"limits\": [\"5/1m\"], \"by\": \"header:\"}", "by", NULL },
    { "{\"limits\": [\"5/1m\"], \"by\": 5}", "by", NULL },
    { "{\"limits\": [\"5/1m\"], \"algo\": \"leaky\"}", "algo", "unknown algo" },
    { "{\"limits\": [\"5/1m\"], \"algo\": false}", "algo", NULL },
    { "{\"limits\": [\"5/1m\"], \"burst\": 10}", "burst", "gcra" },
    { "{\"limits\": [\"5/1m\"], \"algo\": \"gcra\", \"burst\": 0}", "burst", NULL },
    { "{\"limits\": [\"5/1m\"], \"algo\": \"gcra\", \"burst\": 2.5}", "burst", NULL },
    { "{\"limits\": [\"5/1m\"], \"dry_run\": \"yes\"}", "dry_run", NULL },
    { "{\"limits\": [\"5/1m\"], \"dry_run\": 1}", "dry_run", NULL },
    { "{\"limits\": [\"5/1m\"], \"cost\": \"tokens\"}", "cost", "unknown cost" },
    { "{\"limits\": [\"5/1m\"], \"cost\": \"header:\"}", "cost", NULL },
    { "{\"limits\": [\"5/1m\"], \"cost\": 2}", "cost", NULL },
    { "{\"limits\": [\"5/1m\"], \"cost\": \"usage\", \"reserve\": 0}", "reserve", NULL },
    { "{\"limits\": [\"5/1m\"], \"cost\": \"usage\", \"reserve\": 2.5}", "reserve", NULL },
    { "{\"limits\": [\"5/1m\"], \"cost\": \"usage\", \"reserve\": \"some\"}", "reserve", "bad reserve" },
    { "{\"limits\": [\"5/1m\"], \"cost\": \"usage\", \"reserve\": true}", "reserve", NULL },
    { "{\"limits\": [\"5/1m\"], \"reserve\": 5}", NULL, "needs cost=" },
    { "{}", NULL, "no quota" },
    { "{\"by\": \"ip\"}", NULL, "no quota" },
    { "\"5/1m\"", NULL, "object" },
    { "[\"5/1m\"]", NULL, "object" },
    { "null", NULL, "object" },
    { "600", NULL, "object" },
};

static void test_bad_entries(void)
{
    char doc[512], name[128];
    size_t i;

    for (i = 0; i < sizeof(bad_entries) / sizeof(bad_entries[0]); i++) {
        const char *want = bad_entries[i].field;
        int found = 0, j;

        snprintf(doc, sizeof(doc), "{\"routes\": {\"/good\": {\"max\": 3, "
                 "\"window\": \"1m\"}, \"/user/sms\": %s}}",
                 bad_entries[i].entry);
        snprintf(name, sizeof(name), "bad entry %s", bad_entries[i].entry);
        is_int(parse(doc), 0, name);
        ok(T()->nrules == 1 && rule("/good") != NULL && rule("/user/sms") == NULL,
           "  ... skipped, the rest applies");
        is_int(nerr, 1, "  ... one entry skipped");
        for (j = 0; j < probs.n; j++) {
            const problem_t *p = &probs.p[j];

            if (p->sev == HL_PROBLEM_ERROR && p->has_route
                && strcmp(p->route, "/user/sms") == 0
                && (want ? p->has_field && strcmp(p->field, want) == 0
                         : !p->has_field)
                && (bad_entries[i].msg == NULL
                    || strstr(p->msg, bad_entries[i].msg) != NULL))
                found = 1;
        }
        if (!ok(found, "  ... reported with its route and field")) {
            for (j = 0; j < probs.n; j++)
                printf("#   got %s route '%s' field '%s': %s\n",
                       probs.p[j].sev ? "error" : "warning", probs.p[j].route,
                       probs.p[j].has_field ? probs.p[j].field : "(none)",
                       probs.p[j].msg);
        }
    }

    /* exact message of the spec's example */
    parse("{\"routes\": {\"/user/sms\": {\"max\": 1, \"window\": \"60x\"}}}");
    is_int(probs.n, 1, "60x: one problem");
    is_str(probs.p[0].msg, "unknown unit in '60x' (use ms, s, m, h or d)",
           "60x: the message");
    is_str(probs.p[0].field, "window", "60x: field window");
    is_str(probs.p[0].route, "/user/sms", "60x: route as written");

    /* the route is named as written, not normalised */
    parse("{\"routes\": {\"user.sms\": {\"max\": 0, \"window\": 1}}}");
    is_str(probs.p[0].route, "user.sms", "dotted: route as written");

    /* several invalid fields: each reported, one entry skipped */
    parse("{\"routes\": {\"/x\": {\"max\": 0, \"window\": \"1y\", "
          "\"algo\": \"z\"}}}");
    is_int(nerr, 1, "three bad fields: one entry skipped");
    is_int(probs.errors, 3, "three bad fields: three reports");

    /* empty route name */
    parse("{\"routes\": {\"\": {\"max\": 1, \"window\": 1}}}");
    is_int(T()->nrules, 0, "empty name: skipped");
    ok(probs.n == 1 && probs.p[0].sev == HL_PROBLEM_ERROR
       && probs.p[0].has_route && probs.p[0].route[0] == '\0',
       "empty name: an error with the empty route");
}

static void test_good_entries(void)
{
    const hl_rule_t *r;

    is_int(parse("{\"routes\": {"
                 "\"/a\": {\"max\": 2147483647, \"window\": 2592000},"
                 "\"/b\": {\"max\": 1, \"window\": \"60\"},"
                 "\"/c\": {\"max\": 1, \"window\": \"500ms\"},"
                 "\"/d\": {\"max\": 1.0, \"window\": 1, \"dry_run\": true},"
                 "\"/e\": {\"limits\": [\"5/1m\"], \"dry_run\": false, "
                 "\"by\": \"cookie:sid\", \"algo\": \"sliding\"},"
                 "\"/f\": {\"limits\": [\"1/1s\", \"2/2s\", \"3/3s\", \"4/4s\"],"
                 " \"algo\": \"gcra\", \"by\": \"global\"},"
                 "\"/g\": {\"max\": 5, \"window\": 1, \"algo\": \"gcra\"}"
                 "}}"), 0, "good: parses");
    is_int(nerr, 0, "good: no errors");
    is_int(T()->nrules, 7, "good: 7 rules");
    r = rule("/a");
    ok(r && r->quota.windows[0].count == 2147483647u
       && r->quota.windows[0].window_ms == 2592000000u,
       "good: largest count and 30-day window");
    r = rule("/b");
    ok(r && r->quota.windows[0].window_ms == 60000,
       "good: a bare number string is seconds");
    r = rule("/c");
    ok(r && r->quota.windows[0].window_ms == 500, "good: 500ms");
    r = rule("/d");
    ok(r && r->quota.dry_run == 1 && r->quota.windows[0].count == 1,
       "good: dry_run true, 1.0 is a whole number");
    r = rule("/e");
    ok(r && r->quota.dry_run == 0 && r->quota.by == HL_BY_COOKIE
       && strcmp(r->quota.by_name, "sid") == 0
       && r->quota.algo == HL_ALGO_SLIDING, "good: cookie:sid, sliding, dry_run off");
    r = rule("/f");
    ok(r && r->quota.nwindows == 4 && r->quota.by == HL_BY_GLOBAL
       && r->quota.algo == HL_ALGO_GCRA, "good: 4 windows, gcra, global");
    r = rule("/g");
    ok(r && r->quota.burst == 0, "good: gcra without burst");

    is_int(parse("{\"routes\": {\"/login\": {\"limits\": [\"3/1m\"],"
                 " \"by\": \"param:email\"}}}"), 0, "by param: parses");
    r = rule("/login");
    ok(r && r->quota.by == HL_BY_PARAM
       && strcmp(r->quota.by_name, "email") == 0, "by param:email read");
    is_int(parse("{\"routes\": {\"/sms\": {\"limits\": [\"1/1m\"],"
                 " \"by\": \"json:user.phone\", \"norm\": \"digits\"}}}"), 0,
           "by json: parses");
    r = rule("/sms");
    ok(r && r->quota.by == HL_BY_JSON && r->quota.norm == HL_NORM_DIGITS
       && strcmp(r->quota.by_name, "user.phone") == 0, "by json:user.phone read");

    /* unknown keys: warnings, the entry still applies */
    is_int(parse("{\"version\": 3, \"routes\": {\"/a\": {\"limits\": [\"5/1m\"],"
                 " \"comment\": \"x\"}}}"), 0, "unknown keys: parse");
    is_int(nerr, 0, "unknown keys: no errors");
    is_int(probs.warnings, 2, "unknown keys: two warnings");
    ok(rule("/a") != NULL, "unknown keys: entry applies");
    ok(!probs.p[0].has_route && strcmp(probs.p[0].field, "version") == 0,
       "unknown top-level key: field, no route");
    ok(probs.p[1].has_route && strcmp(probs.p[1].route, "/a") == 0
       && strcmp(probs.p[1].field, "comment") == 0,
       "unknown entry key: route and field");

    /* a repeated key: a warning, the last wins */
    parse("{\"routes\": {\"/a\": {\"max\": 1, \"max\": 7, \"window\": 1}}}");
    ok(rule("/a") && rule("/a")->quota.windows[0].count == 7,
       "repeated key: the last wins");
    is_int(probs.warnings, 1, "repeated key: a warning");
    is_int(nerr, 0, "repeated key: not an error");
}

static void test_exempt(void)
{
    char doc[8192];
    size_t n;
    int i;

    is_int(parse("{\"exempt\": [\"10.0.0.0/8\", \"bogus\", 5, \"192.0.2.7\","
                 " \"10.0.0.0/33\"]}"), 0, "exempt: parses");
    is_int(T()->nexempt, 2, "exempt: two valid blocks");
    is_int(nerr, 3, "exempt: three skipped");
    ok(probs.n == 3 && !probs.p[0].has_route
       && strcmp(probs.p[0].field, "exempt") == 0
       && strstr(probs.p[0].msg, "bogus") != NULL, "exempt: names the bad block");
    ok(exempt("192.0.2.7") && !exempt("192.0.2.8"), "exempt: a bare address");
    parse("{\"exempt\": \"10.0.0.0/8\"}");
    is_int(T()->nexempt, 0, "exempt string: ignored");
    is_int(nerr, 1, "exempt string: an error");

    n = (size_t)snprintf(doc, sizeof(doc), "{\"exempt\": [");
    for (i = 0; i < HL_TABLE_MAX_EXEMPT + 2; i++)
        n += (size_t)snprintf(doc + n, sizeof(doc) - n, "%s\"10.%d.%d.0/24\"",
                              i ? "," : "", i / 256, i % 256);
    snprintf(doc + n, sizeof(doc) - n, "]}");
    is_int(parse(doc), 0, "exempt 258: parses");
    is_int(T()->nexempt, HL_TABLE_MAX_EXEMPT, "exempt 258: 256 kept");
    is_int(nerr, 2, "exempt 258: two skipped");
    is_int(probs.errors, 1, "exempt 258: one report");
    ok(exempt("10.0.255.1") && !exempt("10.1.1.1"), "exempt 258: last ones dropped");
}

static void test_document_failures(void)
{
    char *big, *cut;
    size_t half;
    void *mem;
    size_t size;
    int rc, i;

    is_int(parse("not json"), -1, "refused: not JSON");
    ok(probs.n == 1 && probs.p[0].sev == HL_PROBLEM_ERROR
       && !probs.p[0].has_route && !probs.p[0].has_field,
       "refused: one document-level error");
    has_str(probs.p[0].msg, "line 1", "refused: gives the position");
    is_int(nerr, 1, "refused: nerrors");
    is_int(parse("{\n  \"routes\": {\n    \"/a\": {\"max\": 1,,}\n  }\n}"), -1,
           "refused: syntax error");
    has_str(probs.p[0].msg, "line 3", "refused: syntax error on line 3");
    is_int(parse("[]"), -1, "refused: an array");
    has_str(probs.p[0].msg, "object", "refused: says an object is needed");
    is_int(parse("\"x\""), -1, "refused: a string");
    is_int(parse("42"), -1, "refused: a number");
    is_int(parse("null"), -1, "refused: null");
    is_int(parse(""), -1, "refused: empty");
    is_int(parse("   \n"), -1, "refused: blanks");
    is_int(parse("{} {}"), -1, "refused: two values");
    is_int(parse("{}x"), -1, "refused: trailing garbage");
    is_int(parse("{}  \n"), 0, "trailing blanks are fine");
    is_int(parse("{\"routes\": []}"), -1, "refused: routes an array");
    is_str(probs.p[0].field, "routes", "refused: routes named");
    is_int(parse("{\"routes\": null}"), -1, "refused: routes null");
    is_int(parse("{\"routes\": \"/a\"}"), -1, "refused: routes a string");

    half = strlen(spec_doc) / 2;
    cut = malloc(half);
    memcpy(cut, spec_doc, half);
    memset(&probs, 0, sizeof(probs));
    rc = hl_table_parse(img, img_size, 64, cut, half, collect, &probs, &nerr);
    is_int(rc, -1, "refused: truncated spec document");
    free(cut);
    /* a document need not be NUL-terminated: the exact length is used */
    cut = malloc(strlen(spec_doc));
    memcpy(cut, spec_doc, strlen(spec_doc));
    is_int(hl_table_parse(img, img_size, 64, cut, strlen(spec_doc), collect,
                          &probs, &nerr), 0, "unterminated buffer: parses");
    is_int(T()->nrules, 4, "unterminated buffer: 4 routes");
    free(cut);

    big = malloc((9u << 20) + 1);
    memset(big, ' ', 9u << 20);
    big[0] = '{';
    big[(9u << 20) - 1] = '}';
    big[9u << 20] = '\0';
    memset(&probs, 0, sizeof(probs));
    rc = hl_table_parse(img, img_size, 64, big, 9u << 20, collect, &probs, &nerr);
    is_int(rc, -1, "refused: 9 MiB");
    has_str(probs.p[0].msg, "larger", "refused: 9 MiB says too large");
    big[HL_TABLE_MAX_DOC - 1] = '}';
    rc = hl_table_parse(img, img_size, 64, big, HL_TABLE_MAX_DOC, collect,
                        &probs, &nerr);
    is_int(rc, 0, "8 MiB of blanks in an object: accepted");
    free(big);
    is_int(hl_table_parse(img, img_size, 64, NULL, 0, NULL, NULL, NULL), -1,
           "refused: NULL document, no callback");

    /* more entries than max_rules */
    size = hl_table_size(3);
    mem = calloc(1, size);
    memset(&probs, 0, sizeof(probs));
    rc = parse_in(mem, size, 3, "{\"routes\": {\"/a\": 1, \"/b\": 2, "
                  "\"/c\": 3, \"/d\": 4}}");
    is_int(rc, -1, "refused: 4 routes in a 3-rule table");
    is_str(probs.p[0].field, "routes", "refused: too many routes named");
    is_int(((hl_table_t *)mem)->nrules, 0, "refused: no rule stored");
    rc = parse_in(mem, size, 3, "{\"routes\": {\"/a\": {\"limits\": "
                  "[\"1/1s\"]}}}");
    is_int(rc, 0, "the same image is usable after a failure");
    is_int(((hl_table_t *)mem)->nrules, 1, "  ... with its new rule");
    rc = parse_in(mem, size - 8, 3, "{}");
    is_int(rc, -1, "refused: image too small");
    rc = parse_in(mem, size, 4, "{}");
    is_int(rc, -1, "refused: image for fewer rules than max_rules");
    free(mem);

    /* after every failure the shared image can be built again */
    for (i = 0; i < 2; i++) {
        parse("[");
        ok(hl_table_init(img, img_size, 64) != NULL, "init again after -1");
    }
    is_int(parse(spec_doc), 0, "reparse after failures");
    is_int(T()->nrules, 4, "  ... 4 routes");
}

/* Returns a malloc'd document of n routes "/r/<i>" (or "/big/r/<i>"). */
static char *make_doc(int n, const char *prefix)
{
    size_t cap = (size_t)n * 64 + 64, len;
    char *doc = malloc(cap);
    int i;

    len = (size_t)snprintf(doc, cap, "{\"routes\": {\"/a/b\": "
                           "{\"max\": 1, \"window\": 1}");
    for (i = 1; i < n; i++)
        len += (size_t)snprintf(doc + len, cap - len, ",\"%s/%d\": "
                                "{\"max\": %d, \"window\": 60}", prefix, i, i);
    snprintf(doc + len, cap - len, "}}");
    return doc;
}

/* Returns seconds taken by `loops` matches of route in t (best of three). */
static double time_match(const hl_table_t *t, const char *route, long loops)
{
    double best = 1e9;
    int round;

    for (round = 0; round < 3; round++) {
        struct timespec a, b;
        long i, found = 0;
        double s;

        clock_gettime(CLOCK_MONOTONIC, &a);
        for (i = 0; i < loops; i++)
            found += hl_table_match(t, route) != NULL;
        clock_gettime(CLOCK_MONOTONIC, &b);
        s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
        if (found != 0)
            s = 1e9;       /* an absent route was found: fail loudly */
        if (s < best)
            best = s;
    }
    return best;
}

static void test_big_table(void)
{
    void *small_mem, *big_mem;
    size_t small_size, big_size;
    char *doc, route[64];
    int i, all = 1, all_match = 1, nerrs = -1;
    double t_small, t_big, ratio;
    const hl_table_t *big, *small;
    uint32_t longest = 0, b;

    big_mem = new_image(10000, &big_size);
    doc = make_doc(10000, "/r");
    is_int(hl_table_parse(big_mem, big_size, 10000, doc, strlen(doc), NULL,
                          NULL, &nerrs), 0, "10,000 routes: parses");
    free(doc);
    big = big_mem;
    is_int(nerrs, 0, "10,000 routes: no errors");
    is_int(big->nrules, 10000, "10,000 routes: all stored");
    is_int(big->nbuckets, 16384, "10,000 routes: 16384 buckets");
    for (i = 1; i < 10000; i++) {
        const hl_rule_t *r;

        snprintf(route, sizeof(route), "/r/%d", i);
        r = hl_table_lookup(big, route, strlen(route));
        if (r == NULL || r->quota.windows[0].count != (uint32_t)i)
            all = 0;
        snprintf(route, sizeof(route), "/r/%d/sub/x", i);
        r = hl_table_match(big, route);
        route[strlen(route) - 6] = '\0';       /* back to "/r/<i>" */
        if (r == NULL || strcmp(r->route, route) != 0)
            all_match = 0;
    }
    ok(all, "10,000 routes: every route found with its quota");
    ok(all_match, "10,000 routes: every route found as a parent");
    ok(hl_table_lookup(big, "/r/10000", 8) == NULL, "10,000 routes: /r/10000 absent");
    ok(hl_table_match(big, "/r") == NULL, "10,000 routes: /r absent");

    /* chains stay short: the index is a hash, not a list */
    for (b = 0; b < big->nbuckets; b++) {
        const uint32_t *buckets = (const uint32_t *)(const void *)
            ((const char *)big + ((sizeof(hl_table_t) + 7) & ~(size_t)7));
        const hl_rule_t *rules = (const hl_rule_t *)(const void *)
            ((const char *)buckets + (size_t)big->nbuckets * 4);
        uint32_t idx = buckets[b], len = 0;

        while (idx != 0 && len <= big->nrules) {
            len++;
            idx = rules[idx - 1].chain;
        }
        if (len > longest)
            longest = len;
    }
    ok(longest <= 12, "10,000 routes: longest chain is short");
    printf("# longest chain among 10,000 routes: %u\n", (unsigned)longest);

    small_mem = new_image(10, &small_size);
    doc = make_doc(10, "/r");
    is_int(hl_table_parse(small_mem, small_size, 10, doc, strlen(doc), NULL,
                          NULL, NULL), 0, "10 routes: parses");
    free(doc);
    small = small_mem;

    ok(hl_table_match(big, "/a/b/c/d/e") != NULL
       && strcmp(hl_table_match(big, "/a/b/c/d/e")->route, "/a/b") == 0,
       "10,000 routes: /a/b/c/d/e -> /a/b");
    ok(hl_table_match(small, "/a/b/c/d/e") != NULL
       && strcmp(hl_table_match(small, "/a/b/c/d/e")->route, "/a/b") == 0,
       "10 routes: /a/b/c/d/e -> /a/b");

    t_small = time_match(small, "/x/y/z/w/v", 1000000);
    t_big = time_match(big, "/x/y/z/w/v", 1000000);
    ratio = t_big / t_small;
    printf("# 1,000,000 absent lookups: 10 routes %.3f s, 10,000 routes %.3f s,"
           " ratio %.2f\n", t_small, t_big, ratio);
    ok(ratio < 2.0, "lookup cost does not grow with the table (ratio < 2)");
    free(small_mem);
    free(big_mem);
}

/* Returns the first problem of severity sev, or NULL. */
static const problem_t *first_problem(hl_problem_t sev)
{
    int i;

    for (i = 0; i < probs.n; i++) {
        if (probs.p[i].sev == sev)
            return &probs.p[i];
    }
    return NULL;
}

/* Parses doc into the shared image with carry-over from prev; returns
 * hl_table_parse_keep's rc and the rules kept in *kept. */
static int parse_keep(const char *doc, const hl_table_t *prev, int *kept)
{
    memset(&probs, 0, sizeof(probs));
    nerr = -1;
    *kept = -1;
    return hl_table_parse_keep(img, img_size, 64, doc, strlen(doc), prev,
                               collect, &probs, &nerr, kept);
}

/* Issue 6, defect 9: under last-good, a route whose new entry is invalid
 * keeps the rule it had in the table in force. */
static void test_keep_previous(void)
{
    size_t size;
    void *prev = new_image(64, &size);
    const problem_t *p;
    const hl_rule_t *r;
    int kept, rc;

    rc = parse_in(prev, size, 64, "{\"routes\": {"
                  "\"/login\": {\"limits\": [\"3/1m\"]},"
                  "\"/user/sms\": {\"max\": 1, \"window\": 60},"
                  "\"/other\": {\"max\": 5, \"window\": 60}}}");
    is_int(rc, 0, "keep: the previous table parses");

    /* The reported case: "30/1x" for /login. */
    rc = parse_keep("{\"routes\": {\"/login\": {\"limits\": [\"30/1x\"]},"
                    "\"/other\": {\"max\": 7, \"window\": 60}}}",
                    prev, &kept);
    is_int(rc, 0, "keep: document usable");
    is_int(nerr, 1, "keep: the invalid entry is still counted as skipped");
    is_int(kept, 1, "keep: one rule kept");
    is_int(T()->nrules, 2, "keep: /login and /other in the new table");
    r = rule("/login");
    ok(r != NULL, "keep: /login keeps a rule");
    if (r != NULL) {
        is_int(r->quota.nwindows, 1, "keep: /login has its previous window");
        is_int(r->quota.windows[0].count, 3, "keep: ... count 3");
        is_int(r->quota.windows[0].window_ms, 60000, "keep: ... per minute");
    }
    r = rule("/other");
    ok(r != NULL && r->quota.windows[0].count == 7,
       "keep: a valid changed entry takes its new value");
    ok(rule("/user/sms") == NULL,
       "keep: a route no longer in the document is not kept");
    is_int(probs.errors, 1, "keep: the skipped entry is reported as an error");
    p = first_problem(HL_PROBLEM_KEPT);
    ok(p != NULL, "keep: the carry-over is reported (HL_PROBLEM_KEPT)");
    if (p != NULL) {
        is_str(p->route, "/login", "keep: report names the route as written");
        is_str(p->field, "limits", "keep: ... and the field at fault");
        has_str(p->msg, "(3/1m)", "keep: ... and the rule kept");
        ok(probs.n > 0 && probs.p[probs.n - 1].sev == HL_PROBLEM_KEPT,
           "keep: reported after the entry's own error");
    }

    /* Without prev, the same document drops the route (open). */
    rc = parse_keep("{\"routes\": {\"/login\": {\"limits\": [\"30/1x\"]}}}",
                    NULL, &kept);
    ok(rc == 0 && kept == 0 && rule("/login") == NULL && nerr == 1,
       "keep: prev NULL: the invalid entry is dropped as before");
    rc = parse("{\"routes\": {\"/login\": {\"limits\": [\"30/1x\"]}}}");
    ok(rc == 0 && rule("/login") == NULL && first_problem(HL_PROBLEM_KEPT) == NULL,
       "keep: hl_table_parse never carries over");

    /* A dotted name is the same route; the field of a whole-entry fault. */
    rc = parse_keep("{\"routes\": {\"user.sms\": {\"max\": 1}}}", prev, &kept);
    ok(rc == 0 && kept == 1 && rule("/user/sms") != NULL,
       "keep: 'user.sms' (missing window) keeps the rule of /user/sms");
    p = first_problem(HL_PROBLEM_KEPT);
    ok(p != NULL && strcmp(p->route, "user.sms") == 0
       && strcmp(p->field, "window") == 0,
       "keep: ... reported with the name as written and field 'window'");
    rc = parse_keep("{\"routes\": {\"/login\": 5}}", prev, &kept);
    p = first_problem(HL_PROBLEM_KEPT);
    ok(rc == 0 && kept == 1 && p != NULL && !p->has_field,
       "keep: an entry that is not an object: kept, no field named");

    /* A valid entry for the same route wins, before or after the bad one. */
    rc = parse_keep("{\"routes\": {\"/login\": {\"max\": 0, \"window\": 60},"
                    "\"login\": {\"max\": 9, \"window\": 60}}}", prev, &kept);
    r = rule("/login");
    ok(rc == 0 && kept == 0 && r != NULL && r->quota.windows[0].count == 9,
       "keep: a later valid entry of the same route wins over the carry-over");
    rc = parse_keep("{\"routes\": {\"login\": {\"max\": 9, \"window\": 60},"
                    "\"/login\": {\"max\": 0, \"window\": 60}}}", prev, &kept);
    r = rule("/login");
    ok(rc == 0 && kept == 0 && r != NULL && r->quota.windows[0].count == 9,
       "keep: an earlier valid entry of the same route stays");

    /* A route that was not in the previous table has nothing to keep; a
     * refused document keeps nothing either. */
    rc = parse_keep("{\"routes\": {\"/new\": {\"limits\": [\"1/1x\"]}}}",
                    prev, &kept);
    ok(rc == 0 && kept == 0 && rule("/new") == NULL && T()->nrules == 0,
       "keep: a new invalid route is skipped");
    rc = parse_keep("{\"routes\": {\"/login\": {\"limits\": [\"1/1x\"]}",
                    prev, &kept);
    ok(rc == -1 && kept == 0 && T()->nrules == 0,
       "keep: a refused document keeps nothing");

    /* What was kept is kept again from a table that kept it. */
    rc = parse_keep("{\"routes\": {\"/login\": {\"limits\": [\"30/1x\"]}}}",
                    prev, &kept);
    memcpy(prev, img, size < img_size ? size : img_size);
    rc = parse_keep("{\"routes\": {\"/login\": {\"limits\": [\"31/1x\"]}}}",
                    prev, &kept);
    r = rule("/login");
    ok(rc == 0 && kept == 1 && r != NULL && r->quota.windows[0].count == 3,
       "keep: the last valid rule survives successive invalid versions");
    free(prev);
}

int main(void)
{
    img = new_image(64, &img_size);
    test_plans();
    test_cost();
    test_ban();
    test_layout();
    test_spec_example();
    test_names();
    test_long_names();
    test_candidates();
    test_switch();
    test_bad_entries();
    test_good_entries();
    test_exempt();
    test_document_failures();
    test_big_table();
    test_keep_previous();
    free(img);
    return done_testing();
}
