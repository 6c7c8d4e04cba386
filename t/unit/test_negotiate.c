/*
 * test_negotiate.c - hl_negotiate_body and hl_negotiate_lang: the spec's
 * examples, q-value parsing, malformed parts, and hostile headers.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <apr_general.h>
#include "hl_tap.h"
#include "hl_negotiate.h"

static const char *kind_name(hl_body_kind_t k)
{
    switch (k) {
    case HL_BODY_HTML:    return "HTML";
    case HL_BODY_JSON:    return "JSON";
    case HL_BODY_PROBLEM: return "PROBLEM";
    }
    return "?";
}

static void test_body_table(void)
{
    static const struct {
        const char *accept, *xrw;
        hl_body_kind_t want;
    } cases[] = {
        /* the examples of the brief */
        { NULL, NULL, HL_BODY_HTML },
        { "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", NULL, HL_BODY_HTML },
        { "application/json", NULL, HL_BODY_JSON },
        { "application/problem+json", NULL, HL_BODY_PROBLEM },
        { "application/problem+json, application/json;q=0.9", NULL, HL_BODY_PROBLEM },
        { "application/json, application/problem+json;q=0.5", NULL, HL_BODY_JSON },
        { "text/html;q=0.5, application/json", NULL, HL_BODY_JSON },
        { "*/*", NULL, HL_BODY_HTML },
        { "application/*", NULL, HL_BODY_JSON },
        { "application/json;q=0", "XMLHttpRequest", HL_BODY_HTML },
        { NULL, "XMLHttpRequest", HL_BODY_JSON },
        { "*/*", "XMLHttpRequest", HL_BODY_JSON },
        { "text/html", "XMLHttpRequest", HL_BODY_HTML },
        /* more */
        { "", NULL, HL_BODY_HTML },
        { "", "XMLHttpRequest", HL_BODY_JSON },
        { "image/png", NULL, HL_BODY_HTML },
        { "image/png", "xmlhttprequest", HL_BODY_JSON },
        { "*/*", "  XMLHTTPREQUEST ", HL_BODY_JSON },
        { "*/*", "fetch", HL_BODY_HTML },
        { "APPLICATION/JSON", NULL, HL_BODY_JSON },
        { "Application/Problem+JSON", NULL, HL_BODY_PROBLEM },
        { "application/json; charset=utf-8", NULL, HL_BODY_JSON },
        { "application/json ; q=0.7 , text/html ; q=0.6", NULL, HL_BODY_JSON },
        { "application/json;Q=0.7,text/html;q=0.8", NULL, HL_BODY_HTML },
        { "text/*", NULL, HL_BODY_HTML },
        { "text/*", "XMLHttpRequest", HL_BODY_JSON },
        { "text/html;q=0", NULL, HL_BODY_HTML },          /* all excluded */
        { "text/html;q=0", "XMLHttpRequest", HL_BODY_JSON },
        { "*/*, text/html;q=0", NULL, HL_BODY_JSON },     /* most specific wins */
        { "application/*, application/json;q=0", NULL, HL_BODY_PROBLEM },
        { "application/*;q=0.5, text/*;q=0.4", NULL, HL_BODY_JSON },
        { "application/json, text/html", NULL, HL_BODY_JSON },   /* earlier */
        { "text/html, application/json", NULL, HL_BODY_HTML },
        { "text/html, application/json", "XMLHttpRequest", HL_BODY_JSON },
        { "text/html, */*;q=0.8", "XMLHttpRequest", HL_BODY_HTML },
        { "text/html;q=0.9, application/json", "XMLHttpRequest", HL_BODY_JSON },
        { "application/json, text/javascript, */*; q=0.01", "XMLHttpRequest", HL_BODY_JSON },
        { "application/json;q=0.001, text/html;q=0", NULL, HL_BODY_JSON },
        { "application/json;q=1.000, text/html;q=0.999", NULL, HL_BODY_JSON },
        { "application/problem+json;q=0.5, */*;q=0.5", NULL, HL_BODY_PROBLEM }, /* specific */
        { "application/problem+json;q=0", "XMLHttpRequest", HL_BODY_JSON },
        { "application/json;q=0, */*", "XMLHttpRequest", HL_BODY_HTML },
        /* malformed parts are skipped, the rest still counts */
        { "application/json;q=2", NULL, HL_BODY_HTML },
        { "application/json;q=1.5", NULL, HL_BODY_HTML },
        { "application/json;q=0.1234", NULL, HL_BODY_HTML },
        { "application/json;q=.5", NULL, HL_BODY_HTML },
        { "application/json;q=", NULL, HL_BODY_HTML },
        { "application/json;q", NULL, HL_BODY_HTML },
        { "application/json;q=\"0.5\"", NULL, HL_BODY_HTML },
        { "application/json;q=abc, text/html;q=0.1", NULL, HL_BODY_HTML },
        { "text/html;q=x, application/json;q=0.2", NULL, HL_BODY_JSON },
        { "application/json;q=0.5x, application/problem+json;q=0.1", NULL, HL_BODY_PROBLEM },
        { "application/json junk, application/problem+json", NULL, HL_BODY_PROBLEM },
        { "application/json;a=\"x,y\";q=0.9, text/html;q=0.8", NULL, HL_BODY_JSON },
        { "application/json;a=\"unterminated", NULL, HL_BODY_HTML },
        { ",,, ,application/json,,", NULL, HL_BODY_JSON },
        { ";;;,application/json;;", NULL, HL_BODY_JSON },
        { "application/json;=1", NULL, HL_BODY_HTML },
        { "application/json;foo;q=0.3, text/html;q=0.2", NULL, HL_BODY_JSON },
        { "application/json\x01", NULL, HL_BODY_HTML },
    };
    size_t i;
    char name[512];

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        hl_body_kind_t got = hl_negotiate_body(cases[i].accept, cases[i].xrw);
        snprintf(name, sizeof(name), "body: Accept '%s' XRW '%s' -> %s",
                 cases[i].accept ? cases[i].accept : "(null)",
                 cases[i].xrw ? cases[i].xrw : "(null)", kind_name(cases[i].want));
        is_str(kind_name(got), kind_name(cases[i].want), name);
    }
}

static void test_lang_table(void)
{
    static const struct { const char *al, *want; } cases[] = {
        /* the examples of the brief */
        { "zh-CN,zh;q=0.9,en;q=0.8", "zh" },
        { "fr-CH, fr;q=0.9, en;q=0.8", "fr" },
        { "de;q=0.5, ja", "ja" },
        { "ar", "ar" },
        { "es-419", "es" },
        { "pt-BR", "en" },
        { "*", "en" },
        { NULL, "en" },
        { "en;q=0, fr;q=0.1", "fr" },
        /* more */
        { "", "en" },
        { "ZH-cn", "zh" },
        { "DE-de", "de" },
        { "Ja-JP;Q=0.3, EN;q=0.2", "ja" },
        { "pt-BR, pt;q=0.9, es;q=0.1", "es" },
        { "de;q=0.5, *;q=0.1", "de" },
        { "de;q=0.5, *", "en" },
        { "fr;q=0.5, de;q=0.5", "fr" },                 /* tie: earlier */
        { "fr;q=0.500, de;q=0.501", "de" },
        { "zh-Hans-CN", "zh" },
        { "en-US,en;q=0.9", "en" },
        { "fr;q=2, de", "de" },                         /* bad q skipped */
        { "fr;q=0.5, de;q=abc", "fr" },
        { "fr;q=0", "en" },
        { "ja;q=0, ar;q=0", "en" },
        { "e1, de", "de" },                             /* bad range skipped */
        { "toolonglanguage, es", "es" },
        { "fr-, es", "es" },
        { "-fr, es", "es" },
        { "fr--ch, es", "es" },
        { "frx", "en" },
        { " , ,  ar ; q=0.9 ,", "ar" },
        { "x-klingon, i-default", "en" },
    };
    size_t i;
    char name[512];

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(name, sizeof(name), "lang: '%s' -> %s",
                 cases[i].al ? cases[i].al : "(null)", cases[i].want);
        is_str(hl_negotiate_lang(cases[i].al), cases[i].want, name);
    }
}

/* Builds a NUL-terminated string of len bytes repeating pat. Caller frees. */
static char *repeat(const char *pat, size_t len)
{
    char *s = malloc(len + 1);
    size_t i, k = strlen(pat);

    for (i = 0; i < len; i++)
        s[i] = pat[i % k];
    s[len] = '\0';
    return s;
}

static void test_hostile(void)
{
    static const char *const pats[] = {
        ",;", ";", ",", " ", "\t,", "a/b;", "a/b;q=", "a/b;q=0.5;",
        "text/html;q=1;", ";q=;q=", "\"", "a/b;x=\"", "a/b;x=\"\\", "=",
        "application/json;q=0.0001,", "*/*;q=0,", "zz-", "en-", "x;q=0.5,",
    };
    size_t i;

    for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
        char *h = repeat(pats[i], 64 * 1024);
        clock_t t0 = clock();
        int r;
        double secs;

        r = (int)hl_negotiate_body(h, "XMLHttpRequest");
        r += (int)hl_negotiate_body(h, NULL);
        r += hl_negotiate_lang(h) != NULL;
        secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
        okf(r >= 1 && secs < 0.5,
            "hostile 64 KiB of '%s' answered quickly (%.4fs)", pats[i], secs);
        free(h);
    }

    /* a sane element after a long garbage run still counts */
    {
        char *h = repeat(",;", 64 * 1024);
        char *h2 = malloc(64 * 1024 + 64);

        memcpy(h2, h, 64 * 1024);
        strcpy(h2 + 64 * 1024, ",application/problem+json");
        is_str(kind_name(hl_negotiate_body(h2, NULL)), "PROBLEM",
               "problem+json after 64 KiB of ',;' is still seen");
        strcpy(h2 + 64 * 1024, ",ja");
        is_str(hl_negotiate_lang(h2), "ja", "ja after 64 KiB of ',;' is still seen");
        free(h);
        free(h2);
    }
}

int main(void)
{
    apr_initialize();
    test_body_table();
    test_lang_table();
    test_hostile();
    apr_terminate();
    return done_testing();
}
