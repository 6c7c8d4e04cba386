/*
 * mod_hotlimit_refusal_log.h - what mod_hotlimit_refusal_log.c offers the
 * other glue files: the refusal lines of the error log, thinned by
 * HotLimitLogRefusals (hl_logthin.h).
 */
#ifndef MOD_HOTLIMIT_REFUSAL_LOG_H
#define MOD_HOTLIMIT_REFUSAL_LOG_H

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_match.h"

/* HotLimitLogRefusals (hl_dir_conf_t.log_refusals; first by default). */
#define HL_LOG_REFUSALS_FIRST 1
#define HL_LOG_REFUSALS_ALL   2
#define HL_LOG_REFUSALS_OFF   3

#define HL_LOG_UA_MAX 256   /* bytes of User-Agent written in a line */

/* Directive handler of HotLimitLogRefusals first|all|off. Returns NULL, or
 * an error naming the directive and the bad token. */
const char *hl_refusal_log_set(cmd_parms *cmd, void *dconf, const char *arg);

#define HL_LOG_RATE_DEFAULT 10       /* HotLimitLogRate */
#define HL_LOG_RATE_MAX     100000

/* Directive handler of HotLimitLogRate N (main server only). Returns NULL,
 * or an error naming the directive and the bad value. */
const char *hl_refusal_log_rate_set(cmd_parms *cmd, void *dconf,
                                    const char *arg);

/* Registers the hooks that set up the shared table (post_config,
 * child_init). */
void hl_refusal_log_register(void);

/*
 * Logs the refusal (or would-be refusal under dry run) of match m of r as
 * mode (HL_LOG_REFUSALS_*) says: in full (HL00100, HL00101), summed into
 * a summary line (HL01150 when by_address, i.e. the
 * key is the client address, which the line then names; else HL01151;
 * dry run HL01153), or not at all; under first, full lines beyond
 * HotLimitLogRate a second are held back and summed (HL02100). Written at info for the module, so
 * nothing is done below that level. Never fails: when the shared table
 * cannot be used, each refusal is written in full.
 */
void hl_refusal_log(request_rec *r, const hl_match_t *m, int mode,
                    int by_address);

#endif
