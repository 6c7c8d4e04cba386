/*
 * mod_hotlimit_status_metrics.h - what mod_hotlimit_status_metrics.c
 * offers the status handler: the page as Prometheus text.
 */
#ifndef MOD_HOTLIMIT_STATUS_METRICS_H
#define MOD_HOTLIMIT_STATUS_METRICS_H

#include "mod_hotlimit_status_snap.h"

/* Writes snap (hl_status_snap_header is enough) to r as the ?metrics
 * answer, with its content type. Never fails. */
void hl_status_write_metrics(request_rec *r, const hl_snapshot_t *snap);

#endif
