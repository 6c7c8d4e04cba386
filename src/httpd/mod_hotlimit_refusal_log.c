/*
 * mod_hotlimit_refusal_log.c - the refusal lines of the error log
 * (HotLimitLogRefusals first|all|off), so that a flood of refusals costs
 * a few lines per key, not one per request.
 *
 * `first` (the default): the first refusal of each key in each refusal
 * spell is written in full (HL00100; HL00101 under dry run); the later
 * ones are summed, and the refusal that finds its key's summary due
 * writes one summary line (count, route, key) at most every 10 s
 * (hl_logthin.h: who decides, and what happens when many keys flood).
 * The state lives in an anonymous shared-memory table of integers made
 * once per httpd parent (in its process pool, like the counters, so old
 * and new children of a graceful restart share it), under a mutex of the
 * "hotlimit-shm" type: the counts are exact across children and threads.
 *
 * Summary lines: HL01150 for a key that is the client address (by=ip,
 * or a key that fell back to the address): the line names client=ADDR,
 * the address every refusal it sums came from, so the fail2ban filter
 * may match it. HL01151 for a shared key (by=global, an account, a
 * header...): its refusals came from any number of clients, and the line
 * names the last one as last_client=, which no ban recipe reads. HL01153
 * for dry run. HL01152 when refusals of keys whose table entries were
 * reused could not be summarised under their key.
 *
 * HotLimitLogRate (issue 25 item 4): however many keys a flood rotates
 * through, the whole server writes at most that many full lines a
 * second (a count per wall-clock second in the shared table, under its
 * mutex); the rest are summed into one HL02100 line per 10 s at most,
 * naming the busiest addresses among the refusals of address keys it
 * sums (busiest client=ADDR first, for the fail2ban filter).
 *
 * A full line of a key that is not the client address reads "rejected
 * shared key client=...", so that no ban recipe counts an account's
 * refusals against the address that hit it.
 *
 * Log tags: HL01150-HL01159 lines, HL01170-HL01179 setup, HL02100-HL02109
 * HotLimitLogRate.
 */
#include <stdlib.h>
#include <string.h>

#include "httpd.h"
#include "http_config.h"
#include "http_core.h"
#include "http_log.h"
#include "http_main.h"
#include "http_protocol.h"
#include "util_mutex.h"
#include "apr_shm.h"
#include "apr_strings.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_refusal_log.h"
#include "hl_logthin.h"
#include "hl_clock.h"

APLOG_USE_MODULE(hotlimit);

#define HL_LOGTHIN_KEYS 4096   /* keys whose spells are followed at once */
#define HL_LOGTHIN_LIFE_KEY "hotlimit-refusal-log"
#define HL_LOGTHIN_MUTEX_TYPE "hotlimit-shm"   /* registered by the store */
/* Seed of the keys' hashes in the table (not persisted). */
#define HL_SEED_LOGTHIN 0x6c6f677468696e31ULL  /* "logthin1" */

/* The table and its mutex: once per httpd parent. */
typedef struct {
    apr_shm_t          *shm;
    apr_global_mutex_t *mutex;
} hl_logthin_life_t;

/* This generation's (and child's) handles; NULL: every refusal in full. */
static hl_logthin_t *thin_table;
static apr_global_mutex_t *thin_mutex;
/* The main server's HotLimitLogRate, set in post_config. */
static uint32_t thin_rate = HL_LOG_RATE_DEFAULT;

const char *hl_refusal_log_rate_set(cmd_parms *cmd, void *dconf,
                                    const char *arg)
{
    hl_server_conf_t *sc = ap_get_module_config(cmd->server->module_config,
                                                &hotlimit_module);
    char *end = NULL;
    long n;
    (void)dconf;

    if (cmd->server->is_virtual)
        return apr_psprintf(cmd->pool, "%s: the whole server's bound: set it "
                            "in the main server, not in a <VirtualHost>",
                            cmd->cmd->name);
    n = strtol(arg, &end, 10);
    if (end == arg || *end != '\0' || n < 1 || n > HL_LOG_RATE_MAX)
        return apr_psprintf(cmd->pool, "%s: bad value '%s' (full lines a "
                            "second, 1 to %d)", cmd->cmd->name, arg,
                            HL_LOG_RATE_MAX);
    sc->log_rate = n;
    return NULL;
}

const char *hl_refusal_log_set(cmd_parms *cmd, void *dconf, const char *arg)
{
    hl_dir_conf_t *dc = dconf;

    if (!strcasecmp(arg, "first"))
        dc->log_refusals = HL_LOG_REFUSALS_FIRST;
    else if (!strcasecmp(arg, "all"))
        dc->log_refusals = HL_LOG_REFUSALS_ALL;
    else if (!strcasecmp(arg, "off"))
        dc->log_refusals = HL_LOG_REFUSALS_OFF;
    else
        return apr_psprintf(cmd->pool, "%s: bad value '%s' (first, all or off)",
                            cmd->cmd->name, arg);
    dc->set |= HL_DIR_SET_LOG_REFUSALS;
    return NULL;
}

/* Returns the parent's table and mutex, made at the first start and kept
 * in the process pool (a restart keeps them); NULL after logging when
 * they cannot be made. */
static hl_logthin_life_t *life_of(server_rec *s)
{
    apr_pool_t *pp = s->process->pool;
    hl_logthin_life_t *life = NULL;
    void *found = NULL;
    apr_size_t size = hl_logthin_size(HL_LOGTHIN_KEYS);
    apr_status_t rv;

    apr_pool_userdata_get(&found, HL_LOGTHIN_LIFE_KEY, pp);
    if (found)
        return found;
    life = apr_pcalloc(pp, sizeof(*life));
    rv = apr_shm_create(&life->shm, size, NULL, pp);
    if (rv == APR_SUCCESS)
        rv = ap_global_mutex_create(&life->mutex, NULL, HL_LOGTHIN_MUTEX_TYPE,
                                    "refusal-log", s, pp, 0);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s,
                     "HL01170: cannot make the refusal log's shared table "
                     "(%" APR_SIZE_T_FMT " bytes) or its mutex: every refusal "
                     "will be logged", size);
        return NULL;
    }
    hl_logthin_init(apr_shm_baseaddr_get(life->shm), HL_LOGTHIN_KEYS);
    apr_pool_userdata_set(life, HL_LOGTHIN_LIFE_KEY, apr_pool_cleanup_null, pp);
    return life;
}

static int thin_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                            apr_pool_t *ptemp, server_rec *s)
{
    hl_logthin_life_t *life;
    (void)pconf;
    (void)plog;
    (void)ptemp;

    const hl_server_conf_t *sc = ap_get_module_config(s->module_config,
                                                      &hotlimit_module);

    thin_table = NULL;
    thin_mutex = NULL;
    thin_rate = sc && sc->log_rate > 0 ? (uint32_t)sc->log_rate
                                       : HL_LOG_RATE_DEFAULT;
    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG)
        return OK;
    life = life_of(s);
    if (life) {
        thin_table = apr_shm_baseaddr_get(life->shm);
        thin_mutex = life->mutex;
    }
    return OK;
}

static void thin_child_init(apr_pool_t *pchild, server_rec *s)
{
    apr_status_t rv;

    if (!thin_mutex)
        return;
    rv = apr_global_mutex_child_init(&thin_mutex,
                                     apr_global_mutex_lockfile(thin_mutex),
                                     pchild);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s,
                     "HL01171: cannot attach the refusal log's mutex in a "
                     "child: its refusals will all be logged");
        thin_table = NULL;
        thin_mutex = NULL;
    }
}

void hl_refusal_log_register(void)
{
    /* After the store's post_config, whose pre_config registered the
     * mutex type. */
    ap_hook_post_config(thin_post_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_child_init(thin_child_init, NULL, NULL, APR_HOOK_MIDDLE);
}

/* Returns the User-Agent of r cut to HL_LOG_UA_MAX bytes and escaped for
 * the log, or "-"; allocated from r->pool. */
static const char *short_user_agent(request_rec *r)
{
    const char *ua = apr_table_get(r->headers_in, "User-Agent");

    if (!ua)
        return "-";
    if (strlen(ua) > HL_LOG_UA_MAX)
        ua = apr_pstrmemdup(r->pool, ua, HL_LOG_UA_MAX);
    return ap_escape_logitem(r->pool, ua);
}

/* Returns the name of the window of m that refused ("5/1m"), in buf. */
static const char *refused_window(const hl_match_t *m, char *buf, size_t size)
{
    const hl_decision_t *d = &m->item.decision;
    int i, w = 0;

    for (i = 0; i < d->nwindows; ++i)
        if (!d->windows[i].admit) {
            w = i;
            break;
        }
    return hl_window_name(&m->item.quota->windows[w], buf, size);
}

/* Writes the full line of one refusal of m (HL00100, HL00101); a key
 * that is not the client address (by_address 0) reads "shared key". */
static void log_full(request_rec *r, const hl_match_t *m, int by_address)
{
    char name[48];

    ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                  "%s: %s%s client=%s route=%s key=%s limit=%s "
                  "retry_after=%ld user_agent=\"%s\"",
                  m->item.dry_run ? "HL00101" : "HL00100",
                  m->item.dry_run ? "dry run, would reject" : "rejected",
                  by_address ? "" : " shared key",
                  r->useragent_ip, m->route,
                  ap_escape_logitem(r->pool, m->item.key),
                  refused_window(m, name, sizeof(name)),
                  m->item.decision.retry_after_s, short_user_agent(r));
}

/* Writes the summary line of n refusals of m's key (r: the last). */
static void log_summary(request_rec *r, const hl_match_t *m, uint32_t n,
                        int by_address)
{
    const char *key = ap_escape_logitem(r->pool, m->item.key);
    char name[48];

    refused_window(m, name, sizeof(name));
    if (m->item.dry_run)
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                      "HL01153: dry run, %u more would-be refusals route=%s "
                      "key=%s limit=%s last_client=%s", n, m->route, key,
                      name, r->useragent_ip);
    else if (by_address)
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                      "HL01150: %u more refusals client=%s route=%s key=%s "
                      "limit=%s", n, r->useragent_ip, m->route, key, name);
    else
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                      "HL01151: %u more refusals of a shared key route=%s "
                      "key=%s limit=%s last_client=%s", n, m->route, key,
                      name, r->useragent_ip);
}

/* Returns how long the refusal spell m starts would last: until the
 * request would be admitted again (the longest retry of its refused
 * windows, in ms), or Retry-After when the store gave no such figure. */
static int64_t spell_ms(const hl_match_t *m)
{
    const hl_decision_t *d = &m->item.decision;
    int64_t ms = 0;
    int i;

    for (i = 0; i < d->nwindows; ++i)
        if (!d->windows[i].admit && d->windows[i].retry_ms > ms)
            ms = d->windows[i].retry_ms;
    return ms > 0 ? ms : (int64_t)d->retry_after_s * 1000;
}

/* Fills *v for one refusal of m under `first`, through the server-wide
 * gate (the address named among the busiest when by_address). Returns 0,
 * or -1 when the shared table cannot be used (the caller writes the
 * refusal in full). */
static int thin(request_rec *r, const hl_match_t *m, int by_address,
                hl_logthin_verdict_t *v)
{
    int64_t now_ms = hl_mono_ms();
    uint64_t h;
    apr_status_t rv;

    if (!thin_table || !thin_mutex)
        return -1;
    h = hl_hash64(m->item.key, m->item.key_len, HL_SEED_LOGTHIN)
        ^ (m->item.dry_run ? 1u : 0u);
    rv = apr_global_mutex_lock(thin_mutex);
    if (rv != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r,
                      "HL01172: cannot lock the refusal log's table");
        return -1;
    }
    hl_logthin_note(thin_table, h, now_ms, spell_ms(m), v);
    hl_logthin_gate(thin_table, now_ms, hl_now_ms() / 1000,
                    thin_rate, by_address ? r->useragent_ip : NULL, v);
    apr_global_mutex_unlock(thin_mutex);
    return 0;
}

/* Writes the summary of the full lines HotLimitLogRate held back
 * (HL02100), the busiest addresses first. */
static void log_held(request_rec *r, const hl_logthin_verdict_t *v)
{
    const char *busiest = "";
    int i;

    for (i = 0; i < v->ntop && i < 5; ++i)
        busiest = apr_psprintf(r->pool, "%s%s%s (%u)", busiest,
                               i ? ", " : " busiest client=",
                               ap_escape_logitem(r->pool, v->top[i].addr),
                               v->top[i].n);
    ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                  "HL02100: %" APR_UINT64_T_FMT " refusals (%" APR_UINT64_T_FMT
                  " of new keys) not logged in full: over HotLimitLogRate "
                  "%u a second%s", (apr_uint64_t)v->held,
                  (apr_uint64_t)v->held_keys, thin_rate, busiest);
}

void hl_refusal_log(request_rec *r, const hl_match_t *m, int mode,
                    int by_address)
{
    hl_logthin_verdict_t v;

    if (mode == HL_LOG_REFUSALS_OFF || !APLOG_R_IS_LEVEL(r, APLOG_INFO))
        return;
    if (mode == HL_LOG_REFUSALS_ALL || thin(r, m, by_address, &v) != 0) {
        log_full(r, m, by_address);
        return;
    }
    if (v.held)
        log_held(r, &v);
    if (v.dropped)
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                      "HL01152: %" APR_UINT64_T_FMT " more refusals of other "
                      "keys not summarised (the refusal log follows %d keys "
                      "at once)", (apr_uint64_t)v.dropped, HL_LOGTHIN_KEYS);
    if (v.summary)
        log_summary(r, m, v.summary, by_address);
    if (v.first)
        log_full(r, m, by_address);
}
