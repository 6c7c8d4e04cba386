/*
 * hl_quota_text.h - a quota written back as a quota line says it: the
 * whole quota ("5/1m 30/1h by=ip algo=gcra"), its windows alone, its by=
 * value. Pure core: no httpd headers, no allocation.
 */
#ifndef HL_QUOTA_TEXT_H
#define HL_QUOTA_TEXT_H

#include <stddef.h>
#include "hl_quota.h"

/*
 * Writes q as a quota line would say it into buf: its windows, then by=
 * (always), and algo=, burst=, count= and dry-run only when not the
 * default ("5/1m 30/1h by=ip", "10/1s by=header:X-Key algo=gcra
 * burst=20"). Returns buf, always NUL-terminated when buflen > 0 (cut
 * short when buf is too small). Reads only.
 */
char *hl_quota_describe(const hl_quota_t *q, char *buf, size_t buflen);

/* Writes the windows of q alone into buf ("5/1m 30/1h"), as
 * hl_quota_describe begins. Returns buf, NUL-terminated when buflen > 0
 * (cut short when buf is too small). Reads only. */
char *hl_quota_windows(const hl_quota_t *q, char *buf, size_t buflen);

/* Writes q's by= value as a quota line says it into buf ("ip",
 * "header:X-Key", "header:Authorization|header:x-api-key", "ip+param:log").
 * Returns buf, NUL-terminated when buflen > 0 (cut short when too small). */
char *hl_quota_by_text(const hl_quota_t *q, char *buf, size_t buflen);

#endif
