/*
 * mod_hotlimit_key.c - the key room (mod_hotlimit_key.h): the client of a
 * request (its address parsed once per connection, and per thread for a
 * client that reconnects), its exemption, the client part a quota's by=
 * and norm= give it, and the counter key built from it.
 */
#include <string.h>

#include "httpd.h"
#include "http_config.h"
#include "http_core.h"
#include "apr_strings.h"

#include "mod_hotlimit_key.h"
#include "mod_hotlimit_body.h"
#include "mod_hotlimit_device.h"
#include "hl_keyform.h"
#include "hl_php.h"
#include "hl_slotkey.h"

APLOG_USE_MODULE(hotlimit);

/* The client a thread last saw open a connection from its own address:
 * a client that opens a connection per request (as ab without -k, or a
 * flood from one address) is found here by its address text, not parsed
 * and its counter's key built and hashed again.
 * Its address is noted at a connection's first request; the second
 * connection of that address in a row keeps its parsed address and the
 * counter it prepares too (whole: full), so a stream of new addresses
 * costs only the note. The pointers are into one configuration: valid
 * while its generation is the same. Each thread has its own. */
typedef struct {
    int           gen;             /* configuration generation + 1; 0: none */
    int           v6_prefix;       /* the key was made with */
    size_t        ip_len;
    char          ip[64];          /* the address text */
    int           full;            /* 1: what follows is filled */
    hl_cidr_t     addr;
    size_t        key_len;
    char          key[HL_KEY_MAX + 1];
    hl_last_counter_t last_counter;
} hl_thread_client_t;
static __thread hl_thread_client_t thread_client;

/* Returns this thread's last client. Not inlined on purpose: in a module
 * (-fPIC) every use of a __thread variable's address would call into the
 * dynamic loader. */
static __attribute__((noinline)) hl_thread_client_t *this_thread_client(void)
{
    return &thread_client;
}

/* Copies the kept counter from into to (only the bytes in use). */
static void copy_last_counter(hl_last_counter_t *to,
                              const hl_last_counter_t *from)
{
    to->dq = from->dq;
    to->sc = from->sc;
    to->key_len = from->key_len;
    if (from->key_len == 0)
        return;
    memcpy(to->key, from->key, from->key_len);
    to->origin = from->origin;
    to->nwindows = from->nwindows;
    to->stripe = from->stripe;
    memcpy(to->refs, from->refs, sizeof(from->refs[0]) * (size_t)from->nwindows);
}

/* Looks up the first client of a new connection, cl (ip already set, len
 * bytes, 0 if too long), in this thread's last client. Returns 1 with cl
 * filled when kept whole; else 0, noting the address (cl->fresh = 1 when
 * it was the last one's: limit_request keeps it whole after deciding). */
static int client_from_thread(hl_client_t *cl, size_t len,
                              const hl_server_conf_t *sc)
{
    hl_thread_client_t *t = this_thread_client();
    int gen = ap_state_query(AP_SQ_CONFIG_GEN) + 1;

    cl->fresh = 0;
    if (len == 0)
        return 0;
    if (t->gen == gen && t->ip_len == len && t->v6_prefix == sc->v6_prefix
        && memcmp(t->ip, cl->ip, len) == 0) {
        if (!t->full) {
            cl->fresh = 1;
            return 0;
        }
        cl->addr = t->addr;
        cl->ok = 1;
        cl->key_len = t->key_len;
        memcpy(cl->key, t->key, t->key_len + 1);
        copy_last_counter(&cl->last_counter, &t->last_counter);
        return 1;
    }
    t->gen = gen;
    t->v6_prefix = sc->v6_prefix;
    t->ip_len = len;
    memcpy(t->ip, cl->ip, len + 1);
    t->full = 0;
    return 0;
}

/* See mod_hotlimit_key.h. */
void hl_key_client_keep(const hl_client_t *cl, const hl_server_conf_t *sc)
{
    hl_thread_client_t *t = this_thread_client();

    if (!cl->ok || t->ip_len >= sizeof(cl->ip)
        || memcmp(t->ip, cl->ip, t->ip_len + 1) != 0)
        return;
    t->v6_prefix = sc->v6_prefix;
    t->addr = cl->addr;
    t->key_len = cl->key_len;
    memcpy(t->key, cl->key, cl->key_len + 1);
    copy_last_counter(&t->last_counter, &cl->last_counter);
    t->full = 1;
}

/* See mod_hotlimit_key.h. */
hl_client_t *hl_key_client_of(request_rec *r, const hl_server_conf_t *sc)
{
    conn_rec *c = r->connection;
    hl_client_t *cl = ap_get_module_config(c->conn_config, &hotlimit_module);
    const char *ip = r->useragent_ip ? r->useragent_ip : "-";
    size_t len;

    /* The connection's own address never changes: no comparison needed. */
    if (cl && cl->from_conn && ip == c->client_ip) {
        cl->switched = 0;
        return cl;
    }
    if (cl && !strcmp(cl->ip, ip)) {
        cl->from_conn = ip == c->client_ip;
        cl->switched = 0;
        return cl;
    }
    len = strlen(ip);
    /* A client a proxy names keeps its counter from its second request on
     * this connection on: most such connections carry one request, or
     * many clients, and keeping would cost each request and serve none. */
    if (!cl) {
        cl = apr_palloc(c->pool, sizeof(*cl));
        cl->upgrade = NULL;
        cl->switched = ip != c->client_ip;
        ap_set_module_config(c->conn_config, &hotlimit_module, cl);
    }
    else
        cl->switched = 1;
    cl->last_counter.dq = NULL;    /* another client: its counters differ */
    cl->last_counter.key_len = 0;
    cl->table_kept = 0;            /* and the table's exempt list may not
                                      say the same of it */
    cl->ip[0] = '\0';
    cl->from_conn = ip == c->client_ip;
    if (len < sizeof(cl->ip))
        memcpy(cl->ip, ip, len + 1);
    else
        len = 0;
    /* A connection's own address (not one a proxy names: its clients
     * change, and its connections stay open) may be the one this thread
     * saw last, reconnecting. */
    cl->fresh = 0;
    if (!cl->switched && cl->from_conn && client_from_thread(cl, len, sc))
        return cl;
    cl->key_len = hl_client_parse(cl->key, ip, sc->v6_prefix, &cl->addr);
    cl->ok = cl->addr.family != 0;
    return cl;
}

/* See mod_hotlimit_key.h. */
int hl_key_in_exempt_list(const hl_server_conf_t *sc, const hl_cidr_t *ip)
{
    int i;

    for (i = 0; i < sc->exempt->nelts; ++i)
        if (hl_cidr_match(&APR_ARRAY_IDX(sc->exempt, i, hl_cidr_t), ip))
            return 1;
    return 0;
}

/* Returns "<prefix>:" and 16 hex digits of the keyed hash of value under
 * the server's secret (hl_secret_hash, hl_keyform_hashed): secrets such
 * as Authorization headers or session cookies never reach shared memory,
 * logs or the status page in clear, and nobody without the secret can
 * pick two values that share a counter. Allocated from p. */
static const char *hashed_value(apr_pool_t *p, char prefix, const char *value,
                                size_t len)
{
    char *out = apr_palloc(p, HL_KEYFORM_HASHED_LEN + 1);

    hl_keyform_hashed(out, prefix, hl_secret_hash(value, len));
    return out;
}

/* Returns the client part of an account value (the n bytes of v) of key
 * kind by under quota q's norm=: folded and hashed (hashed_value), from
 * p. NULL when v is NULL, nothing is left after folding, or by names no
 * account value (ip, global, parts). */
static const char *account_part(apr_pool_t *p, const hl_quota_t *q, hl_by_t by,
                                const char *v, size_t n)
{
    static const char prefix[] = {
        [HL_BY_USER] = 'u', [HL_BY_HEADER] = 'h', [HL_BY_COOKIE] = 'c',
        [HL_BY_ENV] = 'e', [HL_BY_PARAM] = 'p', [HL_BY_JSON] = 'j',
    };
    char *form;
    size_t flen;

    if (!v || (size_t)by >= sizeof(prefix) || !prefix[by])
        return NULL;
    /* Each value is folded by norm= (default lower: "Admin", " admin " and
     * "ADMIN" are one account; a stricter limit when the application tells
     * them apart, never a way around it when it does not). */
    form = apr_palloc(p, n + HL_KEYFORM_ROOM);
    flen = hl_keyform_fold(q->norm, q->norm_cc, by == HL_BY_HEADER, form, v, n);
    if (flen == 0)
        return NULL;
    /* Every value, the user's and the variable's too (a variable may be
     * copied from a header by SetEnvIf), is hashed under the secret. */
    return hashed_value(p, prefix[by], form, flen);
}

/* See mod_hotlimit_key.h. A combination is looked up by its first part
 * that is not the address under A|B (the parts of a combination are
 * folded alike); never under A+B, whose keys hold the address too. */
const char *hl_account_client_part(apr_pool_t *p, const hl_quota_t *q,
                                   const char *v, size_t n)
{
    int i;

    if (q->by != HL_BY_PARTS)
        return account_part(p, q, q->by, v, n);
    if (q->by_join != HL_BY_JOIN_FIRST)
        return NULL;
    for (i = 0; i < q->by_nparts; ++i)
        if (q->by_parts[i].by != HL_BY_IP)
            return account_part(p, q, q->by_parts[i].by, v, n);
    return NULL;
}

/* Returns the value r carries for key kind by named name (a header,
 * cookie, variable, parameter, JSON path; by=user: REMOTE_USER) and its
 * length in *n, or NULL when absent (and for ip, global, parts). From
 * r->pool or r's tables. */
static const char *value_of(request_rec *r, hl_by_t by, const char *name,
                            size_t *n)
{
    const char *v = NULL;

    *n = 0;
    switch (by) {
    case HL_BY_USER:
        v = r->user && *r->user ? r->user : NULL;
        break;
    case HL_BY_HEADER:
        v = apr_table_get(r->headers_in, name);
        break;
    case HL_BY_COOKIE:
        v = apr_table_get(r->headers_in, "Cookie");
        if (v) {
            size_t size = strlen(v) + 1;
            char *val = apr_palloc(r->pool, size);
            long got = hl_cookie_value(val, size, v, name);
            *n = got > 0 ? (size_t)got : 0;
            return got > 0 ? val : NULL;
        }
        return NULL;
    case HL_BY_ENV:
        v = apr_table_get(r->subprocess_env, name);
        break;
    case HL_BY_PARAM: {
        apr_size_t plen = 0;

        v = hl_request_param(r, name, 0, &plen);
        *n = plen;
        return v;
    }
    case HL_BY_JSON: {
        apr_size_t jlen = 0;

        v = hl_request_json(r, name, &jlen);
        *n = jlen;              /* a JSON string may hold a NUL (\u0000) */
        return v;
    }
    default:
        return NULL;
    }
    if (v)
        *n = strlen(v);
    return v;
}

/*
 * Returns the client part of a combined key (q->by HL_BY_PARTS) and sets
 * *len. A|B: the first part r carries, as that part alone would key it
 * (the address when none is present, or at an "ip" part). A+B: every
 * part's client part in order, joined by '+' ("1.2.3.4+p:..."), an absent
 * part keyed as the address, as a lone key would be. *raw (when not NULL)
 * is the value of the account part used (the first present under A+B),
 * for device cookies and HotLimitStatusNames, else NULL. From r->pool, or
 * cl's address key; never NULL.
 */
static const char *parts_client_part(request_rec *r, const hl_quota_t *q,
                                     const hl_client_t *cl, size_t *len,
                                     const char **raw, size_t *rawlen)
{
    const char *part[HL_BY_PARTS_MAX], *v;
    size_t plen[HL_BY_PARTS_MAX], n, total = 0;
    int i, np = q->by_nparts;
    char *out;

    for (i = 0; i < np; ++i) {
        const hl_by_part_t *bp = &q->by_parts[i];

        v = value_of(r, bp->by, bp->name, &n);
        part[i] = account_part(r->pool, q, bp->by, v, n);
        if (part[i] && raw && !*raw) {
            *raw = v;
            *rawlen = n;
        }
        if (q->by_join == HL_BY_JOIN_FIRST && (part[i] || bp->by == HL_BY_IP))
            break;
        if (!part[i])
            part[i] = cl->key;
        plen[i] = part[i] == cl->key ? cl->key_len : strlen(part[i]);
        total += plen[i] + 1;
    }
    if (q->by_join == HL_BY_JOIN_FIRST) {
        if (i < np && part[i]) {
            *len = strlen(part[i]);
            return part[i];
        }
        *len = cl->key_len;
        return cl->key;
    }
    out = apr_palloc(r->pool, total);
    for (i = 0, n = 0; i < np; ++i) {
        if (i)
            out[n++] = HL_BY_JOIN_ALL;
        memcpy(out + n, part[i], plen[i]);
        n += plen[i];
    }
    out[n] = '\0';
    *len = n;
    return out;
}

/* See mod_hotlimit_key.h. */
const char *hl_key_other_part(request_rec *r, const hl_quota_t *q,
                              const hl_client_t *cl, size_t *len,
                              const char **raw, size_t *rawlen)
{
    const char *v, *part;
    size_t n;

    if (raw)
        *raw = NULL;
    if (q->by == HL_BY_GLOBAL) {
        *len = 1;
        return "*";
    }
    if (q->by == HL_BY_PARTS)
        return parts_client_part(r, q, cl, len, raw, rawlen);
    v = value_of(r, q->by, q->by_name, &n);
    part = account_part(r->pool, q, q->by, v, n);
    if (part) {
        if (raw) {
            *raw = v;
            *rawlen = n;
        }
        *len = strlen(part);
        return part;
    }
    *len = cl->key_len;
    return cl->key;
}

/* See mod_hotlimit_key.h. */
char *hl_key_counter(request_rec *r, const hl_server_conf_t *sc,
                     const char *scope, size_t scope_len,
                     const char *client, size_t clen, size_t *klen)
{
    char *key;

    *klen = hl_slotkey_encode(NULL, 0, sc->tag, sc->tag_len, scope,
                              scope_len, client, clen);
    key = apr_palloc(r->pool, *klen + 1);
    hl_slotkey_encode(key, *klen + 1, sc->tag, sc->tag_len, scope, scope_len,
                      client, clen);
    return key;
}

/* See mod_hotlimit_key.h: for HotLimitConcurrency (mod_hotlimit_conc.c). */
const char *hl_key_client_key(request_rec *r, const hl_quota_t *q,
                              size_t *len, int *exempt)
{
    const hl_server_conf_t *sc = ap_get_module_config(r->server->module_config,
                                                      &hotlimit_module);
    const char *ip = r->useragent_ip ? r->useragent_ip : "-";
    /* Parsed apart from the connection's cache, which tells the decision
     * whether the client changed since the last request. */
    hl_client_t *cl = apr_palloc(r->pool, sizeof(*cl));

    cl->key_len = hl_client_parse(cl->key, ip, sc->v6_prefix, &cl->addr);
    cl->ok = cl->addr.family != 0;
    *exempt = hl_key_client_exempt(r, sc, cl->ok ? &cl->addr : NULL);
    return hl_key_client_part(r, q, cl, len, NULL, NULL);
}
