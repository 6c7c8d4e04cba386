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
 * Returns the client part of a key for quota q's by= and norm= (an address,
 * or "h:"/"c:"/"p:" and a hash, "u:NAME", "e:VALUE", "*"), falling back to
 * the client address, as the quotas key it (HotLimitConcurrency uses it);
 * sets *len, and *exempt to 1 when the client is exempt (HotLimitExempt,
 * env hotlimit-exempt). Allocated from r->pool; never NULL.
 */
const char *hl_access_client_key(request_rec *r, const hl_quota_t *q,
                                 size_t *len, int *exempt);

/*
 * Looks r's route up in the quota table (the answer the decision uses).
 * Returns 1 when its rule, or the plan the request names (the rule's
 * "plan"), has "concurrency" (the quota copied into *rule; *route the
 * matched route, "ROUTE plan=NAME" for a plan, from r->pool), -1 when the table's kill switch or
 * exempt list admits r untouched, 0 otherwise (no table, no such rule).
 */
int hl_access_table_concurrency(request_rec *r, hl_quota_t *rule,
                                const char **route);

/* Account lookup (issue 21, the status page): returns the client part of
 * the key quota q gives a request whose header, cookie, parameter, user or
 * variable (q's by=) carries the n bytes of v: folded by q's norm=, and
 * hashed under the server's secret ("h:", "c:", "p:", "j:", "u:", "e:"
 * and 16 hex digits, hl_secret_hash) as the decision does. Allocated from p. NULL when v is NULL, nothing is
 * left after folding, or q counts by=ip or globally. */
const char *hl_account_client_part(apr_pool_t *p, const hl_quota_t *q,
                                   const char *v, size_t n);

#endif
