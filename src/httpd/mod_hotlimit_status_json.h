/*
 * mod_hotlimit_status_json.h - what mod_hotlimit_status_json.c offers the
 * status handler: the page as JSON.
 */
#ifndef MOD_HOTLIMIT_STATUS_JSON_H
#define MOD_HOTLIMIT_STATUS_JSON_H

#include "mod_hotlimit_status_snap.h"

/* Writes snap (a full snapshot, hl_status_snap_take) to r as the JSON
 * answer of ?json, with its content type. Never fails. */
void hl_status_write_json(request_rec *r, const hl_snapshot_t *snap);

#endif
