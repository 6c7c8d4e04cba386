/*
 * mod_hotlimit_fetch.c - fetching the quota table from an http(s) URL.
 * The only file that touches libcurl: one blocking, bounded transfer per
 * call, with conditional GET (If-None-Match / If-Modified-Since), a
 * whole-transfer timeout and a size cap. It runs in the watchdog thread,
 * never on a request. Only strong validators are sent back: one from the
 * same second as the response is weak (hl_validator.h), and the reloader
 * compares the document's digest instead.
 *
 * Redirects are followed here, not by libcurl (CURLOPT_FOLLOWLOCATION is
 * off): at most HL_FETCH_MAX_REDIRECTS hops, each only within the origin
 * (scheme, host and port) of the configured URL, so the validators and the
 * table's trust never go to another server and https is never downgraded.
 * A redirect elsewhere is refused before any request is made to it.
 */
#include <string.h>
#include <curl/curl.h>

#include "httpd.h"
#include "http_log.h"
#include "apr_strings.h"
#include "apr_lib.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_fetch.h"
#include "hl_buf.h"
#include "hl_validator.h"

APLOG_USE_MODULE(hotlimit);

#define HL_FETCH_MAX_REDIRECTS 3

/* What the write and header callbacks fill. */
typedef struct {
    hl_buf_t               body;
    apr_size_t             max;
    int                    too_large;
    hl_fetch_validators_t  seen;   /* validators of this response */
    char                   date[64];  /* its Date, to judge them */
} fetch_ctx_t;

apr_status_t hl_fetch_global_init(void)
{
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK
           ? APR_SUCCESS : APR_EGENERAL;
}

/* Appends a chunk of the body; returns the bytes taken (less than offered
 * aborts the transfer, which is how the size cap is enforced). */
static size_t on_body(char *data, size_t size, size_t nmemb, void *baton)
{
    fetch_ctx_t *ctx = baton;
    size_t n = size * nmemb;

    if (ctx->body.len + n > ctx->max) {
        ctx->too_large = 1;
        return 0;
    }
    hl_buf_addn(&ctx->body, data, n);
    return n;
}

/* Copies the value of header `name` from line into out (cut to outlen-1),
 * trimming spaces and CRLF. Returns 1 if line is that header. */
static int header_value(const char *line, size_t n, const char *name,
                        char *out, size_t outlen)
{
    size_t nl = strlen(name), i, j;

    if (n <= nl || strncasecmp(line, name, nl) || line[nl] != ':')
        return 0;
    for (i = nl + 1; i < n && (line[i] == ' ' || line[i] == '\t'); ++i)
        ;
    for (j = n; j > i && (line[j - 1] == '\r' || line[j - 1] == '\n'
                          || line[j - 1] == ' '); --j)
        ;
    if (j - i >= outlen)
        j = i + outlen - 1;
    memcpy(out, line + i, j - i);
    out[j - i] = '\0';
    return 1;
}

/* Records ETag, Last-Modified and Date of the final response. */
static size_t on_header(char *data, size_t size, size_t nmemb, void *baton)
{
    fetch_ctx_t *ctx = baton;
    size_t n = size * nmemb;

    if (n > 5 && !strncmp(data, "HTTP/", 5)) { /* a new response (redirect) */
        memset(&ctx->seen, 0, sizeof(ctx->seen));
        ctx->date[0] = '\0';
    }
    else if (!header_value(data, n, "ETag", ctx->seen.etag,
                           sizeof(ctx->seen.etag))
             && !header_value(data, n, "Last-Modified",
                              ctx->seen.last_modified,
                              sizeof(ctx->seen.last_modified)))
        header_value(data, n, "Date", ctx->date, sizeof(ctx->date));
    return n;
}

/*
 * Copies into *v the validators of the response in ctx that may be sent
 * back (hl_validator_usable): a Last-Modified from the same second as the
 * response's Date, or an ETag beside it, is weak and left out, so the next
 * fetch is unconditional and the reloader compares the document's digest
 * instead (an edit within that second is never hidden by a 304). Logs what
 * it left out at debug level (HL01250).
 */
static void keep_strong(apr_pool_t *p, const char *url, const fetch_ctx_t *ctx,
                        hl_fetch_validators_t *v)
{
    hl_validator_use_t use;

    hl_validator_usable(ctx->seen.etag, ctx->seen.last_modified, ctx->date,
                        &use);
    *v = ctx->seen;
    if (!use.etag)
        v->etag[0] = '\0';
    if (!use.last_modified)
        v->last_modified[0] = '\0';
    if ((ctx->seen.etag[0] && !use.etag)
        || (ctx->seen.last_modified[0] && !use.last_modified))
        ap_log_perror(APLOG_MARK, APLOG_DEBUG, 0, p,
                      "HL01250: quota table %s: weak validators not sent "
                      "back (ETag '%s', Last-Modified '%s', Date '%s'): the "
                      "next fetch is unconditional", url, ctx->seen.etag,
                      ctx->seen.last_modified, ctx->date);
}

/* Returns a one-line explanation of a failed transfer, from pool p. */
static const char *describe_error(apr_pool_t *p, CURLcode rc, const char *detail,
                                  const fetch_ctx_t *ctx, int timeout_s)
{
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
        return apr_psprintf(p, "DNS: cannot resolve host (%s)", detail);
    case CURLE_COULDNT_CONNECT:
        return apr_psprintf(p, "connect failed (%s)", detail);
    case CURLE_OPERATION_TIMEDOUT:
        return apr_psprintf(p, "timed out after %d s (%s)", timeout_s, detail);
    case CURLE_WRITE_ERROR:
    case CURLE_FILESIZE_EXCEEDED:
        if (ctx->too_large || rc == CURLE_FILESIZE_EXCEEDED)
            return apr_psprintf(p, "document larger than %" APR_SIZE_T_FMT
                                " bytes", ctx->max);
        break;
    default:
        break;
    }
    return apr_psprintf(p, "%s (%s)", curl_easy_strerror(rc), detail);
}

/* Returns 1 if status is a redirect that carries a Location. */
static int is_redirect(long status)
{
    return status == 301 || status == 302 || status == 303 || status == 307
           || status == 308;
}

/*
 * Writes the origin of url, "scheme://host:port" with the scheme's default
 * port made explicit and scheme and host in lower case, into *origin (from
 * p) and the scheme into *scheme. Returns 0, or -1 when url does not parse.
 */
static int url_origin(apr_pool_t *p, const char *url, const char **origin,
                      const char **scheme)
{
    CURLU *u = curl_url();
    char *sch = NULL, *host = NULL, *port = NULL, *lower;
    int rc = -1;

    if (u != NULL && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK
        && curl_url_get(u, CURLUPART_SCHEME, &sch, 0) == CURLUE_OK
        && curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK
        && curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT)
           == CURLUE_OK) {
        lower = apr_pstrdup(p, sch);
        ap_str_tolower(lower);
        *scheme = lower;
        lower = apr_pstrcat(p, lower, "://", host, ":", port, NULL);
        ap_str_tolower(lower);
        *origin = lower;
        rc = 0;
    }
    curl_free(sch);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return rc;
}

/*
 * Checks that a redirect from url (the configured one) to target stays in
 * url's origin. Returns NULL when it may be followed, else a one-line
 * reason from p.
 */
static const char *refuse_redirect(apr_pool_t *p, const char *url,
                                   const char *target)
{
    const char *from, *to, *from_scheme, *to_scheme;

    if (url_origin(p, url, &from, &from_scheme) != 0
        || url_origin(p, target, &to, &to_scheme) != 0)
        return apr_psprintf(p, "redirect to '%s' refused: not a valid URL",
                            target);
    if (!strcmp(from_scheme, "https") && strcmp(to_scheme, "https"))
        return apr_psprintf(p, "redirect to '%s' refused: it downgrades "
                            "https to %s", target, to_scheme);
    if (strcmp(from, to))
        return apr_psprintf(p, "redirect to '%s' refused: another origin "
                            "than %s (only same-origin redirects are "
                            "followed)", target, from);
    return NULL;
}

/*
 * Fetches url with a whole-transfer timeout of timeout_s seconds (for all
 * hops together) and at most max_size bytes, conditionally on *v, following
 * up to HL_FETCH_MAX_REDIRECTS same-origin redirects (HL00501 for one
 * refused). See mod_hotlimit_fetch.h for the results; everything is from p.
 */
apr_status_t hl_fetch_url(apr_pool_t *p, const char *url, int timeout_s,
                          apr_size_t max_size, hl_fetch_validators_t *v,
                          hl_fetch_result_t *res)
{
    fetch_ctx_t ctx;
    char errbuf[CURL_ERROR_SIZE] = "";
    struct curl_slist *hdrs = NULL;
    const char *at = url, *refused = NULL;
    char *location = NULL;
    CURL *curl;
    CURLcode rc;
    long status = 0;
    int hops = 0;

    memset(res, 0, sizeof(*res));
    memset(&ctx, 0, sizeof(ctx));
    ctx.max = max_size;
    curl = curl_easy_init();
    if (!curl) {
        res->error = "cannot create a curl handle";
        return APR_ENOMEM;
    }
    if (v->etag[0])
        hdrs = curl_slist_append(hdrs, apr_pstrcat(p, "If-None-Match: ",
                                                   v->etag, NULL));
    if (v->last_modified[0])
        hdrs = curl_slist_append(hdrs, apr_pstrcat(p, "If-Modified-Since: ",
                                                   v->last_modified, NULL));
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)timeout_s * 1000L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_s * 1000L);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max_size);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "mod_hotlimit");
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &ctx);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &ctx);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);

    for (;;) {
        /* A fresh body per hop: a redirect's own body is not the table. */
        hl_buf_init(&ctx.body, p, 16384);
        memset(&ctx.seen, 0, sizeof(ctx.seen));
        curl_easy_setopt(curl, CURLOPT_URL, at);
        rc = curl_easy_perform(curl);
        status = 0;
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
        if (rc != CURLE_OK || !is_redirect(status))
            break;
        location = NULL;
        curl_easy_getinfo(curl, CURLINFO_REDIRECT_URL, &location);
        if (!location)
            break;              /* no Location: an HTTP status error below */
        if (++hops > HL_FETCH_MAX_REDIRECTS) {
            refused = apr_psprintf(p, "more than %d redirects (the last to "
                                   "'%s')", HL_FETCH_MAX_REDIRECTS, location);
            break;
        }
        refused = refuse_redirect(p, url, location);
        if (refused) {
            ap_log_perror(APLOG_MARK, APLOG_WARNING, 0, p,
                          "HL00501: quota table %s: %s", url, refused);
            break;
        }
        /* location belongs to the handle until the next transfer. */
        at = apr_pstrdup(p, location);
    }
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(curl);

    res->http_status = status;
    if (rc != CURLE_OK) {
        res->error = describe_error(p, rc, errbuf[0] ? errbuf : "no detail",
                                    &ctx, timeout_s);
        return APR_EGENERAL;
    }
    if (refused) {
        res->error = refused;
        return APR_EGENERAL;
    }
    if (status == 304) {
        res->not_modified = 1;
        return APR_SUCCESS;
    }
    if (status != 200) {
        res->error = apr_psprintf(p, "HTTP status %ld%s", status,
                                  is_redirect(status) ? " without a Location"
                                                      : "");
        return APR_EGENERAL;
    }
    res->body = ctx.body.s;
    res->len = ctx.body.len;
    keep_strong(p, url, &ctx, v);
    return APR_SUCCESS;
}
