/*
 * hl_ban.h - escalation (HotLimitBan AFTER/WITHIN DURATION, the table's
 * "ban"): a client refused AFTER times within WITHIN by quotas of a
 * server keyed by its address (by=ip, or a key that fell back to the
 * address: mod_hotlimit_access.c) is banned from the whole server for
 * DURATION. Refusals by shared or account budgets never count.
 *
 * A ban is two hidden quotas per server and client address, on the
 * existing counters (so it is exact under concurrency, like any quota):
 *  - "rej|CLIENT", AFTER/WITHIN, counted once per refusal; the refusal that
 *    takes its last room (admitted with 0 remaining) starts the ban;
 *  - "ban|CLIENT", 1/DURATION (fixed window): its single count means
 *    "banned until its window ends". A decision without counting tells
 *    whether the client is banned, and Retry-After is the time left.
 * Both are directive-origin quotas whose scopes ("ban", "rej") are classes
 * of their own, after the virtual host's "host:port" tag.
 *
 * Pure: no httpd, no allocation; the caller owns every buffer.
 */
#ifndef HL_BAN_H
#define HL_BAN_H

#include <stddef.h>
#include <stdint.h>
#include "hl_quota.h"
#include "hl_slotkey.h"

#define HL_BAN_SCOPE HL_SLOTKEY_BAN_SCOPE  /* the ban counter: "ban|CLIENT" */
#define HL_REJ_SCOPE HL_SLOTKEY_REJ_SCOPE  /* the refusal counter */

typedef struct {
    hl_quota_t rejections;   /* AFTER/WITHIN, algo fixed */
    hl_quota_t ban;          /* 1/DURATION, algo fixed */
} hl_ban_t;

/*
 * Parses "AFTER/WITHIN" and "DURATION" (e.g. "20/10m" and "1h"; units
 * required) into *b. Returns 0, or -1 with a message naming the bad token
 * in err; *b is written only on success.
 */
int hl_ban_parse(hl_ban_t *b, const char *rate, const char *duration,
                 char *err, size_t errlen);

/*
 * Sets *b from numbers: after >= 1 refusals within within_ms, banned for
 * for_ms (each 1 ms .. 30 days). Returns 0, or -1 with a message in err.
 */
int hl_ban_set(hl_ban_t *b, uint32_t after, uint32_t within_ms,
               uint32_t for_ms, char *err, size_t errlen);

/*
 * Returns 1 if the user-visible part of a slot key (key, len bytes: after
 * the origin and window prefix) is a ban counter: "ban|CLIENT" or
 * "host:port" + "ban|CLIENT" (hl_slotkey_decode), CLIENT not empty; then
 * sets *client to the CLIENT part (in key) and *client_len. Returns 0
 * otherwise. Reads only.
 */
int hl_ban_key_client(const char *key, size_t len, const char **client,
                      size_t *client_len);

/* Returns 1 if key (len bytes, as for hl_ban_key_client) is a ban's own
 * counter, "ban|CLIENT" or "rej|CLIENT" (after "host:port" in a virtual
 * host; hl_slotkey_is_ban_counter), else 0. Reads only. */
int hl_ban_key_is_counter(const char *key, size_t len);

#endif
