/*
 * mod_hotlimit_kept_shm.h - shared memory kept across graceful and full
 * restarts: made once per httpd parent, zeroed, and found again by name in
 * the process pool at every later configuration pass.
 */
#ifndef MOD_HOTLIMIT_KEPT_SHM_H
#define MOD_HOTLIMIT_KEPT_SHM_H

#include "apr_pools.h"

/*
 * Returns the base of the anonymous shared memory of size bytes kept in pool
 * pp (the process pool) under name, made and zeroed at the first call, when
 * *created is set to 1 (else 0) so that the caller can set it up once.
 * Returns NULL with *rv set when it cannot be made. The memory lives as long
 * as pp; nobody frees it.
 */
void *hl_kept_shm(apr_pool_t *pp, const char *name, apr_size_t size,
                  int *created, apr_status_t *rv);

#endif
