/*
 * mod_hotlimit_store.c - the counters' home: one mod_slotmem_shm item that
 * holds an hl_shared_t header followed by the slot table, and the global
 * mutex "hotlimit-shm" that guards both.
 *
 * Created in post_config by the parent (never in a child); children inherit
 * the mapping through fork and re-attach the mutex in child_init. The item
 * is created with AP_SLOTMEM_TYPE_PERSIST, so mod_slotmem_shm saves it at
 * every restart and stop and restores it at the next create: counters
 * survive a graceful restart always; with HotLimitPersist Off they are
 * cleared at the first start of the process (a full stop/start). The item
 * name carries the capacity and layout version, and the header is checked
 * too, so a persisted file of another geometry is never misread.
 */
#include <string.h>

#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "ap_provider.h"
#include "ap_slotmem.h"
#include "util_mutex.h"
#include "apr_strings.h"
#include "apr_random.h"
#include "apr_thread_proc.h"

#include "mod_hotlimit.h"

APLOG_USE_MODULE(hotlimit);

#define HL_MUTEX_TYPE      "hotlimit-shm"
#define HL_DEFAULT_SLOTS   65536
#define HL_STARTED_KEY     "hotlimit-started"
#define HL_LOCK_TRIES      32    /* trylock + yield rounds before sleeping */

static apr_global_mutex_t *store_mutex;
static hl_shared_t *store_shared;
static hl_slots_t store_slots;
static uint32_t store_capacity;

uint32_t hl_store_capacity(void)
{
    return store_capacity;
}

int hl_store_pre_config(apr_pool_t *pconf)
{
    apr_status_t rv = ap_mutex_register(pconf, HL_MUTEX_TYPE, NULL,
                                        APR_LOCK_DEFAULT, 0);
    if (rv != APR_SUCCESS) {
        ap_log_perror(APLOG_MARK, APLOG_CRIT, rv, pconf,
                      "HL00200: cannot register mutex " HL_MUTEX_TYPE);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    return OK;
}

/* Returns 64 random bits for the hash seed (falls back to time ^ pid). */
static uint64_t random_seed(void)
{
    uint64_t seed = 0;
    if (apr_generate_random_bytes((unsigned char *)&seed, sizeof(seed))
        != APR_SUCCESS)
        seed = (uint64_t)apr_time_now() ^ ((uint64_t)getpid() << 32);
    return seed;
}

/* Checks or initialises the header of the segment at base. Returns 1 if the
 * segment was (re)initialised, 0 if a valid one was kept. */
static int attach_shared(void *base, apr_size_t size, uint32_t capacity)
{
    hl_shared_t *sh = base;
    int fresh = 0;

    if (sh->magic != HL_SHARED_MAGIC || sh->version != HL_SHARED_VERSION
        || sh->capacity != capacity) {
        memset(sh, 0, sizeof(*sh));
        sh->magic = HL_SHARED_MAGIC;
        sh->version = HL_SHARED_VERSION;
        sh->capacity = capacity;
        sh->table_enabled = 1;
        sh->table_last_result = -1;
        fresh = 1;
    }
    if (hl_slots_attach(&store_slots, (char *)base + sizeof(*sh),
                        size - sizeof(*sh), capacity, random_seed()) == 1)
        fresh = 1;
    return fresh;
}

int hl_store_post_config(apr_pool_t *pconf, server_rec *s)
{
    hl_server_conf_t *sc = ap_get_module_config(s->module_config,
                                                &hotlimit_module);
    const ap_slotmem_provider_t *shm;
    ap_slotmem_instance_t *inst = NULL;
    apr_size_t size;
    void *base = NULL;
    void *started = NULL;
    const char *name;
    apr_status_t rv;
    int fresh;

    store_capacity = sc->slots != HL_UNSET ? (uint32_t)sc->slots : HL_DEFAULT_SLOTS;
    shm = ap_lookup_provider(AP_SLOTMEM_PROVIDER_GROUP, "shm",
                             AP_SLOTMEM_PROVIDER_VERSION);
    if (!shm) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, 0, s,
                     "HL00201: mod_slotmem_shm is not loaded: add "
                     "'LoadModule slotmem_shm_module' (a2enmod slotmem_shm)");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    size = sizeof(hl_shared_t) + hl_slots_size(store_capacity);
    name = apr_psprintf(pconf, "hotlimit-v%u-%u-%u", HL_SHARED_VERSION,
                        HL_SLOTS_VERSION, store_capacity);
    rv = shm->create(&inst, name, size, 1, AP_SLOTMEM_TYPE_PERSIST, pconf);
    if (rv == APR_SUCCESS)
        rv = shm->dptr(inst, 0, &base);
    if (rv != APR_SUCCESS || !base) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "HL00202: cannot create shared memory '%s' of %"
                     APR_SIZE_T_FMT " bytes for %u slots", name, size,
                     store_capacity);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    fresh = attach_shared(base, size, store_capacity);
    store_shared = base;

    /* The process pool lives across restarts: its absence means this is
     * the first start, where HotLimitPersist Off wants a clean table. */
    apr_pool_userdata_get(&started, HL_STARTED_KEY, s->process->pool);
    if (!started) {
        apr_pool_userdata_set((const void *)1, HL_STARTED_KEY,
                              apr_pool_cleanup_null, s->process->pool);
        if (sc->persist == 0 && !fresh) {
            hl_slots_clear(&store_slots);
            hl_stats_clear(&store_shared->stats);
            fresh = 1;
        }
    }
    ap_log_error(APLOG_MARK, APLOG_INFO, 0, s,
                 "HL00203: %s %u counter slots (%" APR_SIZE_T_FMT
                 " bytes of shared memory, %u in use)",
                 fresh ? "created" : "restored", store_capacity, size,
                 store_slots.hdr->used);

    rv = ap_global_mutex_create(&store_mutex, NULL, HL_MUTEX_TYPE, NULL, s,
                                pconf, 0);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "HL00204: cannot create mutex " HL_MUTEX_TYPE);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    return OK;
}

void hl_store_child_init(apr_pool_t *pchild, server_rec *s)
{
    apr_status_t rv;

    if (!store_mutex)
        return;
    rv = apr_global_mutex_child_init(&store_mutex,
                                     apr_global_mutex_lockfile(store_mutex),
                                     pchild);
    if (rv != APR_SUCCESS)
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "HL00205: cannot attach mutex " HL_MUTEX_TYPE
                     " in child; requests will be admitted unlimited");
}

/*
 * Takes the mutex, trying a few times before sleeping on it. The critical
 * section is a few hundred nanoseconds, so a waiter that yields the CPU
 * once or twice usually finds the mutex free; sleeping at once costs a
 * kernel round trip per handoff (and Debian's default mechanism, a
 * priority-inheriting pthread mutex, hands the lock over through the
 * kernel to a thread that must first be scheduled). Returns what
 * apr_global_mutex_lock returns.
 */
static apr_status_t acquire(apr_global_mutex_t *m)
{
    int i;

    for (i = 0; i < HL_LOCK_TRIES; ++i) {
        apr_status_t rv = apr_global_mutex_trylock(m);
        if (rv == APR_SUCCESS)
            return rv;
        if (!APR_STATUS_IS_EBUSY(rv))
            break;
        apr_thread_yield();
    }
    return apr_global_mutex_lock(m);
}

apr_status_t hl_store_lock(server_rec *s, hl_slots_t **slots,
                           hl_shared_t **shared)
{
    apr_status_t rv;

    if (!store_mutex || !store_shared)
        return APR_EINIT;
    rv = acquire(store_mutex);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s,
                     "HL00206: cannot lock " HL_MUTEX_TYPE "; admitting");
        return rv;
    }
    *slots = &store_slots;
    *shared = store_shared;
    return APR_SUCCESS;
}

void hl_store_unlock(server_rec *s)
{
    apr_status_t rv = apr_global_mutex_unlock(store_mutex);
    if (rv != APR_SUCCESS)
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s,
                     "HL00207: cannot unlock " HL_MUTEX_TYPE);
}
