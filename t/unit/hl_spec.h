/*
 * hl_spec.h - for unit tests: a quota from the text of a HotLimitQuota
 * line ("5/1m count=failures algo=gcra"). Header-only, like hl_tap.h.
 */
#ifndef HL_SPEC_H
#define HL_SPEC_H

#include <stdio.h>
#include <string.h>
#include "hl_quota.h"

/* Returns the quota parsed from spec (up to 8 words); a bad spec is
 * reported on stderr as a TAP comment and leaves the defaults. */
static hl_quota_t quota(const char *spec)
{
    hl_quota_t q;
    char buf[128], err[HL_ERR_MAX], *argv[8], *tok, *save = NULL;
    int argc = 0;

    snprintf(buf, sizeof(buf), "%s", spec);
    for (tok = strtok_r(buf, " ", &save); tok && argc < 8;
         tok = strtok_r(NULL, " ", &save))
        argv[argc++] = tok;
    hl_quota_init(&q);
    if (hl_quota_parse_args(&q, argc, (const char *const *)argv, err,
                            sizeof(err)) != 0)
        fprintf(stderr, "# bad spec %s: %s\n", spec, err);
    return q;
}

#endif
