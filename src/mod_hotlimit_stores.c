/*
 * mod_hotlimit_stores.c - the choice of the counter store (see
 * mod_hotlimit_stores.h): a remote store when one is configured and
 * attached in this process, else the shared memory.
 */
#include "mod_hotlimit_stores.h"
#include "mod_hotlimit_store_shm.h"
#include "mod_hotlimit_redis.h"

const hl_store_t *hl_store_get(void)
{
    const hl_store_t *remote = hl_redis_store();

    return remote ? remote : hl_store_shm();
}
