/*
 * hl_quota_text.c - a quota written back as a quota line says it (see
 * hl_quota_text.h): for the status page, the logs and messages.
 *
 * Pure core: no httpd headers, no allocation. Every writer is bounded by
 * buflen and cuts short rather than overflow. Memory: the caller owns buf.
 */
#include "hl_quota_text.h"
#include "hl_quota_by.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Appends the formatted text to buf (len bytes of buflen used so far);
 * returns the new length, at most buflen - 1. */
static size_t describe_add(char *buf, size_t buflen, size_t len,
                           const char *fmt, ...)
{
    va_list ap;
    int n;

    if (len + 1 >= buflen)
        return len;
    va_start(ap, fmt);
    n = vsnprintf(buf + len, buflen - len, fmt, ap);
    va_end(ap);
    if (n < 0)
        return len;
    return (size_t)n >= buflen - len ? buflen - 1 : len + (size_t)n;
}

/* Appends the windows of q ("5/1m 30/1h") to buf at len (describe_add).
 * Returns the new length. */
static size_t describe_windows(const hl_quota_t *q, char *buf, size_t buflen,
                               size_t len)
{
    char name[48];
    int i;

    for (i = 0; i < q->nwindows && i < HL_MAX_WINDOWS; ++i)
        len = describe_add(buf, buflen, len, "%s%s", i ? " " : "",
                           hl_window_name(&q->windows[i], name, sizeof(name)));
    return len;
}

/* Writes q's windows (see hl_quota_text.h). Returns buf. */
char *hl_quota_windows(const hl_quota_t *q, char *buf, size_t buflen)
{
    if (buflen == 0)
        return buf;
    buf[0] = '\0';
    describe_windows(q, buf, buflen, 0);
    return buf;
}

/* Writes q as a quota line (see hl_quota_text.h). Returns buf. */
char *hl_quota_describe(const hl_quota_t *q, char *buf, size_t buflen)
{
    size_t len;
    int i;

    if (buflen == 0)
        return buf;
    buf[0] = '\0';
    len = describe_windows(q, buf, buflen, 0);
    len = describe_add(buf, buflen, len, "%sby=", len ? " " : "");
    if (len < buflen - 1)
        hl_quota_by_text(q, buf + len, buflen - len);
    len += strlen(buf + len);
    if (q->algo != HL_ALGO_FIXED)
        len = describe_add(buf, buflen, len, " algo=%s", hl_algo_name(q->algo));
    if (q->burst)
        len = describe_add(buf, buflen, len, " burst=%u", (unsigned)q->burst);
    if (q->has_delay)
        len = describe_add(buf, buflen, len, " delay=%u", (unsigned)q->delay);
    if (q->count == HL_COUNT_FAILURES)
        len = describe_add(buf, buflen, len, " count=failures");
    else if (q->count == HL_COUNT_STATUS) {
        len = describe_add(buf, buflen, len, " count=status:");
        for (i = 0; i < q->nstatuses && i < HL_MAX_STATUSES; ++i)
            len = describe_add(buf, buflen, len, "%s%u", i ? "," : "",
                               (unsigned)q->statuses[i]);
    }
    if (q->concurrency)
        len = describe_add(buf, buflen, len, " concurrency=%u",
                           (unsigned)q->concurrency);
    if (q->dry_run == 1)
        describe_add(buf, buflen, len, " dry-run");
    return buf;
}

/* Appends one key kind (by, name) to buf (len bytes in use) as by= says
 * it. Returns the new length (describe_add's). */
static size_t by_add(char *buf, size_t buflen, size_t len, hl_by_t by,
                     const char *name)
{
    return describe_add(buf, buflen, len, "%s%s%.*s", hl_by_name(by),
                        by >= HL_BY_HEADER ? ":" : "",
                        by >= HL_BY_HEADER ? HL_BY_NAME_MAX - 1 : 0, name);
}

/* Writes q's by= value (see hl_quota_text.h). Returns buf. */
char *hl_quota_by_text(const hl_quota_t *q, char *buf, size_t buflen)
{
    size_t len = 0;
    int i;

    if (buflen == 0)
        return buf;
    buf[0] = '\0';
    if (q->by != HL_BY_PARTS) {
        by_add(buf, buflen, 0, q->by, q->by_name);
        return buf;
    }
    for (i = 0; i < q->by_nparts && i < HL_BY_PARTS_MAX; i++) {
        if (i)
            len = describe_add(buf, buflen, len, "%c", q->by_join);
        len = by_add(buf, buflen, len, q->by_parts[i].by,
                     q->by_parts[i].name);
    }
    return buf;
}
