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

#endif
