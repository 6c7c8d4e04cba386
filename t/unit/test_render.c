/*
 * test_render.c - the 429 bodies and header values: the built-in page in
 * every language, the template, the problem object, RateLimit headers and
 * the escapers.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <apr_general.h>
#include <apr_pools.h>
#include <apr_strings.h>
#include "hl_tap.h"
#include "hl_negotiate.h"
#include "hl_render.h"
#include "hl_duration.h"

static apr_pool_t *pool;

static const hl_policy_view_t two_pols[2] = {
    { "5/1m", 5, 60, 0, 42, 1, 0, 0 },
    { "30/1h", 30, 3600, 12, 3000, 0, 0, 0 },
};

static hl_reject_info_t sample_info(const char *lang, long retry)
{
    hl_reject_info_t info;

    memset(&info, 0, sizeof(info));
    info.route = "/user/login";
    info.retry_after = retry;
    info.npolicies = 2;
    info.policies = two_pols;
    info.lang = lang;
    return info;
}

/* Returns 1 if s is valid UTF-8 (no overlongs, surrogates or > U+10FFFF). */
static int valid_utf8(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;

    while (*s) {
        int n, i;
        unsigned long cp;

        if (*s < 0x80) { s++; continue; }
        else if ((*s & 0xE0) == 0xC0) { n = 1; cp = *s & 0x1F; }
        else if ((*s & 0xF0) == 0xE0) { n = 2; cp = *s & 0x0F; }
        else if ((*s & 0xF8) == 0xF0) { n = 3; cp = *s & 0x07; }
        else return 0;
        for (i = 1; i <= n; i++) {
            if ((s[i] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i] & 0x3F);
        }
        if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000)
            || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
            return 0;
        s += n + 1;
    }
    return 1;
}

static void test_languages(void)
{
    static const char *const want[] = { "en", "zh", "es", "fr", "de", "ar", "ja" };
    size_t i, n = 0;
    char name[128];

    while (hl_render_language(n) != NULL)
        n++;
    is_int(n, 7, "seven built-in languages");
    for (i = 0; i < 7 && i < n; i++) {
        snprintf(name, sizeof(name), "language %zu is %s", i, want[i]);
        is_str(hl_render_language(i), want[i], name);
        snprintf(name, sizeof(name), "hl_negotiate_lang(\"%s\") picks it", want[i]);
        is_str(hl_negotiate_lang(want[i]), want[i], name);
    }
    ok(hl_render_language((size_t)-1) == NULL, "NULL far past the last");
}

static void test_html_pages(void)
{
    static const struct {
        const char *lang, *heading, *wait, *retry, *home, *dir;
    } pages[] = {
        { "en", "Too many requests", "Please wait 30 seconds before trying again.",
          "Try again", "Home page", "ltr" },
        { "zh", "请求过于频繁", "请在 30 秒后重试。", "重试", "返回首页", "ltr" },
        { "es", "Demasiadas solicitudes",
          "Espere 30 segundos antes de volver a intentarlo.",
          "Volver a intentarlo", "Página de inicio", "ltr" },
        { "fr", "Trop de requêtes", "Veuillez patienter 30 secondes avant de réessayer.",
          "Réessayer", "Page d’accueil", "ltr" },
        { "de", "Zu viele Anfragen",
          "Bitte warten Sie 30 Sekunden, bevor Sie es erneut versuchen.",
          "Erneut versuchen", "Startseite", "ltr" },
        { "ar", "طلبات كثيرة جدًا", "يُرجى الانتظار لمدة 30 ثانية قبل المحاولة مرة أخرى.",
          "إعادة المحاولة", "الصفحة الرئيسية", "rtl" },
        { "ja", "リクエストが多すぎます", "30秒待ってから、もう一度お試しください。",
          "再試行", "トップページ", "ltr" },
    };
    size_t i;
    char name[256], want[256];

    for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
        hl_reject_info_t info = sample_info(pages[i].lang, 30);
        char *h = hl_render_html(pool, &info);
        const char *l = pages[i].lang;

        ok(h != NULL, "page is not NULL");
        okf(strncmp(h, "<!DOCTYPE html>", 15) == 0,
            "%s: starts with <!DOCTYPE html>", l);
        snprintf(want, sizeof(want), "<html lang=\"%s\" dir=\"%s\">", l, pages[i].dir);
        snprintf(name, sizeof(name), "%s: html lang and dir", l);
        has_str(h, want, name);
        snprintf(name, sizeof(name), "%s: charset meta", l);
        has_str(h, "<meta charset=\"utf-8\">", name);
        snprintf(name, sizeof(name), "%s: robots noindex meta", l);
        has_str(h, "<meta name=\"robots\" content=\"noindex, nofollow\">", name);
        snprintf(name, sizeof(name), "%s: viewport meta", l);
        has_str(h, "<meta name=\"viewport\"", name);
        snprintf(want, sizeof(want), "<title>%s</title>", pages[i].heading);
        snprintf(name, sizeof(name), "%s: title", l);
        has_str(h, want, name);
        snprintf(want, sizeof(want), "<h1>%s</h1>", pages[i].heading);
        snprintf(name, sizeof(name), "%s: heading", l);
        has_str(h, want, name);
        snprintf(name, sizeof(name), "%s: wait sentence with the seconds", l);
        has_str(h, pages[i].wait, name);
        snprintf(name, sizeof(name), "%s: the number 30 is shown", l);
        has_str(h, "30", name);
        snprintf(name, sizeof(name), "%s: 429 is visible", l);
        has_str(h, ">429<", name);
        snprintf(want, sizeof(want), "href=\"\">%s</a>", pages[i].retry);
        snprintf(name, sizeof(name), "%s: retry link to the same page", l);
        has_str(h, want, name);
        snprintf(want, sizeof(want), "href=\"/\">%s</a>", pages[i].home);
        snprintf(name, sizeof(name), "%s: home link to /", l);
        has_str(h, want, name);
        okf(!strstr(h, "http://") && !strstr(h, "https://") && !strstr(h, "<script")
            && !strstr(h, "src=") && !strstr(h, "url(") && !strstr(h, "@import"),
            "%s: self-contained (no http://, https://, <script, src=, url()", l);
        okf(valid_utf8(h), "%s: valid UTF-8", l);
        okf(strlen(h) > 8 && strcmp(h + strlen(h) - 8, "</html>\n") == 0,
            "%s: ends with </html>", l);
        okf(i == 0 || !strstr(h, "Too many requests"),
            "%s: no other language's heading", l);
    }
}

static void test_html_details(void)
{
    hl_reject_info_t info = sample_info("en", 1);
    char *h;

    h = hl_render_html(pool, &info);
    has_str(h, "Please wait 1 second before trying again.", "en: singular '1 second'");
    ok(!strstr(h, "1 seconds"), "en: never '1 seconds'");

    info.lang = "es";
    has_str(hl_render_html(pool, &info), "Espere 1 segundo antes", "es: singular");
    info.lang = "fr";
    has_str(hl_render_html(pool, &info), "patienter 1 seconde avant", "fr: singular");
    info.lang = "de";
    has_str(hl_render_html(pool, &info), "warten Sie 1 Sekunde,", "de: singular");
    info.lang = "ar";
    has_str(hl_render_html(pool, &info), "لمدة ثانية واحدة قبل", "ar: one");
    info.retry_after = 2;
    has_str(hl_render_html(pool, &info), "لمدة ثانيتين قبل", "ar: two");
    info.retry_after = 5;
    has_str(hl_render_html(pool, &info), "لمدة 5 ثوانٍ قبل", "ar: few");
    info.retry_after = 11;
    has_str(hl_render_html(pool, &info), "لمدة 11 ثانية قبل", "ar: other (11)");
    info.retry_after = 660;
    has_str(hl_render_html(pool, &info), "لمدة 11 دقيقة قبل", "ar: other (11 minutes)");
    info.retry_after = 3 * 3600;
    has_str(hl_render_html(pool, &info), "لمدة 3 ساعات قبل", "ar: few (3 hours)");
    info.retry_after = 103 * 86400;
    has_str(hl_render_html(pool, &info), "لمدة 103 أيام قبل", "ar: few (103 days)");

    info = sample_info("xx", 3600);
    h = hl_render_html(pool, &info);
    has_str(h, "<html lang=\"en\" dir=\"ltr\">", "unknown language falls back to en");
    has_str(h, "Please wait 1 hour before", "en: 3600 seconds is 1 hour");
    info.lang = NULL;
    has_str(hl_render_html(pool, &info), "<html lang=\"en\"", "NULL language falls back to en");
    info.lang = "JA";
    has_str(hl_render_html(pool, &info), "<html lang=\"ja\"", "language code case ignored");

    info = sample_info("en", 0);
    has_str(hl_render_html(pool, &info), "Please wait 1 second", "retry_after 0 shown as 1");

    info = sample_info("en", 30);
    info.route = "/<script>alert(1)</script>";
    h = hl_render_html(pool, &info);
    ok(!strstr(h, "<script"), "a hostile route never appears raw in the page");
}

static void test_template(void)
{
    hl_reject_info_t info = sample_info("fr", 30);
    hl_policy_view_t pols[2];
    char *s;

    is_str(hl_render_template(pool,
               "<p>{{RETRY_AFTER}}s {{LIMIT}}/{{WINDOW}} {{ROUTE}} {{LANG}}</p>", &info),
           "<p>30s 5/1m /user/login fr</p>", "all placeholders replaced");
    is_str(hl_render_template(pool, "{{ROUTE}}{{ROUTE}}", &info),
           "/user/login/user/login", "a placeholder twice");
    is_str(hl_render_template(pool, "", &info), "", "empty template");
    is_str(hl_render_template(pool, NULL, &info), "", "NULL template gives \"\"");
    is_str(hl_render_template(pool, "no placeholders {} { } }}", &info),
           "no placeholders {} { } }}", "plain text kept");
    is_str(hl_render_template(pool, "a {{UNKNOWN}} b {{route}} c {{ ROUTE }}", &info),
           "a {{UNKNOWN}} b {{route}} c {{ ROUTE }}", "unknown placeholders kept verbatim");
    is_str(hl_render_template(pool, "x {{ y {{", &info), "x {{ y {{", "lone {{ kept");
    is_str(hl_render_template(pool, "{{{LANG}}}", &info), "{fr}", "extra braces around");
    is_str(hl_render_template(pool, "{{LANG}", &info), "{{LANG}", "half-closed kept");
    is_str(hl_render_template(pool, "{{LANG", &info), "{{LANG", "unclosed at the end kept");
    is_str(hl_render_template(pool, "{{", &info), "{{", "only {{");
    is_str(hl_render_template(pool, "{{AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA}}", &info),
           "{{AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA}}", "long unknown name kept");

    info.route = "/a<script>\"&'x";
    is_str(hl_render_template(pool, "<b>{{ROUTE}}</b>", &info),
           "<b>/a&lt;script&gt;&quot;&amp;&#39;x</b>", "route HTML-escaped");
    info.route = "/{{ROUTE}}";
    is_str(hl_render_template(pool, "{{ROUTE}}", &info), "/{{ROUTE}}",
           "a value is not expanded again");
    info.route = NULL;
    is_str(hl_render_template(pool, "[{{ROUTE}}]", &info), "[]", "NULL route gives \"\"");
    info.lang = "<x>";
    is_str(hl_render_template(pool, "{{LANG}}", &info), "&lt;x&gt;", "LANG escaped");
    info.lang = NULL;
    is_str(hl_render_template(pool, "{{LANG}}", &info), "en", "NULL LANG gives en");

    /* LIMIT and WINDOW describe the first violated policy, else the first */
    memcpy(pols, two_pols, sizeof(pols));
    pols[0].violated = 0;
    pols[1].violated = 1;
    info = sample_info("en", 30);
    info.policies = pols;
    is_str(hl_render_template(pool, "{{LIMIT}} in {{WINDOW}}", &info), "30 in 1h",
           "LIMIT/WINDOW of the violated policy");
    pols[1].violated = 0;
    is_str(hl_render_template(pool, "{{LIMIT}} in {{WINDOW}}", &info), "5 in 1m",
           "LIMIT/WINDOW of the first when none violated");
    pols[0].name = "odd<name>";
    is_str(hl_render_template(pool, "{{WINDOW}}", &info), "60s",
           "WINDOW from window_s when the name is not COUNT/WINDOW");
    pols[0].name = "10/<b>";
    is_str(hl_render_template(pool, "{{WINDOW}}", &info), "&lt;b&gt;", "WINDOW escaped");
    pols[0].name = NULL;
    is_str(hl_render_template(pool, "{{WINDOW}}", &info), "60s", "NULL name: window_s");
    info.npolicies = 0;
    is_str(hl_render_template(pool, "[{{LIMIT}}|{{WINDOW}}]", &info), "[|]",
           "no policy: LIMIT and WINDOW empty");

    /* linear on hostile templates */
    {
        size_t n = 1024 * 1024, i;
        char *t = malloc(n + 1);
        clock_t t0;
        double secs;

        for (i = 0; i < n; i++)
            t[i] = "{{AAAAAAAAAAAAAAA"[i % 17];
        t[n] = '\0';
        t0 = clock();
        s = hl_render_template(pool, t, &info);
        secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
        ok(strcmp(s, t) == 0 && secs < 1.0, "1 MiB of '{{AAAA...' kept, quickly");
        memset(t, '{', n);
        s = hl_render_template(pool, t, &info);
        ok(strcmp(s, t) == 0, "1 MiB of '{' kept");
        free(t);
    }
}

static void test_problem_json(void)
{
    hl_reject_info_t info = sample_info("de", 30);
    hl_policy_view_t pols[2];

    is_str(hl_render_problem_json(pool, &info),
           "{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
           "\"title\":\"Too Many Requests\",\"status\":429,"
           "\"detail\":\"Too many requests for /user/login; retry after 30 seconds.\","
           "\"retry_after\":30,\"route\":\"/user/login\",\"violated-policies\":[\"5/1m\"]}",
           "problem JSON, exact");

    memcpy(pols, two_pols, sizeof(pols));
    pols[0].violated = 0;
    info.policies = pols;
    info.retry_after = 1;
    is_str(hl_render_problem_json(pool, &info),
           "{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
           "\"title\":\"Too Many Requests\",\"status\":429,"
           "\"detail\":\"Too many requests for /user/login; retry after 1 second.\","
           "\"retry_after\":1,\"route\":\"/user/login\","
           "\"violated-policies\":[\"5/1m\",\"30/1h\"]}",
           "none violated: all names; singular second");
    pols[0].violated = 1;
    pols[1].violated = 1;
    has_str(hl_render_problem_json(pool, &info), "\"violated-policies\":[\"5/1m\",\"30/1h\"]}",
            "both violated: both names");
    info.npolicies = 0;
    has_str(hl_render_problem_json(pool, &info), "\"violated-policies\":[]}",
            "no policies: empty array");

    info = sample_info("en", 30);
    info.route = "/a\"b\\c\nd\x01" "e\x7f/\xc3\xa9";
    is_str(hl_render_problem_json(pool, &info),
           "{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
           "\"title\":\"Too Many Requests\",\"status\":429,"
           "\"detail\":\"Too many requests for /a\\\"b\\\\c\\u000ad\\u0001e\x7f/\xc3\xa9;"
           " retry after 30 seconds.\","
           "\"retry_after\":30,\"route\":\"/a\\\"b\\\\c\\u000ad\\u0001e\x7f/\xc3\xa9\","
           "\"violated-policies\":[\"5/1m\"]}",
           "route with quote, backslash, newline, \\x01 escaped; UTF-8 kept");
    info.route = NULL;
    has_str(hl_render_problem_json(pool, &info),
            "\"detail\":\"Too many requests; retry after 30 seconds.\","
            "\"retry_after\":30,\"route\":\"\"", "NULL route");
}

static void test_escapers(void)
{
    is_str(hl_html_escape(pool, "<script>\"&'"), "&lt;script&gt;&quot;&amp;&#39;",
           "html escape");
    is_str(hl_html_escape(pool, "plain / text é"), "plain / text é", "html escape keeps the rest");
    is_str(hl_html_escape(pool, NULL), "", "html escape NULL");
    is_str(hl_html_escape(pool, ""), "", "html escape empty");

    is_str(hl_json_escape(pool, "a\"b\\c"), "a\\\"b\\\\c", "json escape quote and backslash");
    is_str(hl_json_escape(pool, "\n\r\t\x01\x1f"), "\\u000a\\u000d\\u0009\\u0001\\u001f",
           "json escape control characters");
    is_str(hl_json_escape(pool, "</é€😀>"), "</é€😀>", "json keeps well-formed UTF-8");
    is_str(hl_json_escape(pool, "a\xff" "b"), "a\\ufffdb", "json: stray byte becomes \\ufffd");
    is_str(hl_json_escape(pool, "\xc3"), "\\ufffd", "json: cut sequence");
    is_str(hl_json_escape(pool, "\xc0\xaf"), "\\ufffd\\ufffd", "json: overlong");
    is_str(hl_json_escape(pool, "\xed\xa0\x80"), "\\ufffd\\ufffd\\ufffd", "json: surrogate");
    is_str(hl_json_escape(pool, "\xf4\x90\x80\x80"), "\\ufffd\\ufffd\\ufffd\\ufffd",
           "json: above U+10FFFF");
    is_str(hl_json_escape(pool, NULL), "", "json escape NULL");

    /* every single byte gives valid JSON string content */
    {
        int c, good = 1;
        char in[4], *out;

        for (c = 1; c < 256; c++) {
            in[0] = 'x';
            in[1] = (char)c;
            in[2] = '\0';
            out = hl_json_escape(pool, in);
            if (!valid_utf8(out) || strchr(out, '\n') || (c == '"' && !strstr(out, "\\\"")))
                good = 0;
            for (; *out; out++) {
                if ((unsigned char)*out < 0x20)
                    good = 0;
            }
        }
        ok(good, "json escape: every byte gives valid UTF-8 without control characters");
    }
}

static void test_headers(void)
{
    hl_policy_view_t pols[3];

    is_str(hl_render_policy_header(pool, two_pols, 2),
           "\"5/1m\";q=5;w=60, \"30/1h\";q=30;w=3600", "RateLimit-Policy, two windows");
    is_str(hl_render_policy_header(pool, two_pols, 1), "\"5/1m\";q=5;w=60",
           "RateLimit-Policy, one window");
    is_str(hl_render_policy_header(pool, two_pols, 0), "", "RateLimit-Policy, none");
    is_str(hl_render_policy_header(pool, NULL, 2), "", "RateLimit-Policy, NULL");
    is_str(hl_render_ratelimit_header(pool, two_pols, 2), "\"5/1m\";r=0;t=42",
           "RateLimit: least remaining");
    is_str(hl_render_ratelimit_header(pool, two_pols, 0), "", "RateLimit, none");
    is_str(hl_render_ratelimit_header(pool, NULL, 1), "", "RateLimit, NULL");

    memcpy(pols, two_pols, sizeof(two_pols));
    pols[0].remaining = 3;
    pols[1].remaining = 3;
    pols[2] = pols[1];
    pols[2].name = "3/1d";
    is_str(hl_render_ratelimit_header(pool, pols, 3), "\"30/1h\";r=3;t=3000",
           "RateLimit tie: the larger reset, then the first");
    pols[1].reset_s = 42;
    pols[2].reset_s = 42;
    is_str(hl_render_ratelimit_header(pool, pols, 3), "\"5/1m\";r=3;t=42",
           "RateLimit full tie: the first");
    pols[2].remaining = 1;
    pols[2].reset_s = -5;
    is_str(hl_render_ratelimit_header(pool, pols, 3), "\"3/1d\";r=1;t=0",
           "RateLimit: negative reset written as 0");

    pols[0].name = "a\"b\\c\x01\xc3\xa9~";
    pols[0].limit = 4294967295u;
    pols[0].window_s = 2592000;
    is_str(hl_render_policy_header(pool, pols, 1),
           "\"a\\\"b\\\\c???~\";q=4294967295;w=2592000", "sf-string escaping, large numbers");
    pols[0].name = NULL;
    is_str(hl_render_policy_header(pool, pols, 1), "\"\";q=4294967295;w=2592000",
           "NULL name gives an empty sf-string");
}

/* The per-request texts: REMAINING, and the RateLimit value in the same
 * allocation, equal to what hl_render_ratelimit_value makes. */
static void test_remaining(void)
{
    const char *prefix = hl_render_ratelimit_prefix(pool, "2000000000/1h");
    const char *value = "unset", *rem;

    rem = hl_render_remaining(pool, 1999997999u, NULL, 0, 42, &value);
    is_str(rem, "1999997999", "REMAINING without headers");
    ok(value == NULL, "no RateLimit value without a prefix");
    rem = hl_render_remaining(pool, 4294967295u, prefix, strlen(prefix), 3595,
                              &value);
    is_str(rem, "4294967295", "REMAINING with headers");
    is_str(value, hl_render_ratelimit_value(pool, prefix, rem, 3595),
           "RateLimit value as hl_render_ratelimit_value makes it");
    is_str(value, "\"2000000000/1h\";r=4294967295;t=3595", "RateLimit value");
    rem = hl_render_remaining(pool, 0, prefix, strlen(prefix), -5, &value);
    is_str(rem, "0", "REMAINING 0");
    is_str(value, "\"2000000000/1h\";r=0;t=0", "negative reset written as 0");
}

/* Several quotas in one RateLimit-Policy: alike names made distinct, in
 * order, the first kept as it is. */
static void test_distinct_names(void)
{
    hl_policy_view_t pols[5];
    int i;

    memset(pols, 0, sizeof(pols));
    for (i = 0; i < 5; i++) {
        pols[i].limit = 5;
        pols[i].window_s = 60;
    }
    pols[0].name = "5/1m";
    pols[1].name = "30/1h";
    pols[2].name = "5/1m";
    pols[3].name = "5/1m-2";   /* taken already by the time it comes */
    pols[4].name = "5/1m";
    hl_render_distinct_names(pool, pols, 5);
    is_str(pols[0].name, "5/1m", "distinct names: the first kept");
    is_str(pols[1].name, "30/1h", "distinct names: a unique one kept");
    is_str(pols[2].name, "5/1m-2", "distinct names: the second 5/1m is 5/1m-2");
    is_str(pols[3].name, "5/1m-2-2", "distinct names: a name equal to a renamed one");
    is_str(pols[4].name, "5/1m-3", "distinct names: the third 5/1m is 5/1m-3");
    is_str(hl_render_policy_header(pool, pols, 3),
           "\"5/1m\";q=5;w=60, \"30/1h\";q=5;w=60, \"5/1m-2\";q=5;w=60",
           "distinct names in RateLimit-Policy");
    hl_render_distinct_names(pool, pols, 0);
    hl_render_distinct_names(pool, NULL, 3);
    ok(1, "distinct names: none, or NULL, is a no-op");
}

/* A quota's windows as the responses show them: names rendered or given,
 * COUNT, WINDOW rounded up to whole seconds, nothing of a decision. */
static void test_quota_views(void)
{
    static const char *const given[] = { "a", "b", "c" };
    const char *argv[] = { "5/1m", "30/1h", "3/1500ms" };
    hl_policy_view_t v[HL_MAX_WINDOWS];
    hl_quota_t q;
    char err[256];

    memset(v, 0x5a, sizeof(v));
    ok(hl_quota_parse_args(&q, 3, argv, err, sizeof(err)) == 0, "views: quota parsed");
    hl_render_quota_views(pool, &q, NULL, v);
    is_str(v[0].name, "5/1m", "views: a rendered name");
    is_str(v[2].name, "3/1500ms", "views: a name in milliseconds");
    is_int(v[1].limit, 30, "views: the limit is COUNT");
    is_int(v[0].window_s, 60, "views: WINDOW in seconds");
    is_int(v[2].window_s, 2, "views: WINDOW rounded up to a whole second");
    ok(v[1].remaining == 0 && v[1].reset_s == 0 && v[1].violated == 0,
       "views: nothing of a decision");
    hl_render_quota_views(pool, &q, given, v);
    is_str(v[1].name, "b", "views: a name given is kept");
    is_str(hl_render_policy_header(pool, v, q.nwindows),
           "\"a\";q=5;w=60, \"b\";q=30;w=3600, \"c\";q=3;w=2",
           "views: as RateLimit-Policy lists them");
}

/* COUNT in decimal: one text for RateLimit-Policy, HOTLIMIT_LIMIT and
 * {{LIMIT}}. */
static void test_count(void)
{
    is_str(hl_render_count(pool, 0), "0", "count: 0");
    is_str(hl_render_count(pool, 5), "5", "count: 5");
    is_str(hl_render_count(pool, 1000000), "1000000", "count: 1000000");
    is_str(hl_render_count(pool, 4294967295u), "4294967295", "count: the largest");
}

/* How long to wait in words, per language: exact under a minute, then the
 * largest unit that fits once, counted down, "about" when inexact. */
static void test_wait_words(void)
{
    static const struct {
        const char *lang;
        long s;
        const char *want;
    } cases[] = {
        { "en", 1, "1 second" }, { "en", 45, "45 seconds" },
        { "en", 60, "1 minute" }, { "en", 2853, "about 47 minutes" },
        { "en", 3600, "1 hour" }, { "en", 7300, "about 2 hours" },
        { "en", 86400, "1 day" }, { "en", 3 * 86400 + 5, "about 3 days" },
        { "zh", 30, "30 秒" }, { "zh", 2853, "约 47 分钟" },
        { "zh", 7200, "2 小时" }, { "zh", 86400 * 2, "2 天" },
        { "es", 1, "1 segundo" }, { "es", 2853, "aproximadamente 47 minutos" },
        { "es", 3600, "1 hora" }, { "es", 86400 * 2, "2 días" },
        { "fr", 60, "1 minute" }, { "fr", 2853, "environ 47 minutes" },
        { "fr", 7200, "2 heures" }, { "fr", 86400, "1 jour" },
        { "de", 1, "1 Sekunde" }, { "de", 2853, "etwa 47 Minuten" },
        { "de", 3600, "1 Stunde" }, { "de", 86400 * 3, "3 Tage" },
        { "ar", 60, "دقيقة واحدة" }, { "ar", 120, "دقيقتين" },
        { "ar", 2853, "حوالي 47 دقيقة" }, { "ar", 5 * 3600, "5 ساعات" },
        { "ar", 86400 * 2, "يومين" }, { "ar", 86400 * 11, "11 يومًا" },
        { "ja", 30, "30秒" }, { "ja", 2853, "約47分" },
        { "ja", 3600, "1時間" }, { "ja", 86400 * 2, "2日" },
        { NULL, 0, "1 second" }, { "xx", 2853, "about 47 minutes" },
        { "EN", 120, "2 minutes" },
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        okf(strcmp(hl_duration_words(pool, cases[i].lang, cases[i].s), cases[i].want) == 0,
            "%s %ld s: \"%s\" (got \"%s\")", cases[i].lang ? cases[i].lang : "NULL",
            cases[i].s, cases[i].want, hl_duration_words(pool, cases[i].lang, cases[i].s));
}

/* The built-in page in every language says how long in words, never
 * "2853 seconds"; a banned client is told it is banned and for how long. */
static void test_html_human_and_banned(void)
{
    static const struct {
        const char *lang, *wait, *banned;
    } pages[] = {
        { "en", "Please wait about 47 minutes before trying again.",
          "This address is banned for about 47 minutes after too many refused requests." },
        { "zh", "请在 约 47 分钟后重试。", "此地址已被封禁 约 47 分钟。" },
        { "es", "Espere aproximadamente 47 minutos antes",
          "Esta dirección está bloqueada durante aproximadamente 47 minutos" },
        { "fr", "Veuillez patienter environ 47 minutes avant",
          "Cette adresse est bannie pour environ 47 minutes" },
        { "de", "Bitte warten Sie etwa 47 Minuten, bevor",
          "für etwa 47 Minuten gesperrt." },
        { "ar", "يُرجى الانتظار لمدة حوالي 47 دقيقة قبل",
          "تم حظر هذا العنوان لمدة حوالي 47 دقيقة" },
        { "ja", "約47分待ってから", "このアドレスは約47分ブロックされています。" },
    };
    size_t i;

    for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
        hl_reject_info_t info = sample_info(pages[i].lang, 2853);
        char *h = hl_render_html(pool, &info);

        okf(strstr(h, pages[i].wait) != NULL, "%s: wait in words", pages[i].lang);
        okf(!strstr(h, "2853"), "%s: never 2853 seconds", pages[i].lang);
        okf(!strstr(h, pages[i].banned), "%s: not banned, not said so", pages[i].lang);
        info.banned = 1;
        h = hl_render_html(pool, &info);
        okf(strstr(h, pages[i].banned) != NULL, "%s: banned, and for how long",
            pages[i].lang);
        okf(valid_utf8(h), "%s: banned page valid UTF-8", pages[i].lang);
    }
}

/* A banned client's problem object names the ban, not the quota's
 * policies. */
static void test_problem_banned(void)
{
    hl_reject_info_t info = sample_info("en", 3600);
    char *j;

    info.banned = 1;
    j = hl_render_problem_json(pool, &info);
    has_str(j, "\"detail\":\"This client is banned for 1 hour after too many "
               "refused requests; retry after 3600 seconds.\"", "banned: detail");
    has_str(j, "\"banned\":true,\"violated-policies\":[\"ban\"]}", "banned: names the ban");
    ok(!strstr(j, "5/1m") && !strstr(j, "30/1h"), "banned: no quota listed as violated");
}

int main(void)
{
    apr_initialize();
    apr_pool_create(&pool, NULL);
    test_languages();
    test_html_pages();
    test_html_details();
    test_template();
    test_problem_json();
    test_escapers();
    test_headers();
    test_remaining();
    test_distinct_names();
    test_quota_views();
    test_count();
    test_wait_words();
    test_html_human_and_banned();
    test_problem_banned();
    apr_pool_destroy(pool);
    apr_terminate();
    return done_testing();
}
