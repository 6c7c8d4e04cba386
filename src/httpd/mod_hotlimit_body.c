/*
 * mod_hotlimit_body.c - $_REQUEST[NAME] for param: routes and by=param:
 * keys, and a JSON body's value for json: routes and keys, reading the
 * request body when (and only when) one of them needs it, and handing that
 * body on to the handler (mod_php, CGI, mod_proxy) as the handler would
 * have read it without the module.
 *
 * The body is read once per client request, at most HotLimitBodyLimit + 1
 * bytes of it: a POST whose Content-Type PHP parses (urlencoded,
 * multipart/form-data) when a parameter is asked for, a body of any method
 * whose Content-Type is JSON when a JSON value is (only the reader a body's
 * type is for reads it, so a request with both kinds of keys reads its body
 * once), and never for a banned client (asked first). It is
 * read through the request's input filters -- HTTP_IN de-chunks it and
 * answers Expect: 100-continue, and the filters SetInputFilter names
 * (DEFLATE) are added for the read when they are not there yet, as the
 * core adds them only at insert_filter, after this read. At most
 * HotLimitBodyMemory of it is held in memory; the rest goes to a temporary
 * file, removed when the request's pool is cleaned up (as mod_proxy_http
 * spools request bodies), and hl_php reads it from there in bounded
 * windows.
 *
 * The HOTLIMIT_BODY input filter, above every other request filter (and
 * added by the insert_filter hook to any internal redirect), hands on what
 * was read, then the end of the body -- the filters below it already
 * decoded it and are not asked again -- or, when the body was not read to
 * its end, the rest from where the read stopped, or the error it ended
 * with.
 *
 * A body over HotLimitBodyLimit (by its Content-Length, or found while
 * reading) gets 413 and never reaches the handler, unless
 * HotLimitBodyOverflow path: then the parameter is read from the query
 * alone, as before. A body LimitRequestBody refused (HTTP_IN has sent the
 * 413) ends the request too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "httpd.h"
#include "http_config.h"
#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "util_filter.h"
#include "apr_file_io.h"
#include "apr_portable.h"
#include "apr_strings.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_body.h"
#include "mod_hotlimit_spool.h"
#include "hl_php.h"
#include "hl_json_path.h"
#include "hl_json_num.h"

APLOG_USE_MODULE(hotlimit);

/* Which reader asks for the body (get_body): each reads only a body of
 * its type, except the whole-body read (concurrency keys), which reads any,
 * and never falls back to the path. */
typedef enum {
    HL_READ_FORM = 0,         /* a POST form PHP parses */
    HL_READ_JSON = 1,         /* a JSON body, any method */
    HL_READ_WHOLE = 2         /* any body, whole (hl_body_whole) */
} hl_reader_t;

/* The ban look asked before a body is read (hl_body_set_ban_check). */
static hl_body_banned_fn *banned_check;

#define BODY_KEY    "hotlimit-body"
#define READ_CHUNK  65536      /* the most asked of the filters at once */
#define SRC_CACHE   8192       /* hl_php's window on a spooled body */
#define HL_BODY_SLACK 16384    /* head room for a body SetInputFilter grows */

/* The body of one client request, on its pool. */
typedef struct {
    int                 decided;  /* whether to read it was decided */
    int                 json;     /* it was read whole, and is JSON */
    int                 eos;      /* ... and reached the end of the body */
    apr_status_t        rv;       /* how the read ended, if not well */
    int                 refuse;   /* OK, or the status that ends the
                                     request (413; DONE: already sent) */
    int                 refused;  /* refuse was returned (once: not to its
                                     ErrorDocument again) */
    int                 over_path; /* over HotLimitBodyLimit, left to the
                                      path (HotLimitBodyOverflow path) */
    hl_php_form_t       form;     /* HL_PHP_FORM_NONE: not parsed */
    char                boundary[HL_PHP_BOUNDARY_MAX + 1];
    apr_size_t          memory;   /* HotLimitBodyMemory */
    char               *head;     /* the first head_cap bytes read */
    apr_size_t          head_cap; /* memory, or less for a short body */
    apr_size_t          head_len;
    apr_file_t         *spool;    /* the rest, or NULL */
    apr_off_t           spool_len;
    hl_spool_hold_t    *spool_hold;    /* its charge to HotLimitSpoolLimit */
    int                 spool_failed;  /* it could not be written */
    int                 spool_full;    /* ... as HotLimitSpoolLimit is
                                          reached */
    apr_bucket_brigade *kept;     /* what is handed on, not yet handed */
    ap_filter_t        *below;    /* where the read stopped */
    struct hl_param_memo *memo;   /* parameters already read from it */
    int                 read;     /* the body was read (once at most) */
} hl_body_t;

/* A parameter or JSON value already read for the client request: a route,
 * a key and hotlimit_param() may each ask for it, and the body is parsed
 * once for it. */
typedef struct hl_param_memo {
    struct hl_param_memo *next;
    const char *name;             /* the parameter, or the JSON path */
    int         json;             /* name is a JSON path */
    const char *query;            /* the query it was read with */
    int         array_key;
    char       *value;            /* NULL: absent */
    apr_size_t  len;
} hl_param_memo_t;

static ap_filter_rec_t *body_filter_handle;

/* 1 once this process has made a body record: the thread that makes a
 * request's record is the one that later looks for it, so until then no
 * request of this process has one, and the look costs nothing. */
int hl_body_records;

/* Returns the body record of r's client request, or NULL if none was
 * made. Owned by that request's pool. */
static hl_body_t *body_of(request_rec *r)
{
    void *b = NULL;

    if (!hl_body_records)
        return NULL;            /* none was ever made in this process */
    apr_pool_userdata_get(&b, BODY_KEY, hl_client_request(r)->pool);
    return b;
}

/* Gives r the filter that replays b. Cannot fail. */
static void add_filter(request_rec *r, hl_body_t *b)
{
    ap_add_input_filter_handle(body_filter_handle, b, r, r->connection);
}

/* Adds to r the input filters SetInputFilter names for its directory that
 * r does not have yet (the core adds them at insert_filter, just before
 * the handler: after this read). The core's own later copies sit under
 * HOTLIMIT_BODY and are never asked for data. Unknown names are left to
 * the core to report. */
static void add_set_input_filters(request_rec *r)
{
    const core_dir_config *conf = ap_get_core_module_config(r->per_dir_config);
    const char *filters = conf ? conf->input_filters : NULL, *name;

    while (filters && *filters
           && (name = ap_getword(r->pool, &filters, ';')) != NULL) {
        ap_filter_rec_t *frec = ap_get_input_filter_handle(name);
        ap_filter_t *f;

        if (!frec)
            continue;
        for (f = r->input_filters; f && f->frec != frec; f = f->next)
            ;
        if (!f)
            ap_add_input_filter_handle(frec, NULL, r, r->connection);
    }
}

/* Keeps n bytes at d: into b->head while it has room, the rest appended
 * to the spool file (made on first need in the temporary directory, from
 * pool), charged to HotLimitSpoolLimit first (given back when pool goes).
 * Returns APR_SUCCESS, APR_ENOSPC with b->spool_full set when the server's
 * spool is full, or the file error. */
static apr_status_t keep_bytes(hl_body_t *b, const char *d, apr_size_t n,
                               apr_pool_t *pool)
{
    apr_size_t room = b->head_cap - b->head_len, take = n < room ? n : room;
    apr_status_t rv;

    if (take > 0) {
        if (!b->head)
            b->head = apr_palloc(pool, b->head_cap);
        memcpy(b->head + b->head_len, d, take);
        b->head_len += take;
        d += take;
        n -= take;
    }
    if (n == 0)
        return APR_SUCCESS;
    if (!b->spool_hold)          /* before the file: given back after it */
        b->spool_hold = hl_spool_hold(pool);
    if (!hl_spool_grow(b->spool_hold, n)) {
        b->spool_full = 1;
        return APR_ENOSPC;
    }
    if (!b->spool) {
        const char *dir;
        char *tmpl;

        if ((rv = apr_temp_dir_get(&dir, pool)) != APR_SUCCESS)
            return rv;
        tmpl = apr_pstrcat(pool, dir, "/hotlimit-body.XXXXXX", NULL);
        /* 0: create, read, write, exclusive, deleted on close (with
         * pool's cleanup). */
        if ((rv = apr_file_mktemp(&b->spool, tmpl, 0, pool)) != APR_SUCCESS) {
            b->spool = NULL;
            return rv;
        }
    }
    if ((rv = apr_file_write_full(b->spool, d, n, NULL)) != APR_SUCCESS)
        return rv;
    b->spool_len += (apr_off_t)n;
    return APR_SUCCESS;
}

/*
 * Reads at most limit + 1 bytes of the body through r's input filters
 * (asked again at each piece: a filter may have left the chain), keeping
 * them (keep_bytes). Returns the total read (limit + 1 meaning "over the
 * limit"); sets b->eos when the body ended, b->rv when the read failed
 * (what was read is kept). bb is a scratch brigade, emptied after each
 * piece, so no more than one piece is ever held in buckets.
 */
static apr_off_t read_body(request_rec *r, hl_body_t *b, apr_off_t limit,
                           apr_bucket_brigade *bb, apr_pool_t *pool)
{
    apr_off_t total = 0;

    while (!b->eos && total <= limit) {
        apr_off_t want = limit + 1 - total, got = 0;
        apr_bucket *e;
        apr_status_t rv = ap_get_brigade(r->input_filters, bb, AP_MODE_READBYTES,
                                         APR_BLOCK_READ,
                                         want < READ_CHUNK ? want : READ_CHUNK);
        if (rv != APR_SUCCESS) {
            b->rv = rv;
            break;
        }
        for (e = APR_BRIGADE_FIRST(bb); e != APR_BRIGADE_SENTINEL(bb);
             e = APR_BUCKET_NEXT(e)) {
            const char *d;
            apr_size_t n;

            if (APR_BUCKET_IS_EOS(e)) {
                b->eos = 1;
                break;
            }
            if (APR_BUCKET_IS_METADATA(e))
                continue;
            if ((rv = apr_bucket_read(e, &d, &n, APR_BLOCK_READ)) != APR_SUCCESS) {
                b->rv = rv;
                break;
            }
            if ((rv = keep_bytes(b, d, n, pool)) != APR_SUCCESS) {
                b->rv = rv;
                b->spool_failed = 1;
                break;
            }
            got += (apr_off_t)n;
        }
        apr_brigade_cleanup(bb);
        total += got;
        if (b->rv == APR_SUCCESS && got == 0 && !b->eos)
            b->rv = APR_INCOMPLETE;   /* nothing came: do not spin; the
                                         body is not handed on in part */
        if (b->rv != APR_SUCCESS)
            break;
    }
    return total;
}

/* Fills b->kept with what was read, to be handed on: the head, the
 * spooled rest (read from the file as it is handed on, never mapped),
 * and the end of the body if it came. Cannot fail. */
static void build_kept(hl_body_t *b, apr_pool_t *pool, apr_bucket_alloc_t *ba)
{
    apr_bucket *e;

    b->kept = apr_brigade_create(pool, ba);
    if (b->head_len > 0)
        APR_BRIGADE_INSERT_TAIL(b->kept, apr_bucket_immortal_create(
                                    b->head, b->head_len, ba));
    if (b->spool && b->spool_len > 0) {
        e = apr_brigade_insert_file(b->kept, b->spool, 0, b->spool_len, pool);
        for (; e != APR_BRIGADE_SENTINEL(b->kept); e = APR_BUCKET_NEXT(e))
            if (APR_BUCKET_IS_FILE(e))
                apr_bucket_file_enable_mmap(e, 0);
    }
    if (b->eos)
        APR_BRIGADE_INSERT_TAIL(b->kept, apr_bucket_eos_create(ba));
}

/* Returns the body's limit and whether an over-limit body falls back to
 * the path (HotLimitBodyOverflow path), for r's scope. */
static apr_off_t body_limit(request_rec *r, int *to_path)
{
    const hl_dir_conf_t *dc = ap_get_module_config(r->per_dir_config,
                                                   &hotlimit_module);
    *to_path = dc && dc->body_overflow == HL_BODY_OVERFLOW_PATH;
    return dc ? dc->body_limit : HL_DEFAULT_BODY_LIMIT;
}

/* Returns HotLimitBodyMemory of r's server. */
static apr_size_t body_memory(request_rec *r)
{
    const hl_server_conf_t *sc = ap_get_module_config(r->server->module_config,
                                                      &hotlimit_module);
    return sc && sc->body_memory > 0 ? (apr_size_t)sc->body_memory
                                     : HL_DEFAULT_BODY_MEMORY;
}

/* Returns 1 if r's body is to be read (there is one, of a client not
 * banned, not over the limit by its Content-Length), with *clen set (-1:
 * chunked); else 0, with b->refuse set when an over-limit body is
 * refused. */
static int wants_body(request_rec *r, hl_body_t *b, apr_off_t limit,
                      int to_path, apr_off_t *clen)
{
    const char *cl = apr_table_get(r->headers_in, "Content-Length");
    const char *te = apr_table_get(r->headers_in, "Transfer-Encoding");
    char *end;

    *clen = -1;
    if (limit == 0 || (!te && (!cl || !strcmp(cl, "0"))))
        return 0;
    if (!te && cl
        && (apr_strtoff(clen, cl, &end, 10) != APR_SUCCESS || *end))
        return 0;                /* HTTP_IN refuses it anyway */
    /* A banned client's body is not read: the access checker refuses it. */
    if (banned_check && banned_check(r)) {
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r,
                      "HL01100: client banned: its body is not read");
        return 0;
    }
    if (*clen <= limit)
        return 1;
    if (to_path) {
        b->over_path = 1;
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r,
                      "HL00601: body of %" APR_OFF_T_FMT " bytes is over "
                      "HotLimitBodyLimit %" APR_OFF_T_FMT ": not read, the "
                      "parameter is taken from the query", *clen, limit);
        return 0;
    }
    ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                  "HL01101: body of %" APR_OFF_T_FMT " bytes is over "
                  "HotLimitBodyLimit %" APR_OFF_T_FMT ": refused (413)",
                  *clen, limit);
    b->refuse = HTTP_REQUEST_ENTITY_TOO_LARGE;
    return 0;
}

/* Decides what the read of total bytes into b leaves: the body parsed
 * (b->form or b->json set), the query alone, or the request refused
 * (b->refuse; whole: a body not received in full is refused too). Logs
 * why a body is not used. */
static void judge_read(request_rec *r, hl_body_t *b, hl_php_form_t form,
                       int json, apr_off_t total, apr_off_t limit, int to_path,
                       int whole)
{
    if (b->rv == AP_FILTER_ERROR) {
        /* LimitRequestBody, a bad chunk: HTTP_IN has sent the error. */
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r,
                      "HL01102: body refused while read (%" APR_OFF_T_FMT
                      " bytes): the request ends", total);
        b->refuse = DONE;
    } else if (b->spool_full) {
        hl_spool_refuse(r);
        r->connection->keepalive = AP_CONN_CLOSE;   /* the rest is unread */
        b->refuse = HTTP_SERVICE_UNAVAILABLE;
    } else if (b->spool_failed) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, b->rv, r,
                      "HL01106: the request body cannot be spooled to the "
                      "temporary directory: refused (500)");
        r->connection->keepalive = AP_CONN_CLOSE;   /* the rest is unread */
        b->refuse = HTTP_INTERNAL_SERVER_ERROR;
    } else if (b->rv != APR_SUCCESS && whole) {
        ap_log_rerror(APLOG_MARK, APLOG_INFO, b->rv, r,
                      "HL02200: body not received in full (%" APR_OFF_T_FMT
                      " bytes): no concurrency slot, refused (%d)", total,
                      APR_STATUS_IS_TIMEUP(b->rv) ? HTTP_REQUEST_TIME_OUT
                                                  : HTTP_BAD_REQUEST);
        r->connection->keepalive = AP_CONN_CLOSE;   /* the rest is unread */
        b->refuse = APR_STATUS_IS_TIMEUP(b->rv) ? HTTP_REQUEST_TIME_OUT
                                                : HTTP_BAD_REQUEST;
    } else if (b->rv != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, b->rv, r,
                      "HL00602: body not read to its end (%" APR_OFF_T_FMT " bytes): "
                      "the parameter is taken from the query", total);
    } else if ((total > limit || !b->eos) && to_path) {
        b->over_path = 1;
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r,
                      "HL00603: chunked body over HotLimitBodyLimit %"
                      APR_OFF_T_FMT ": not parsed, the parameter is taken "
                      "from the query", limit);
    } else if (total > limit || !b->eos) {
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                      "HL01103: body over HotLimitBodyLimit %" APR_OFF_T_FMT
                      ": refused (413)", limit);
        b->refuse = HTTP_REQUEST_ENTITY_TOO_LARGE;
    } else {
        b->form = form;
        b->json = json;
    }
}

/* Returns the body record of r, reading the body on first use by a reader
 * its type is for (HL_READ_JSON: a JSON body of any method; HL_READ_FORM:
 * a POST form PHP parses; HL_READ_WHOLE: any body, an over-limit one
 * refused whatever HotLimitBodyOverflow says) when it is to be read
 * (wants_body); never NULL. */
static hl_body_t *get_body(request_rec *r, hl_reader_t reader)
{
    request_rec *top = hl_client_request(r), *rr = r;
    hl_body_t *b = body_of(r);
    const char *type = apr_table_get(r->headers_in, "Content-Type");
    apr_off_t limit, total, clen;
    hl_php_form_t form;
    int to_path, json;

    if (!b) {
        b = apr_pcalloc(top->pool, sizeof(*b));
        apr_pool_userdata_setn(b, BODY_KEY, NULL, top->pool);
        hl_body_records = 1;
        b->refuse = OK;
    }
    if (b->decided)
        return b;
    form = strcmp(top->method, "POST") == 0
           ? hl_php_form_type(type, b->boundary, sizeof(b->boundary))
           : HL_PHP_FORM_NONE;
    /* json: reads any body but a multipart form (php://input is empty for
     * one): applications decode php://input or request.json() whatever
     * the Content-Type says, so a JSON text sent as text/plain, as
     * octet-stream, with no type or as an urlencoded form is read too (a
     * body that is no JSON document gives no value). */
    json = form != HL_PHP_FORM_MULTIPART;
    /* The other kind of reader leaves the body to the one it is for. */
    if (reader == HL_READ_JSON ? !json
        : reader == HL_READ_FORM ? form == HL_PHP_FORM_NONE : 0)
        return b;
    b->decided = 1;
    limit = body_limit(r, &to_path);
    if (reader == HL_READ_WHOLE)
        to_path = 0;     /* a slot waits for the whole body, or none */
    if (!wants_body(r, b, limit, to_path, &clen))
        return b;
    b->read = 1;
    /* A subrequest's filters are its main request's protocol filters,
     * and live only as long as the subrequest: read as the main request. */
    while (rr->main)
        rr = rr->main;
    add_set_input_filters(rr);
    b->memory = body_memory(r);
    /* A short body gets a short buffer (room for a decoded one to grow). */
    b->head_cap = clen >= 0 && (apr_size_t)clen + HL_BODY_SLACK < b->memory
                  ? (apr_size_t)clen + HL_BODY_SLACK : b->memory;
    total = read_body(rr, b, limit,
                      apr_brigade_create(r->pool, r->connection->bucket_alloc),
                      top->pool);
    build_kept(b, top->pool, r->connection->bucket_alloc);
    b->below = rr->input_filters;
    add_filter(rr, b);           /* after: the read must not go through it */
    judge_read(r, b, form, json, total, limit, to_path,
               reader == HL_READ_WHOLE);
    return b;
}

/* hl_php_src_t's read over b: the head, then the spool file. Returns 0,
 * or -1 when the file cannot be read. */
static int read_kept(void *ctx, size_t off, char *buf, size_t n)
{
    hl_body_t *b = ctx;
    apr_os_file_t fd;

    if (off < b->head_len) {
        size_t take = b->head_len - off < n ? b->head_len - off : n;
        memcpy(buf, b->head + off, take);
        buf += take;
        off += take;
        n -= take;
    }
    if (n == 0)
        return 0;
    if (!b->spool || apr_os_file_get(&fd, b->spool) != APR_SUCCESS)
        return -1;
    off -= b->head_len;
    while (n > 0) {
        ssize_t got = pread(fd, buf, n, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        buf += got;
        off += (size_t)got;
        n -= (size_t)got;
    }
    return 0;
}

/* Reads $_REQUEST[name] (array_key: an array's first key) for query and
 * body b into a new memo on pool. The value is cut at HotLimitBodyMemory
 * bytes (a longer one is no route, and a key all the same); a multipart
 * header over it, or a spool that cannot be read, refuses the request
 * (b->refuse). Returns NULL when out of memory. */
static hl_param_memo_t *read_param(request_rec *r, hl_body_t *b,
                                   const char *query, const char *name,
                                   int array_key, apr_pool_t *pool)
{
    apr_size_t qlen = query ? strlen(query) : 0;
    apr_size_t blen = b->form ? b->head_len + (apr_size_t)b->spool_len : 0;
    apr_size_t cap = blen < b->memory ? blen : b->memory;
    apr_size_t size = qlen + cap + HL_PHP_KEY_MAX + 2;
    char *out = malloc(size + SRC_CACHE);
    hl_php_src_t src;
    hl_param_memo_t *memo;
    long n;

    if (out == NULL)
        return NULL;
    memset(&src, 0, sizeof(src));
    src.len = blen;
    if (b->spool) {
        src.read = read_kept;
        src.ctx = b;
        src.cache = out + size;
        src.cache_size = SRC_CACHE;
    } else {
        src.mem = b->head;       /* all of it is in memory */
    }
    n = hl_php_request_param_src(out, size, query, b->form ? &src : NULL,
                                 b->form, b->boundary, name, array_key,
                                 b->memory);
    if (n == HL_PHP_TOO_BIG) {
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                      "HL01104: a multipart header over HotLimitBodyMemory "
                      "%" APR_SIZE_T_FMT ": refused (413)", b->memory);
        b->refuse = HTTP_REQUEST_ENTITY_TOO_LARGE;
    } else if (n == HL_PHP_READ_FAIL) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                      "HL01105: the spooled request body cannot be read: "
                      "refused (500)");
        b->refuse = HTTP_INTERNAL_SERVER_ERROR;
    }
    memo = apr_pcalloc(pool, sizeof(*memo));
    memo->name = apr_pstrdup(pool, name);
    memo->query = query ? apr_pstrdup(pool, query) : NULL;
    memo->array_key = array_key;
    if (n >= 0) {
        memo->value = apr_pstrmemdup(pool, out, (apr_size_t)n);
        memo->len = (apr_size_t)n;
    }
    free(out);
    return memo;
}

/* Adds memo (NULL: none, out of memory) to b's and returns it. */
static hl_param_memo_t *keep_memo(hl_body_t *b, hl_param_memo_t *memo)
{
    if (memo) {
        memo->next = b->memo;
        b->memo = memo;
    }
    return memo;
}

/* Returns a copy of memo's value in r->pool and sets *len, or NULL when
 * absent. */
static char *memo_value(request_rec *r, const hl_param_memo_t *memo,
                        apr_size_t *len)
{
    if (memo->value == NULL)
        return NULL;
    *len = memo->len;
    return apr_pstrmemdup(r->pool, memo->value, memo->len);
}

/* Returns $_REQUEST[name] (see mod_hotlimit_body.h). Each (name, array
 * key, query) is read once per client request; the value is copied into
 * r->pool for each caller. */
char *hl_request_param(request_rec *r, const char *name, int array_key,
                       apr_size_t *len)
{
    hl_body_t *b = get_body(r, HL_READ_FORM);
    request_rec *top = hl_client_request(r);
    const char *query = r->args;
    hl_param_memo_t *memo;

    for (memo = b->memo; memo; memo = memo->next)
        if (!memo->json && memo->array_key == array_key
            && !strcmp(memo->name, name)
            && (memo->query == query
                || (memo->query && query && !strcmp(memo->query, query))))
            break;
    if (memo == NULL
        && !(memo = keep_memo(b, read_param(r, b, query, name, array_key,
                                            top->pool))))
        return NULL;
    return memo_value(r, memo, len);
}

/* Reads the value at JSON path of body b (read whole, JSON) into a new
 * memo on pool: the head, then the spool in READ_CHUNK pieces, stopping
 * once the document is invalid. The value is cut at HotLimitBodyMemory
 * bytes; a spool that cannot be read refuses the request (b->refuse).
 * Returns NULL when out of memory. */
static hl_param_memo_t *read_json(request_rec *r, hl_body_t *b,
                                  const char *path, apr_pool_t *pool)
{
    apr_size_t blen = b->head_len + (apr_size_t)b->spool_len, off, n;
    apr_size_t size = (blen < b->memory ? blen : b->memory) + 1;
    char *out = malloc(size + READ_CHUNK), *chunk = out + size;
    hl_param_memo_t *memo;
    hl_json_path_t s;
    long len = -1;
    int failed = 0;

    if (out == NULL)
        return NULL;
    if (hl_json_path_init(&s, path, out, size) == 0
        && hl_json_path_feed(&s, b->head, b->head_len) == 0) {
        for (off = b->head_len; off < blen; off += n) {
            n = blen - off < READ_CHUNK ? blen - off : READ_CHUNK;
            if ((failed = read_kept(b, off, chunk, n) != 0)
                || hl_json_path_feed(&s, chunk, n) != 0)
                break;
        }
    }
    if (failed) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                      "HL01550: the spooled request body cannot be read: "
                      "refused (500)");
        b->refuse = HTTP_INTERNAL_SERVER_ERROR;
    }
    else if ((len = hl_json_path_finish(&s)) < 0) {
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r,
                      "HL01551: no string or number at '%s' of the JSON "
                      "body (%" APR_SIZE_T_FMT " bytes), or it is not valid "
                      "JSON", path, blen);
    }
    memo = apr_pcalloc(pool, sizeof(*memo));
    memo->name = apr_pstrdup(pool, path);
    memo->json = 1;
    if (len > 0 && s.is_num) {
        /* A number is keyed by the text PHP makes of it: 1e3 as "1000",
         * the string "1000" is the same key. */
        char num[HL_JSON_NUM_MAX];
        len = (long)hl_json_num_php(num, out, (size_t)len);
        memcpy(out, num, (size_t)len + 1);
    }
    if (len >= 0) {
        memo->value = apr_pstrmemdup(pool, out, (apr_size_t)len);
        memo->len = (apr_size_t)len;
    }
    free(out);
    return memo;
}

/* Returns the JSON body's value at path (see mod_hotlimit_body.h). Each
 * path is read once per client request; the value is copied into r->pool
 * for each caller. */
char *hl_request_json(request_rec *r, const char *path, apr_size_t *len)
{
    hl_body_t *b = get_body(r, HL_READ_JSON);
    hl_param_memo_t *memo;

    if (!b->json)
        return NULL;
    for (memo = b->memo; memo; memo = memo->next)
        if (memo->json && !strcmp(memo->name, path))
            break;
    if (memo == NULL
        && !(memo = keep_memo(b, read_json(r, b, path,
                                           hl_client_request(r)->pool))))
        return NULL;
    return memo_value(r, memo, len);
}

/* [reserve=] Feeds the whole JSON body to fn (see mod_hotlimit_body.h):
 * the head, then the spool in READ_CHUNK pieces; a spool that cannot be
 * read refuses the request (b->refuse, 500), and so does a body over
 * HotLimitBodyLimit left to the path (413): the backend reads its
 * max_tokens, the module could not. Returns 1, else 0. */
int hl_request_json_feed(request_rec *r, hl_body_feed_fn *fn, void *ctx,
                         apr_off_t *body_len)
{
    hl_body_t *b = get_body(r, HL_READ_JSON);
    apr_size_t blen, off, n;
    char *chunk;

    if (b->over_path && b->refuse == OK) {
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                      "HL03000: reserve=max_tokens: body over "
                      "HotLimitBodyLimit: its max_tokens cannot be read, "
                      "refused (413) even under HotLimitBodyOverflow path");
        r->connection->keepalive = AP_CONN_CLOSE;   /* the rest is unread */
        b->refuse = HTTP_REQUEST_ENTITY_TOO_LARGE;
        return 0;
    }
    if (!b->read || b->refuse != OK || b->rv != APR_SUCCESS || !b->eos)
        return 0;
    blen = b->head_len + (apr_size_t)b->spool_len;
    fn(ctx, b->head, b->head_len);
    if (blen > b->head_len) {
        if ((chunk = malloc(READ_CHUNK)) == NULL)
            return 0;
        for (off = b->head_len; off < blen; off += n) {
            n = blen - off < READ_CHUNK ? blen - off : READ_CHUNK;
            if (read_kept(b, off, chunk, n) != 0) {
                ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                              "HL02000: the spooled request body cannot be "
                              "read for reserve=: refused (500)");
                b->refuse = HTTP_INTERNAL_SERVER_ERROR;
                free(chunk);
                return 0;
            }
            fn(ctx, chunk, n);
        }
        free(chunk);
    }
    *body_len = (apr_off_t)blen;
    return 1;
}

/* Reads r's body whole before a slot is taken (see mod_hotlimit_body.h).
 * Returns DECLINED, or the status that ends r. */
int hl_body_whole(request_rec *r)
{
    get_body(r, HL_READ_WHOLE);
    return hl_body_refusal_of(r);
}

/* Returns DECLINED, or the status that ends r (see mod_hotlimit_body.h),
 * once per client request. */
int hl_body_refusal_of(request_rec *r)
{
    hl_body_t *b = body_of(r);

    if (!b || b->refuse == OK || b->refused)
        return DECLINED;
    b->refused = 1;
    return b->refuse;
}

/* fixups hook, last: a request whose body was refused while an <If>, a
 * SetEnvIfExpr or a scope without quotas read it ends here, before the
 * handler (not a subrequest: its failure would not end the request). */
static int body_fixups(request_rec *r)
{
    return r->main ? DECLINED : hl_body_refusal(r);
}

/* The HOTLIMIT_BODY input filter: the kept body first, then the end of
 * the body, or the rest from where the read stopped. */
static apr_status_t body_filter(ap_filter_t *f, apr_bucket_brigade *bb,
                                ap_input_mode_t mode, apr_read_type_e block,
                                apr_off_t readbytes)
{
    hl_body_t *b = f->ctx;
    apr_bucket *e, *after;
    apr_status_t rv;

    /* A body the module could not read whole is not handed on in part:
     * PHP would parse the part it got (mod_php keeps whole 16 KiB blocks
     * read before an error), where the module read only the query. The
     * handler gets the error at once, and PHP no body. */
    if (b && b->rv != APR_SUCCESS)
        return b->rv;
    if (!b || !b->kept)
        return ap_get_brigade(f->next, bb, mode, block, readbytes);
    if (APR_BRIGADE_EMPTY(b->kept)) {
        /* The filters under this one read the body to its end already
         * (the core's later copy of a SetInputFilter filter is never
         * asked); else the rest comes from where the read stopped. */
        if (b->eos) {
            APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(f->c->bucket_alloc));
            return APR_SUCCESS;
        }
        return ap_get_brigade(b->below, bb, mode, block, readbytes);
    }
    switch (mode) {
    case AP_MODE_READBYTES:
        rv = apr_brigade_partition(b->kept, readbytes, &after);
        if (rv != APR_SUCCESS && rv != APR_INCOMPLETE)
            return rv;
        while ((e = APR_BRIGADE_FIRST(b->kept)) != after) {
            APR_BUCKET_REMOVE(e);
            APR_BRIGADE_INSERT_TAIL(bb, e);
        }
        return APR_SUCCESS;
    case AP_MODE_GETLINE:
        return apr_brigade_split_line(bb, b->kept, block, HUGE_STRING_LEN);
    case AP_MODE_EXHAUSTIVE:
        APR_BRIGADE_CONCAT(bb, b->kept);
        return APR_SUCCESS;
    case AP_MODE_SPECULATIVE:
        for (e = APR_BRIGADE_FIRST(b->kept);
             e != APR_BRIGADE_SENTINEL(b->kept) && readbytes > 0;
             e = APR_BUCKET_NEXT(e)) {
            apr_bucket *copy;
            if (apr_bucket_copy(e, &copy) != APR_SUCCESS)
                break;
            APR_BRIGADE_INSERT_TAIL(bb, copy);
            if (!APR_BUCKET_IS_METADATA(e))
                readbytes -= (apr_off_t)e->length;
        }
        return APR_SUCCESS;
    default:
        return ap_get_brigade(b->below, bb, mode, block, readbytes);
    }
}

/* insert_filter hook: a request whose chain lost the filter while its
 * client request's body is kept gets it again: an internal redirect (it
 * starts from the protocol filters) or a fast redirect (DirectoryIndex,
 * MultiViews: the subrequest's filters are copied in). */
static void hl_body_insert_filter(request_rec *r)
{
    hl_body_t *b;
    ap_filter_t *f;

    /* No body record was ever made in this process (body_of would say so
     * after a call): the usual request leaves at once. */
    if (!hl_body_records || r->main)
        return;
    b = body_of(r);
    if (!b || !b->kept)
        return;
    for (f = r->input_filters; f; f = f->next)
        if (f->frec == body_filter_handle && f->ctx == b)
            return;
    add_filter(r, b);
}

/* Registers the HOTLIMIT_BODY filter (above every resource filter: what
 * it hands on went through them already) and its hooks; called from
 * register_hooks. */
void hl_body_set_ban_check(hl_body_banned_fn *fn)
{
    banned_check = fn;
}

void hl_body_register(void)
{
    body_filter_handle = ap_register_input_filter("HOTLIMIT_BODY", body_filter,
                                                  NULL, AP_FTYPE_RESOURCE - 1);
    ap_hook_insert_filter(hl_body_insert_filter, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_fixups(body_fixups, NULL, NULL, APR_HOOK_REALLY_LAST);
}
