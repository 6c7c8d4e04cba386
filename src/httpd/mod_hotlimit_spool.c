/*
 * mod_hotlimit_spool.c - HotLimitSpoolLimit: the bytes of request bodies
 * the whole server spools to disk at once (mod_hotlimit_body.c spools what
 * goes over HotLimitBodyMemory).
 *
 * The account (hl_spool.h) lives in a small shared-memory segment made at
 * the parent's first post_config from the process pool (not pconf), so it
 * outlives graceful restarts: old children giving back and new children
 * charging count in the same integers. Each post_config sets its limit
 * from the configuration just read. Each spooled body charges its bytes
 * as the spool file grows and gives them all back from a cleanup of the
 * pool the file lives in: whenever the request ends, however it ends.
 * (A process killed outright keeps its charge, as it keeps its file.)
 *
 * A body that would go over the limit is refused: 503 with Retry-After,
 * logged (HL02201) once a second at most, with the refusals not logged
 * since.
 */
#include <errno.h>
#include <string.h>

#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "http_core.h"
#include "http_protocol.h"
#include "apr_shm.h"
#include "apr_strings.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_spool.h"
#include "mod_hotlimit_kept_shm.h"
#include "hl_spool.h"

APLOG_USE_MODULE(hotlimit);

#define HL_SPOOL_POOL_KEY  "hotlimit-spool-segment"
#define HL_SPOOL_MAX       ((apr_int64_t)1024 * 1024 * 1024 * 1024)  /* 1T */

static hl_spool_t *account;          /* NULL: no segment (never refuse) */
static apr_int64_t configured = -1;  /* HotLimitSpoolLimit; -1: unset */

struct hl_spool_hold {
    apr_int64_t charged;             /* bytes charged, to give back */
};

/* Pool cleanup: gives the body's charge back. Returns APR_SUCCESS. */
static apr_status_t give_back(void *data)
{
    hl_spool_hold_t *hold = data;

    if (account && hold->charged > 0)
        hl_spool_give(account, hold->charged);
    hold->charged = 0;
    return APR_SUCCESS;
}

hl_spool_hold_t *hl_spool_hold(apr_pool_t *pool)
{
    hl_spool_hold_t *hold = apr_pcalloc(pool, sizeof(*hold));

    apr_pool_cleanup_register(pool, hold, give_back, apr_pool_cleanup_null);
    return hold;
}

int hl_spool_grow(hl_spool_hold_t *hold, apr_size_t n)
{
    if (!account)
        return 1;
    if (!hl_spool_charge(account, (int64_t)n))
        return 0;
    hold->charged += (apr_int64_t)n;
    return 1;
}

void hl_spool_refuse(request_rec *r)
{
    uint64_t skipped = 0;

    /* On the request that answers: r, or the client's (the refusal may
     * be returned there, r being a subrequest). */
    apr_table_setn(r->err_headers_out, "Retry-After", HL_SPOOL_RETRY_AFTER);
    apr_table_setn(hl_client_request(r)->err_headers_out, "Retry-After",
                   HL_SPOOL_RETRY_AFTER);
    if (!account || !hl_spool_refused(account, hl_mono_ms(), &skipped))
        return;
    ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                  "HL02201: request bodies spooled to disk reach "
                  "HotLimitSpoolLimit %" APR_INT64_T_FMT " bytes (%"
                  APR_INT64_T_FMT " spooled now): body refused (503) from "
                  "%s; %" APR_UINT64_T_FMT " more refused since the last "
                  "line", (apr_int64_t)account->limit,
                  (apr_int64_t)__atomic_load_n(&account->bytes,
                                               __ATOMIC_ACQUIRE),
                  r->useragent_ip, (apr_uint64_t)skipped);
}

void hl_spool_write_json(request_rec *r)
{
    ap_rprintf(r, "\"spool\":{\"bytes\":%" APR_INT64_T_FMT ",\"limit\":%"
               APR_INT64_T_FMT ",\"refused\":%" APR_UINT64_T_FMT "}",
               account ? (apr_int64_t)__atomic_load_n(&account->bytes,
                                                      __ATOMIC_ACQUIRE) : 0,
               account ? (apr_int64_t)account->limit : 0,
               account ? (apr_uint64_t)__atomic_load_n(&account->refused,
                                                       __ATOMIC_ACQUIRE) : 0);
}

const char *hl_spool_set_limit(cmd_parms *cmd, void *dconf, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    apr_int64_t v, unit = 1;
    char *end;
    (void)dconf;

    if (err)
        return err;
    errno = 0;
    v = apr_strtoi64(arg, &end, 10);
    if (end != arg && end[0] && !end[1])
        switch (end[0]) {
        case 'K': case 'k': unit = 1024, ++end; break;
        case 'M': case 'm': unit = 1024 * 1024, ++end; break;
        case 'G': case 'g': unit = 1024 * 1024 * 1024, ++end; break;
        }
    if (end == arg || *end || errno == ERANGE || v < 0
        || v > HL_SPOOL_MAX / unit)
        return apr_psprintf(cmd->pool, "%s: bad value '%s' (a number of "
                            "bytes from 0 to %" APR_INT64_T_FMT ", or with "
                            "K, M or G)", cmd->cmd->name, arg, HL_SPOOL_MAX);
    configured = v * unit;
    return NULL;
}

/* pre_config: a configuration read again starts with the default. */
static int spool_pre_config(apr_pool_t *pconf, apr_pool_t *plog,
                            apr_pool_t *ptemp)
{
    (void)pconf;
    (void)plog;
    (void)ptemp;
    configured = -1;
    return OK;
}

/* post_config: makes the account once per parent (the process pool keeps
 * it across restarts) and sets its limit. Returns OK, or !OK when the
 * segment cannot be made (logged, HL02202). */
static int spool_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                             apr_pool_t *ptemp, server_rec *s)
{
    apr_pool_t *keep = s->process->pool;
    apr_status_t rv;
    int created;
    (void)pconf;
    (void)plog;
    (void)ptemp;

    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG)
        return OK;
    account = hl_kept_shm(keep, HL_SPOOL_POOL_KEY, sizeof(hl_spool_t),
                          &created, &rv);
    if (!account) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, rv, s,
                     "HL02202: HotLimitSpoolLimit: cannot make its "
                     "shared memory");
        return !OK;
    }
    __atomic_store_n(&account->limit,
                     configured >= 0 ? configured : HL_DEFAULT_SPOOL_LIMIT,
                     __ATOMIC_RELEASE);
    return OK;
}

void hl_spool_register(void)
{
    ap_hook_pre_config(spool_pre_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_post_config(spool_post_config, NULL, NULL, APR_HOOK_MIDDLE);
}
