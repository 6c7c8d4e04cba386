/*
 * mod_hotlimit_access.h - what mod_hotlimit_access.c offers the other glue
 * files: the decision hooks.
 */
#ifndef MOD_HOTLIMIT_ACCESS_H
#define MOD_HOTLIMIT_ACCESS_H

#include "mod_hotlimit.h"

/* The decision: the access checker decides initial requests and internal
 * redirects, fixups what changed since (fast redirects) and by=user
 * quotas, log_transaction counts count=failures|status and cost=. Each
 * returns what its hook returns (DECLINED, or the 429/503 outcome). */
int hl_access_checker(request_rec *r);
int hl_fixups(request_rec *r);
int hl_log_transaction(request_rec *r);

/* cost=usage (issue 19): returns 1 if r's client request was admitted by a
 * cost=usage quota (its answer's body is then read), 0 otherwise. */
int hl_access_wants_usage(request_rec *r);
/* Returns 1 if the client of r is banned from r's server now (a look at
 * its ban counter that counts nothing), asked before a request body is
 * read (mod_hotlimit_body.c) so that a banned client's body never is; the
 * access checker refuses the request after. 0 otherwise: not banned, no
 * ban, exempt, HotLimitEngine Off, dry run, or the store cannot answer. */
int hl_access_banned(request_rec *r);

/* Account lookup (issue 21, the status page): returns the client part of
 * the key quota q gives a request whose header, cookie, parameter, user or
 * variable (q's by=) carries the n bytes of v: folded by q's norm=, and
 * hashed ("h:", "c:", "p:" and 16 hex digits) or prefixed ("u:", "e:") as
 * the decision does. Allocated from p. NULL when v is NULL, nothing is
 * left after folding, or q counts by=ip or globally. */
const char *hl_account_client_part(apr_pool_t *p, const hl_quota_t *q,
                                   const char *v, size_t n);

#endif
