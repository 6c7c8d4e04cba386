/*
 * hl_banbook.h - why each ban was started (issue 27): a bounded ring in
 * shared memory of the newest HL_BANBOOK_MAX bans started here, each with
 * the ban counter's key, the HotLimitBan line that set the ban (its
 * "FILE:LINE", or "table"), the rule whose refusals triggered it, since
 * when (wall clock), and the refusals made while banned; and the count of
 * bans started since the counters started.
 *
 * Whether a client is banned is the ban counter's business (hl_ban.h);
 * the book only says why, and is joined to the bans in force by key.
 * Pointer-free and lock-free (atomic operations): a ban starts at most
 * once per client and window (the store decides it under its lock), so
 * two writers meet on one entry only when HL_BANBOOK_MAX bans start at
 * once; a reader may then see a half-written entry's texts, never an
 * overrun (every text is NUL-terminated within its array).
 *
 * Pure: no httpd, no allocation; the caller owns every buffer.
 */
#ifndef HL_BANBOOK_H
#define HL_BANBOOK_H

#include <stddef.h>
#include <stdint.h>

#define HL_BANBOOK_MAX  64     /* bans remembered: the newest */
#define HL_BANBOOK_KEY  96     /* bytes of the ban counter's key kept, NUL
                                  included (matched by its hash) */
#define HL_BANBOOK_TEXT 160    /* bytes of the line and the rule kept */

typedef struct {
    uint64_t stamp;            /* 0: free; HL_BANBOOK_WRITING; else the
                                  ban's number since start, + 1 */
    uint64_t key_hash;         /* hl_hash64 of the whole key */
    int64_t  since_ms;         /* wall clock, ms */
    uint64_t refusals;         /* requests refused while banned */
    char     key[HL_BANBOOK_KEY];
    char     line[HL_BANBOOK_TEXT];   /* "FILE:LINE" of HotLimitBan, "table" */
    char     rule[HL_BANBOOK_TEXT];   /* the rule whose refusals banned */
} hl_banbook_entry_t;

typedef struct {
    uint64_t started;          /* bans started since the counters started */
    hl_banbook_entry_t e[HL_BANBOOK_MAX];
} hl_banbook_t;

/*
 * Records that the ban whose counter key is key (len bytes) started at
 * since_ms (wall clock), set by the HotLimitBan line `line` after the
 * refusals of rule `rule` (NUL-terminated, either may be NULL: ""; cut to
 * fit). Takes the oldest entry's place when the book is full. Never fails.
 */
void hl_banbook_start(hl_banbook_t *b, const char *key, size_t len,
                      const char *line, const char *rule, int64_t since_ms);

/*
 * Returns the newest entry of the ban whose counter key is key (len
 * bytes), or NULL when the book has none (started on another server, or
 * pushed out by newer bans). Reads b (a live book or a copy); the entry
 * points into b.
 */
const hl_banbook_entry_t *hl_banbook_find(const hl_banbook_t *b,
                                          const char *key, size_t len);

/* Counts one request refused while banned under the ban whose counter key
 * is key (len bytes), in its newest entry. Returns 1, or 0 when the book
 * has no entry for it. */
int hl_banbook_refused(hl_banbook_t *b, const char *key, size_t len);

/* Returns the bans started since the counters started. */
uint64_t hl_banbook_total(const hl_banbook_t *b);

#endif
