/*
 * hl_fleet.h - one server's view of an attack, as it publishes it to the
 * servers sharing its Redis store (issue 28): its keys refused most now
 * (key, refusals now and in all, the route that refused) and the newest
 * entries of its ban book (key, HotLimitBan line, rule, since, refusals
 * while banned); written as text into one store value and read back, and
 * the other servers' refusals merged into a page's ranking.
 *
 * Bounded: at most HL_FLEET_REFUSED keys and HL_FLEET_BANS bans per
 * server, every text cut to the arrays of hl_refusals.h and hl_banbook.h,
 * so a client rotating keys cannot make one server's view bigger than
 * HL_FLEET_TEXT_MAX bytes.
 *
 * The text: a first line "hlv1", then one line per entry, fields apart by
 * tabs, bytes below 0x20, 0x7f and '%' written %XX:
 *   r NOW TOTAL KEY ROUTE
 *   b SINCE_MS REFUSALS KEY LINE RULE
 * A line that does not parse is skipped (a newer writer may add kinds).
 *
 * Pure: no httpd, no allocation; the caller owns every buffer.
 */
#ifndef HL_FLEET_H
#define HL_FLEET_H

#include <stddef.h>
#include <stdint.h>

#include "hl_refusals.h"
#include "hl_banbook.h"

#define HL_FLEET_REFUSED  20     /* keys refused most a server publishes */
#define HL_FLEET_BANS     32     /* newest ban book entries it publishes */
#define HL_FLEET_TEXT_MAX 65536  /* the longest text a view may take */
#define HL_FLEET_MERGE_MAX 40    /* ranks hl_fleet_merge keeps at most */

/* One server's view. Ban entries use key, line, rule, since_ms and
 * refusals of hl_banbook_entry_t (stamp and key_hash are 0). */
typedef struct {
    int               nrefused;
    hl_refusal_rank_t refused[HL_FLEET_REFUSED];
    int               nbans;
    hl_banbook_entry_t bans[HL_FLEET_BANS];
} hl_fleet_view_t;

/* Copies the newest HL_FLEET_BANS entries of book b (live or a copy) into
 * v->bans, newest first, skipping one being written. Never fails. */
void hl_fleet_bans_from_book(const hl_banbook_t *b, hl_fleet_view_t *v);

/* Writes v as text into out (size bytes, not NUL-terminated). Returns its
 * length, or 0 when it does not fit (HL_FLEET_TEXT_MAX always does). */
size_t hl_fleet_encode(const hl_fleet_view_t *v, char *out, size_t size);

/* Reads the text in (len bytes) into *v. Returns 0, or -1 when it is not a
 * view (no "hlv1" line: *v is then empty). Entries past the bounds and
 * lines that do not parse are skipped. Never reads past in + len. */
int hl_fleet_decode(const char *in, size_t len, hl_fleet_view_t *v);

/*
 * Adds the nadd refusal ranks of add (another server's; the first
 * HL_FLEET_REFUSED) into rank[0 .. n), room for max (n and max at most
 * HL_FLEET_MERGE_MAX): refusals now and in all summed per key, a key new to rank
 * appended, only those for which keep (may be NULL: all) returns 1; then
 * sorted most refused now first (ties: most in all, then by key) and cut
 * to max. Returns the new count. Never fails.
 */
int hl_fleet_merge(hl_refusal_rank_t *rank, int n, int max,
                   const hl_refusal_rank_t *add, int nadd,
                   int (*keep)(const char *key, size_t len, void *baton),
                   void *baton);

/* Returns the newest (greatest since_ms) ban entry of key (NUL-terminated)
 * among views[0 .. n), or NULL. Points into views. */
const hl_banbook_entry_t *hl_fleet_find_ban(const hl_fleet_view_t *views,
                                            int n, const char *key);

#endif
