/*
 * mod_hotlimit_table.c - the quota table (HotLimitQuotaTable): loading it
 * from a file or a URL, publishing it to every child, and looking a
 * request's route up in it.
 *
 * Publication: a second slotmem item holds a small header and two banks,
 * each a complete hl_table_t image. The writer (the parent at startup, then
 * one watchdog thread in one child) parses into the INACTIVE bank, which no
 * reader looks at, then flips `active` and bumps the sequence word `seq`
 * (before and after) under the table's own mutex ("hotlimit-table"). A
 * request looks its route up without a lock: it reads `seq`, looks in the
 * active bank, and keeps the answer if `seq` did not move meanwhile; only
 * when the reloader keeps flipping does it retry under the mutex. So a
 * reader always sees a whole table, and nothing a request does waits on
 * file or network I/O.
 *
 * Reloads run every HotLimitReloadInterval seconds in the mod_watchdog
 * singleton: a file is re-read when its mtime or size changes; a URL is
 * fetched with a conditional GET. A validator from the same second as the
 * read or the response (an mtime, a Last-Modified, an ETag beside it) is
 * weak (RFC 9110 8.8.2.2): the file is read, or the URL fetched, whole
 * again and an identical document (same digest) counts as unchanged, so a
 * same-size edit within that second is never missed. A document that
 * cannot be read or parsed is a table failure, handled by HotLimitTableFailure: `open` publishes an
 * empty table (static directives stay), `last-good` keeps the current one.
 * Under `last-good` an invalid entry of a usable document keeps its route's
 * rule from the table in force (hl_table_parse_keep); under `open` it is
 * dropped. Only a regular file is read, and it is opened non-blocking.
 *
 * The item is persisted by mod_slotmem_shm (the counters are persisted by
 * the store itself: mod_hotlimit_store_shm.c), so the last good table survives
 * restarts while the source stays the same.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "ap_provider.h"
#include "ap_slotmem.h"
#include "mod_watchdog.h"
#include "util_mutex.h"
#include "apr_strings.h"
#include "apr_file_io.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_fetch.h"
#include "mod_hotlimit_table.h"
#include "hl_table.h"
#include "hl_table_parse.h"
#include "hl_validator.h"
#include "hl_clock.h"

APLOG_USE_MODULE(hotlimit);

#define HL_REGION_MAGIC   0x484c5247u  /* "HLRG" */
#define HL_WATCHDOG_NAME  "_hotlimit_"
#define HL_CURL_INIT_KEY  "hotlimit-curl-initialised"
#define HL_MAX_PROBLEMS   20          /* problem lines logged per reload */

/* Header of the table item; two banks of bank_size bytes follow it. */
typedef struct {
    uint32_t magic;
    uint32_t version;
    uint32_t active;          /* bank readers use: 0 or 1 */
    uint32_t max_rules;
    uint64_t bank_size;
    char     source[HL_TEXT_MAX];
    uint32_t seq;             /* bumped before a bank is rewritten and when
                                 the active bank changes: a reader that saw
                                 it move reads again (hl_table_find) */
    uint32_t pad;
    hl_table_status_t status; /* what the reloads did (hl_table_status) */
} hl_region_t;

#define HL_FIND_TRIES 4       /* lock-free reads before taking the lock */

static hl_region_t *region;           /* NULL: no table configured */
int hl_table_present;                 /* region != NULL (hl_table_configured) */

/* Tells readers that a bank is about to change (see hl_region_t.seq). */
static void seq_bump(void)
{
    __atomic_add_fetch(&region->seq, 1, __ATOMIC_SEQ_CST);
}

/* The writer's private state (lives in the process that reloads). */
typedef struct {
    server_rec           *s;
    const hl_server_conf_t *sc;
    const char           *source;     /* resolved path or URL */
    int                   is_url;
    apr_time_t            mtime;      /* file: last seen */
    apr_off_t             size;
    apr_time_t            read_at;    /* when that mtime was seen: it is a
                                         strong validator only if at least
                                         one second older (hl_validator.h) */
    int                   seen_once;
    int                   problems;   /* logged in the current parse */
    char                  first_error[160];  /* its first error, for the
                                                status page (issue 21) */
    apr_pool_t           *parse_pool; /* the current parse's pool, for
                                         log_problem */
    hl_fetch_validators_t validators; /* URL: last good response */
    int                   published;  /* 1: the active bank is the parse of
                                         the document of `digest`, published
                                         by this process, and no attempt
                                         failed since */
    uint64_t              digest;     /* hl_table_digest of that document */
} hl_reloader_t;

static hl_reloader_t *reloader;

/* The table's own lock: bank flips, the status record, and the readers that
 * must not see a flip (the status page's copy, a lookup the reloader keeps
 * racing). One per generation, as its region is; never held across I/O. */
#define HL_TABLE_MUTEX_TYPE "hotlimit-table"
static apr_global_mutex_t *table_mutex;

/* Takes the table's lock. Returns APR_SUCCESS, or the error after logging
 * (HL00412; the caller then goes without what it wanted to read). */
static apr_status_t table_lock(server_rec *s)
{
    apr_status_t rv = table_mutex ? apr_global_mutex_lock(table_mutex)
                                  : APR_EINIT;

    if (rv != APR_SUCCESS)
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s,
                     "HL00412: cannot lock " HL_TABLE_MUTEX_TYPE);
    return rv;
}

static void table_unlock(void)
{
    apr_global_mutex_unlock(table_mutex);
}

/* Returns bank i of the region. */
static hl_table_t *bank(uint32_t i)
{
    return (hl_table_t *)(void *)((char *)region + APR_ALIGN_DEFAULT(sizeof(*region))
                                  + (apr_size_t)i * region->bank_size);
}

void hl_table_status(server_rec *s, hl_table_status_t *out)
{
    
    memset(out, 0, sizeof(*out));
    out->table_enabled = 1;
    out->table_last_result = -1;
    if (!region || table_lock(s) != APR_SUCCESS)
        return;
    *out = region->status;
    table_unlock();
    out->table_source[sizeof(out->table_source) - 1] = '\0';
    out->table_message[sizeof(out->table_message) - 1] = '\0';
}

/* ---- reading the source ------------------------------------------------ */

/* Returns 1 if source is an http:// or https:// URL, 0 for a file path. */
static int is_url(const char *source)
{
    return !strncasecmp(source, "http://", 7)
           || !strncasecmp(source, "https://", 8);
}

/* Returns what a file of type t is, for messages ("a FIFO"). */
static const char *file_kind(apr_filetype_e t)
{
    switch (t) {
    case APR_REG:  return "a regular file";
    case APR_DIR:  return "a directory";
    case APR_CHR:  return "a character device";
    case APR_BLK:  return "a block device";
    case APR_PIPE: return "a FIFO (named pipe)";
    case APR_LNK:  return "a symbolic link";
    case APR_SOCK: return "a socket";
    default:       return "not a regular file";
    }
}

/*
 * Stats path (following symbolic links) into *fi (type, mtime, size).
 * Returns APR_SUCCESS for a regular file; otherwise an error with *why
 * (a static string or one from p) set. Never opens the file, so a FIFO or
 * a device is refused without side effects.
 */
static apr_status_t stat_regular(apr_pool_t *p, const char *path,
                                 apr_finfo_t *fi, const char **why)
{
    apr_status_t rv = apr_stat(fi, path, APR_FINFO_TYPE | APR_FINFO_MTIME
                               | APR_FINFO_SIZE, p);

    if (rv != APR_SUCCESS) {
        *why = "cannot stat the file";
        return rv;
    }
    if (fi->filetype != APR_REG) {
        *why = apr_psprintf(p, "not a regular file but %s; only regular "
                            "files are read", file_kind(fi->filetype));
        return APR_EINVAL;
    }
    return APR_SUCCESS;
}

/*
 * Opens path for reading without blocking (O_NONBLOCK: opening a FIFO
 * that replaced the file since stat_regular does not wait for a writer),
 * then checks through the open descriptor that it is a regular file and
 * fills *fi from it. Returns APR_SUCCESS with *f open (from p; the caller
 * closes it), or an error with *why set and nothing left open.
 */
static apr_status_t open_regular(apr_pool_t *p, const char *path,
                                 apr_file_t **f, apr_finfo_t *fi,
                                 const char **why)
{
    apr_status_t rv = apr_file_open(f, path, APR_FOPEN_READ
                                    | APR_FOPEN_NONBLOCK, APR_OS_DEFAULT, p);

    if (rv != APR_SUCCESS) {
        *why = "cannot open the file";
        return rv;
    }
    rv = apr_file_info_get(fi, APR_FINFO_TYPE | APR_FINFO_MTIME
                           | APR_FINFO_SIZE, *f);
    if (rv != APR_SUCCESS && rv != APR_INCOMPLETE) {
        *why = "cannot stat the open file";
    }
    else if (fi->filetype != APR_REG) {
        *why = apr_psprintf(p, "replaced by %s while being opened; only "
                            "regular files are read", file_kind(fi->filetype));
        rv = APR_EINVAL;
    }
    else {
        return APR_SUCCESS;
    }
    apr_file_close(*f);
    *f = NULL;
    return rv;
}

/* Reads the whole file at path into *body (from p), at time now (taken
 * before the file is looked at). Returns APR_SUCCESS, or an error with *why
 * set; sets *unchanged, reading nothing, when mtime and size are those seen
 * last time and that mtime was strong: at least one second older than the
 * read that saw it (hl_validator_time_strong). An mtime from the same second
 * as its read could be shared by a later same-size edit (coarse file system
 * timestamps, an edit within one clock tick), so the file is read again and
 * parse_and_publish compares its digest. Only a regular file is read, and
 * nothing here can block on a FIFO or device put at the path. */
static apr_status_t read_file(hl_reloader_t *rl, apr_pool_t *p, apr_time_t now,
                              char **body, apr_size_t *len, int *unchanged,
                              const char **why)
{
    apr_finfo_t fi;
    apr_file_t *f;
    apr_size_t n;
    apr_status_t rv;

    *unchanged = 0;
    rv = stat_regular(p, rl->source, &fi, why);
    if (rv != APR_SUCCESS)
        return rv;
    if (rl->seen_once && fi.mtime == rl->mtime && fi.size == rl->size
        && hl_validator_time_strong(rl->mtime, rl->read_at)) {
        *unchanged = 1;
        return APR_SUCCESS;
    }
    rv = open_regular(p, rl->source, &f, &fi, why);
    if (rv != APR_SUCCESS)
        return rv;
    rl->seen_once = 1;
    rl->mtime = fi.mtime;
    rl->size = fi.size;
    rl->read_at = now;
    if (fi.size > (apr_off_t)HL_TABLE_MAX_DOC) {
        apr_file_close(f);
        *why = apr_psprintf(p, "file larger than %u bytes", HL_TABLE_MAX_DOC);
        return APR_EGENERAL;
    }
    n = (apr_size_t)fi.size;
    *body = apr_palloc(p, n + 1);
    rv = apr_file_read_full(f, *body, n, len);
    apr_file_close(f);
    if (rv != APR_SUCCESS && !(rv == APR_EOF && n == 0)) {
        *why = "cannot read the file";
        return rv;
    }
    (*body)[*len] = '\0';
    return APR_SUCCESS;
}

apr_status_t hl_table_check_source(apr_pool_t *p, const char *path,
                                   const char **why)
{
    const char *file;
    apr_finfo_t fi;
    apr_file_t *f;
    apr_status_t rv;

    *why = NULL;
    if (is_url(path))
        return APR_SUCCESS;
    file = ap_server_root_relative(p, path);
    if (!file) {
        *why = apr_psprintf(p, "%s: not a valid path", path);
        return APR_EBADPATH;
    }
    rv = stat_regular(p, file, &fi, why);
    if (rv == APR_SUCCESS)
        rv = open_regular(p, file, &f, &fi, why);
    if (rv != APR_SUCCESS) {
        char err[120];

        /* APR_EINVAL: refused for its type, *why says it all. */
        *why = rv == APR_EINVAL
               ? apr_psprintf(p, "%s: %s", file, *why)
               : apr_psprintf(p, "%s: %s: %s", file, *why,
                              apr_strerror(rv, err, sizeof(err)));
        return rv;
    }
    apr_file_close(f);
    return APR_SUCCESS;
}

/* ---- parsing and publishing -------------------------------------------- */

/* Logs one problem of the document (hl_table_report_fn), naming the route
 * and field at fault. Route, field and message come from a document that
 * may be remote: they are escaped as ap_escape_logitem does (control
 * characters, quotes and backslashes become \xhh, \" and \\), so a
 * problem is always one log line. The escaped copies are allocated from
 * rl->parse_pool. */
static void log_problem(void *baton, hl_problem_t severity, const char *route,
                        const char *field, const char *msg)
{
    hl_reloader_t *rl = baton;
    apr_pool_t *p = rl->parse_pool;
    const char *where = "";

    /* A hostile document must not flood the error log at every reload. */
    if (++rl->problems > HL_MAX_PROBLEMS)
        return;
    /* At most HL_TABLE_ROUTE_MAX bytes of each name are shown. */
    if (route)
        route = ap_escape_logitem(p, apr_pstrndup(p, route, HL_TABLE_ROUTE_MAX));
    if (field)
        field = ap_escape_logitem(p, apr_pstrndup(p, field, HL_TABLE_ROUTE_MAX));
    if (severity == HL_PROBLEM_ERROR && !rl->first_error[0])
        apr_cpystrn(rl->first_error, msg, sizeof(rl->first_error));
    msg = ap_escape_logitem(p, msg);
    if (route && field)
        where = apr_psprintf(p, "route '%s': field '%s': ", route, field);
    else if (route)
        where = apr_psprintf(p, "route '%s': ", route);
    else if (field)
        where = apr_psprintf(p, "field '%s': ", field);
    if (severity == HL_PROBLEM_ERROR)
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, rl->s,
                     "HL00401: quota table %s: skipped: %s%s", rl->source,
                     where, msg);
    else if (severity == HL_PROBLEM_KEPT)
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, rl->s,
                     "HL00411: quota table %s: %s%s (HotLimitTableFailure "
                     "last-good)", rl->source, where, msg);
    else
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, rl->s,
                     "HL00402: quota table %s: %s%s", rl->source, where, msg);
}

/* Records the outcome of one reload attempt in the shared header (message
 * NULL: counted, but the last result shown stays as it was), and, if
 * publish is set, makes the inactive bank the active one, in which
 * `skipped` entries were skipped as invalid (ignored unless publish). */
static void record(hl_reloader_t *rl, hl_reload_result_t result,
                   const char *message, int publish, int skipped)
{
        int64_t now = hl_now_ms();

    if (table_lock(rl->s) != APR_SUCCESS)
        return;
    if (publish) {
        seq_bump();
        __atomic_store_n(&region->active, region->active ^ 1, __ATOMIC_SEQ_CST);
        seq_bump();
        region->status.table_generation++;
        region->status.table_loaded_ms = now;
        region->status.table_skipped = skipped > 0 ? (uint32_t)skipped : 0;
    }
    region->status.table_enabled = bank(region->active)->enabled;
    region->status.table_routes = bank(region->active)->nrules;
    region->status.table_checked_ms = now;
    region->status.reloads[result]++;
    if (message) {
        region->status.table_last_result = (int32_t)result;
        apr_cpystrn(region->status.table_message, message, sizeof(region->status.table_message));
    }
    apr_cpystrn(region->status.table_source, rl->source, sizeof(region->status.table_source));
    table_unlock();
}

/* Handles a document that could not be used, per HotLimitTableFailure. */
static void fail(hl_reloader_t *rl, const char *why)
{
    int open = rl->sc->table_failure != HL_FAIL_LAST_GOOD;
    const hl_table_t *cur = bank(region->active);
    int drop = open && (cur->nrules || cur->has_global || cur->nexempt);
    /* The reloader is the only writer of the status: no lock to read it. */
    int none_yet = region->status.table_generation == 0;

    ap_log_error(APLOG_MARK, APLOG_ERR, 0, rl->s,
                 "HL00404: quota table %s failed: %s; %s", rl->source, why,
                 open ? "its rules are dropped (HotLimitTableFailure open)"
                 : none_yet ? "no valid table was loaded yet, so no table "
                              "rules apply (HotLimitTableFailure last-good)"
                 : "the last good table stays (HotLimitTableFailure last-good)");
    if (drop) {
        /* The rules go; a thrown kill switch stays thrown until a table
         * says otherwise. */
        hl_table_t *empty;

        seq_bump();
        empty = hl_table_init(bank(region->active ^ 1),
                                          region->bank_size, region->max_rules);
        empty->enabled = cur->enabled;
        /* The source's next answer must be a whole document, not a 304
         * for the one whose rules were just dropped. */
        memset(&rl->validators, 0, sizeof(rl->validators));
        rl->seen_once = 0;
    }
    /* Whatever comes next is parsed and published, so that the status
     * shows the table in force again rather than this failure. */
    rl->published = 0;
    {
        /* The status says where the parse failed (its first error). */
        char said[HL_TEXT_MAX];
        apr_snprintf(said, sizeof(said), "%s%s%s", why,
                     rl->first_error[0] ? ": " : "", rl->first_error);
        rl->first_error[0] = '\0';
        record(rl, HL_RELOAD_FAILED, said, drop, 0);
    }
}

/* Parses body into the inactive bank and publishes it, or fails. Under
 * HotLimitTableFailure last-good, a route whose new entry is invalid keeps
 * its rule from the table in force (HL00411); under open it is dropped.
 * The very document this process published last, with no failure since,
 * is not parsed again: the table in force is what parsing it would give
 * (kept rules included, as they come from that table), so it is counted
 * as unchanged, no generation is published and no problem re-logged. The
 * digest is remembered per process, never trusted from a bank that a
 * previous run (another binary, other settings) may have persisted. */
static void parse_and_publish(hl_reloader_t *rl, apr_pool_t *p,
                              const char *body, apr_size_t len)
{
    hl_table_t *next = bank(region->active ^ 1);
    const hl_table_t *prev = NULL;
    const hl_table_t *img;
    int nerrors = 0, nkept = 0, rc;
    const char *kept = "";

    if (rl->published && rl->digest == hl_table_digest(body, len)
        && bank(region->active)->digest == rl->digest) {
        record(rl, HL_RELOAD_UNCHANGED, NULL, 0, 0);
        return;
    }
    if (rl->sc->table_failure == HL_FAIL_LAST_GOOD)
        prev = bank(region->active);
    rl->problems = 0;
    rl->first_error[0] = '\0';
    seq_bump();   /* a reader still on this bank from before the last flip
                     must not trust what it reads now */
    rl->parse_pool = p;
    rc = hl_table_parse_keep(next, region->bank_size, region->max_rules,
                             body, len, prev, log_problem, rl, &nerrors,
                             &nkept);
    if (rl->problems > HL_MAX_PROBLEMS)
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, rl->s,
                     "HL00410: quota table %s: %d more problems not logged "
                     "(run hotlimit-check on it)", rl->source,
                     rl->problems - HL_MAX_PROBLEMS);
    if (rc != 0) {
        /* Fetch it whole next time: a 304 would say "unchanged" about a
         * document that was never in force. */
        memset(&rl->validators, 0, sizeof(rl->validators));
        fail(rl, "the document is not a valid quota table");
        return;
    }
    img = next;
    rl->published = 1;
    rl->digest = img->digest;
    if (nkept > 0)
        kept = apr_psprintf(p, " (%d kept their last valid rule)", nkept);
    ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, rl->s,
                 "HL00405: quota table %s loaded: %u routes, %u exempt blocks, "
                 "%s%s, %d entries skipped%s", rl->source, img->nrules,
                 img->nexempt, img->enabled ? "enabled" : "DISABLED (kill switch)",
                 img->has_global ? ", global bucket" : "", nerrors, kept);
    record(rl, HL_RELOAD_OK,
           apr_psprintf(p, "%u routes, %d entries skipped%s", img->nrules,
                        nerrors, kept),
           1, nerrors);
}

/* One reload attempt: read or fetch, then parse and publish. */
static void reload(hl_reloader_t *rl, apr_pool_t *p)
{
    apr_time_t now = apr_time_from_msec(hl_now_ms()); /* before the file is looked at */
    char *body = NULL;
    apr_size_t len = 0;
    const char *why = NULL;
    apr_status_t rv;

    if (rl->is_url) {
        hl_fetch_result_t res;
        int timeout = rl->sc->fetch_timeout;
        rv = hl_fetch_url(p, rl->source, timeout, HL_TABLE_MAX_DOC,
                          &rl->validators, &res);
        if (rv != APR_SUCCESS) {
            fail(rl, res.error);
            return;
        }
        if (res.not_modified) {
            /* 304: the document is the last one loaded, which is in force. */
            record(rl, HL_RELOAD_UNCHANGED, "not modified since the last load",
                   0, 0);
            return;
        }
        body = res.body;
        len = res.len;
    }
    else {
        int unchanged;
        rv = read_file(rl, p, now, &body, &len, &unchanged, &why);
        if (rv != APR_SUCCESS) {
            /* Retry the file next time even if its mtime stays. */
            rl->seen_once = 0;
            fail(rl, why);
            return;
        }
        if (unchanged) {
            /* The file is as it was at the last attempt: whatever that
             * attempt found still holds. */
            record(rl, HL_RELOAD_UNCHANGED, NULL, 0, 0);
            return;
        }
    }
    parse_and_publish(rl, p, body, len);
}

/* The watchdog callback: reloads on start and at every interval. Always
 * returns APR_SUCCESS (an error would stop all future calls). */
static apr_status_t on_watchdog(int state, void *data, apr_pool_t *ptemp)
{
    hl_reloader_t *rl = data;

    if (state == AP_WATCHDOG_STATE_STARTING || state == AP_WATCHDOG_STATE_RUNNING)
        reload(rl, ptemp);
    return APR_SUCCESS;
}

/* ---- setup -------------------------------------------------------------- */

const ap_slotmem_provider_t *hl_table_slotmem(void)
{
    return ap_lookup_provider(AP_SLOTMEM_PROVIDER_GROUP, "shm",
                              AP_SLOTMEM_PROVIDER_VERSION);
}

int hl_table_watchdog(hl_watchdog_fns_t *fns)
{
    fns->get_instance = APR_RETRIEVE_OPTIONAL_FN(ap_watchdog_get_instance);
    fns->register_callback =
        APR_RETRIEVE_OPTIONAL_FN(ap_watchdog_register_callback);
    return fns->get_instance != NULL && fns->register_callback != NULL;
}

/* Creates or re-attaches the table item. Returns OK or an HTTP error. */
static int create_region(apr_pool_t *pconf, server_rec *s, const char *source)
{
    const ap_slotmem_provider_t *shm;
    ap_slotmem_instance_t *inst = NULL;
    apr_size_t bank_size = APR_ALIGN_DEFAULT(hl_table_size(HL_TABLE_MAX_ROUTES));
    apr_size_t size = APR_ALIGN_DEFAULT(sizeof(hl_region_t)) + 2 * bank_size;
    void *base = NULL;
    apr_status_t rv;

    shm = hl_table_slotmem();
    if (!shm) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, 0, s,
                     "HL00201: " HL_TABLE_NEEDS_SLOTMEM);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    rv = shm->create(&inst, apr_psprintf(pconf, "hotlimit-table-v%u-%u",
                                         HL_TABLE_VERSION, HL_TABLE_MAX_ROUTES),
                     size, 1, AP_SLOTMEM_TYPE_PERSIST, pconf);
    if (rv == APR_SUCCESS)
        rv = shm->dptr(inst, 0, &base);
    if (rv != APR_SUCCESS || !base) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "HL00406: cannot create shared memory of %" APR_SIZE_T_FMT
                     " bytes for the quota table", size);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    region = base;
    hl_table_present = 1;
    /* Keep a persisted table only if it is ours and from the same source. */
    if (region->magic != HL_REGION_MAGIC || region->version != HL_TABLE_VERSION
        || region->max_rules != HL_TABLE_MAX_ROUTES
        || region->bank_size != bank_size || region->active > 1
        || strcmp(region->source, source) != 0
        || bank(region->active)->magic != HL_TABLE_MAGIC) {
        memset(region, 0, sizeof(*region));
        region->magic = HL_REGION_MAGIC;
        region->version = HL_TABLE_VERSION;
        region->max_rules = HL_TABLE_MAX_ROUTES;
        region->bank_size = bank_size;
        apr_cpystrn(region->source, source, sizeof(region->source));
        region->status.table_enabled = 1;
        region->status.table_last_result = -1;
        hl_table_init(bank(0), bank_size, HL_TABLE_MAX_ROUTES);
        hl_table_init(bank(1), bank_size, HL_TABLE_MAX_ROUTES);
    }
    return OK;
}

int hl_table_pre_config(apr_pool_t *pconf)
{
    apr_status_t rv = ap_mutex_register(pconf, HL_TABLE_MUTEX_TYPE, NULL,
                                        APR_LOCK_DEFAULT, 0);

    if (rv != APR_SUCCESS) {
        ap_log_perror(APLOG_MARK, APLOG_CRIT, rv, pconf,
                      "HL00414: cannot register the " HL_TABLE_MUTEX_TYPE
                      " mutex");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    return OK;
}

void hl_table_child_init(apr_pool_t *pchild, server_rec *s)
{
    apr_status_t rv;

    if (!table_mutex)
        return;
    rv = apr_global_mutex_child_init(&table_mutex,
                                     apr_global_mutex_lockfile(table_mutex),
                                     pchild);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "HL00415: cannot attach the " HL_TABLE_MUTEX_TYPE
                     " mutex in a child; the table is read without it");
        table_mutex = NULL;
    }
}

int hl_table_post_config(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s)
{
    hl_server_conf_t *sc = ap_get_module_config(s->module_config,
                                                &hotlimit_module);
    hl_watchdog_fns_t watchdog;
    ap_watchdog_t *wd;
    hl_reloader_t *rl;
    void *curl_done = NULL;
    int interval, rc;
    apr_status_t rv;

    region = NULL;
    hl_table_present = 0;
    reloader = NULL;
    table_mutex = NULL;
    if (!sc->table_source)
        return OK;
    rl = apr_pcalloc(pconf, sizeof(*rl));
    rl->s = s;
    rl->sc = sc;
    rl->is_url = is_url(sc->table_source);
    rl->source = rl->is_url ? sc->table_source
                            : ap_server_root_relative(pconf, sc->table_source);
    rc = create_region(pconf, s, rl->source);
    if (rc != OK)
        return rc;
    rv = ap_global_mutex_create(&table_mutex, NULL, HL_TABLE_MUTEX_TYPE, NULL,
                                s, pconf, 0);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "HL00413: cannot create the " HL_TABLE_MUTEX_TYPE " mutex");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    reloader = rl;

    if (!hl_table_watchdog(&watchdog)) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, 0, s,
                     "HL00407: " HL_TABLE_NEEDS_WATCHDOG);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    if (rl->is_url) {
        apr_pool_userdata_get(&curl_done, HL_CURL_INIT_KEY, s->process->pool);
        if (!curl_done) {
            if (hl_fetch_global_init() != APR_SUCCESS) {
                ap_log_error(APLOG_MARK, APLOG_CRIT, 0, s,
                             "HL00408: cannot initialise libcurl");
                return HTTP_INTERNAL_SERVER_ERROR;
            }
            apr_pool_userdata_set((const void *)1, HL_CURL_INIT_KEY,
                                  apr_pool_cleanup_null, s->process->pool);
        }
    }
    else {
        /* A local table is in force from the first request. */
        reload(rl, ptemp);
    }

    interval = sc->reload_interval;
    rv = watchdog.get_instance(&wd, HL_WATCHDOG_NAME, 0, 1, pconf);
    if (rv == APR_SUCCESS)
        rv = watchdog.register_callback(wd, apr_time_from_sec(interval), rl,
                                        on_watchdog);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "HL00409: cannot register the quota table reloader "
                     "with mod_watchdog");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    return OK;
}

/* ---- lookups on the request path ---------------------------------------- */

/* Fills *hit from the active bank (see hl_table_find); a torn read is
 * bounded (hl_table lookups check every index) and caught by the caller. */
static void find_in_active(const char *route, const hl_cidr_t *ip,
                           hl_table_hit_t *hit)
{
    const hl_table_t *t = bank(__atomic_load_n(&region->active, __ATOMIC_ACQUIRE) & 1);
    const hl_rule_t *rule;

    memset(hit, 0, offsetof(hl_table_hit_t, route));
    hit->route[0] = '\0';
    hit->has_global = 0;
    hit->has_ban = 0;
    hit->enabled = t->enabled != 0;
    if (!hit->enabled)
        return;
    hit->exempt = ip && hl_table_exempt(t, ip);
    rule = hl_table_match(t, route);
    if (rule) {
        size_t len = strnlen(rule->route, sizeof(hit->route) - 1);
        hit->has_rule = 1;
        hit->rule = rule->quota;
        hit->route_hash = rule->hash;
        hit->plan = rule->plan;
        memcpy(hit->route, rule->route, len);
        hit->route[len] = '\0';
    }
    if (t->has_global) {
        hit->has_global = 1;
        hit->global = t->global;
    }
    if (t->has_ban) {
        hit->has_ban = 1;
        hit->ban = t->ban;
    }
}

uint32_t hl_table_version(void)
{
    return region ? __atomic_load_n(&region->seq, __ATOMIC_ACQUIRE) : 0;
}

int hl_table_find(request_rec *r, const char *route, const hl_cidr_t *ip,
                  hl_table_hit_t *hit)
{
        int i;

    if (!region) {
        memset(hit, 0, sizeof(*hit));
        hit->enabled = 1;
        return 0;
    }
    for (i = 0; i < HL_FIND_TRIES; ++i) {
        uint32_t seq = __atomic_load_n(&region->seq, __ATOMIC_ACQUIRE);
        find_in_active(route, ip, hit);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&region->seq, __ATOMIC_ACQUIRE) == seq)
            return 1;
    }
    /* The reloader keeps changing banks: under the store lock the active
     * bank cannot switch, and the reloader only ever writes the other. */
    if (table_lock(r->server) != APR_SUCCESS) {
        memset(hit, 0, sizeof(*hit));
        hit->enabled = 1;
        return 0;
    }
    find_in_active(route, ip, hit);
    table_unlock();
    return 1;
}

/* Copies the active bank's plan name (len bytes) into *out. Returns 1 if
 * found, else 0. */
static int plan_in_active(const char *name, size_t len, hl_plan_t *out)
{
    const hl_table_t *t = bank(__atomic_load_n(&region->active, __ATOMIC_ACQUIRE) & 1);
    const hl_plan_t *p = hl_table_plan(t, name, len);

    if (p)
        *out = *p;
    return p != NULL;
}

int hl_table_find_plan(request_rec *r, const char *name, size_t len,
                       hl_plan_t *out)
{
        int i, found;

    if (!region)
        return 0;
    for (i = 0; i < HL_FIND_TRIES; ++i) {
        uint32_t seq = __atomic_load_n(&region->seq, __ATOMIC_ACQUIRE);
        found = plan_in_active(name, len, out);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&region->seq, __ATOMIC_ACQUIRE) == seq)
            return found;
    }
    if (table_lock(r->server) != APR_SUCCESS)
        return 0;
    found = plan_in_active(name, len, out);
    table_unlock();
    return found;
}

int hl_table_routes(request_rec *r, int max, hl_table_route_t **out)
{
        const hl_table_t *t;
    uint32_t i, n;

    *out = NULL;
    if (!region || max <= 0)
        return 0;
    *out = apr_palloc(r->pool, (apr_size_t)max * sizeof(**out));
    if (table_lock(r->server) != APR_SUCCESS)
        return 0;
    t = bank(region->active & 1);
    n = t->nrules;
    if (n > (uint32_t)max)
        n = (uint32_t)max;
    for (i = 0; i < n; ++i) {
        const hl_rule_t *rule = hl_table_rule(t, i);
        if (!rule) {
            n = i;
            break;
        }
        memcpy((*out)[i].route, rule->route, sizeof(rule->route));
        (*out)[i].route[HL_TABLE_ROUTE_MAX - 1] = '\0';
        (*out)[i].quota = rule->quota;
    }
    table_unlock();
    return (int)n;
}
