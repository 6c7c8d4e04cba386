/*
 * hl_render.c - what a throttled client reads: the built-in HTML page (en zh
 * es fr de ar ja), an administrator's template with {{PLACEHOLDERS}}, the
 * RFC 9457 problem object, and the RateLimit-Policy / RateLimit header
 * values (draft-ietf-httpapi-ratelimit-headers).
 *
 * Every string returned is allocated from the caller's pool and is never
 * NULL; nothing here keeps state. Everything that came from a request (the
 * route above all) is escaped for where it goes: HTML, JSON or a
 * structured-field string. All loops are linear in their input.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <apr_strings.h>
#include "hl_render.h"
#include "hl_fmt.h"
#include "hl_buf.h"
#include "hl_tightest.h"
#include "hl_duration.h"

/* ---- a string that grows inside a pool --------------------------------- */

/* Appends the NUL-terminated s (NULL appends nothing). */
static void sb_add(hl_buf_t *b, const char *s)
{
    if (s != NULL)
        hl_buf_addn(b, s, strlen(s));
}

/* Appends an unsigned decimal number. */
static void sb_add_u64(hl_buf_t *b, unsigned long long v)
{
    char num[HL_FMT_U64_MAX];

    hl_buf_addn(b, num, hl_fmt_u64(num, v));
}

/* ---- what the responses say of a quota ---------------------------------- */

void hl_render_quota_views(apr_pool_t *p, const hl_quota_t *q,
                           const char *const *names, hl_policy_view_t *v)
{
    int i;

    for (i = 0; i < q->nwindows && i < HL_MAX_WINDOWS; ++i) {
        const hl_window_t *w = &q->windows[i];

        if (names != NULL)
            v[i].name = names[i];
        else {
            char name[48];
            v[i].name = apr_pstrdup(p, hl_window_name(w, name, sizeof(name)));
        }
        v[i].limit = w->count;
        v[i].window_s = (w->window_ms + 999) / 1000;
        v[i].remaining = 0;
        v[i].reset_s = 0;
        v[i].reset_ms = 0;
        v[i].violated = 0;
        v[i].tokens = q->cost_usage || q->cost_name[0] != '\0';
    }
}

char *hl_render_count(apr_pool_t *p, uint32_t count)
{
    char num[HL_FMT_U64_MAX];

    return apr_pstrmemdup(p, num, hl_fmt_u64(num, count));
}

/* ---- escapers ---------------------------------------------------------- */

/*
 * Writes s HTML-escaped into out, or only counts when out is NULL.
 * Returns the escaped length (without the NUL; out gets no NUL either).
 */
static size_t html_escape_into(char *out, const char *s)
{
    size_t n = 0, k;
    const char *rep;

    for (; *s != '\0'; s++) {
        switch (*s) {
        case '&':  rep = "&amp;";  break;
        case '<':  rep = "&lt;";   break;
        case '>':  rep = "&gt;";   break;
        case '"':  rep = "&quot;"; break;
        case '\'': rep = "&#39;";  break;
        default:   rep = NULL;     break;
        }
        if (rep == NULL) {
            if (out)
                out[n] = *s;
            n++;
            continue;
        }
        k = strlen(rep);
        if (out)
            memcpy(out + n, rep, k);
        n += k;
    }
    return n;
}

/* Returns s escaped by `into` (which returns the length and, when out is
 * not NULL, writes it), allocated from p; NULL gives "". */
static char *escape_with(apr_pool_t *p, const char *s,
                         size_t (*into)(char *out, const char *s))
{
    char *out;
    size_t n;

    if (s == NULL)
        return apr_pstrdup(p, "");
    n = into(NULL, s);
    out = apr_palloc(p, n + 1);
    into(out, s);
    out[n] = '\0';
    return out;
}

/* Returns s with & < > " ' escaped for HTML, allocated from p; NULL gives "". */
char *hl_html_escape(apr_pool_t *p, const char *s)
{
    return escape_with(p, s, html_escape_into);
}

/*
 * Returns the length (1..4) of the well-formed UTF-8 sequence at s, or 0
 * when the byte at s does not start one (stray continuation byte, overlong
 * form, surrogate, beyond U+10FFFF, cut short). Never reads past a NUL.
 */
static int utf8_len(const unsigned char *s)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xBF;
    int len, i;

    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4;
    else
        return 0;
    if (c == 0xE0)
        lo = 0xA0;
    else if (c == 0xED)
        hi = 0x9F;
    else if (c == 0xF0)
        lo = 0x90;
    else if (c == 0xF4)
        hi = 0x8F;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (i = 2; i < len; i++) {
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    }
    return len;
}

/*
 * Writes s escaped for the inside of a JSON string into out, or only counts
 * when out is NULL. Returns the escaped length (out gets no NUL).
 */
static size_t json_escape_into(char *out, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    size_t n = 0;
    int len;

    while (*u != '\0') {
        if (*u == '"' || *u == '\\') {
            if (out) {
                out[n] = '\\';
                out[n + 1] = (char)*u;
            }
            n += 2;
            u++;
        } else if (*u < 0x20) {
            if (out) {
                memcpy(out + n, "\\u00", 4);
                out[n + 4] = hex[*u >> 4];
                out[n + 5] = hex[*u & 0x0F];
            }
            n += 6;
            u++;
        } else if ((len = utf8_len(u)) == 0) {
            if (out)
                memcpy(out + n, "\\ufffd", 6);
            n += 6;
            u++;
        } else {
            if (out)
                memcpy(out + n, u, (size_t)len);
            n += (size_t)len;
            u += len;
        }
    }
    return n;
}

/*
 * Returns s escaped for a JSON string (no quotes added), allocated from p;
 * NULL gives "". " and \ get a backslash, control characters become
 * \u00XX, well-formed UTF-8 passes through, and each byte that is not part
 * of well-formed UTF-8 becomes \ufffd, so the result is valid JSON for any
 * input bytes.
 */
char *hl_json_escape(apr_pool_t *p, const char *s)
{
    return escape_with(p, s, json_escape_into);
}

/*
 * Appends s as an RFC 8941 sf-string, quotes included: " and \ get a
 * backslash, bytes outside printable ASCII become '?'. NULL gives "".
 */
static void sb_add_sf_string(hl_buf_t *b, const char *s)
{
    const char *run;

    hl_buf_addn(b, "\"", 1);
    while (s != NULL && *s != '\0') {
        /* Copy the longest run of bytes that need no escaping at once. */
        for (run = s; *s != '\0' && *s != '"' && *s != '\\'
                      && (unsigned char)*s >= 0x20 && (unsigned char)*s <= 0x7E; s++)
            ;
        hl_buf_addn(b, run, (size_t)(s - run));
        if (*s == '"' || *s == '\\') {
            hl_buf_addn(b, "\\", 1);
            hl_buf_addn(b, s++, 1);
        }
        else if (*s != '\0') {
            hl_buf_addn(b, "?", 1);
            s++;
        }
    }
    hl_buf_addn(b, "\"", 1);
}

/* ---- helpers shared by the bodies -------------------------------------- */

/* Returns info->retry_after, or 1 when it is below 1 (Retry-After is >= 1). */
static long retry_of(const hl_reject_info_t *info)
{
    return info->retry_after < 1 ? 1 : info->retry_after;
}

/* Returns the first violated policy, else the first, else NULL. */
static const hl_policy_view_t *main_policy(const hl_reject_info_t *info)
{
    int i;

    if (info->policies == NULL || info->npolicies <= 0)
        return NULL;
    for (i = 0; i < info->npolicies; i++) {
        if (info->policies[i].violated)
            return &info->policies[i];
    }
    return &info->policies[0];
}

/* ---- the built-in page ------------------------------------------------- */

/* The texts of the page in one language. UTF-8 literals, trusted. How
 * long to wait is hl_duration_words' (in the same language). */
typedef struct {
    const char  *code;       /* lang attribute */
    const char  *dir;        /* "ltr" or "rtl" */
    const char  *title;      /* "Too many requests": title and heading */
    const char  *lead;       /* one sentence on what happened */
    const char  *wait_pre;   /* the wait sentence: wait_pre WAIT wait_post */
    const char  *wait_post;
    const char  *ban_pre;    /* a banned client's lead: ban_pre WAIT ban_post */
    const char  *ban_post;
    const char  *retry;      /* link to the same page */
    const char  *home;       /* link to "/" */
} hl_page_lang_t;

static const hl_page_lang_t hl_pages[] = {
    { "en", "ltr", "Too many requests",
      "Too many requests were sent in a short time.",
      "Please wait ", " before trying again.",
      "This address is banned for ", " after too many refused requests.",
      "Try again", "Home page" },
    { "zh", "ltr", "请求过于频繁",
      "短时间内发送的请求过多。",
      "请在 ", "后重试。",
      "由于被拒绝的请求过多，此地址已被封禁 ", "。",
      "重试", "返回首页" },
    { "es", "ltr", "Demasiadas solicitudes",
      "Se han enviado demasiadas solicitudes en poco tiempo.",
      "Espere ", " antes de volver a intentarlo.",
      "Esta dirección está bloqueada durante ",
      " por demasiadas solicitudes rechazadas.",
      "Volver a intentarlo", "Página de inicio" },
    { "fr", "ltr", "Trop de requêtes",
      "Trop de requêtes ont été envoyées en peu de temps.",
      "Veuillez patienter ", " avant de réessayer.",
      "Cette adresse est bannie pour ", " après trop de requêtes refusées.",
      "Réessayer", "Page d’accueil" },
    { "de", "ltr", "Zu viele Anfragen",
      "In kurzer Zeit wurden zu viele Anfragen gesendet.",
      "Bitte warten Sie ", ", bevor Sie es erneut versuchen.",
      "Diese Adresse ist nach zu vielen abgelehnten Anfragen für ",
      " gesperrt.",
      "Erneut versuchen", "Startseite" },
    { "ar", "rtl", "طلبات كثيرة جدًا",
      "تم إرسال عدد كبير جدًا من الطلبات خلال وقت قصير.",
      "يُرجى الانتظار لمدة ", " قبل المحاولة مرة أخرى.",
      "تم حظر هذا العنوان لمدة ", " بسبب كثرة الطلبات المرفوضة.",
      "إعادة المحاولة", "الصفحة الرئيسية" },
    { "ja", "ltr", "リクエストが多すぎます",
      "短時間に送信されたリクエストが多すぎます。",
      "", "待ってから、もう一度お試しください。",
      "拒否されたリクエストが多すぎるため、このアドレスは",
      "ブロックされています。",
      "再試行", "トップページ" },
};

#define HL_NPAGES (sizeof(hl_pages) / sizeof(hl_pages[0]))

/* Returns the code of built-in page language i (static), NULL past the
 * last. hl_pages is the one list of languages: negotiation reads it here. */
const char *hl_render_language(size_t i)
{
    return i < HL_NPAGES ? hl_pages[i].code : NULL;
}

/* Returns the page texts for lang (ASCII case ignored), en when unknown or NULL. */
static const hl_page_lang_t *page_lang(const char *lang)
{
    size_t i;

    for (i = 0; lang != NULL && i < HL_NPAGES; i++) {
        if (strcasecmp(lang, hl_pages[i].code) == 0)
            return &hl_pages[i];
    }
    return &hl_pages[0];
}

static const char hl_page_css[] =
    ":root{color-scheme:light dark}"
    "*{box-sizing:border-box}"
    "body{margin:0;min-height:100vh;display:flex;align-items:center;"
    "justify-content:center;padding:24px;background:#f4f5f7;color:#1f2328;"
    "font:16px/1.6 system-ui,-apple-system,\"Segoe UI\",Roboto,\"Noto Sans\","
    "\"Helvetica Neue\",Arial,sans-serif}"
    "main{width:100%;max-width:34rem;background:#fff;border-radius:16px;"
    "padding:40px 32px;text-align:center;"
    "box-shadow:0 1px 3px rgba(0,0,0,.08),0 8px 24px rgba(0,0,0,.06)}"
    ".code{margin:0;font-size:64px;font-weight:700;line-height:1;color:#cf222e}"
    "h1{margin:16px 0 8px;font-size:24px;line-height:1.3}"
    "p{margin:8px 0;color:#59636e}"
    ".wait{color:#1f2328;font-weight:600}"
    "nav{margin-top:28px;display:flex;gap:12px;justify-content:center;flex-wrap:wrap}"
    "a{display:inline-block;padding:10px 20px;border-radius:8px;"
    "text-decoration:none;font-weight:600}"
    "a.retry{background:#0969da;color:#fff}"
    "a.home{border:1px solid #d0d7de;color:#0969da}"
    "a:hover{text-decoration:underline}"
    "a:focus-visible{outline:3px solid #54aeff;outline-offset:2px}"
    "@media (prefers-color-scheme:dark){"
    "body{background:#0d1117;color:#e6edf3}"
    "main{background:#161b22;box-shadow:none;border:1px solid #30363d}"
    "p{color:#9198a1}.wait{color:#e6edf3}.code{color:#ff7b72}"
    "a.retry{background:#1f6feb}a.home{border-color:#30363d;color:#4493f8}}";

/*
 * Returns the built-in page in info->lang (en when unknown), allocated from
 * p, never NULL. It shows no request data (not even the route), so nothing
 * in it needs escaping.
 */
char *hl_render_html(apr_pool_t *p, const hl_reject_info_t *info)
{
    const hl_page_lang_t *l = page_lang(info->lang);
    const char *words = hl_duration_words(p, l->code, retry_of(info));
    const char *wait = apr_pstrcat(p, l->wait_pre, words, l->wait_post, NULL);
    const char *lead = info->banned
                       ? apr_pstrcat(p, l->ban_pre, words, l->ban_post, NULL)
                       : l->lead;

    return apr_pstrcat(p,
        "<!DOCTYPE html>\n"
        "<html lang=\"", l->code, "\" dir=\"", l->dir, "\">\n"
        "<head>\n"
        "<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"robots\" content=\"noindex, nofollow\">\n"
        "<title>", l->title, "</title>\n"
        "<style>", hl_page_css, "</style>\n"
        "</head>\n"
        "<body>\n"
        "<main>\n"
        "<p class=\"code\">429</p>\n"
        "<h1>", l->title, "</h1>\n"
        "<p>", lead, "</p>\n"
        "<p class=\"wait\">", wait, "</p>\n"
        "<nav><a class=\"retry\" href=\"\">", l->retry, "</a>"
        "<a class=\"home\" href=\"/\">", l->home, "</a></nav>\n"
        "</main>\n"
        "</body>\n"
        "</html>\n", NULL);
}

/* ---- the administrator's template -------------------------------------- */

#define HL_PLACEHOLDER_MAX 16   /* longest name between the braces we look at */

/*
 * Returns the window of pol as people read it: the part after '/' of a
 * name shaped "COUNT/WINDOW" ("5/1m" gives "1m"), else "<window_s>s".
 * Allocated from p (or pointing into pol->name).
 */
static const char *window_text(apr_pool_t *p, const hl_policy_view_t *pol)
{
    const char *s = pol->name;

    if (s != NULL && *s >= '0' && *s <= '9') {
        while (*s >= '0' && *s <= '9')
            s++;
        if (s[0] == '/' && s[1] != '\0')
            return s + 1;
    }
    return apr_psprintf(p, "%lus", (unsigned long)pol->window_s);
}

/*
 * Returns tpl with the placeholders of hl_render.h replaced by HTML-escaped
 * values, allocated from p, never NULL (tpl NULL gives ""). Unknown names,
 * lower-case names and a lone "{{" stay as they are. LIMIT and WINDOW are
 * "" when there is no policy. Linear: at most HL_PLACEHOLDER_MAX + 2 bytes
 * are looked at after each "{{".
 */
char *hl_render_template(apr_pool_t *p, const char *tpl,
                         const hl_reject_info_t *info)
{
    static const char *const names[] = {
        "RETRY_AFTER", "LIMIT", "WINDOW", "ROUTE", "LANG", NULL
    };
    const hl_policy_view_t *pol = main_policy(info);
    const char *values[5];
    const char *s = tpl, *brace;
    hl_buf_t b;
    size_t n;
    int k;

    if (tpl == NULL)
        return apr_pstrdup(p, "");
    values[0] = apr_ltoa(p, retry_of(info));
    values[1] = pol ? hl_render_count(p, pol->limit) : "";
    values[2] = pol ? hl_html_escape(p, window_text(p, pol)) : "";
    values[3] = hl_html_escape(p, info->route);
    values[4] = hl_html_escape(p, info->lang ? info->lang : "en");

    hl_buf_init(&b, p, strlen(tpl) + 64);
    while ((brace = strchr(s, '{')) != NULL) {
        hl_buf_addn(&b, s, (size_t)(brace - s));
        s = brace;
        if (s[1] == '{') {
            for (n = 0; n < HL_PLACEHOLDER_MAX
                        && ((s[2 + n] >= 'A' && s[2 + n] <= 'Z') || s[2 + n] == '_'); n++)
                ;
            if (n > 0 && s[2 + n] == '}' && s[3 + n] == '}') {
                for (k = 0; names[k] != NULL; k++) {
                    if (strlen(names[k]) == n && memcmp(names[k], s + 2, n) == 0)
                        break;
                }
                if (names[k] != NULL) {
                    sb_add(&b, values[k]);
                    s += n + 4;
                    continue;
                }
            }
        }
        hl_buf_addn(&b, s, 1);      /* a '{' that starts nothing we know */
        s++;
    }
    sb_add(&b, s);
    return b.s;
}

/* ---- problem details --------------------------------------------------- */

/*
 * Returns the RFC 9457 problem object of spec section 5, keys in its order,
 * allocated from p, never NULL. violated-policies names the violated
 * windows, or every window when none is flagged; a NULL name shows as "".
 */
char *hl_render_problem_json(apr_pool_t *p, const hl_reject_info_t *info)
{
    long retry = retry_of(info);
    const char *route = info->route ? info->route : "";
    const char *detail;
    int i, any_violated = 0, first = 1;
    hl_buf_t b;

    if (info->banned)
        detail = apr_psprintf(p, "This client is banned for %s after too many "
                              "refused requests; retry after %ld second%s.",
                              hl_duration_words(p, "en", retry), retry,
                              retry == 1 ? "" : "s");
    else
        detail = apr_psprintf(p, "Too many requests%s%s; retry after %ld second%s.",
                              *route ? " for " : "", route, retry,
                              retry == 1 ? "" : "s");
    for (i = 0; info->policies != NULL && i < info->npolicies; i++)
        any_violated |= info->policies[i].violated != 0;

    hl_buf_init(&b, p, 512);
    sb_add(&b, "{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
               "\"title\":\"Too Many Requests\",\"status\":429,\"detail\":\"");
    sb_add(&b, hl_json_escape(p, detail));
    sb_add(&b, "\",\"retry_after\":");
    sb_add(&b, apr_ltoa(p, retry));
    sb_add(&b, ",\"route\":\"");
    sb_add(&b, hl_json_escape(p, route));
    if (info->banned) {
        sb_add(&b, "\",\"banned\":true,\"violated-policies\":[\"ban\"]}");
        return b.s;
    }
    sb_add(&b, "\",\"violated-policies\":[");
    for (i = 0; info->policies != NULL && i < info->npolicies; i++) {
        if (any_violated && !info->policies[i].violated)
            continue;
        sb_add(&b, first ? "\"" : ",\"");
        sb_add(&b, hl_json_escape(p, info->policies[i].name));
        sb_add(&b, "\"");
        first = 0;
    }
    sb_add(&b, "]}");
    return b.s;
}

/* ---- RateLimit headers ------------------------------------------------- */

/*
 * Returns the RateLimit-Policy value, "NAME";q=COUNT;w=SECONDS joined by
 * ", ", allocated from p; "" when n <= 0 or pol is NULL. Names are written
 * as sf-strings (see sb_add_sf_string).
 */
char *hl_render_policy_header(apr_pool_t *p, const hl_policy_view_t *pol, int n)
{
    hl_buf_t b;
    int i;

    hl_buf_init(&b, p, 64);
    for (i = 0; pol != NULL && i < n; i++) {
        if (i > 0)
            sb_add(&b, ", ");
        sb_add_sf_string(&b, pol[i].name);
        sb_add(&b, ";q=");
        sb_add(&b, hl_render_count(p, pol[i].limit));
        sb_add(&b, ";w=");
        sb_add_u64(&b, pol[i].window_s);
    }
    return b.s;
}

/* Returns 1 if name is one of pol[0 .. n)'s names. */
static int name_taken(const hl_policy_view_t *pol, int n, const char *name)
{
    int i;

    for (i = 0; i < n; i++)
        if (strcmp(pol[i].name, name) == 0)
            return 1;
    return 0;
}

void hl_render_distinct_names(apr_pool_t *p, hl_policy_view_t *pol, int n)
{
    int i, k;

    for (i = 1; pol != NULL && i < n; i++) {
        const char *name = pol[i].name;

        for (k = 2; name_taken(pol, i, name); k++)
            name = apr_psprintf(p, "%s-%d", pol[i].name, k);
        pol[i].name = name;
    }
}

int hl_render_tightest(const hl_policy_view_t *pol, int n)
{
    int i, best = 0;

    for (i = 1; pol != NULL && i < n; i++)
        if (hl_tightest_beats(pol[i].remaining, pol[i].reset_s,
                              pol[best].remaining, pol[best].reset_s))
            best = i;
    return best;
}

char *hl_render_ratelimit_prefix(apr_pool_t *p, const char *name)
{
    hl_buf_t b;

    hl_buf_init(&b, p, 32);
    sb_add_sf_string(&b, name);
    sb_add(&b, ";r=");
    return b.s;
}

char *hl_render_ratelimit_value(apr_pool_t *p, const char *prefix,
                                const char *remaining, int64_t reset_s)
{
    size_t lp = strlen(prefix), lr = strlen(remaining), lt;
    char t[HL_FMT_U64_MAX], *out;

    lt = hl_fmt_u64(t, reset_s > 0 ? (uint64_t)reset_s : 0);
    out = apr_palloc(p, lp + lr + 3 + lt + 1);
    memcpy(out, prefix, lp);
    memcpy(out + lp, remaining, lr);
    memcpy(out + lp + lr, ";t=", 3);
    memcpy(out + lp + lr + 3, t, lt + 1);
    return out;
}

const char *hl_render_remaining_and_value(apr_pool_t *p, uint32_t remaining,
                                          const char *prefix,
                                          size_t prefix_len, int64_t reset_s,
                                          const char **value)
{
    char r[HL_FMT_U64_MAX], t[HL_FMT_U64_MAX], *out, *v;
    size_t lr, lt = 0;

    lr = hl_fmt_u64(r, remaining);
    lt = hl_fmt_u64(t, reset_s > 0 ? (uint64_t)reset_s : 0);
    /* "REMAINING\0" then "PREFIX" "REMAINING" ";t=" "RESET\0" */
    out = apr_palloc(p, lr + 1 + prefix_len + lr + 3 + lt + 1);
    memcpy(out, r, lr + 1);
    v = out + lr + 1;
    memcpy(v, prefix, prefix_len);
    memcpy(v + prefix_len, r, lr);
    memcpy(v + prefix_len + lr, ";t=", 3);
    memcpy(v + prefix_len + lr + 3, t, lt + 1);
    *value = v;
    return out;
}

/*
 * Returns the RateLimit value "NAME";r=REMAINING;t=SECONDS for the policy
 * hl_render_tightest picks, allocated from p; "" when n <= 0 or pol is
 * NULL. A negative reset_s is written as 0.
 */
char *hl_render_ratelimit_header(apr_pool_t *p, const hl_policy_view_t *pol, int n)
{
    const hl_policy_view_t *best;
    char r[HL_FMT_U64_MAX];

    if (pol == NULL || n <= 0)
        return apr_pstrdup(p, "");
    best = &pol[hl_render_tightest(pol, n)];
    hl_fmt_u64(r, best->remaining);
    return hl_render_ratelimit_value(p, hl_render_ratelimit_prefix(p, best->name),
                                     r, best->reset_s);
}
