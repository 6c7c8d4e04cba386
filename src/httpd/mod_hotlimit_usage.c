/*
 * mod_hotlimit_usage.c - cost=usage: reads the usage an LLM answer reports
 * in its body as the body passes, for the count after the response.
 *
 * The insert_filter hook gives the HOTLIMIT_USAGE output filter to a
 * request (the last of its chain; never a subrequest) whose client request
 * was admitted by a cost=usage quota. The filter sits before mod_deflate
 * (AP_FTYPE_CONTENT_SET), reads each data bucket as it passes and hands the
 * brigade on at once, unchanged: nothing is set aside or held back, FLUSH
 * buckets stay where they are, so each event of a text/event-stream through
 * mod_proxy_http still leaves when the backend sent it. A bucket that
 * cannot be read without waiting (a CGI pipe) is waited for only after
 * what came before it was passed on with a FLUSH. The reader (hl_usage.c)
 * keeps a fixed-size state on the request's pool; log_transaction asks it
 * for the cost (hl_usage_response_cost), so a stream cut short is charged
 * what its events reported so far. A gzip or deflate body (a backend's
 * compression) is decoded as it passes (hl_inflate.c: zlib, bounded
 * memory) and its usage read from the decoded copy; what the client gets
 * is untouched. A body in another coding, or a broken stream, is not read:
 * it is charged its reservation. hl_usage_wanted narrows the forwarded
 * Accept-Encoding to the codings read here.
 */
#include <string.h>

#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "http_request.h"
#include "util_filter.h"
#include "apr_strings.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_usage.h"
#include "hl_encoding.h"
#include "hl_inflate.h"
#include "hl_quota.h"
#include "hl_usage.h"

APLOG_USE_MODULE(hotlimit);

#define USAGE_KEY "hotlimit-usage"

/* The usage read from one request's answer, on its pool. */
typedef struct {
    hl_usage_t          usage;
    int                 started;  /* the mode was chosen (first call) */
    int                 off;      /* reading stopped: encoded, finished or
                                     unreadable */
    const char         *why_off;  /* why, for the debug log; NULL if read */
    apr_bucket_brigade *rest;     /* reused by pass_before */
    hl_inflate_t       *inflate;  /* a gzip or deflate body's decoder */
} usage_ctx_t;

static ap_filter_rec_t *usage_filter_handle;

/* Pool cleanup: frees the decoder's zlib memory. */
static apr_status_t end_inflate(void *data)
{
    hl_inflate_end(data);
    return APR_SUCCESS;
}

/* Chooses how to read r's body: an event stream or JSON, decoded first
 * when gzip or deflate; a body in another coding is not read. Cannot
 * fail. */
static void start_reading(usage_ctx_t *ctx, request_rec *r)
{
    hl_encoding_t enc = hl_encoding_of(apr_table_get(r->headers_out,
                                                     "Content-Encoding"));
    const char *ct = r->content_type;

    ctx->started = 1;
    if (enc == HL_ENC_OTHER) {
        ctx->off = 1;
        ctx->why_off = "the body's Content-Encoding cannot be read";
        return;
    }
    if (enc != HL_ENC_IDENTITY) {
        ctx->inflate = apr_palloc(r->pool, sizeof(*ctx->inflate));
        hl_inflate_init(ctx->inflate, enc == HL_ENC_GZIP ? HL_INFLATE_GZIP
                                                         : HL_INFLATE_DEFLATE);
        apr_pool_cleanup_register(r->pool, ctx->inflate, end_inflate,
                                  apr_pool_cleanup_null);
    }
    hl_usage_init(&ctx->usage,
                  ct && !ap_cstr_casecmpn(ct, "text/event-stream", 17)
                  ? HL_USAGE_SSE : HL_USAGE_JSON);
}

/* Passes the buckets of bb before e on, with a FLUSH, leaving e and what
 * follows it in bb. Returns what the next filter returned. */
static apr_status_t pass_before(ap_filter_t *f, usage_ctx_t *ctx,
                                apr_bucket_brigade *bb, apr_bucket *e)
{
    apr_status_t rv;

    ctx->rest = apr_brigade_split_ex(bb, e, ctx->rest);
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_flush_create(f->c->bucket_alloc));
    rv = ap_pass_brigade(f->next, bb);
    apr_brigade_cleanup(bb);
    APR_BRIGADE_CONCAT(bb, ctx->rest);
    return rv;
}

/* hl_inflate_out_fn: the decoded bytes go to the usage reader. */
static void read_decoded(void *ctx, const char *data, size_t n)
{
    hl_usage_feed(&((usage_ctx_t *)ctx)->usage, data, n);
}

/* Reads the next len bytes of the body: decoded first when it is gzip or
 * deflate. Marks ctx off when reading is over (finished or broken). */
static void read_data(usage_ctx_t *ctx, const char *data, apr_size_t len)
{
    if (!ctx->inflate)
        hl_usage_feed(&ctx->usage, data, len);
    else if (hl_inflate_feed(ctx->inflate, data, len, read_decoded, ctx) != 0) {
        ctx->off = 1;
        ctx->why_off = "the body's gzip or deflate stream is broken";
        return;
    }
    if (hl_usage_finished(&ctx->usage)
        || (ctx->inflate && hl_inflate_ended(ctx->inflate)))
        ctx->off = 1;
}

/* The HOTLIMIT_USAGE filter: reads the data of bb, then passes bb on
 * unchanged. Returns what the next filter returned. */
static apr_status_t usage_filter(ap_filter_t *f, apr_bucket_brigade *bb)
{
    usage_ctx_t *ctx = f->ctx;
    apr_bucket *e;

    if (!ctx->started)
        start_reading(ctx, f->r);
    for (e = APR_BRIGADE_FIRST(bb);
         !ctx->off && e != APR_BRIGADE_SENTINEL(bb); e = APR_BUCKET_NEXT(e)) {
        const char *data;
        apr_size_t len;
        apr_status_t rv;

        if (APR_BUCKET_IS_METADATA(e))
            continue;
        rv = apr_bucket_read(e, &data, &len, APR_NONBLOCK_READ);
        if (rv == APR_EAGAIN) {
            rv = pass_before(f, ctx, bb, e);
            if (rv != APR_SUCCESS)
                return rv;
            rv = apr_bucket_read(e, &data, &len, APR_BLOCK_READ);
        }
        if (rv != APR_SUCCESS) {    /* the next filter meets the error */
            ctx->off = 1;
            ctx->why_off = "the body could not be read";
            break;
        }
        read_data(ctx, data, len);
    }
    if (ctx->off)
        ap_remove_output_filter(f);
    return ap_pass_brigade(f->next, bb);
}

#define USAGE_WANTED "hotlimit-usage-wanted"

/* 1 once a request of this process was admitted by a cost=usage quota:
 * until then no request of it needs the filter, and the insert_filter
 * hook returns at once. */
static int usage_wanted_here;

/* Narrows the Accept-Encoding of r to the codings read here (gzip,
 * deflate, identity), so a backend does not answer in one whose usage
 * cannot be read. Cannot fail. */
static void narrow_accept_encoding(request_rec *r)
{
    const char *ae = apr_table_get(r->headers_in, "Accept-Encoding");
    apr_size_t size;
    char *out;

    if (ae == NULL)
        return;
    size = 2 * strlen(ae) + 9;
    out = apr_palloc(r->pool, size);
    hl_accept_encoding_narrow(ae, out, size);
    if (strcmp(out, ae) == 0)
        return;
    ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r,
                  "HL02001: cost=usage: Accept-Encoding '%s' narrowed to "
                  "'%s' (the codings whose usage can be read)",
                  ap_escape_logitem(r->pool, ae), out);
    apr_table_setn(r->headers_in, "Accept-Encoding", out);
}

void hl_usage_wanted(request_rec *r)
{
    usage_wanted_here = 1;
    apr_table_setn(hl_client_request(r)->notes, USAGE_WANTED, "1");
    narrow_accept_encoding(r);
}

/* insert_filter: gives r the filter when its client request was admitted
 * by a cost=usage quota (hl_usage_wanted). Returns nothing; never fails. */
static void usage_insert_filter(request_rec *r)
{
    usage_ctx_t *ctx;

    if (!usage_wanted_here || r->main
        || !apr_table_get(hl_client_request(r)->notes, USAGE_WANTED))
        return;
    ctx = apr_pcalloc(r->pool, sizeof(*ctx));
    apr_pool_userdata_setn(ctx, USAGE_KEY, NULL, hl_client_request(r)->pool);
    ap_add_output_filter_handle(usage_filter_handle, ctx, r, r->connection);
}

uint32_t hl_usage_response_cost(request_rec *r, uint32_t missing)
{
    void *p = NULL;
    const usage_ctx_t *ctx;
    uint32_t cost = 0;
    int rc = 0;

    apr_pool_userdata_get(&p, USAGE_KEY, hl_client_request(r)->pool);
    ctx = p;
    if (ctx && ctx->started && !ctx->why_off)
        rc = hl_usage_cost(&ctx->usage, &cost);
    ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r,
                  "HL01400: cost=usage: %s%s, charged %u",
                  rc == 1 ? apr_psprintf(r->pool, "%u tokens", cost)
                  : rc == -1 ? "an invalid usage"
                  : !ctx || !ctx->started ? "no body read"
                  : ctx->why_off ? ctx->why_off : "no usage",
                  rc == 1 ? " reported" : "", rc == 1 ? cost : missing);
    return rc == 1 ? cost : missing;
}

void hl_usage_register(void)
{
    usage_filter_handle = ap_register_output_filter("HOTLIMIT_USAGE",
                                                    usage_filter, NULL,
                                                    AP_FTYPE_CONTENT_SET);
    ap_hook_insert_filter(usage_insert_filter, NULL, NULL, APR_HOOK_MIDDLE);
}
