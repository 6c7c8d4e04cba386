/*
 * hl_window.c - parsing and naming of windows ("5/1m") and durations
 * ("500ms", "1d"), see hl_window.h.
 *
 * Pure core: no httpd headers, no allocation, no locale. Memory: the caller
 * owns every buffer; nothing is allocated or kept.
 */
#include "hl_window.h"
#include "hl_fmt.h"
#include "hl_text.h"

#include <string.h>

#define HL_UNITS_HINT  "(use ms, s, m, h or d)"

/* Duration units, largest first (hl_window_name relies on that order). */
static const struct {
    const char *name;
    uint32_t    ms;
} hl_units[] = {
    { "d",  86400000u },
    { "h",  3600000u },
    { "m",  60000u },
    { "s",  1000u },
    { "ms", 1u },
};
#define HL_NUNITS (sizeof(hl_units) / sizeof(hl_units[0]))

/*
 * Parses the len characters at s as a duration. `what` ("duration" or
 * "window") and `tok` (the whole token, quoted in messages) only shape the
 * error text. Returns 0 and sets *out_ms, or -1 with a message in err.
 */
static int parse_duration_span(const char *s, size_t len, uint32_t bare_unit_ms,
                               uint32_t *out_ms, const char *what,
                               const char *tok, char *err, size_t errlen)
{
    size_t ndig, ulen, i;
    const char *unit;
    uint64_t value, unit_ms = 0;
    int rc;

    if (len == 0)
        return hl_errf(err, errlen, "bad %s '%s': missing duration "
                       "(e.g. 30s or 1m)", what, tok);
    ndig = hl_digits_count(s, len);
    if (ndig == 0)
        return hl_errf(err, errlen, "bad %s '%s': duration must start with a "
                       "positive integer (e.g. 30s or 1m)", what, tok);
    unit = s + ndig;
    ulen = len - ndig;
    if (ulen == 0) {
        if (bare_unit_ms == 0)
            return hl_errf(err, errlen, "bad %s '%s': missing unit "
                           HL_UNITS_HINT, what, tok);
        unit_ms = bare_unit_ms;
    } else if (unit[0] == '.' || unit[0] == ',') {
        return hl_errf(err, errlen, "bad %s '%s': duration must be a whole "
                       "number (e.g. 90s instead of 1.5m)", what, tok);
    } else {
        for (i = 0; i < HL_NUNITS; i++) {
            if (hl_span_is(unit, ulen, hl_units[i].name))
                unit_ms = hl_units[i].ms;
        }
        if (unit_ms == 0)
            return hl_errf(err, errlen, "unknown unit in '%s' " HL_UNITS_HINT,
                           tok);
    }
    rc = hl_digits_parse(s, ndig, HL_MAX_WINDOW_MS, &value);
    if (rc == 0 && value == 0)
        return hl_errf(err, errlen, "bad %s '%s': duration must be greater "
                       "than zero", what, tok);
    /* value <= 2^32 and unit_ms < 2^32: the product fits in 64 bits */
    if (rc != 0 || value * unit_ms > HL_MAX_WINDOW_MS)
        return hl_errf(err, errlen, "bad %s '%s': duration longer than "
                       "30 days", what, tok);
    *out_ms = (uint32_t)(value * unit_ms);
    return 0;
}

/*
 * Parses the len characters at s as a count below 2^31 and above 0.
 * Returns 0 and sets *out; -1 if not a positive integer; -2 if too big.
 */
int hl_parse_count(const char *s, size_t len, uint32_t *out)
{
    uint64_t v;
    int rc = hl_digits_parse(s, len, HL_COUNT_MAX, &v);

    if (rc != 0)
        return rc;
    if (v == 0)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/*
 * Parses a duration string (see hl_window.h). Returns 0, or -1 with a message
 * in err; *out_ms is written only on success.
 */
int hl_parse_duration_ms(const char *s, uint32_t bare_unit_ms,
                         uint32_t *out_ms, char *err, size_t errlen)
{
    if (s == NULL)
        return hl_errf(err, errlen, "bad duration '': missing duration");
    return parse_duration_span(s, strlen(s), bare_unit_ms, out_ms,
                               "duration", s, err, errlen);
}

/*
 * Parses "COUNT/WINDOW". Returns 0, or -1 with a message naming tok in err;
 * *w is written only on success.
 */
int hl_parse_window(const char *tok, hl_window_t *w, char *err, size_t errlen)
{
    const char *slash;
    uint32_t count, ms;
    int rc;

    if (tok == NULL)
        return hl_errf(err, errlen, "bad window '': expected COUNT/WINDOW "
                       "(e.g. 5/1m)");
    slash = strchr(tok, '/');
    if (slash == NULL)
        return hl_errf(err, errlen, "bad window '%s': expected COUNT/WINDOW "
                       "(e.g. 5/1m)", tok);
    if (strchr(slash + 1, '/') != NULL)
        return hl_errf(err, errlen, "bad window '%s': more than one '/'", tok);
    rc = hl_parse_count(tok, (size_t)(slash - tok), &count);
    if (rc == -2)
        return hl_errf(err, errlen, "bad window '%s': count must be below "
                       "2147483648", tok);
    if (rc != 0)
        return hl_errf(err, errlen, "bad window '%s': count must be a "
                       "positive integer", tok);
    if (parse_duration_span(slash + 1, strlen(slash + 1), 0, &ms, "window",
                            tok, err, errlen) != 0)
        return -1;
    w->count = count;
    w->window_ms = ms;
    return 0;
}

/*
 * Writes "COUNT/NUNIT" with the largest unit dividing the window exactly.
 * Returns buf; NULL-safe and truncating (nothing written when buflen is 0).
 */
char *hl_window_name(const hl_window_t *w, char *buf, size_t buflen)
{
    size_t i;

    if (buf == NULL || buflen == 0)
        return buf;
    for (i = 0; i < HL_NUNITS; i++) {
        if (w->window_ms != 0 && w->window_ms % hl_units[i].ms == 0)
            break;
    }
    if (i == HL_NUNITS)   /* window_ms == 0: invalid, still printable */
        i = HL_NUNITS - 1;
    {
        /* "COUNT/N" + unit, built by hand: this runs on every request. */
        char tmp[2 * HL_FMT_U64_MAX + 8];
        size_t n = hl_fmt_u64(tmp, w->count), ulen = strlen(hl_units[i].name);

        tmp[n++] = '/';
        n += hl_fmt_u64(tmp + n, w->window_ms / hl_units[i].ms);
        memcpy(tmp + n, hl_units[i].name, ulen + 1);
        n += ulen;
        if (n >= buflen)
            n = buflen - 1;
        memcpy(buf, tmp, n);
        buf[n] = '\0';
    }
    return buf;
}

/* Checks w against earlier windows (see hl_window.h). Returns 0, or -1
 * with a message in err. */
int hl_window_check_distinct(const hl_window_t *earlier, int n,
                             const hl_window_t *w, const char *name,
                             char *err, size_t errlen)
{
    char own[32], other[32];
    int i;

    for (i = 0; i < n && i < HL_MAX_WINDOWS; i++) {
        if (earlier[i].window_ms == w->window_ms)
            return hl_errf(err, errlen, "duplicate window '%s': '%s' already "
                           "has the same length",
                           name != NULL ? name : hl_window_name(w, own, sizeof(own)),
                           hl_window_name(&earlier[i], other, sizeof(other)));
    }
    return 0;
}
