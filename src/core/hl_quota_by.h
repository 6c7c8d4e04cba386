/*
 * hl_quota_by.h - the key of a quota, by=: "ip", "global", "user",
 * "header:NAME", "cookie:NAME", "env:NAME", "param:NAME", "json:PATH",
 * and their combinations "A|B" (the first part present) and "A+B" (every
 * part together). The types (hl_by_t, hl_by_part_t) are in hl_quota.h,
 * inside hl_quota_t.
 *
 * Pure core: no httpd headers, no allocation.
 */
#ifndef HL_QUOTA_BY_H
#define HL_QUOTA_BY_H

#include <stddef.h>
#include "hl_quota.h"

/*
 * Parses "by" values alone ("ip", "global", "user", "header:NAME", ...),
 * as used by the JSON table, and their combinations: "A|B|..." (the first
 * part present; "ip" only last, where it adds nothing) and "A+B+..."
 * (every part together), at most HL_BY_PARTS_MAX parts, no part twice,
 * no "global" and no mix of '|' and '+'. Returns 0, or -1 with a message
 * in err naming the bad part; q's key is written only on success.
 */
int hl_quota_set_by(hl_quota_t *q, const char *value, char *err, size_t errlen);

/*
 * Checks the header/cookie/variable name after "what=...:" (value is the
 * whole value, quoted in messages; what is "by" or "cost"):
 * 1..HL_BY_NAME_MAX-1 token characters. Returns 0, or -1 with a message
 * in err. Reads only.
 */
int hl_by_check_name(const char *what, const char *value, const char *name,
                     char *err, size_t errlen);

/*
 * Checks the key of a filled quota (hl_quota_validate's part): a known
 * kind, a name where the kind needs one, a JSON path for json:, and for a
 * combination 2..HL_BY_PARTS_MAX valid parts joined by '|' or '+'.
 * Returns 0, or -1 with a message in err. Reads only.
 */
int hl_quota_by_validate(const hl_quota_t *q, char *err, size_t errlen);

/* Returns 1 if q's key names an account (user, header:, cookie:, param:,
 * json:; a part of a combination too), so that a device cookie can be
 * bound to it; 0 for the address, global, env: keys. Reads only. */
int hl_quota_keys_account(const hl_quota_t *q);

/* Returns 1 if q's key, or a part of it, is of kind by, else 0. */
int hl_quota_keys_by(const hl_quota_t *q, hl_by_t by);

/* Returns the name of key kind by used in messages ("ip", "header", ...;
 * "?" if unknown). Static string. */
const char *hl_by_name(hl_by_t by);

#endif
