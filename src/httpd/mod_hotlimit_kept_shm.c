/*
 * mod_hotlimit_kept_shm.c - shared memory kept across restarts (see
 * mod_hotlimit_kept_shm.h).
 */
#include <string.h>

#include "apr_shm.h"

#include "mod_hotlimit_kept_shm.h"

/* See mod_hotlimit_kept_shm.h. */
void *hl_kept_shm(apr_pool_t *pp, const char *name, apr_size_t size,
                  int *created, apr_status_t *rv)
{
    apr_shm_t *shm = NULL;
    void *base = NULL;

    *created = 0;
    *rv = APR_SUCCESS;
    apr_pool_userdata_get(&base, name, pp);
    if (base)
        return base;
    *rv = apr_shm_create(&shm, size, NULL, pp);
    if (*rv != APR_SUCCESS)
        return NULL;
    base = apr_shm_baseaddr_get(shm);
    memset(base, 0, size);
    apr_pool_userdata_set(base, name, apr_pool_cleanup_null, pp);
    *created = 1;
    return base;
}
