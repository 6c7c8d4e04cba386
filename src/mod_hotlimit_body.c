/*
 * mod_hotlimit_body.c - $_REQUEST[NAME] for param: routes and by=param:
 * keys, reading the request body when (and only when) one of them needs it,
 * and handing that body on to the handler (mod_php, CGI, mod_proxy) byte
 * for byte as it arrived.
 *
 * The body is read once per client request, through the request's input
 * filters (so HTTP_IN de-chunks it and answers Expect: 100-continue), at
 * most HotLimitBodyLimit + 1 bytes of it: a POST whose Content-Type PHP
 * parses (urlencoded, multipart/form-data). A Content-Length over the limit
 * is not read at all; a chunked body found over the limit is not parsed.
 * What was read is kept, set aside in the client request's pool, and the
 * HOTLIMIT_BODY input filter (added to the request, and by the insert_filter
 * hook to any internal redirect of it) returns it first, then passes through
 * to the rest of the body, or returns the error the read ended with.
 * Anything unusable (oversize, unreadable, not a form) leaves the parameter
 * to the query string: never an error of its own.
 */
#include <stdlib.h>
#include <string.h>

#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "util_filter.h"
#include "apr_strings.h"

#include "mod_hotlimit.h"
#include "mod_hotlimit_body.h"
#include "hl_php.h"

APLOG_USE_MODULE(hotlimit);

#define BODY_KEY "hotlimit-body"

/* The body of one client request, on its pool. */
typedef struct {
    apr_bucket_brigade *kept;     /* read, not yet handed on */
    apr_status_t        rv;       /* how the read ended, if not well */
    hl_php_form_t       form;     /* HL_PHP_FORM_NONE: not parsed */
    char                boundary[HL_PHP_BOUNDARY_MAX + 1];
    char               *data;     /* the whole body, flattened, or NULL */
    apr_size_t          len;
    struct hl_param_memo *memo;   /* parameters already read from it */
} hl_body_t;

/* A parameter already read for the client request: a route, a key and
 * hotlimit_param() may each ask for it, and the body is parsed once. */
typedef struct hl_param_memo {
    struct hl_param_memo *next;
    const char *name;
    const char *query;            /* the query it was read with */
    int         array_key;
    char       *value;            /* NULL: absent */
    apr_size_t  len;
} hl_param_memo_t;

static ap_filter_rec_t *body_filter_handle;

/* Returns the body record of r's client request, or NULL if none was
 * read. Owned by that request's pool. */
static hl_body_t *body_of(request_rec *r)
{
    void *b = NULL;

    apr_pool_userdata_get(&b, BODY_KEY, hl_client_request(r)->pool);
    return b;
}

/* Gives r the filter that replays b. Cannot fail. */
static void add_filter(request_rec *r, hl_body_t *b)
{
    ap_add_input_filter_handle(body_filter_handle, b, r, r->connection);
}

/*
 * Reads at most limit + 1 bytes of r's body into b->kept. Returns the total
 * read (limit + 1 meaning "over the limit") and sets *eos when the body
 * ended; a read error is kept in b->rv (what was read is kept too).
 */
static apr_off_t read_body(request_rec *r, hl_body_t *b, apr_off_t limit,
                           int *eos, apr_pool_t *pool)
{
    apr_bucket_brigade *bb = apr_brigade_create(pool, r->connection->bucket_alloc);
    apr_off_t total = 0;

    *eos = 0;
    while (!*eos && total <= limit) {
        apr_bucket *e;
        apr_off_t got = 0;
        apr_status_t rv = ap_get_brigade(r->input_filters, bb,
                                         AP_MODE_READBYTES, APR_BLOCK_READ,
                                         limit + 1 - total);
        if (rv != APR_SUCCESS) {
            b->rv = rv;
            break;
        }
        for (e = APR_BRIGADE_FIRST(bb); e != APR_BRIGADE_SENTINEL(bb);
             e = APR_BUCKET_NEXT(e)) {
            if (APR_BUCKET_IS_EOS(e))
                *eos = 1;
            else if (!APR_BUCKET_IS_METADATA(e)) {
                const char *d;
                apr_size_t n;
                if (e->length == (apr_size_t)-1
                    && apr_bucket_read(e, &d, &n, APR_BLOCK_READ) != APR_SUCCESS) {
                    b->rv = APR_EGENERAL;
                    break;
                }
                got += (apr_off_t)e->length;
            }
            apr_bucket_setaside(e, pool);
        }
        APR_BRIGADE_CONCAT(b->kept, bb);
        total += got;
        if (b->rv == APR_SUCCESS && got == 0 && !*eos)
            b->rv = APR_INCOMPLETE;   /* nothing came: do not spin; the
                                         body is not handed on in part */
        if (b->rv != APR_SUCCESS)
            break;
    }
    return total;
}

/* Returns the body record of r, reading the body on first use when PHP
 * would parse it; never NULL. Logs why a body is not used, at debug. */
static hl_body_t *get_body(request_rec *r)
{
    request_rec *top = hl_client_request(r);
    const hl_dir_conf_t *dc = ap_get_module_config(r->per_dir_config,
                                                   &hotlimit_module);
    apr_off_t limit = dc && dc->body_limit != HL_UNSET ? dc->body_limit
                                                       : HL_DEFAULT_BODY_LIMIT;
    hl_body_t *b = body_of(r);
    const char *cl, *te;
    apr_off_t total, clen = -1;
    hl_php_form_t form;
    int eos;

    if (b)
        return b;
    b = apr_pcalloc(top->pool, sizeof(*b));
    apr_pool_userdata_setn(b, BODY_KEY, NULL, top->pool);
    if (strcmp(top->method, "POST") != 0)
        return b;
    form = hl_php_form_type(apr_table_get(r->headers_in, "Content-Type"),
                            b->boundary, sizeof(b->boundary));
    cl = apr_table_get(r->headers_in, "Content-Length");
    te = apr_table_get(r->headers_in, "Transfer-Encoding");
    if (form == HL_PHP_FORM_NONE || limit == 0
        || (!te && (!cl || !strcmp(cl, "0"))))
        return b;
    if (!te && cl) {
        char *end;
        if (apr_strtoff(&clen, cl, &end, 10) != APR_SUCCESS || *end)
            return b;            /* HTTP_IN refuses it anyway */
    }
    if (clen > limit) {
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, 
                      "HL00601: body of %" APR_OFF_T_FMT " bytes is over "
                      "HotLimitBodyLimit %" APR_OFF_T_FMT ": not read, the "
                      "parameter is taken from the query", clen, limit);
        return b;
    }
    b->kept = apr_brigade_create(top->pool, r->connection->bucket_alloc);
    total = read_body(r, b, limit, &eos, top->pool);
    add_filter(r, b);            /* after: the read must not go through it */
    if (b->rv != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, b->rv, r, 
                      "HL00602: body not read to its end (%" APR_OFF_T_FMT " bytes): "
                      "the parameter is taken from the query", total);
        return b;
    }
    if (total > limit || !eos) {
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, 
                      "HL00603: chunked body over HotLimitBodyLimit %" APR_OFF_T_FMT
                      ": not parsed, the parameter is taken from the query",
                      limit);
        return b;
    }
    if (apr_brigade_pflatten(b->kept, &b->data, &b->len, top->pool)
        != APR_SUCCESS) {
        b->data = NULL;
        return b;
    }
    b->form = form;
    return b;
}

/* Returns $_REQUEST[name] (see mod_hotlimit_body.h). Each (name, array
 * key, query) is read once per client request; the value is copied into
 * r->pool for each caller. The parse writes into a scratch buffer as large
 * as query and body, malloc'd and freed at once (a body may be 8 MiB). */
char *hl_request_param(request_rec *r, const char *name, int array_key,
                       apr_size_t *len)
{
    hl_body_t *b = get_body(r);
    request_rec *top = hl_client_request(r);
    const char *query = r->args;
    hl_param_memo_t *memo;
    apr_size_t size;
    char *out;
    long n;

    for (memo = b->memo; memo; memo = memo->next)
        if (memo->array_key == array_key && !strcmp(memo->name, name)
            && (memo->query == query
                || (memo->query && query && !strcmp(memo->query, query))))
            break;
    if (memo == NULL) {
        size = (query ? strlen(query) : 0) + (b->data ? b->len : 0)
               + HL_PHP_KEY_MAX + 2;
        if ((out = malloc(size)) == NULL)
            return NULL;
        n = hl_php_request_param(out, size, query, b->data,
                                 b->data ? b->len : 0, b->form, b->boundary,
                                 name, array_key);
        memo = apr_pcalloc(top->pool, sizeof(*memo));
        memo->name = apr_pstrdup(top->pool, name);
        memo->query = query ? apr_pstrdup(top->pool, query) : NULL;
        memo->array_key = array_key;
        if (n >= 0) {
            memo->value = apr_pstrmemdup(top->pool, out, (apr_size_t)n);
            memo->len = (apr_size_t)n;
        }
        free(out);
        memo->next = b->memo;
        b->memo = memo;
    }
    if (memo->value == NULL)
        return NULL;
    *len = memo->len;
    return apr_pstrmemdup(r->pool, memo->value, memo->len);
}

/* The HOTLIMIT_BODY input filter: the kept body first, then the rest from
 * the filters below (or the error the read ended with). */
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
    if (!b || !b->kept || APR_BRIGADE_EMPTY(b->kept)) {
        return ap_get_brigade(f->next, bb, mode, block, readbytes);
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
        return ap_get_brigade(f->next, bb, mode, block, readbytes);
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

    if (r->main)
        return;
    b = body_of(r);
    if (!b || !b->kept)
        return;
    for (f = r->input_filters; f; f = f->next)
        if (f->frec == body_filter_handle && f->ctx == b)
            return;
    add_filter(r, b);
}

/* Registers the HOTLIMIT_BODY filter; called from register_hooks. */
void hl_body_register(void)
{
    body_filter_handle = ap_register_input_filter("HOTLIMIT_BODY", body_filter,
                                                  NULL, AP_FTYPE_RESOURCE);
    ap_hook_insert_filter(hl_body_insert_filter, NULL, NULL, APR_HOOK_MIDDLE);
}
