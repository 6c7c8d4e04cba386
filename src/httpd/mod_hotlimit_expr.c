/*
 * mod_hotlimit_expr.c - the ap_expr function hotlimit_param(NAME) (see
 * mod_hotlimit_expr.h).
 */
#include "httpd.h"
#include "ap_expr.h"
#include "apr_strings.h"
#include "mod_hotlimit_body.h"
#include "mod_hotlimit_expr.h"

/* The value of $_REQUEST[arg] for the request being evaluated, an array
 * read as its first key (as param: routes read it: do[login]=x is
 * "login"); "" when it is absent, or outside a request; a NUL byte reads as
 * "%00" (an expression's strings end at a NUL; "\0admin" is no empty
 * name to PHP). The body is read on first use, as for a param: route
 * (HotLimitBodyLimit of the scope evaluated), and handed on unchanged.
 * Allocated from the request's pool. */
static const char *param_func(ap_expr_eval_ctx_t *ctx, const void *data,
                              const char *arg)
{
    request_rec *r = ctx->r;
    apr_size_t len, i, nuls = 0;
    char *v, *out, *o;

    (void)data;
    if (r == NULL || arg == NULL || arg[0] == '\0')
        return "";
    if ((v = hl_request_param(r, arg, 1, &len)) == NULL)
        return "";
    for (i = 0; i < len; ++i)
        nuls += v[i] == '\0';
    if (nuls == 0)
        return v;
    out = o = apr_palloc(r->pool, len + 2 * nuls + 1);
    for (i = 0; i < len; ++i) {
        if (v[i] == '\0') {
            memcpy(o, "%00", 3);
            o += 3;
        } else {
            *o++ = v[i];
        }
    }
    *o = '\0';
    return out;
}

/* Resolves hotlimit_param for the expression parser. Returns OK, DECLINED
 * for other names, or !OK with *parms->err set where the expression may
 * not read request bodies (mod_include's restricted expressions run after
 * the handler has the body). */
static int expr_lookup(ap_expr_lookup_parms *parms)
{
    if (parms->type != AP_EXPR_FUNC_STRING
        || strcasecmp(parms->name, "hotlimit_param") != 0)
        return DECLINED;
    if (parms->flags & AP_EXPR_FLAG_RESTRICTED) {
        *parms->err = "HL00801: hotlimit_param() is not available in a "
                      "restricted expression";
        return !OK;
    }
    *parms->func = (const void *)param_func;
    *parms->data = NULL;
    return OK;
}

void hl_expr_register(void)
{
    ap_hook_expr_lookup(expr_lookup, NULL, NULL, APR_HOOK_MIDDLE);
}
