/*
 * mod_hotlimit_status.h - what mod_hotlimit_status.c offers the other glue
 * files: the hotlimit-status handler.
 */
#ifndef MOD_HOTLIMIT_STATUS_H
#define MOD_HOTLIMIT_STATUS_H

#include "mod_hotlimit_conf.h"

int hl_status_handler(request_rec *r);

/* Directive handler of HotLimitStatus On|Off (server config, <Location>,
 * <Directory>; no override class, so never .htaccess). Returns NULL. */
const char *hl_status_set(cmd_parms *cmd, void *dconf, int on);

/*
 * post_config: records, once per httpd parent (in the process pool, so
 * graceful and full restarts keep it), when the counters started, for
 * uptime. Always returns OK.
 */
int hl_status_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                          apr_pool_t *ptemp, server_rec *s);

#endif
