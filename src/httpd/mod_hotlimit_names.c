/*
 * mod_hotlimit_names.c - HotLimitStatusNames (issue 27 item 2): the status
 * page names the account under attack ("admin"), not only its keyed hash
 * ("p:8c2fedfcb891a4ad").
 *
 * The book (hl_names.h) lives in anonymous shared memory made once per
 * httpd parent in its process pool (old and new children of a graceful
 * restart share it; a full stop forgets it: it is never written to disk,
 * unlike the persisted counters). It is filled on the request path only
 * for account keys that refuse or reach their limit (hl_names_note): a
 * request that only counts pays one test. The values are shown on the
 * status page, in ?json and in the lookup; never in a log line or in
 * ?metrics (only mod_hotlimit_status_*.c call hl_names_of).
 *
 * Log tags: HL02750-HL02759.
 */
#include <string.h>

#include "httpd.h"
#include "http_config.h"
#include "http_core.h"
#include "http_log.h"
#include "http_main.h"
#include "apr_shm.h"
#include "apr_strings.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_names.h"
#include "hl_names.h"

APLOG_USE_MODULE(hotlimit);

#define HL_NAMES_LIFE_KEY "hotlimit-names"

/* This generation's pointer to the book; NULL: none (names not shown). */
static hl_names_t *names_book;

const char *hl_names_set(cmd_parms *cmd, void *dconf, int on)
{
    hl_server_conf_t *sc = ap_get_module_config(cmd->server->module_config,
                                                &hotlimit_module);
    (void)dconf;

    sc->status_names = on ? HL_STATUS_NAMES_ON : HL_STATUS_NAMES_OFF;
    return NULL;
}

/* Returns 1 unless server s says HotLimitStatusNames Off. */
static int names_on(const server_rec *s)
{
    const hl_server_conf_t *sc = ap_get_module_config(s->module_config,
                                                      &hotlimit_module);

    return !sc || sc->status_names != HL_STATUS_NAMES_OFF;
}

/* post_config (real pass): finds or makes the book in the process pool.
 * Always returns OK: without a book (logged) the page shows hashes. */
static int names_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                             apr_pool_t *ptemp, server_rec *s)
{
    apr_pool_t *pp = s->process->pool;
    apr_shm_t *shm = NULL;
    void *found = NULL;
    apr_status_t rv;
    (void)pconf;
    (void)plog;
    (void)ptemp;

    names_book = NULL;
    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG)
        return OK;
    apr_pool_userdata_get(&found, HL_NAMES_LIFE_KEY, pp);
    if (found) {
        names_book = apr_shm_baseaddr_get(found);
        return OK;
    }
    rv = apr_shm_create(&shm, sizeof(hl_names_t), NULL, pp);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s,
                     "HL02750: cannot make the names book's shared memory "
                     "(%" APR_SIZE_T_FMT " bytes): the status page shows "
                     "account keys by hash only", sizeof(hl_names_t));
        return OK;
    }
    names_book = apr_shm_baseaddr_get(shm);
    hl_names_init(names_book);
    apr_pool_userdata_set(shm, HL_NAMES_LIFE_KEY, apr_pool_cleanup_null, pp);
    return OK;
}

void hl_names_register(void)
{
    ap_hook_post_config(names_post_config, NULL, NULL, APR_HOOK_MIDDLE);
}

/* Records the names of matches m[i..n) at their limit (hl_names_note's
 * work once one is). */
static __attribute__((noinline)) void note_from(request_rec *r,
                                                const hl_match_t *m,
                                                int i, int n)
{
    if (!names_on(r->server))
        return;
    for (; i < n; ++i) {
        const hl_decision_t *d = &m[i].item.decision;

        if (!m[i].name_id || d->nwindows == 0
            || (d->admit && d->remaining != 0))
            continue;
        hl_names_record(names_book, m[i].name_id, strlen(m[i].name_id),
                        m[i].name_value, m[i].name_len);
    }
}

/* The usual request names no account: one look per match, no frame. */
void hl_names_note(request_rec *r, const hl_match_t *m, int n)
{
    int i;

    if (!names_book)
        return;
    for (i = 0; i < n; ++i)
        if (m[i].name_id)
            break;
    if (i < n)
        note_from(r, m, i, n);
}

const char *hl_names_of(apr_pool_t *p, const server_rec *view,
                        const char *key)
{
    char out[HL_NAMES_VALUE_MAX + 1];
    int cut = 0;
    long n;

    if (!names_book || !key || (view && !names_on(view)))
        return NULL;
    n = hl_names_find(names_book, key, strlen(key), out, &cut);
    if (n < 0)
        return NULL;
    return cut ? apr_pstrcat(p, out, "...", NULL) : apr_pstrdup(p, out);
}
