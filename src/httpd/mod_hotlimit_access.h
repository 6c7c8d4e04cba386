/*
 * mod_hotlimit_access.h - what mod_hotlimit_access.c offers the other glue
 * files: the decision hooks.
 */
#ifndef MOD_HOTLIMIT_ACCESS_H
#define MOD_HOTLIMIT_ACCESS_H

#include "mod_hotlimit_conf.h"

/* The decision: the access checker decides initial requests and internal
 * redirects, fixups what changed since (fast redirects) and by=user
 * quotas, log_transaction counts count=failures|status and cost=. Each
 * returns what its hook returns (DECLINED, or the 429/503 outcome). */
int hl_access_checker(request_rec *r);
int hl_fixups(request_rec *r);
int hl_log_transaction(request_rec *r);

/* Returns 1 if the client of r is banned from r's server now (a look at
 * its ban counter that counts nothing), asked before a request body is
 * read (mod_hotlimit_body.c) so that a banned client's body never is; the
 * access checker refuses the request after. 0 otherwise: not banned, no
 * ban, exempt, HotLimitEngine Off, dry run, or the store cannot answer. */
int hl_access_banned(request_rec *r);
/*
 * Looks r's route up in the quota table (the answer the decision uses).
 * Returns 1 when its rule, or the plan the request names (the rule's
 * "plan"), has "concurrency" (the quota copied into *rule; *route the
 * matched route, "ROUTE plan=NAME" for a plan, from r->pool), -1 when the table's kill switch or
 * exempt list admits r untouched, 0 otherwise (no table, no such rule).
 */
int hl_access_table_concurrency(request_rec *r, hl_quota_t *rule,
                                const char **route);

#endif
