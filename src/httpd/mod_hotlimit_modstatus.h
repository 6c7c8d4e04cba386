/*
 * mod_hotlimit_modstatus.h - what mod_hotlimit_modstatus.c offers the other glue
 * files: a hotlimit section in mod_status's server-status.
 */
#ifndef MOD_HOTLIMIT_MODSTATUS_H
#define MOD_HOTLIMIT_MODSTATUS_H

#include "mod_hotlimit_conf.h"

/*
 * Adds the hotlimit section to server-status: HTML, or "HotLimit...: value"
 * lines when flags has AP_STATUS_SHORT (?auto). Always returns OK.
 */
int hl_modstatus_hook(request_rec *r, int flags);

#endif
