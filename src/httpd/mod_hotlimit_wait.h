/*
 * mod_hotlimit_wait.h - what a request held instead of refused needs
 * (HotLimitConcurrency ... queue=, HotLimitQuota ... delay=): sleeping in
 * small steps while watching its client, and HotLimitMaxWaiting, the most
 * requests the whole server holds at once.
 */
#ifndef MOD_HOTLIMIT_WAIT_H
#define MOD_HOTLIMIT_WAIT_H

#include "httpd.h"
#include "http_config.h"

#define HL_WAIT_STEP_MS 10     /* one step of a held request's sleep */

/*
 * Sleeps up to ms (at most HL_WAIT_STEP_MS is asked of it in practice)
 * while watching r's client connection: its socket is polled for the
 * peer's hangup (FIN, reset), so a client that goes away is seen at once;
 * data it sends meanwhile (a pipelined request) is left unread. Returns 1
 * if the client went away (r->connection is then marked aborted), 0
 * after ms. Over HTTP/2 (a secondary connection) it only sleeps and
 * reads the aborted flag.
 */
int hl_wait_step(request_rec *r, int ms);

/* HotLimitMaxWaiting N: returns NULL, or a message naming the bad value
 * (from cmd->pool). */
const char *hl_wait_set_max(cmd_parms *cmd, void *dconf, const char *arg);

/* pre_config: forgets the last configuration's HotLimitMaxWaiting. */
void hl_wait_pre_config(void);

/* Returns HotLimitMaxWaiting: the value set, or 10% of MaxRequestWorkers
 * (at least 1). */
unsigned hl_wait_max(void);

#endif
