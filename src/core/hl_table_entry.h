/*
 * hl_table_entry.h - the quota table's parser, one route entry at a time
 * (hl_table_entry.c): the parse state, problem reports, JSON values read
 * and checked, and the "routes" object read into the image. Used by the
 * document-level parser (hl_table_parse.c). Pure: cJSON in, image out; no
 * allocation but cJSON's, no httpd header.
 */
#ifndef HL_TABLE_ENTRY_H
#define HL_TABLE_ENTRY_H

#include <stddef.h>
#include <stdint.h>
#include <cJSON.h>
#include "hl_table.h"
#define HL_TABLE_INT_MAX     2147483647.0            /* counts stay below 2^31 */
#define HL_MSG_MAX     (HL_ERR_MAX + 128)

/* State of one hl_table_parse call. */
typedef struct {
    hl_table_t         *t;
    hl_table_report_fn *fn;
    void               *baton;
    int                 nerrors;    /* things skipped: entries, exempt
                                       blocks, settings, the document */
    const hl_table_t   *prev;       /* carry-over source, or NULL */
    int                 nkept;      /* rules carried over from prev */
    unsigned char       skipped[HL_TABLE_MAX_ROUTES / 8];
                                    /* bit i: routes member i was skipped
                                       as an invalid entry */
} hl_table_ctx_t;

/* The fields of one entry as read, before they are combined. */
typedef struct {
    hl_quota_t q;           /* by, algo, burst, dry_run, windows of limits */
    hl_plan_sel_t sel;      /* "plan" */
    int        has_limits;
    int        has_max;
    int        has_window;
    uint32_t   max;
    uint32_t   window_ms;
} hl_table_entry_t;

/* Formats a problem and hands it to the caller's callback. Counting what
 * is skipped is up to the caller (one entry may have several problems). */
void hl_table_report(hl_table_ctx_t *c, hl_problem_t sev, const char *route,
                     const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Returns a short description of a JSON value's type, for messages. */
const char *hl_table_json_kind(const cJSON *v);

/*
 * Reads v as a whole number from 1 to max (max <= 2^31 - 1). Returns 0 and
 * sets *out, or -1 with a message (naming key) in err.
 */
int hl_table_json_count(const cJSON *v, const char *key, double max,
                        uint32_t *out, char *err, size_t errlen);

/* Reads v as a boolean. Returns 0/1, or -1 with a message in err. */
int hl_table_json_bool(const cJSON *v, const char *key, char *err, size_t errlen);

/*
 * Reads "limits" (a non-empty array of COUNT/WINDOW strings, at most
 * HL_MAX_WINDOWS, no two of the same length) into e->q.windows.
 * Returns 0, or -1 with a message in err.
 */
int hl_table_read_limits(hl_table_entry_t *e, const cJSON *v, char *err, size_t errlen);

/*
 * Reads "window": a whole number of seconds, or a string with a unit
 * ("60s", "1m"; a bare number is seconds). Returns 0 and sets *ms, or -1
 * with a message in err.
 */
int hl_table_read_window(const cJSON *v, uint32_t *ms, char *err, size_t errlen);

/* Returns 1 if the n bytes of s are a header or variable name: letters,
 * digits and "-_.", not empty, shorter than HL_BY_NAME_MAX. */
int hl_table_is_selector_name(const char *s, size_t n);

/* Reads and stores every entry of the "routes" object (already checked to
 * be an object of at most max_rules members). Reports every problem. */
void hl_table_read_routes(hl_table_ctx_t *c, const cJSON *routes);

/*
 * The carry-over of hl_table_parse_keep, a second pass over the "routes"
 * object once every entry was read: each route whose entry was skipped
 * (c->skipped) and that c->t still lacks gets its rule from c->prev, and
 * is reported as HL_PROBLEM_KEPT with the field at fault.
 */
void hl_table_keep_skipped(hl_table_ctx_t *c, const cJSON *routes);

#endif
