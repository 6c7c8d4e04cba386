/*
 * hl_reserve.c - the units a cost= request reserves at admission (see
 * hl_reserve.h).
 */
#include <string.h>
#include "hl_reserve.h"

/* Returns the index of the first byte at or after i that is not JSON
 * whitespace (len when none). */
static size_t skip_ws(const char *s, size_t len, size_t i)
{
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n'
                       || s[i] == '\r'))
        ++i;
    return i;
}

/* Returns the index just after the string whose opening quote is at i,
 * or len when it is cut off. */
static size_t skip_string(const char *s, size_t len, size_t i)
{
    for (++i; i < len; ++i) {
        if (s[i] == '\\')
            ++i;
        else if (s[i] == '"')
            return i + 1;
    }
    return len;
}

/* Returns the index just after the value starting at i (a string, an
 * object or array followed to its end by a depth counter, or a literal
 * or number up to the next ',' '}' ']' or space), or len when cut off. */
static size_t skip_value(const char *s, size_t len, size_t i)
{
    size_t depth = 0;

    if (i < len && s[i] == '"')
        return skip_string(s, len, i);
    if (i < len && s[i] != '{' && s[i] != '[') {
        while (i < len && !strchr(",}] \t\r\n", s[i]))
            ++i;
        return i;
    }
    while (i < len) {
        if (s[i] == '"') {
            i = skip_string(s, len, i);
            continue;
        }
        if (s[i] == '{' || s[i] == '[')
            ++depth;
        else if ((s[i] == '}' || s[i] == ']') && --depth == 0)
            return i + 1;
        ++i;
    }
    return len;
}

/* Returns 1 if the key s[from .. to) (between its quotes) is one of the
 * names a reservation reads. */
static int is_max_tokens_key(const char *s, size_t from, size_t to)
{
    static const char *const names[] = {
        "max_tokens", "max_completion_tokens", "max_output_tokens"
    };
    size_t k, n = to - from;

    for (k = 0; k < sizeof(names) / sizeof(names[0]); ++k)
        if (strlen(names[k]) == n && memcmp(s + from, names[k], n) == 0)
            return 1;
    return 0;
}

/* Reads the whole number at s[i ..): returns 1 and sets *out (capped at
 * HL_COST_MAX) when digits follow up to a delimiter, else 0. */
static int read_whole(const char *s, size_t len, size_t i, uint32_t *out)
{
    uint64_t v = 0;
    size_t start = i;

    while (i < len && s[i] >= '0' && s[i] <= '9') {
        v = v * 10 + (uint64_t)(s[i] - '0');
        if (v > HL_COST_MAX)
            v = HL_COST_MAX + 1ull;
        ++i;
    }
    if (i == start || i == len || !strchr(",} \t\r\n", s[i]))
        return 0;
    *out = v > HL_COST_MAX ? HL_COST_MAX : (uint32_t)v;
    return 1;
}

int hl_reserve_find_max_tokens(const char *json, size_t len, uint32_t *out)
{
    size_t i;

    if (json == NULL)
        return 0;
    i = skip_ws(json, len, 0);
    if (i >= len || json[i] != '{')
        return 0;
    i = skip_ws(json, len, i + 1);
    while (i < len && json[i] == '"') {
        size_t key = i + 1, end = skip_string(json, len, i);

        if (end >= len)
            return 0;
        i = skip_ws(json, len, end);
        if (i >= len || json[i] != ':')
            return 0;
        i = skip_ws(json, len, i + 1);
        if (is_max_tokens_key(json, key, end - 1) && read_whole(json, len, i, out))
            return 1;
        i = skip_ws(json, len, skip_value(json, len, i));
        if (i >= len || json[i] != ',')
            return 0;
        i = skip_ws(json, len, i + 1);
    }
    return 0;
}

uint32_t hl_reserve_units(const hl_quota_t *q, const char *head,
                          size_t head_len, uint64_t body_len)
{
    uint32_t tokens = q->reserve;
    uint64_t units;

    if (!hl_quota_reserves(q))
        return 0;
    if (!q->reserve_max_tokens)
        return q->reserve;
    if (!hl_reserve_find_max_tokens(head, head_len, &tokens))
        tokens = q->reserve;
    units = (uint64_t)tokens + body_len / 4;
    if (units == 0)
        units = 1;     /* a reservation is never empty: it is settled */
    return units > HL_COST_MAX ? HL_COST_MAX : (uint32_t)units;
}
