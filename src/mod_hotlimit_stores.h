/*
 * mod_hotlimit_stores.h - which counter store decides requests: the one
 * place that chooses between the providers (mod_hotlimit_store_shm.c, the
 * shared memory; mod_hotlimit_redis.c, Redis), so neither provider knows
 * of the choice and the decision's callers know of neither.
 */
#ifndef MOD_HOTLIMIT_STORES_H
#define MOD_HOTLIMIT_STORES_H

#include "hl_store.h"

/* Returns the counter store requests are decided against (Redis when
 * HotLimitStore says so, else the shared memory): never NULL after
 * post_config. decide() returns -2 when the request must be refused with
 * 503 (HotLimitStoreFailure closed). */
const hl_store_t *hl_store_get(void);

#endif
