/*
 * mod_hotlimit_status_html.h - what mod_hotlimit_status_html.c offers the
 * status handler (the page as HTML) and mod_status's section (durations).
 */
#ifndef MOD_HOTLIMIT_STATUS_HTML_H
#define MOD_HOTLIMIT_STATUS_HTML_H

#include "mod_hotlimit_status_snap.h"

/* Writes snap (a full snapshot, hl_status_snap_take) to r as the HTML
 * page, with its content type; refresh > 0 asks the browser to reload it
 * every refresh seconds. Never fails. */
void hl_status_write_html(request_rec *r, const hl_snapshot_t *snap,
                          int refresh);

/* Returns secs as "42 s", "5 min 3 s", "2 h 7 min" or "3 d 2 h 7 min",
 * allocated from p; never NULL. */
const char *hl_status_duration(apr_pool_t *p, int64_t secs);

/* Returns v with its digits grouped ("1,234"), allocated from p. */
const char *hl_status_grouped(apr_pool_t *p, uint64_t v);

#endif
