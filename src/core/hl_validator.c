/*
 * hl_validator.c - strong and weak validators of the quota table's source
 * (see hl_validator.h): the one-second rule of RFC 9110 8.8.2.2 for file
 * modification times and for an HTTP response's Last-Modified and ETag.
 */
#include <string.h>

#include "apr_date.h"

#include "hl_validator.h"

#define HL_USEC_PER_SEC 1000000

int hl_validator_time_strong(int64_t modified, int64_t seen)
{
    return modified <= seen - HL_USEC_PER_SEC;
}

/* Returns the time of an HTTP date (microseconds), or 0 when value is
 * absent or does not parse. */
static int64_t http_date(const char *value)
{
    if (!value || !value[0])
        return 0;
    return (int64_t)apr_date_parse_http(value);
}

void hl_validator_usable(const char *etag, const char *last_modified,
                         const char *date, hl_validator_use_t *use)
{
    int has_lm = last_modified && last_modified[0];
    int64_t lm = http_date(last_modified), at = http_date(date);

    use->last_modified = has_lm && lm && at
                         && hl_validator_time_strong(lm, at);
    use->etag = etag && etag[0] && strncmp(etag, "W/", 2) != 0
                && (!has_lm || use->last_modified);
}
