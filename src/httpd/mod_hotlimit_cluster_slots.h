/*
 * mod_hotlimit_cluster_slots.h - a CLUSTER SLOTS reply read into the slot
 * ranges of hl_cluster.h. Needs hiredis only (no httpd header), so that
 * the test client t/support/cluster_cli.c builds it too.
 */
#ifndef MOD_HOTLIMIT_CLUSTER_SLOTS_H
#define MOD_HOTLIMIT_CLUSTER_SLOTS_H

#include <stddef.h>
#include <hiredis/hiredis.h>

#include "hl_cluster.h"

/*
 * Reads the ranges of a CLUSTER SLOTS reply (rep) into r[0 .. max): for
 * each entry its first and last slot and its master's host and port
 * (replicas are not read). An entry that is not [first, last, [host,
 * port, ...], ...] with integer slots and port is skipped; the ranges'
 * values are checked by hl_cluster_map_fill. Returns how many were read,
 * 0 when rep is NULL or not an array. The hosts point into rep: keep it
 * until the ranges are used.
 */
size_t hl_cluster_slots_read(const redisReply *rep, hl_cluster_range_t *r,
                             size_t max);

#endif
