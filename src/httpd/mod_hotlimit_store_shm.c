/*
 * mod_hotlimit_store_shm.c - the counters' home: one anonymous shared-memory
 * segment holding an hl_shared_t header followed by the slot table, and the
 * global mutex "hotlimit-shm" that guards both.
 *
 * Why not a mod_slotmem_shm item: slotmem creates a new segment for every
 * configuration generation and copies the old one through a file at the
 * restart, while old-generation children still write to the old one. Their
 * late increments are lost, and under load the copy fails its checksum
 * (AH02551) and the new generation starts empty. So:
 *
 *  - The segment and the mutex are created ONCE per httpd parent process,
 *    in the process pool (which lives across graceful and full restarts),
 *    at the first real post_config. Later generations find them again
 *    through the process pool's userdata and attach as they are; old and
 *    new children share the very same memory and lock, so no increment is
 *    ever lost to a restart. Children inherit both through fork.
 *  - The counters are written to a file only when the parent exits (a
 *    full stop), under the mutex, after every child is gone; the next
 *    start reads it back (HotLimitPersist On) and deletes it. Times in the
 *    file are translated from the old boot's monotonic clock to the new
 *    one through the wall clock (hl_limiter_rebase).
 *  - HotLimitSlots and the Mutex mechanism are fixed for the life of the
 *    parent: a changed value is reported at a graceful restart and takes
 *    effect at the next full stop and start.
 *
 * Stripes: the slot table is split into up to HL_MAX_STRIPES tables (one
 * per 1,024 slots at least), each with its own lock; a key's windows live
 * in the stripe its first slot key hashes to, so requests on different
 * keys rarely wait for one another, and a decision locks only the stripes
 * of its keys (in ascending order: no deadlock). A stripe's lock is a
 * futex word in a small segment of its own (hl_shmlock.h: taken over when
 * its holder died), made with the counters and living as long: every
 * decision takes one, and an apr global mutex costs ~250 instructions a
 * lock and unlock (with `Mutex file:` a file lock and a thread mutex), a
 * robust pthread mutex ~150, this one ~15; so the `Mutex` directive's
 * hotlimit-shm mechanism applies to the header's lock only.
 * The header (table status) has the hotlimit-shm mutex of its own; the
 * statistics need none.
 *
 * The module's DSO is unloaded and loaded again at each restart, so no
 * function pointer of this file may outlive a generation: the exit-time
 * save is a pconf cleanup that checks it runs in the exiting parent.
 */
#include <string.h>
#include <unistd.h>

#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "http_core.h"
#include "ap_mpm.h"
#include "util_mutex.h"
#include "apr_strings.h"
#include "apr_random.h"
#include "apr_shm.h"
#include "apr_file_io.h"
#include "apr_thread_proc.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_store_shm.h"
#include "hl_align.h"
#include "hl_shmlock.h"

APLOG_USE_MODULE(hotlimit);

#define HL_MUTEX_TYPE      "hotlimit-shm"
/* The running table is found again across a graceful restart under this
 * name. It names the layouts too (the segment's, the slot table's and this
 * record's size): a graceful restart onto a module whose layout differs (an
 * upgrade reloads with a graceful) makes a new segment, counters starting
 * empty, instead of reading the old one with the new layout. */
#define HL_LIFE_STR(x)     #x
#define HL_LIFE_XSTR(x)    HL_LIFE_STR(x)
#define HL_LIFE_KEY        "hotlimit-store-v" HL_LIFE_XSTR(HL_SHARED_VERSION) \
                           "." HL_LIFE_XSTR(HL_SLOTS_VERSION)
#define HL_PERSIST_NAME    "hotlimit-counters.persist"
#define HL_PERSIST_MAGIC   0x484c4350u  /* "HLCP" */
#define HL_PERSIST_VERSION 2u          /* 2: only the pages in use */
#define HL_PERSIST_PAGE    4096u
#define HL_LOCK_TRIES      HL_SHMLOCK_TRIES  /* trylock + yield rounds */
#define HL_SCAN_CHUNK      4096  /* slots scanned per hold of a stripe */

/* What lives as long as the httpd parent: allocated from the process pool
 * at the first start and found again by every later generation. */
#define HL_MAX_STRIPES     16
#define HL_STRIPE_MIN      1024  /* slots a stripe has at least */

typedef struct {
    apr_size_t          record_size; /* sizeof(hl_store_life_t) of the build
                                        that made it (first, always) */
    apr_shm_t          *shm;
    apr_global_mutex_t *mutex;       /* the header's (hotlimit-shm) */
    apr_shm_t          *locks_shm;   /* the stripes' locks */
    hl_shmlock_t       *stripe_lock; /* [HL_MAX_STRIPES], in locks_shm */
    uint32_t            nstripes;
    uint32_t            capacity;    /* configured (HotLimitSlots) */
    apr_size_t          size;      /* of the segment */
    pid_t               parent;    /* the process that may save at exit */
    int                 persist;   /* HotLimitPersist of the newest config */
    const char         *persist_path;
} hl_store_life_t;

/* The header of a persisted counters file. The segment follows as pages
 * of HL_PERSIST_PAGE bytes: a bitmap of them (bit set: the page holds a
 * nonzero byte), then the pages whose bit is set, in order. Free slots
 * and log records are zeroed before (hl_slots_zero_free), so the file is
 * about the size of the counters in use, not of HotLimitSlots. */
typedef struct {
    uint32_t magic;
    uint32_t version;
    uint32_t shared_version;   /* HL_SHARED_VERSION */
    uint32_t slots_version;    /* HL_SLOTS_VERSION */
    uint32_t capacity;
    uint32_t reserved;
    uint64_t size;             /* bytes of segment that follow */
    int64_t  saved_wall_ms;    /* wall clock when saved */
    int64_t  saved_mono_ms;    /* hl_mono_ms when saved */
    uint64_t checksum;         /* hl_hash64 of the segment bytes */
} hl_persist_header_t;

/* This generation's view of the store (the DSO's statics are new each
 * generation; the memory they point to is not). */
static server_rec *store_server;      /* whose error log the store uses */
static apr_global_mutex_t *store_mutex;
static hl_shmlock_t *stripe_lock;     /* [HL_MAX_STRIPES], shared */
static uint32_t store_pid;            /* this process's, the locks' owner */
static uint32_t store_nstripes;
static hl_shared_t *store_shared;
static hl_slots_t store_slots[HL_MAX_STRIPES];

int hl_store_shm_pre_config(apr_pool_t *pconf)
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

/* Returns the number of stripes for capacity slots: a power of two, at
 * most HL_MAX_STRIPES, each of HL_STRIPE_MIN slots at least (1 below). */
static uint32_t stripes_for(uint32_t capacity)
{
    uint32_t n = 1;

    while (n * 2 <= HL_MAX_STRIPES && capacity / (n * 2) >= HL_STRIPE_MIN)
        n *= 2;
    return n;
}

/* Returns the offset of stripe i in a segment of nstripes stripes of
 * per slots each. */
static apr_size_t stripe_offset(uint32_t i, uint32_t per)
{
    return hl_align8(sizeof(hl_shared_t))
           + (apr_size_t)i * hl_align8(hl_slots_size(per));
}

/* Returns the bytes of a segment of nstripes stripes of per slots each. */
static apr_size_t segment_size(uint32_t nstripes, uint32_t per)
{
    return stripe_offset(nstripes, per);
}

/* Points store_slots[0 .. nstripes) at the segment at base, without
 * reading it (validate: 0), or attaching and validating each stripe
 * (validate: 1; an inconsistent stripe is emptied). Returns 1 if anything
 * was (re)initialised. All stripes share one seed, so a slot key's hash
 * is the same in each (hl_decide_prepare works before the stripe is
 * known). */
static int map_stripes(void *base, uint32_t nstripes, uint32_t per,
                       int validate, uint64_t seed)
{
    int fresh = 0;
    uint32_t i;

    for (i = 0; i < nstripes; ++i) {
        char *at = (char *)base + stripe_offset(i, per);

        if (!validate) {
            hl_slots_map(&store_slots[i], at, per);
            continue;
        }
        if (hl_slots_attach(&store_slots[i], at, hl_slots_size(per), per,
                            i == 0 ? seed : store_slots[0].hdr->seed) == 1)
            fresh = 1;
        if (store_slots[i].hdr->seed != store_slots[0].hdr->seed) {
            /* Kept while stripe 0 started over with a new seed: this
             * stripe starts over too, with stripe 0's. */
            store_slots[i].hdr->magic = 0;
            hl_slots_attach(&store_slots[i], at, hl_slots_size(per), per,
                            store_slots[0].hdr->seed);
            fresh = 1;
        }
    }
    store_nstripes = nstripes;
    return fresh;
}

/* Initialises the header of the segment at base, or keeps a valid one,
 * and attaches the stripes after it, validating them. Returns 1 if
 * anything was (re)initialised, 0 if a valid segment was kept. */
static int attach_shared(void *base, uint32_t capacity)
{
    hl_shared_t *sh = base;
    uint32_t nstripes = stripes_for(capacity);
    int fresh = 0;

    if (sh->magic != HL_SHARED_MAGIC || sh->version != HL_SHARED_VERSION
        || sh->capacity != capacity) {
        memset(sh, 0, sizeof(*sh));
        sh->magic = HL_SHARED_MAGIC;
        sh->version = HL_SHARED_VERSION;
        sh->capacity = capacity;
        sh->counters_started_ms = hl_now_ms();
        fresh = 1;
    }
    if (map_stripes(base, nstripes, capacity / nstripes, 1, random_seed()))
        fresh = 1;
    return fresh;
}

/* Returns the slots in use over every stripe (unlocked read: a figure for
 * messages). */
static uint32_t used_slots(void)
{
    uint32_t i, used = 0;

    for (i = 0; i < store_nstripes; ++i)
        used += store_slots[i].hdr->used;
    return used;
}

/* Returns 1 if the page of the segment base (size bytes) at off holds a
 * nonzero byte. */
static int page_used(const char *base, apr_size_t size, apr_size_t off)
{
    apr_size_t i, n = size - off < HL_PERSIST_PAGE ? size - off : HL_PERSIST_PAGE;

    for (i = 0; i < n; ++i)
        if (base[off + i] != 0)
            return 1;
    return 0;
}

/* Writes the segment base (size bytes) to f as the page bitmap and the
 * pages in use (see hl_persist_header_t). The bitmap comes from p.
 * Returns APR_SUCCESS or the first write error. */
static apr_status_t write_pages(apr_file_t *f, apr_pool_t *p, const char *base,
                                apr_size_t size)
{
    apr_size_t npages = (size + HL_PERSIST_PAGE - 1) / HL_PERSIST_PAGE, i;
    unsigned char *map = apr_pcalloc(p, (npages + 7) / 8);
    apr_status_t rv;

    for (i = 0; i < npages; ++i)
        if (page_used(base, size, i * HL_PERSIST_PAGE))
            map[i / 8] |= (unsigned char)(1u << (i % 8));
    rv = apr_file_write_full(f, map, (npages + 7) / 8, NULL);
    for (i = 0; rv == APR_SUCCESS && i < npages; ++i) {
        apr_size_t off = i * HL_PERSIST_PAGE;
        if (map[i / 8] & (1u << (i % 8)))
            rv = apr_file_write_full(f, base + off, size - off < HL_PERSIST_PAGE
                                     ? size - off : HL_PERSIST_PAGE, NULL);
    }
    if (rv == APR_SUCCESS)
        rv = apr_file_flush(f);
    return rv;
}

/* Reads what write_pages wrote into the segment base (size bytes), the
 * pages not in the file zeroed. The bitmap comes from p. Returns
 * APR_SUCCESS, or an error when the file is short. */
static apr_status_t read_pages(apr_file_t *f, apr_pool_t *p, char *base,
                               apr_size_t size)
{
    apr_size_t npages = (size + HL_PERSIST_PAGE - 1) / HL_PERSIST_PAGE, i;
    unsigned char *map = apr_palloc(p, (npages + 7) / 8);
    apr_status_t rv = apr_file_read_full(f, map, (npages + 7) / 8, NULL);

    memset(base, 0, size);
    for (i = 0; rv == APR_SUCCESS && i < npages; ++i) {
        apr_size_t off = i * HL_PERSIST_PAGE;
        if (map[i / 8] & (1u << (i % 8)))
            rv = apr_file_read_full(f, base + off, size - off < HL_PERSIST_PAGE
                                    ? size - off : HL_PERSIST_PAGE, NULL);
    }
    return rv;
}

/* Zeroes (zero: 1) or relinks (zero: 0) the free records of every stripe
 * of the segment at base for capacity slots: see hl_slots_zero_free. */
static void free_records(void *base, uint32_t capacity, int zero)
{
    uint32_t i, nstripes = stripes_for(capacity);
    hl_slots_t t;

    for (i = 0; i < nstripes; ++i) {
        hl_slots_map(&t, (char *)base + stripe_offset(i, capacity / nstripes),
                     capacity / nstripes);
        if (zero)
            hl_slots_zero_free(&t);
        else
            hl_slots_relink_free(&t);
    }
}

/* Rebuilds the free lists of a segment read from a file. */
static void relink_free(void *base, uint32_t capacity)
{
    free_records(base, capacity, 0);
}

/*
 * Reads the counters saved by the previous httpd into the segment at base
 * (size bytes for capacity slots) and deletes the file. Returns 1 if they
 * were loaded, 0 if there was nothing usable (logged, segment untouched
 * or zeroed). Times are rebased onto this boot's monotonic clock.
 */
static int load_persisted(server_rec *s, apr_pool_t *p, const char *path,
                          void *base, apr_size_t size, uint32_t capacity)
{
    hl_persist_header_t h;
    apr_file_t *f;
    apr_size_t n = sizeof(h);
    apr_status_t rv;
    const char *why = NULL;
    uint32_t i;

    rv = apr_file_open(&f, path, APR_FOPEN_READ | APR_FOPEN_BINARY,
                       APR_OS_DEFAULT, p);
    if (APR_STATUS_IS_ENOENT(rv))
        return 0;
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, rv, s,
                     "HL00210: cannot open saved counters %s; starting empty",
                     path);
        return 0;
    }
    rv = apr_file_read_full(f, &h, n, &n);
    if (rv != APR_SUCCESS || h.magic != HL_PERSIST_MAGIC
        || h.version != HL_PERSIST_VERSION)
        why = "not a counters file of this version";
    else if (h.shared_version != HL_SHARED_VERSION
             || h.slots_version != HL_SLOTS_VERSION
             || h.capacity != capacity || h.size != size)
        why = apr_psprintf(p, "saved for %u slots of another layout (now "
                           "%u slots)", h.capacity, capacity);
    else if (read_pages(f, p, base, size) != APR_SUCCESS)
        why = "truncated";
    else if (hl_hash64(base, size, 0) != h.checksum)
        why = "checksum mismatch";
    apr_file_close(f);
    apr_file_remove(path, p);
    if (why) {
        memset(base, 0, size);
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s,
                     "HL00211: saved counters %s not loaded (%s); starting "
                     "empty", path, why);
        return 0;
    }
    relink_free(base, capacity);
    if (attach_shared(base, capacity) != 0) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s,
                     "HL00212: saved counters %s were inconsistent; "
                     "starting empty", path);
        return 0;
    }
    for (i = 0; i < store_nstripes; ++i)
        hl_limiter_rebase(&store_slots[i],
                          (hl_mono_ms() - hl_now_ms())
                          - (h.saved_mono_ms - h.saved_wall_ms), hl_mono_ms());
    return 1;
}

/*
 * Writes the segment to life->persist_path (through a temporary file and
 * a rename, so a crash never leaves half a file). Returns APR_SUCCESS or
 * the error after logging. The caller holds the mutex.
 */
static apr_status_t save_persisted(server_rec *s, apr_pool_t *p,
                                   const hl_store_life_t *life)
{
    hl_persist_header_t h;
    void *base = apr_shm_baseaddr_get(life->shm);
    const char *tmp = apr_pstrcat(p, life->persist_path, ".new", NULL);
    apr_file_t *f;
    apr_size_t n;
    apr_status_t rv;

    memset(&h, 0, sizeof(h));
    h.magic = HL_PERSIST_MAGIC;
    h.version = HL_PERSIST_VERSION;
    h.shared_version = HL_SHARED_VERSION;
    h.slots_version = HL_SLOTS_VERSION;
    h.capacity = life->capacity;
    h.size = life->size;
    h.saved_wall_ms = hl_now_ms();
    h.saved_mono_ms = hl_mono_ms();
    /* The process is exiting: its free records may be zeroed in place
     * (they are relinked after the write all the same). */
    free_records(base, life->capacity, 1);
    h.checksum = hl_hash64(base, life->size, 0);
    rv = apr_file_open(&f, tmp, APR_FOPEN_WRITE | APR_FOPEN_CREATE
                       | APR_FOPEN_TRUNCATE | APR_FOPEN_BINARY,
                       APR_FPROT_UREAD | APR_FPROT_UWRITE, p);
    if (rv == APR_SUCCESS) {
        n = sizeof(h);
        rv = apr_file_write_full(f, &h, n, NULL);
        if (rv == APR_SUCCESS)
            rv = write_pages(f, p, base, life->size);
        apr_file_close(f);
    }
    relink_free(base, life->capacity);
    if (rv == APR_SUCCESS)
        rv = apr_file_rename(tmp, life->persist_path, p);
    if (rv != APR_SUCCESS) {
        apr_file_remove(tmp, p);
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s,
                     "HL00213: cannot save counters to %s", life->persist_path);
    }
    else
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, s,
                     "HL00214: saved %u counters to %s",
                     used_slots(), life->persist_path);
    return rv;
}

/* Context of the exit-time save, allocated from pconf. */
typedef struct {
    server_rec      *s;
    apr_pool_t      *pool;   /* the process pool: still alive at exit */
    hl_store_life_t *life;
} hl_save_ctx_t;

/*
 * pconf cleanup: when the parent itself is exiting (full stop, not a
 * restart) and HotLimitPersist is On, saves the counters under the mutex.
 * Always returns APR_SUCCESS.
 */
static apr_status_t save_at_exit(void *data)
{
    hl_save_ctx_t *c = data;
    uint32_t i;

    if (ap_state_query(AP_SQ_MAIN_STATE) != AP_SQ_MS_EXITING
        || getpid() != c->life->parent)
        return APR_SUCCESS;
    if (!c->life->persist) {
        apr_file_remove(c->life->persist_path, c->pool);
        return APR_SUCCESS;
    }
    if (apr_global_mutex_lock(c->life->mutex) != APR_SUCCESS)
        return APR_SUCCESS;
    for (i = 0; i < c->life->nstripes; ++i)
        hl_shmlock_lock(&c->life->stripe_lock[i], (uint32_t)getpid());
    save_persisted(c->s, c->pool, c->life);
    for (i = c->life->nstripes; i-- > 0;)
        hl_shmlock_unlock(&c->life->stripe_lock[i]);
    apr_global_mutex_unlock(c->life->mutex);
    return APR_SUCCESS;
}

/*
 * Creates the stripes' locks in an anonymous segment of their own in the
 * process pool (inherited by every child through fork; not in the
 * counters' segment, which a start may overwrite with saved bytes).
 * Returns 1, or 0 after logging.
 */
static int create_stripe_locks(server_rec *s, hl_store_life_t *life)
{
    apr_status_t rv = apr_shm_create(&life->locks_shm,
                                     sizeof(hl_shmlock_t) * HL_MAX_STRIPES,
                                     NULL, s->process->pool);
    uint32_t i;

    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "HL02850: cannot create the shared memory of the "
                     "stripes' locks");
        return 0;
    }
    life->stripe_lock = apr_shm_baseaddr_get(life->locks_shm);
    for (i = 0; i < HL_MAX_STRIPES; ++i)
        hl_shmlock_init(&life->stripe_lock[i]);
    return 1;
}

/*
 * First start of this httpd parent: creates the segment and the mutex in
 * the process pool, loads saved counters when HotLimitPersist is On.
 * Returns the new life record, or NULL after logging.
 */
static hl_store_life_t *create_life(server_rec *s, apr_pool_t *pconf,
                                    uint32_t capacity, int persist)
{
    apr_pool_t *pp = s->process->pool;
    hl_store_life_t *life = apr_pcalloc(pp, sizeof(*life));
    apr_status_t rv;
    void *base;
    int loaded = 0;

    life->capacity = capacity;
    life->nstripes = stripes_for(capacity);
    life->size = segment_size(life->nstripes, capacity / life->nstripes);
    life->parent = getpid();
    life->persist_path = ap_runtime_dir_relative(pp, HL_PERSIST_NAME);
    rv = apr_shm_create(&life->shm, life->size, NULL, pp);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "HL00202: cannot create %" APR_SIZE_T_FMT " bytes of "
                     "shared memory for %u slots", life->size, capacity);
        return NULL;
    }
    base = apr_shm_baseaddr_get(life->shm);
    memset(base, 0, life->size);
    if (persist && life->persist_path)
        loaded = load_persisted(s, pconf, life->persist_path, base,
                                life->size, capacity);
    else if (life->persist_path)
        apr_file_remove(life->persist_path, pconf);
    if (!loaded)
        attach_shared(base, capacity);
    ap_log_error(APLOG_MARK, APLOG_INFO, 0, s,
                 "HL00203: %s %u counter slots in %u stripes (%" APR_SIZE_T_FMT
                 " bytes of shared memory, %u in use)",
                 loaded ? "restored" : "created", capacity, life->nstripes,
                 life->size, used_slots());

    /* The locks live as long as the segment: old and new children of a
     * graceful restart must exclude each other. */
    rv = ap_global_mutex_create(&life->mutex, NULL, HL_MUTEX_TYPE, NULL, s,
                                pp, 0);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "HL00204: cannot create mutex " HL_MUTEX_TYPE);
        return NULL;
    }
    if (!create_stripe_locks(s, life))
        return NULL;
    life->record_size = sizeof(*life);
    apr_pool_userdata_set(life, HL_LIFE_KEY, apr_pool_cleanup_null, pp);
    return life;
}

int hl_store_shm_post_config(apr_pool_t *pconf, server_rec *s)
{
    hl_server_conf_t *sc = ap_get_module_config(s->module_config,
                                                &hotlimit_module);
    uint32_t capacity = (uint32_t)sc->slots;
    hl_store_life_t *life = NULL;
    hl_save_ctx_t *ctx;
    void *found = NULL;

    apr_pool_userdata_get(&found, HL_LIFE_KEY, s->process->pool);
    life = found;
    if (life && life->record_size != sizeof(*life))
        life = NULL;        /* another build's record: see HL_LIFE_KEY */
    if (!life) {
        life = create_life(s, pconf, capacity, sc->persist != 0);
        if (!life)
            return HTTP_INTERNAL_SERVER_ERROR;
    }
    else {
        /* A restart: the running table stays, old children and all. Only
         * pointers are recomputed; the memory is not touched. */
        if (capacity != life->capacity)
            ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s,
                         "HL00208: HotLimitSlots %u takes effect at the next "
                         "full stop and start; keeping %u slots and their "
                         "counters", capacity, life->capacity);
        map_stripes(apr_shm_baseaddr_get(life->shm), life->nstripes,
                    life->capacity / life->nstripes, 0, 0);
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, s,
                     "HL00209: kept %u counter slots across the restart "
                     "(%u in use)", life->capacity, used_slots());
    }
    life->persist = sc->persist != 0;
    store_server = s;
    store_mutex = life->mutex;
    stripe_lock = life->stripe_lock;
    store_pid = (uint32_t)getpid();
    store_shared = apr_shm_baseaddr_get(life->shm);

    ctx = apr_pcalloc(pconf, sizeof(*ctx));
    ctx->s = s;
    ctx->pool = s->process->pool;
    ctx->life = life;
    apr_pool_cleanup_register(pconf, ctx, save_at_exit, apr_pool_cleanup_null);
    return OK;
}

void hl_store_shm_child_init(apr_pool_t *pchild, server_rec *s)
{
    apr_status_t rv;

    store_pid = (uint32_t)getpid();
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

apr_status_t hl_store_shm_lock(server_rec *s, hl_shared_t **shared)
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
    *shared = store_shared;
    return APR_SUCCESS;
}

/* What lock_stripe returns for hl_shmlock_lock's rv (not 0), logged. */
static __attribute__((noinline)) apr_status_t lock_failed(uint32_t i,
                                                          int rv)
{
    if (rv == HL_SHMLOCK_RECOVERED) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, store_server,
                     "HL02852: the lock of counter stripe %u was held by a "
                     "process that died; taken over", i);
        return APR_SUCCESS;
    }
    ap_log_error(APLOG_MARK, APLOG_ERR, APR_FROM_OS_ERROR(rv), store_server,
                 "HL00215: cannot lock counter stripe %u; admitting", i);
    return APR_FROM_OS_ERROR(rv);
}

/* Takes the lock of stripe i. Returns APR_SUCCESS (also when its holder
 * died holding it: logged, the stripe is used as it is; the slot table's
 * operations leave it usable at every step), or the error after
 * logging. Inline: one compare-and-swap when the lock is free. */
static inline apr_status_t lock_stripe(uint32_t i)
{
    int rv = hl_shmlock_lock(&stripe_lock[i], store_pid);

    return rv == 0 ? APR_SUCCESS : lock_failed(i, rv);
}

/* Lets go of the lock of stripe i. */
static void unlock_stripe(uint32_t i)
{
    hl_shmlock_unlock(&stripe_lock[i]);
}

void hl_store_shm_totals(hl_store_shm_totals_t *t)
{
    uint32_t i;

    memset(t, 0, sizeof(*t));
    for (i = 0; i < store_nstripes; ++i) {
        const hl_slots_header_t *h;

        if (lock_stripe(i) != APR_SUCCESS)
            continue;
        h = store_slots[i].hdr;
        t->used += h->used;
        t->capacity += h->capacity;
        t->evictions += h->evictions;
        t->reclaims += h->reclaims;
        if (h->nclasses > t->classes)
            t->classes = h->nclasses;
        unlock_stripe(i);
    }
    t->stripes = store_nstripes;
}

void hl_store_shm_scan(int (*fn)(const hl_slot_t *s, void *baton), void *baton)
{
    uint32_t i, next;

    for (i = 0; i < store_nstripes; ++i) {
        next = 0;
        do {
            if (lock_stripe(i) != APR_SUCCESS)
                break;
            next = hl_slots_scan(&store_slots[i], next, HL_SCAN_CHUNK, fn, baton);
            unlock_stripe(i);
        } while (next != 0);
    }
}

void hl_store_shm_unlock(server_rec *s)
{
    apr_status_t rv = apr_global_mutex_unlock(store_mutex);
    if (rv != APR_SUCCESS)
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s,
                     "HL00207: cannot unlock " HL_MUTEX_TYPE);
}

/* ---- the store interface (hl_store.h) over the shared memory ---------- */

/* Prepares an item: its slot keys and their hashes (every stripe has the
 * same seed, which never changes once attached, so no lock), then its
 * stripe, from the first slot key's hash (high bits: the low ones pick
 * the bucket). */
static void shm_prepare(void *ctx, hl_decide_item_t *it)
{
    (void)ctx;
    hl_decide_prepare(&store_slots[0], it);
    it->stripe = (unsigned)((it->refs[0].hash >> 40) % store_nstripes);
}

/* Adds stripe k to the ascending set locks[0 .. n) (room for one more)
 * unless it is there. Returns the new size. */
static int add_lock(unsigned *locks, int n, unsigned k)
{
    int j;

    for (j = 0; j < n; ++j)
        if (locks[j] == k)
            return n;
    for (j = n; j > 0 && locks[j - 1] > k; --j)
        locks[j] = locks[j - 1];
    locks[j] = k;
    return n + 1;
}

/* Decides under the mutexes of the items' stripes, taken in ascending
 * order; nothing is allocated, hashed or formatted while they are held.
 * Returns 1, 0, or -1 when a mutex failed. */
static int shm_decide(void *ctx, hl_decide_item_t *const *items, int n,
                      int64_t now_ms)
{
    hl_slots_t *tables[HL_DECIDE_MAX] = { NULL };
    unsigned locks[HL_DECIDE_MAX];
    int nlocks = 0, i, admit;
    (void)ctx;

    for (i = 0; i < n; ++i) {
        tables[i] = &store_slots[items[i]->stripe];
        nlocks = add_lock(locks, nlocks, items[i]->stripe);
    }
    for (i = 0; i < nlocks; ++i)
        if (lock_stripe(locks[i]) != APR_SUCCESS) {
            while (--i >= 0)
                unlock_stripe(locks[i]);
            return -1;
        }
    admit = hl_decide_locked(tables, items, n, now_ms);
    for (i = nlocks - 1; i >= 0; --i)
        unlock_stripe(locks[i]);
    hl_decide_stats(&store_shared->stats, items, n, now_ms);
    return admit;
}

/* Counts a finished request of cost n. Returns 0, or -1 when the mutex
 * failed. */
static int shm_count(void *ctx, const hl_decide_item_t *it, uint32_t n,
                     int64_t now_ms)
{
    (void)ctx;

    if (lock_stripe(it->stripe) != APR_SUCCESS)
        return -1;
    hl_decide_count_locked(&store_slots[it->stripe], it, n, now_ms);
    unlock_stripe(it->stripe);
    return 0;
}

int hl_store_shm_follow(hl_decide_item_t *it, const hl_verdict_t *v, uint32_t n,
                    int64_t now_ms)
{
    if (lock_stripe(it->stripe) != APR_SUCCESS)
        return -1;
    hl_limiter_follow_refs(&store_slots[it->stripe], it->quota, it->refs,
                           it->cls, now_ms, v, n);
    unlock_stripe(it->stripe);
    return 0;
}

/* Gives back the unit a count=failures|status item took at its decision.
 * Returns the windows given back, or -1 when the mutex failed. */
static int shm_refund(void *ctx, const hl_decide_item_t *it, int64_t now_ms)
{
    int refunded;
    (void)ctx;

    if (lock_stripe(it->stripe) != APR_SUCCESS)
        return -1;
    refunded = hl_decide_refund_locked(&store_slots[it->stripe], it, now_ms);
    unlock_stripe(it->stripe);
    return refunded;
}

/* [reserve=] Settles the reservation of a cost= item to cost. Returns the
 * windows touched, or -1 when the mutex failed. */
static int shm_settle(void *ctx, const hl_decide_item_t *it, uint32_t cost,
                      int64_t now_ms)
{
    int touched;
    (void)ctx;

    if (lock_stripe(it->stripe) != APR_SUCCESS)
        return -1;
    touched = hl_decide_settle_locked(&store_slots[it->stripe], it, cost,
                                      now_ms);
    unlock_stripe(it->stripe);
    return touched;
}

/* Removes every window of key, in whichever stripes they are. Returns the
 * counters removed, or -1 when a mutex failed. */
static int shm_reset(void *ctx, const char *key, size_t len)
{
    int removed = 0;
    uint32_t i;
    (void)ctx;

    for (i = 0; i < store_nstripes; ++i) {
        if (lock_stripe(i) != APR_SUCCESS)
            return -1;
        removed += hl_limiter_reset(&store_slots[i], key, len);
        unlock_stripe(i);
    }
    return removed;
}

/* The shared memory's figures: none (they describe a remote store). */
static void shm_figures(void *ctx, hl_store_figures_t *f)
{
    (void)ctx;
    memset(f, 0, sizeof(*f));
}

/* No list of its own: the status page and the ban list scan the slot
 * table (limited NULL). */
static const hl_store_ops_t shm_ops = {
    .name    = "shm",
    .prepare = shm_prepare,
    .decide  = shm_decide,
    .count   = shm_count,
    .refund  = shm_refund,
    .settle  = shm_settle,
    .reset   = shm_reset,
    .limited = NULL,
    .figures = shm_figures,
};
static const hl_store_t shm_store = { &shm_ops, NULL };

const hl_store_t *hl_store_shm(void)
{
    return &shm_store;
}

/* The provider's parse: "shm" takes no settings. */
static const char *shm_parse(apr_pool_t *p, const char *arg, void **conf)
{
    *conf = NULL;
    return strcmp(arg, "shm") ? apr_psprintf(p, "shm takes no settings: "
                                             "'%s'", arg + 3) : NULL;
}

/* The provider's post_config: nothing more to set up (the segment is
 * made by hl_store_shm_post_config for every provider, whose fallback it
 * is). */
static int shm_provider_post_config(apr_pool_t *pconf, server_rec *s,
                                    void *conf)
{
    (void)pconf;
    (void)s;
    (void)conf;
    return OK;
}

const hl_store_provider_t hl_store_shm_provider = {
    "shm", shm_parse, shm_provider_post_config, hl_store_shm, NULL, NULL
};

hl_stats_t *hl_store_shm_stats(void)
{
    return &store_shared->stats;
}
