/*
 * hl_duration.c - a wait in words (see hl_duration.h). One table: per language, how
 * it writes "about" and the four units with their plural forms. UTF-8
 * literals, trusted; nothing from a request is written.
 */
#include <string.h>
#include <strings.h>
#include <apr_strings.h>
#include "hl_duration.h"

/* How a language writes "N units". */
typedef enum {
    HL_PL_NONE,     /* one form: N + other (zh, ja) */
    HL_PL_ONE,      /* 1 + one, else N + other (en es fr de) */
    HL_PL_AR        /* Arabic (CLDR): 1, 2, 3..10 (mod 100), others */
} hl_plural_rule_t;

/* One unit in one language. */
typedef struct {
    const char *one;    /* ONE: after "1"; AR: the whole phrase for 1 */
    const char *two;    /* AR: the whole phrase for 2 */
    const char *few;    /* AR: after N when N % 100 is 3..10 */
    const char *other;  /* after N otherwise */
} hl_unit_words_t;

#define HL_WAIT_UNITS 4   /* seconds, minutes, hours, days */

typedef struct {
    const char       *code;
    hl_plural_rule_t  rule;
    const char       *about;               /* before an inexact count */
    hl_unit_words_t   units[HL_WAIT_UNITS];
} hl_duration_lang_t;

static const hl_duration_lang_t hl_duration_langs[] = {
    { "en", HL_PL_ONE, "about ", {
        { " second", NULL, NULL, " seconds" },
        { " minute", NULL, NULL, " minutes" },
        { " hour",   NULL, NULL, " hours" },
        { " day",    NULL, NULL, " days" } } },
    { "zh", HL_PL_NONE, "约 ", {
        { NULL, NULL, NULL, " 秒" },
        { NULL, NULL, NULL, " 分钟" },
        { NULL, NULL, NULL, " 小时" },
        { NULL, NULL, NULL, " 天" } } },
    { "es", HL_PL_ONE, "aproximadamente ", {
        { " segundo", NULL, NULL, " segundos" },
        { " minuto",  NULL, NULL, " minutos" },
        { " hora",    NULL, NULL, " horas" },
        { " día",     NULL, NULL, " días" } } },
    { "fr", HL_PL_ONE, "environ ", {
        { " seconde", NULL, NULL, " secondes" },
        { " minute",  NULL, NULL, " minutes" },
        { " heure",   NULL, NULL, " heures" },
        { " jour",    NULL, NULL, " jours" } } },
    { "de", HL_PL_ONE, "etwa ", {
        { " Sekunde", NULL, NULL, " Sekunden" },
        { " Minute",  NULL, NULL, " Minuten" },
        { " Stunde",  NULL, NULL, " Stunden" },
        { " Tag",     NULL, NULL, " Tage" } } },
    { "ar", HL_PL_AR, "حوالي ", {
        { "ثانية واحدة", "ثانيتين", " ثوانٍ", " ثانية" },
        { "دقيقة واحدة", "دقيقتين", " دقائق", " دقيقة" },
        { "ساعة واحدة", "ساعتين", " ساعات", " ساعة" },
        { "يوم واحد", "يومين", " أيام", " يومًا" } } },
    { "ja", HL_PL_NONE, "約", {
        { NULL, NULL, NULL, "秒" },
        { NULL, NULL, NULL, "分" },
        { NULL, NULL, NULL, "時間" },
        { NULL, NULL, NULL, "日" } } },
};

#define HL_DURATION_NLANGS (sizeof(hl_duration_langs) / sizeof(hl_duration_langs[0]))

/* Seconds in each unit, smallest first (the order of units[]). */
static const long hl_unit_s[HL_WAIT_UNITS] = { 1, 60, 3600, 86400 };

/* Returns the words of lang (ASCII case ignored), en when unknown or NULL. */
static const hl_duration_lang_t *duration_lang(const char *lang)
{
    size_t i;

    for (i = 0; lang != NULL && i < HL_DURATION_NLANGS; i++)
        if (strcasecmp(lang, hl_duration_langs[i].code) == 0)
            return &hl_duration_langs[i];
    return &hl_duration_langs[0];
}

/* Returns "N units" of u under rule (allocated from p), n >= 1. */
static char *count_words(apr_pool_t *p, hl_plural_rule_t rule,
                         const hl_unit_words_t *u, long n)
{
    char *num = apr_ltoa(p, n);

    if (rule == HL_PL_ONE && n == 1)
        return apr_pstrcat(p, num, u->one, NULL);
    if (rule == HL_PL_AR) {
        if (n == 1)
            return apr_pstrdup(p, u->one);
        if (n == 2)
            return apr_pstrdup(p, u->two);
        if (n % 100 >= 3 && n % 100 <= 10)
            return apr_pstrcat(p, num, u->few, NULL);
    }
    return apr_pstrcat(p, num, u->other, NULL);
}

char *hl_duration_words(apr_pool_t *p, const char *lang, long seconds)
{
    const hl_duration_lang_t *l = duration_lang(lang);
    int unit = HL_WAIT_UNITS - 1;
    long n;

    if (seconds < 1)
        seconds = 1;
    while (unit > 0 && seconds < hl_unit_s[unit])
        unit--;
    n = seconds / hl_unit_s[unit];
    return apr_pstrcat(p, seconds % hl_unit_s[unit] ? l->about : "",
                       count_words(p, l->rule, &l->units[unit], n), NULL);
}
