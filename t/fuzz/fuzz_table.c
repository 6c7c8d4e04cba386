/*
 * fuzz_table.c - libFuzzer target for hl_table.c. Each input is parsed as a
 * quota table into one image of 64 rules (malloc'ed at exactly
 * hl_table_size(64) bytes once, so ASan catches a write past it); when the
 * document is usable, the image's invariants are checked and every rule
 * must be found by its own route. The checks abort on a broken invariant.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hl_table.h"
#include "hl_table_parse.h"

#define CHECK(cond) do { \
    if (!(cond)) { \
        fprintf(stderr, "fuzz_table: check failed at line %d: %s\n", \
                __LINE__, #cond); \
        abort(); \
    } \
} while (0)

#define MAX_RULES 64

static void *image;          /* the image, reused across inputs */
static char long_route[400]; /* "/user/login/aaa...": longer than any rule */
static size_t image_size;
static int nreports[2];      /* warnings, errors of the current input */

/* hl_table_report_fn: checks each problem's strings and counts it. */
static void on_problem(void *baton, hl_problem_t severity, const char *route,
                       const char *field, const char *msg)
{
    (void)baton;
    CHECK(severity == HL_PROBLEM_WARNING || severity == HL_PROBLEM_ERROR);
    CHECK(msg != NULL && msg[0] != '\0');
    CHECK(strlen(msg) < 1024);
    if (route != NULL)
        (void)strlen(route);
    if (field != NULL)
        (void)strlen(field);
    nreports[severity]++;
}

/* Aborts unless r (in t) is a well-formed rule found by its own route. */
static void check_rule(const hl_table_t *t, const hl_rule_t *r)
{
    char again[HL_TABLE_ROUTE_MAX], child[HL_TABLE_ROUTE_MAX + 8];
    char err[HL_ERR_MAX];
    size_t len = strnlen(r->route, HL_TABLE_ROUTE_MAX);
    const hl_rule_t *m;

    CHECK(len >= 1 && len < HL_TABLE_ROUTE_MAX);
    CHECK(r->route[0] == '/');
    CHECK(hl_route_normalize(again, sizeof(again), r->route, len) == len);
    CHECK(memcmp(again, r->route, len + 1) == 0);
    CHECK(hl_quota_validate(&r->quota, err, sizeof(err)) == 0);
    CHECK(r->chain <= t->nrules);
    CHECK(hl_table_lookup(t, r->route, len) == r);
    CHECK(hl_table_match(t, r->route) == r);
    if (len > 1) {
        /* a child route finds this rule or a more specific one */
        memcpy(child, r->route, len);
        memcpy(child + len, "/zz", 4);
        m = hl_table_match(t, child);
        CHECK(m != NULL);
        CHECK(strncmp(m->route, r->route, len) == 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const fixed[] = {
        "/", "/user", "/user/login", "/user/login/sms", "/api/chat/x",
        "/a/b/c/d/e", "", "/x", long_route
    };
    static const char *const addrs[] = {
        "10.1.2.3", "192.0.2.1", "::1", "2001:db8::7", "::ffff:10.0.0.1"
    };
    const hl_table_t *t;
    const hl_rule_t *rules;
    size_t off;
    int nerrors = -1, rc;
    uint32_t i;

    if (image == NULL) {
        image_size = hl_table_size(MAX_RULES);
        image = malloc(image_size);
        CHECK(image != NULL);
        memcpy(long_route, "/user/login/", 12);
        memset(long_route + 12, 'a', sizeof(long_route) - 13);
    }
    nreports[0] = nreports[1] = 0;
    rc = hl_table_parse(image, image_size, MAX_RULES, (const char *)data, size,
                        on_problem, NULL, &nerrors);
    CHECK(rc == 0 || rc == -1);
    CHECK(nerrors >= 0);
    CHECK((nerrors > 0) == (nreports[HL_PROBLEM_ERROR] > 0));
    CHECK(rc == 0 || nerrors > 0);
    if (rc != 0) {
        CHECK(hl_table_init(image, image_size, MAX_RULES) == image);
        return 0;
    }
    t = image;
    CHECK(t->magic == HL_TABLE_MAGIC && t->version == HL_TABLE_VERSION);
    CHECK(t->enabled <= 1 && t->has_global <= 1);
    CHECK(t->nrules <= MAX_RULES && t->max_rules == MAX_RULES);
    CHECK(t->nbuckets == MAX_RULES);
    CHECK(t->nexempt <= HL_TABLE_MAX_EXEMPT);
    if (t->has_global) {
        char err[HL_ERR_MAX];

        CHECK(hl_quota_validate(&t->global, err, sizeof(err)) == 0);
        CHECK(t->global.by == HL_BY_GLOBAL && t->global.nwindows == 1);
    }
    for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        const hl_rule_t *m = hl_table_match(t, fixed[i]);

        if (m != NULL)      /* the match is the route or one of its parents */
            CHECK(strncmp(fixed[i], m->route, strlen(m->route)) == 0);
    }
    for (i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
        hl_cidr_t ip;
        uint32_t j;
        int want = 0;

        CHECK(hl_ip_parse(addrs[i], &ip) == 0);
        for (j = 0; j < t->nexempt; j++)
            want |= hl_cidr_match(&t->exempt[j], &ip);
        CHECK(hl_table_exempt(t, &ip) == want);
    }
    /* the rules follow the header and the bucket array (hl_table.h),
     * each part aligned to 8 bytes */
    off = ((sizeof(hl_table_t) + 7) & ~(size_t)7)
          + (((size_t)t->nbuckets * sizeof(uint32_t) + 7) & ~(size_t)7);
    rules = (const hl_rule_t *)(const void *)((const char *)t + off);
    for (i = 0; i < t->nrules; i++)
        check_rule(t, &rules[i]);
    return 0;
}
