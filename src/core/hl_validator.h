/*
 * hl_validator.h - when a validator of the quota table's source may be
 * trusted to say "unchanged" (RFC 9110 8.8.2.2). A modification time is a
 * strong validator only when it is at least one second older than the
 * moment it was observed: another edit within that second can carry the
 * same time (a 1-second Last-Modified, nginx's mtime-size ETag, a file
 * system's coarse timestamps), so the validator would hide it. A weak
 * validator is never used to skip a document: the reloader reads or
 * fetches the document again and compares its digest. Pure: APR only.
 */
#ifndef HL_VALIDATOR_H
#define HL_VALIDATOR_H

#include <stdint.h>

/*
 * Returns 1 if a modification time `modified` observed at `seen` (both in
 * microseconds since the epoch, as apr_time_t) is a strong validator:
 * modified + 1 s <= seen. A time from the same second or from the future
 * (clock skew) is weak: 0. Never fails.
 */
int hl_validator_time_strong(int64_t modified, int64_t seen);

/* Which validators of a response may be sent back (hl_validator_usable). */
typedef struct {
    int etag;            /* 1: send it as If-None-Match */
    int last_modified;   /* 1: send it as If-Modified-Since */
} hl_validator_use_t;

/*
 * Decides which validators of a 200 response may be sent back in the next
 * conditional GET, from the response's ETag, Last-Modified and Date header
 * values (NULL or "" when absent):
 *   - Last-Modified only when Date is present and at least one second
 *     after it (the RFC's rule for a client: both from the server's clock);
 *   - ETag only when it is strong (no "W/") and Last-Modified is absent or
 *     strong: a server that derives its ETag from the modification time, as
 *     nginx does ("mtime-size"), has the same one-second resolution, and
 *     nothing in the response tells such an ETag from a digest.
 * A date that does not parse counts as absent. Fills *use; never fails.
 */
void hl_validator_usable(const char *etag, const char *last_modified,
                         const char *date, hl_validator_use_t *use);

#endif
