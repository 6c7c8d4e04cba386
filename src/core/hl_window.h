/*
 * hl_window.h - windows and durations as a quota line writes them:
 * "COUNT/WINDOW" ("5/1m", "10/60s", "3/500ms") and "500ms", "10s", "1m",
 * "2h", "1d".
 *
 * Pure core: no httpd headers, no allocation, no locale. Numbers are read
 * digit by digit so that signs, spaces, decimal points and overflow are all
 * refused explicitly; every error message names the offending text in
 * single quotes. The caller owns every buffer; nothing is kept.
 */
#ifndef HL_WINDOW_H
#define HL_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#define HL_MAX_WINDOWS   4     /* windows per quota, e.g. "5/1m 30/1h" */
#define HL_MAX_WINDOW_MS 2592000000u /* 30 days: the largest window accepted */
#define HL_COUNT_MAX     2147483647u /* a COUNT (and burst) is below 2^31 */

typedef struct {
    uint32_t count;      /* requests admitted per window, >= 1 */
    uint32_t window_ms;  /* window length in milliseconds, >= 1 */
} hl_window_t;

/*
 * Parses a duration: "500ms", "10s", "1m", "2h", "1d", or a bare number of
 * seconds when bare_unit_ms is nonzero (bare numbers are then multiplied by
 * bare_unit_ms; pass 0 to refuse bare numbers).
 * Returns 0 and sets *out_ms; on failure returns -1 and writes a message
 * naming the bad token into err (errlen bytes, may be 0). Zero, negative,
 * overflowing or over-30-day durations fail.
 */
int hl_parse_duration_ms(const char *s, uint32_t bare_unit_ms,
                         uint32_t *out_ms, char *err, size_t errlen);

/*
 * Parses "COUNT/WINDOW" ("5/1m", "10/60s", "3/500ms"). COUNT must be a
 * positive integer below 2^31. Returns 0, or -1 with a message in err;
 * *w is written only on success.
 */
int hl_parse_window(const char *tok, hl_window_t *w, char *err, size_t errlen);

/*
 * Reads the len characters at s as a count 1..HL_COUNT_MAX (a window's
 * COUNT, a burst). Returns 0 and sets *out; -1 if not a positive integer;
 * -2 if too big (*out untouched on failure).
 */
int hl_parse_count(const char *s, size_t len, uint32_t *out);

/*
 * Writes a short, stable name of a window ("5/1m", "10/60s", "3/500ms") into
 * buf, choosing the largest unit that divides the window exactly.
 * Returns buf (always NUL-terminated when buflen > 0).
 */
char *hl_window_name(const hl_window_t *w, char *buf, size_t buflen);

/*
 * Checks that no window among earlier[0..n) has the length of w (n is
 * clamped to 0..HL_MAX_WINDOWS). Returns 0, or -1 with "duplicate window
 * 'NAME': 'OTHER' already has the same length" in err, NAME being name
 * (the window as written) or, when name is NULL, hl_window_name(w).
 * Reads only; err may be NULL.
 */
int hl_window_check_distinct(const hl_window_t *earlier, int n,
                             const hl_window_t *w, const char *name,
                             char *err, size_t errlen);

#endif
