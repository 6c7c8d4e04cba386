/*
 * mod_hotlimit_cluster_admin.h - redis-cluster://'s keys at their limit
 * (every master's per-bucket index sets, for the status page) and resets.
 */
#ifndef MOD_HOTLIMIT_CLUSTER_ADMIN_H
#define MOD_HOTLIMIT_CLUSTER_ADMIN_H

#include <stddef.h>
#include <stdint.h>
#include "hl_store.h"

/* Lists into out[0 .. max) the windows at their limit on every master
 * (PREFIX{hl:B.S}:limited of each bucket B, or :bans when bans; one
 * pipeline per master), those with the most time left first; *total is
 * how many there are on the masters that answered. Returns how many were
 * listed, or -1 when no master answered. The store's `limited` call. */
int hl_cluster_limited(void *ctx, hl_store_limited_t *out, int max, int bans,
                       uint32_t *total);

/* Removes every window of key ("scope|client", len bytes) here and on
 * its bucket's master, and takes them out of that bucket's list. Returns
 * the counters removed (the master's count only when it answered). The
 * store's `reset` call. */
int hl_cluster_reset(void *ctx, const char *key, size_t len);

#endif
