/*
 * mod_hotlimit_key.h - the key room: who the client of a request is and
 * the counter key a quota counts it under. The decision
 * (mod_hotlimit_access.c), HotLimitConcurrency (mod_hotlimit_conc.c) and
 * the status page's account lookup (mod_hotlimit_status_snap.c) all key
 * through here, so one request gets the same key from each.
 *
 * A counter key is "host:port" + scope + "|" + client part
 * (hl_slotkey.h); the client part is the address (hl_client_parse), "*"
 * for by=global, an account value folded by norm= and hashed under the
 * server's secret ("h:" and 16 hex digits, hl_keyform_hashed), or for
 * by=A+B the parts' client parts joined by '+' ("1.2.3.4+p:...").
 */
#ifndef MOD_HOTLIMIT_KEY_H
#define MOD_HOTLIMIT_KEY_H

#include <string.h>

#include "httpd.h"
#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_table.h"
#include "mod_hotlimit_upgrade.h"
#include "hl_cidr.h"
#include "hl_limiter.h"
#include "hl_quota.h"

#define HL_LAST_COUNTER_KEY_MAX 256  /* longest counter key kept */

/* The counter a connection keeps for its client: the key, slot keys
 * (refs) and stripe of the last counter the store prepared for it. The
 * store's prepare reads only the key, its origin and the number of windows
 * (hl_store.h), so a later match with the same key text and origin, and
 * no more windows, has the same slot keys, hashes and stripe. A directive
 * quota of the configuration files keyed by the client address is also
 * found by its address (dq), which skips building the key. */
typedef struct {
    const hl_dir_quota_t   *dq;    /* NULL: not found by address */
    const hl_server_conf_t *sc;    /* the key starts with its tag */
    size_t        key_len;         /* 0: nothing kept */
    char          key[HL_LAST_COUNTER_KEY_MAX];
    hl_origin_t   origin;
    int           nwindows;
    unsigned      stripe;
    hl_slot_ref_t refs[HL_MAX_WINDOWS];
} hl_last_counter_t;

/* The client address of a connection, parsed once: keep-alive requests
 * (and, behind mod_remoteip, requests for the same client) reuse it. */
typedef struct {
    int       from_conn;           /* made from c->client_ip itself */
    char      ip[64];              /* the useragent_ip it was made from */
    int       ok;                  /* 1 if ip parsed */
    hl_cidr_t addr;
    size_t    key_len;
    char      key[HL_KEY_MAX + 1]; /* the by=ip client key */
    hl_upgrade_note_t *upgrade;    /* what an h2c upgrade request was
                                      counted under, for its HTTP/2 replay */
    hl_last_counter_t last_counter; /* this client's counter last prepared */
    int       switched;            /* nothing is kept at this request:
                                      the client changed at it, or is one
                                      a proxy names, first seen on this
                                      connection (hl_key_client_of) */
    int       fresh;               /* 1: limit_request keeps it as this
                                      thread's last client */
    int       table_kept;          /* 1: table_hit is the table's answer
                                      for this client and table_uri */
    uint32_t  table_version;       /* hl_table_version it was found at */
    char      table_uri[HL_ROUTE_MAX];
    hl_table_hit_t table_hit;
} hl_client_t;

/* Returns the parsed client address of r, cached on its connection (from
 * the connection's pool; a connection from the address this thread saw
 * last reuses its parse and kept counter). Never NULL; ->ok is 0 when it
 * does not parse. */
hl_client_t *hl_key_client_of(request_rec *r, const hl_server_conf_t *sc);

/* Keeps client cl (->fresh), whose key was made for server sc and whose
 * counter was just decided, whole as this thread's last client, if that
 * is still its address. Never fails. */
void hl_key_client_keep(const hl_client_t *cl, const hl_server_conf_t *sc);

/* Returns 1 if address ip is in server sc's HotLimitExempt list (which
 * it has), else 0. Reads only. */
int hl_key_in_exempt_list(const hl_server_conf_t *sc, const hl_cidr_t *ip);

/* Returns 1 if the client of r (address ip, NULL if unparsable) is exempt
 * from every limit: env hotlimit-exempt, or HotLimitExempt. Else 0.
 * Inline: every request asks, and most servers list no address. */
static APR_INLINE int hl_key_client_exempt(request_rec *r,
                                           const hl_server_conf_t *sc,
                                           const hl_cidr_t *ip)
{
    if (apr_table_get(r->subprocess_env, "hotlimit-exempt"))
        return 1;
    return sc->exempt && ip && hl_key_in_exempt_list(sc, ip);
}

/* hl_key_client_part for a quota not keyed by the address alone. */
const char *hl_key_other_part(request_rec *r, const hl_quota_t *q,
                              const hl_client_t *cl, size_t *len,
                              const char **raw, size_t *rawlen);

/* Returns the client part of the key for quota q and sets *len: the
 * address (by=ip, here: the usual quota costs no call), "*" (global), an
 * account value folded and hashed, or a combination (by=A|B, A+B),
 * falling back to the client address (cl's) when the named header,
 * cookie, user or variable is absent (hl_account_client_part). Sets *raw
 * (when not NULL) to the value as the client sent it, before folding, and
 * *rawlen, or to NULL on the fall-back. Allocated from r->pool or the
 * connection's cache; never NULL. */
static inline const char *hl_key_client_part(request_rec *r,
                                             const hl_quota_t *q,
                                             const hl_client_t *cl,
                                             size_t *len, const char **raw,
                                             size_t *rawlen)
{
    if (q->by != HL_BY_IP)
        return hl_key_other_part(r, q, cl, len, raw, rawlen);
    if (raw)
        *raw = NULL;
    *len = cl->key_len;
    return cl->key;
}

/* Account lookup (issue 21, the status page): returns the client part of
 * the key quota q gives a request whose header, cookie, parameter, user or
 * variable (q's by=) carries the n bytes of v: folded by q's norm=, and
 * hashed under the server's secret ("h:", "c:", "p:", "j:", "u:", "e:"
 * and 16 hex digits, hl_secret_hash) as the decision does. Allocated from
 * p. NULL when v is NULL, nothing is left after folding, or q counts by=ip
 * or globally. */
const char *hl_account_client_part(apr_pool_t *p, const hl_quota_t *q,
                                   const char *v, size_t n);

/* Returns the counter key of client (clen bytes) under scope (scope_len
 * bytes) in r's server sc (hl_slotkey_encode: "host:port" + scope + "|" +
 * client), allocated from r->pool in one piece, and its length in *klen.
 * Never fails. */
char *hl_key_counter(request_rec *r, const hl_server_conf_t *sc,
                     const char *scope, size_t scope_len,
                     const char *client, size_t clen, size_t *klen);

/* Returns the counter key prefix (prefix_len bytes: a directive quota's
 * main_key_prefix, rendered at configuration time) + client (clen bytes),
 * allocated from r->pool in one piece, and its length in *klen. Never
 * fails. Inline: a new client's key is built at every request. */
static inline char *hl_key_from_prefix(request_rec *r, const char *prefix,
                                       size_t prefix_len, const char *client,
                                       size_t clen, size_t *klen)
{
    char *key = apr_palloc(r->pool, prefix_len + clen + 1);

    memcpy(key, prefix, prefix_len);
    memcpy(key + prefix_len, client, clen);
    key[prefix_len + clen] = '\0';
    *klen = prefix_len + clen;
    return key;
}

/* Returns the client part of a key for quota q's by= and norm= as the
 * quotas key it (HotLimitConcurrency uses it), parsing r's address apart
 * from the connection's cache; sets *len, and *exempt to 1 when the
 * client is exempt (HotLimitExempt, env hotlimit-exempt). Allocated from
 * r->pool; never NULL. */
const char *hl_key_client_key(request_rec *r, const hl_quota_t *q,
                              size_t *len, int *exempt);

#endif
