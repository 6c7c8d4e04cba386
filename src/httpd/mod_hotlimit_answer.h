/*
 * mod_hotlimit_answer.h - what mod_hotlimit_answer.c offers the other glue
 * files: the quota table's answer for a request (the check room), asked
 * by the decision (mod_hotlimit_access.c) and the concurrency limit
 * (mod_hotlimit_conc.c).
 */
#ifndef MOD_HOTLIMIT_ANSWER_H
#define MOD_HOTLIMIT_ANSWER_H

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_key.h"
#include "mod_hotlimit_table.h"

/*
 * Returns the quota table's answer for r, whose client is cl: the one cl
 * keeps when r's route comes from its path and r asks for the same path
 * as the request it was found for, and no table was published since; else
 * the answer looked up now, kept in cl when r's route comes from its path,
 * the path fits and r is the client's request itself (not an internal
 * redirect), else written into *hit. Points into cl or at hit; never NULL.
 * Call only when hl_table_configured().
 */
const hl_table_hit_t *hl_answer_of(request_rec *r, const hl_dir_conf_t *dc,
                                   hl_client_t *cl, hl_table_hit_t *hit);

/*
 * Returns the quota a request r of table rule hit counts under when the
 * rule's "plan" selector names one of the table's plans: the rule's quota
 * with the plan's limits, from r->pool, and sets *scope to the counted
 * scope "ROUTE plan=NAME". Returns NULL (the rule's own limits and scope)
 * when the rule has no selector, the request does not carry it, or it
 * names no plan.
 */
const hl_quota_t *hl_answer_plan_quota(request_rec *r,
                                       const hl_table_hit_t *hit,
                                       const char **scope);

/*
 * Looks r's route up in the quota table (the answer the decision uses).
 * Returns 1 when its rule, or the plan the request names (the rule's
 * "plan"), has "concurrency" (the quota copied into *rule; *route the
 * matched route, "ROUTE plan=NAME" for a plan, from r->pool), -1 when the
 * table's kill switch or exempt list admits r untouched, 0 otherwise (no
 * table, no such rule).
 */
int hl_answer_concurrency(request_rec *r, hl_quota_t *rule,
                          const char **route);

#endif
