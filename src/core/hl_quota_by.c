/*
 * hl_quota_by.c - the key of a quota, by= (see hl_quota_by.h): parsing
 * "ip", "header:NAME", "A|B", "A+B", checking a filled key, and what a
 * key is made of.
 *
 * Pure core: no httpd headers, no allocation. Functions that fill a quota
 * write it only on success. Memory: the caller owns every buffer; the
 * name function returns static strings.
 */
#include "hl_quota_by.h"
#include "hl_json_path.h"
#include "hl_text.h"

#include <string.h>

/* Checks a name after "what=...:" (see hl_quota_by.h). Returns 0, or -1
 * with a message in err. */
int hl_by_check_name(const char *what, const char *value, const char *name,
                     char *err, size_t errlen)
{
    size_t i, len = strlen(name);

    if (len == 0)
        return hl_errf(err, errlen, "bad %s '%s': empty name after ':'", what,
                       value);
    if (len >= HL_BY_NAME_MAX)
        return hl_errf(err, errlen, "bad %s '%s': name longer than %d "
                       "characters", what, value, HL_BY_NAME_MAX - 1);
    for (i = 0; i < len; i++) {
        if (!hl_is_tchar(name[i]))
            return hl_errf(err, errlen, "bad %s '%s': a name may contain only "
                           "letters, digits and !#$%%&'*+-.^_`|~", what, value);
    }
    return 0;
}

/* Checks the path of "json:PATH" (value is the whole value, quoted in
 * messages): see hl_json_path_check. Returns 0, or -1 with a message. */
static int check_json_path(const char *value, const char *path, char *err,
                           size_t errlen)
{
    if (hl_json_path_check(path) == 0)
        return 0;
    return hl_errf(err, errlen, "bad by '%s': a JSON path is 1 to %d letters, "
                   "digits, '_' or '-', with dots between non-empty names "
                   "(user.email)", value, HL_JSON_PATH_MAX);
}

/* Sets a by= that takes no name. Returns 0. */
static int set_plain_by(hl_quota_t *q, hl_by_t by)
{
    q->by = by;
    q->by_name[0] = '\0';
    q->by_user = by == HL_BY_USER;
    q->by_nparts = 0;
    q->by_join = 0;
    return 0;
}

/*
 * Parses one key kind (value, no combination) into *by and name
 * (HL_BY_NAME_MAX bytes). Returns 0, or -1 with a message naming value.
 */
static int parse_by_one(const char *value, hl_by_t *by, char *name, char *err,
                        size_t errlen)
{
    static const struct {
        const char *word;
        hl_by_t     by;
        int         named;
    } kinds[] = {
        { "ip", HL_BY_IP, 0 },          { "global", HL_BY_GLOBAL, 0 },
        { "user", HL_BY_USER, 0 },      { "header:", HL_BY_HEADER, 1 },
        { "cookie:", HL_BY_COOKIE, 1 }, { "env:", HL_BY_ENV, 1 },
        { "param:", HL_BY_PARAM, 1 },   { "json:", HL_BY_JSON, 1 },
    };
    const char *rest;
    size_t i, len;

    for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        len = strlen(kinds[i].word);
        if (kinds[i].named ? strncmp(value, kinds[i].word, len) != 0
                           : strcmp(value, kinds[i].word) != 0)
            continue;
        *by = kinds[i].by;
        name[0] = '\0';
        if (!kinds[i].named)
            return 0;
        rest = value + len;
        if (*by == HL_BY_JSON
                ? check_json_path(value, rest, err, errlen) != 0
                : hl_by_check_name("by", value, rest, err, errlen) != 0)
            return -1;
        memcpy(name, rest, strlen(rest) + 1);
        return 0;
    }
    return hl_errf(err, errlen, "unknown by '%s' (use ip, global, user, "
                   "header:NAME, cookie:NAME, env:NAME, param:NAME or "
                   "json:PATH, or A|B, A+B of these)", value);
}

/*
 * Parses the parts of a combination value (join '|' or '+') into parts
 * (HL_BY_PARTS_MAX). Returns their number, or -1 with a message naming
 * the bad part.
 */
static int parse_by_parts(const char *value, char join, hl_by_part_t *parts,
                          char *err, size_t errlen)
{
    char tok[HL_BY_NAME_MAX + 16];
    const char *p = value, *end;
    int n = 0, i;

    for (;;) {
        end = strchr(p, join);
        if (!end)
            end = p + strlen(p);
        if (end == p)
            return hl_errf(err, errlen, "bad by '%s': an empty part around "
                           "'%c'", value, join);
        if (n == HL_BY_PARTS_MAX)
            return hl_errf(err, errlen, "bad by '%s': more than %d parts",
                           value, HL_BY_PARTS_MAX);
        if ((size_t)(end - p) >= sizeof(tok))
            return hl_errf(err, errlen, "bad by '%s': part '%.*s...' too "
                           "long", value, 16, p);
        memcpy(tok, p, (size_t)(end - p));
        tok[end - p] = '\0';
        if (parse_by_one(tok, &parts[n].by, parts[n].name, err, errlen) != 0)
            return -1;
        if (parts[n].by == HL_BY_GLOBAL)
            return hl_errf(err, errlen, "bad by '%s': 'global' is one bucket "
                           "for everyone and cannot be combined", value);
        for (i = 0; i < n; i++)
            if (parts[i].by == parts[n].by
                && strcmp(parts[i].name, parts[n].name) == 0)
                return hl_errf(err, errlen, "bad by '%s': '%s' named twice",
                               value, tok);
        if (join == HL_BY_JOIN_FIRST && n > 0
            && parts[n - 1].by == HL_BY_IP)
            return hl_errf(err, errlen, "bad by '%s': 'ip' is always present, "
                           "so '%s' after it is never used (ip goes last, "
                           "or not at all: it is the fall-back)", value, tok);
        ++n;
        if (*end == '\0')
            return n;
        p = end + 1;
    }
}

/*
 * Parses a "by" value (see hl_quota_by.h). Returns 0, or -1 with a message
 * naming value; q's key is written only on success.
 */
int hl_quota_set_by(hl_quota_t *q, const char *value, char *err, size_t errlen)
{
    hl_by_part_t parts[HL_BY_PARTS_MAX];
    const char *bar, *plus;
    char join;
    int n, i;

    if (value == NULL)
        value = "";
    bar = strchr(value, HL_BY_JOIN_FIRST);
    plus = strchr(value, HL_BY_JOIN_ALL);
    if (bar && plus)
        return hl_errf(err, errlen, "bad by '%s': use A|B (the first "
                       "present) or A+B (together), not both", value);
    if (!bar && !plus) {
        if (parse_by_one(value, &parts[0].by, parts[0].name, err, errlen) != 0)
            return -1;
        set_plain_by(q, parts[0].by);
        memcpy(q->by_name, parts[0].name, strlen(parts[0].name) + 1);
        return 0;
    }
    join = bar ? HL_BY_JOIN_FIRST : HL_BY_JOIN_ALL;
    if ((n = parse_by_parts(value, join, parts, err, errlen)) < 0)
        return -1;
    set_plain_by(q, HL_BY_PARTS);
    q->by_join = (uint8_t)join;
    q->by_nparts = (uint8_t)n;
    for (i = 0; i < n; i++) {
        q->by_parts[i] = parts[i];
        q->by_user |= parts[i].by == HL_BY_USER;
    }
    return 0;
}

/*
 * Checks q's key (see hl_quota_by.h): its kind, its name, and the parts of
 * a combination (by=A|B, A+B). Returns 0, or -1 with a message in err.
 */
int hl_quota_by_validate(const hl_quota_t *q, char *err, size_t errlen)
{
    int i;

    if ((int)q->by < HL_BY_IP || (int)q->by > HL_BY_PARTS)
        return hl_errf(err, errlen, "bad by %d", (int)q->by);
    if (q->by >= HL_BY_HEADER && q->by <= HL_BY_JSON
        && (q->by_name[0] == '\0'
            || memchr(q->by_name, '\0', HL_BY_NAME_MAX) == NULL))
        return hl_errf(err, errlen, "'by=%s' needs a name of 1..%d characters",
                       hl_by_name(q->by), HL_BY_NAME_MAX - 1);
    if (q->by == HL_BY_JSON && hl_json_path_check(q->by_name) != 0)
        return hl_errf(err, errlen, "'by=json:' needs a JSON path");
    if (q->by != HL_BY_PARTS)
        return 0;
    if (q->by_nparts < 2 || q->by_nparts > HL_BY_PARTS_MAX
        || (q->by_join != HL_BY_JOIN_FIRST && q->by_join != HL_BY_JOIN_ALL))
        return hl_errf(err, errlen, "bad by: %d parts joined by '%c'",
                       (int)q->by_nparts, q->by_join ? q->by_join : '?');
    for (i = 0; i < q->by_nparts; i++) {
        const hl_by_part_t *p = &q->by_parts[i];

        if ((int)p->by < HL_BY_IP || (int)p->by > HL_BY_JSON
            || p->by == HL_BY_GLOBAL
            || memchr(p->name, '\0', HL_BY_NAME_MAX) == NULL
            || (p->by >= HL_BY_HEADER && p->name[0] == '\0')
            || (p->by == HL_BY_JSON && hl_json_path_check(p->name) != 0))
            return hl_errf(err, errlen, "bad by: part %d", i + 1);
    }
    return 0;
}

/* Returns 1 if key kind by names an account (see hl_quota_keys_account). */
static int names_account(hl_by_t by)
{
    return by == HL_BY_USER || by == HL_BY_HEADER || by == HL_BY_COOKIE
           || by == HL_BY_PARAM || by == HL_BY_JSON;
}

int hl_quota_keys_account(const hl_quota_t *q)
{
    int i;

    if (q->by != HL_BY_PARTS)
        return names_account(q->by);
    for (i = 0; i < q->by_nparts && i < HL_BY_PARTS_MAX; i++)
        if (names_account(q->by_parts[i].by))
            return 1;
    return 0;
}

int hl_quota_keys_by(const hl_quota_t *q, hl_by_t by)
{
    int i;

    if (q->by != HL_BY_PARTS)
        return q->by == by;
    for (i = 0; i < q->by_nparts && i < HL_BY_PARTS_MAX; i++)
        if (q->by_parts[i].by == by)
            return 1;
    return 0;
}

const char *hl_by_name(hl_by_t by)
{
    switch (by) {
    case HL_BY_IP:     return "ip";
    case HL_BY_GLOBAL: return "global";
    case HL_BY_USER:   return "user";
    case HL_BY_HEADER: return "header";
    case HL_BY_COOKIE: return "cookie";
    case HL_BY_ENV:    return "env";
    case HL_BY_PARAM:  return "param";
    case HL_BY_JSON:   return "json";
    case HL_BY_PARTS:  return "parts";
    }
    return "?";
}
