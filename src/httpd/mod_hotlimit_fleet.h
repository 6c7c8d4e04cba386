/*
 * mod_hotlimit_fleet.h - the cluster-wide view (issue 28): with a Redis
 * store, each server publishes its keys refused most now and its ban
 * book's newest entries into the store, and every server's status page
 * merges the other live servers' into its own.
 */
#ifndef MOD_HOTLIMIT_FLEET_H
#define MOD_HOTLIMIT_FLEET_H

#include "mod_hotlimit_conf.h"
#include "hl_fleet.h"

/* Registers the hooks: post_config (this server's id and its shared
 * memory) and log_transaction (a refused request publishes, at most once
 * a second per server). */
void hl_fleet_register(void);

/*
 * Adds the other live servers' refusals into rank[0 .. n) (room for max,
 * at most HL_FLEET_MERGE_MAX), only keys keep accepts (hl_fleet_merge);
 * sets *servers to how many other servers were merged. Returns the new
 * count: n unchanged when the store is not Redis, its breaker is open or
 * the read fails (logged at debug, HL03310). The views are read once per
 * pool p (cached in its userdata); memory from p.
 */
int hl_fleet_add_refused(apr_pool_t *p, hl_refusal_rank_t *rank, int n,
                         int max, int (*keep)(const char *, size_t, void *),
                         void *baton, int *servers);

/* Returns the newest entry another live server published for the ban
 * whose counter key is key (NUL-terminated), or NULL (none, or the views
 * cannot be read: as hl_fleet_add_refused). Points into memory of p. */
const hl_banbook_entry_t *hl_fleet_ban_of(apr_pool_t *p, const char *key);

#endif
