/*
 * mod_hotlimit_stores.h - the registry of counter stores: providers named
 * by the scheme of HotLimitStore (shm, redis, rediss, unix,
 * redis-sentinel, ...), registered with httpd's provider registry
 * (ap_register_provider, group "hotlimit-store") and looked up by scheme
 * while the configuration is read. A provider owns its settings (it
 * parses the directive's argument into a struct of its own), its
 * connections, its fallback to the local counters and its concurrency
 * slots; the decision's callers know of none of them. Adding one is one
 * new file and one line in hl_stores_register.
 */
#ifndef MOD_HOTLIMIT_STORES_H
#define MOD_HOTLIMIT_STORES_H

#include <stdint.h>

#include "httpd.h"
#include "hl_store.h"

#define HL_STORE_PROVIDER_GROUP   "hotlimit-store"
#define HL_STORE_PROVIDER_VERSION "0"

/* A HotLimitConcurrency slot held in a shared store: its set and its
 * member there. */
typedef struct {
    char   key[160];
    size_t key_len;
    char   member[64];
    size_t member_len;
} hl_store_slot_t;

typedef struct hl_store_provider {
    const char *name;          /* for messages: "redis" */
    /* Parses HotLimitStore's argument (its scheme included) into *conf
     * (allocated from p; NULL allowed). Returns NULL, or what is wrong,
     * naming the bad token (from p). */
    const char *(*parse)(apr_pool_t *p, const char *arg, void **conf);
    /* Sets the store up for this generation (main server s, conf as
     * parse made it). Returns OK, or an HTTP error after logging. */
    int (*post_config)(apr_pool_t *pconf, server_rec *s, void *conf);
    /* Returns the store requests are decided against. Never NULL after
     * post_config. decide() returns -2 when the request must be refused
     * with 503 (HotLimitStoreFailure closed). */
    const hl_store_t *(*store)(void);
    /* HotLimitConcurrency across servers; both NULL for a store of this
     * server alone (the local slot table is all there is). conc_take:
     * returns 1 taken (*slot filled), 0 refused, -1 when the store cannot
     * answer (logged; the caller decides on its own counts). conc_give
     * never fails. */
    int  (*conc_take)(request_rec *r, uint64_t key, uint32_t limit,
                      hl_store_slot_t *slot);
    void (*conc_give)(hl_store_slot_t *slot);
} hl_store_provider_t;

/* Registers every provider by its schemes (register_hooks). Never fails. */
void hl_stores_register(apr_pool_t *p);

/* Finds the provider of HotLimitStore's argument by its scheme (the part
 * before ':', or all of it) and lets it parse arg. Returns NULL with
 * *prov and *conf set, or what is wrong (an unknown scheme: with the list
 * of those registered), from p. */
const char *hl_stores_parse(apr_pool_t *p, const char *arg,
                            const hl_store_provider_t **prov, void **conf);

/* Sets up the main server's provider (shm when HotLimitStore is not set)
 * for this generation. Returns OK, or an HTTP error after logging. */
int hl_stores_post_config(apr_pool_t *pconf, server_rec *s);

/* Returns this generation's provider (shm before post_config). */
const hl_store_provider_t *hl_stores_active(void);

/* Returns the counter store requests are decided against (the active
 * provider's): never NULL. */
const hl_store_t *hl_store_get(void);

#endif
