/*
 * mod_hotlimit_stores.c - the registry of counter stores (see
 * mod_hotlimit_stores.h): scheme -> provider, through httpd's own
 * provider registry.
 */
#include <stdlib.h>
#include <string.h>

#include "httpd.h"
#include "http_config.h"
#include "ap_provider.h"
#include "apr_strings.h"
#include "apr_tables.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_stores.h"
#include "mod_hotlimit_store_shm.h"
#include "mod_hotlimit_redis.h"
#include "mod_hotlimit_sentinel.h"
#include "mod_hotlimit_cluster.h"

static const hl_store_provider_t *active = &hl_store_shm_provider;

void hl_stores_register(apr_pool_t *p)
{
#define HL_STORE_REGISTER(scheme, prov) \
    ap_register_provider(p, HL_STORE_PROVIDER_GROUP, scheme, \
                         HL_STORE_PROVIDER_VERSION, &(prov))
    HL_STORE_REGISTER("shm", hl_store_shm_provider);
    HL_STORE_REGISTER("redis", hl_redis_provider);
    HL_STORE_REGISTER("rediss", hl_redis_provider);
    HL_STORE_REGISTER("unix", hl_redis_provider);
    HL_STORE_REGISTER("redis-sentinel", hl_sentinel_provider);
    HL_STORE_REGISTER("redis-cluster", hl_cluster_provider);
    HL_STORE_REGISTER("rediss-cluster", hl_cluster_provider);
#undef HL_STORE_REGISTER
}

/* qsort comparison of two ap_list_provider_names_t by name. */
static int by_name(const void *a, const void *b)
{
    return strcmp(((const ap_list_provider_names_t *)a)->provider_name,
                  ((const ap_list_provider_names_t *)b)->provider_name);
}

/* Returns the registered schemes, sorted, joined by ", " (from p). */
static const char *registered(apr_pool_t *p)
{
    apr_array_header_t *names = ap_list_provider_names(
        p, HL_STORE_PROVIDER_GROUP, HL_STORE_PROVIDER_VERSION);
    const char *out = "";
    int i;

    if (!names)
        return "(none)";
    qsort(names->elts, (size_t)names->nelts, (size_t)names->elt_size, by_name);
    for (i = 0; i < names->nelts; ++i)
        out = apr_pstrcat(p, out, i ? ", " : "",
                          APR_ARRAY_IDX(names, i, ap_list_provider_names_t)
                              .provider_name, NULL);
    return out;
}

const char *hl_stores_parse(apr_pool_t *p, const char *arg,
                            const hl_store_provider_t **prov, void **conf)
{
    const char *colon = strchr(arg, ':');
    const char *scheme = colon ? apr_pstrmemdup(p, arg, (apr_size_t)(colon - arg))
                               : arg;

    *conf = NULL;
    *prov = ap_lookup_provider(HL_STORE_PROVIDER_GROUP, scheme,
                               HL_STORE_PROVIDER_VERSION);
    if (!*prov)
        return apr_psprintf(p, "unknown store '%s' (the stores are: %s)",
                            scheme, registered(p));
    return (*prov)->parse(p, arg, conf);
}

int hl_stores_post_config(apr_pool_t *pconf, server_rec *s)
{
    const hl_server_conf_t *sc = ap_get_module_config(s->module_config,
                                                      &hotlimit_module);

    active = sc->store ? sc->store : &hl_store_shm_provider;
    return active->post_config(pconf, s, sc->store_conf);
}

const hl_store_provider_t *hl_stores_active(void)
{
    return active;
}

const hl_store_t *hl_store_get(void)
{
    return active->store();
}
