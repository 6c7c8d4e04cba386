/*
 * mod_hotlimit_device.c - device cookies (OWASP "Slow Down Online Guessing
 * Attacks with Device Cookies") in httpd.
 *
 * An account quota (by=param:, user, header:, cookie:) counts every
 * attempt on one account, from whatever address: an attacker who knows
 * the account's name can spend its budget and so lock its owner out. With
 * HotLimitDeviceCookie NAME DURATION in the scope:
 *  - a response that is a success (hl_device_success: below 400, not a
 *    status the quota counts; never under count=all, which cannot tell)
 *    to a request whose account quota found its account (not the
 *    fall-back to the address) sets cookie NAME, a token bound to that
 *    account key
 *    (hl_device.h), through an output filter that runs before the HTTP
 *    header filter, when the handler's final status is known;
 *  - a later request for the same account that carries a valid token is
 *    counted under its own key, the account key + a hash of the token, so
 *    the attempts of other clients on the account never lock it out; a
 *    client without one (or with a forged, expired, other account's or
 *    malformed token) stays on the account's shared key.
 * The HMAC key is read from HotLimitSecretFile at configuration time, or
 * generated once into DefaultRuntimeDir in the parent's post_config and
 * kept there (0600) across restarts; children inherit it by fork.
 */
#include <string.h>

#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "http_ssl.h"
#include "util_filter.h"
#include "apr_file_info.h"
#include "apr_file_io.h"
#include "apr_general.h"
#include "apr_strings.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_device.h"
#include "mod_hotlimit_stores.h"
#include "hl_device.h"
#include "hl_quota_by.h"
#include "hl_quota_text.h"
#include "hl_hash.h"
#include "hl_php.h"
#include "hl_siphash.h"
#include "hl_clock.h"

APLOG_USE_MODULE(hotlimit);

#define SECRET_NAME  "hotlimit-device.secret"  /* in DefaultRuntimeDir */
#define NOTE_KEY     "hotlimit-device"         /* client request's pool */
#define FILTER_NAME  "HOTLIMIT_DEVICE"

/* The generated key (post_config, parent): children inherit it. */
static unsigned char generated[HL_DEVICE_SECRET_MAX];
static size_t generated_len;

/* The key of the keyed hash of client-sent key values, derived from the
 * main server's secret in post_config (parent): children inherit it. */
static hl_siphash_key_t value_key;

static ap_filter_rec_t *filter_handle;

/* The account a successful response earns a cookie for: on the client
 * request's pool, written at the decision, read by the filter. */
typedef struct {
    const char *name;          /* cookie name */
    int         max_age;       /* seconds */
    const char *scope;         /* the quota the token binds (bind_scope) */
    size_t      scope_len;
    const char *account;       /* the account value as sent, bound too */
    size_t      account_len;
    hl_quota_t  quota;         /* the account quota: what success means */
    int         issued;        /* 1 once set on a response */
} hl_device_note_t;

/* Reads the key file path (at least HL_DEVICE_SECRET_MIN bytes, at most
 * HL_DEVICE_SECRET_MAX) into *out (allocated from p) and sets *len.
 * Returns NULL, or why not (allocated from p). */
static const char *read_secret(apr_pool_t *p, const char *path,
                               unsigned char **out, size_t *len)
{
    apr_finfo_t fi;
    apr_file_t *f;
    apr_size_t got = 0;
    apr_status_t rv;
    char err[128];

    rv = apr_stat(&fi, path, APR_FINFO_TYPE | APR_FINFO_SIZE, p);
    if (rv != APR_SUCCESS)
        return apr_psprintf(p, "cannot read '%s': %s", path,
                            apr_strerror(rv, err, sizeof(err)));
    if (fi.filetype != APR_REG)
        return apr_psprintf(p, "'%s' is not a regular file", path);
    if (fi.size < HL_DEVICE_SECRET_MIN || fi.size > HL_DEVICE_SECRET_MAX)
        return apr_psprintf(p, "'%s' holds %" APR_OFF_T_FMT " bytes: a key "
                            "of %d to %d bytes is needed (e.g. head -c 32 "
                            "/dev/urandom > FILE)", path, fi.size,
                            HL_DEVICE_SECRET_MIN, HL_DEVICE_SECRET_MAX);
    *out = apr_palloc(p, (apr_size_t)fi.size);
    rv = apr_file_open(&f, path, APR_FOPEN_READ | APR_FOPEN_BINARY, 0, p);
    if (rv == APR_SUCCESS) {
        rv = apr_file_read_full(f, *out, (apr_size_t)fi.size, &got);
        apr_file_close(f);
    }
    if (rv != APR_SUCCESS || got < HL_DEVICE_SECRET_MIN)
        return apr_psprintf(p, "cannot read '%s': %s", path,
                            rv != APR_SUCCESS ? apr_strerror(rv, err, sizeof(err))
                                              : "short read");
    *len = got;
    return NULL;
}

/* Returns 1 if every user may read the file at path, else 0 (also when
 * it cannot be looked at). */
static int world_readable(apr_pool_t *p, const char *path)
{
    apr_finfo_t fi;

    return apr_stat(&fi, path, APR_FINFO_PROT, p) == APR_SUCCESS
           && (fi.protection & APR_FPROT_WREAD);
}

const char *hl_device_set_cookie(cmd_parms *cmd, void *dconf,
                                 const char *name, const char *duration)
{
    hl_dir_conf_t *dc = dconf;
    char err[HL_ERR_MAX];
    uint32_t secs;

    if (!hl_device_valid_name(name))
        return apr_psprintf(cmd->pool, "%s: bad cookie name '%s' (1 to %d "
                            "token characters)", cmd->cmd->name, name,
                            HL_DEVICE_NAME_MAX - 1);
    if (hl_device_parse_max_age(duration, &secs, err, sizeof(err)) != 0)
        return apr_psprintf(cmd->pool, "%s: %s", cmd->cmd->name, err);
    dc->device_name = apr_pstrdup(cmd->pool, name);
    dc->device_max_age = (int)secs;
    return NULL;
}

const char *hl_device_set_secret_file(cmd_parms *cmd, void *dconf,
                                      const char *path)
{
    hl_server_conf_t *sc = ap_get_module_config(cmd->server->module_config,
                                                &hotlimit_module);
    const char *full = ap_server_root_relative(cmd->pool, path), *why;
    unsigned char *key = NULL;
    size_t len = 0;
    (void)dconf;

    if (!full)
        return apr_psprintf(cmd->pool, "%s: bad path '%s'", cmd->cmd->name, path);
    why = read_secret(cmd->pool, full, &key, &len);
    if (why)
        return apr_psprintf(cmd->pool, "%s: %s", cmd->cmd->name, why);
    if (world_readable(cmd->pool, full))
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, cmd->server,
                     "HL01356: %s: '%s' is readable by every user: anyone "
                     "who reads it can make device cookies (chmod 600)",
                     cmd->cmd->name, full);
    sc->device_secret = key;
    sc->device_secret_len = len;
    return NULL;
}

/* Makes a new key and stores it at path (through a temporary file and a
 * rename, mode 0600). Returns APR_SUCCESS (the key in generated), or the
 * error; on a storage error the new key is still in generated. */
static apr_status_t make_secret(apr_pool_t *p, const char *path)
{
    const char *tmp = apr_pstrcat(p, path, ".new", NULL);
    apr_file_t *f;
    apr_status_t rv;

    rv = apr_generate_random_bytes(generated, HL_DEVICE_SECRET_MIN);
    if (rv != APR_SUCCESS)
        return rv;
    generated_len = HL_DEVICE_SECRET_MIN;
    rv = apr_file_open(&f, tmp, APR_FOPEN_WRITE | APR_FOPEN_CREATE
                       | APR_FOPEN_TRUNCATE | APR_FOPEN_BINARY,
                       APR_FPROT_UREAD | APR_FPROT_UWRITE, p);
    if (rv == APR_SUCCESS) {
        rv = apr_file_write_full(f, generated, generated_len, NULL);
        if (rv == APR_SUCCESS)
            rv = apr_file_flush(f);
        apr_file_close(f);
    }
    if (rv == APR_SUCCESS)
        rv = apr_file_rename(tmp, path, p);
    if (rv != APR_SUCCESS)
        apr_file_remove(tmp, p);
    return rv;
}

/* Returns 1 if some virtual host of s has a HotLimitSecretFile of its
 * own (not the main server's, which they inherit), else 0. */
static int vhost_has_own_secret(server_rec *s)
{
    const hl_server_conf_t *main_sc = ap_get_module_config(s->module_config,
                                                           &hotlimit_module);
    server_rec *v;

    for (v = s->next; v; v = v->next) {
        const hl_server_conf_t *sc = ap_get_module_config(v->module_config,
                                                          &hotlimit_module);
        if (sc->device_secret && sc->device_secret != main_sc->device_secret)
            return 1;
    }
    return 0;
}

/* Loads the generated secret from path into generated, or makes and
 * stores it there, logging what happened for server s. Never fails: a
 * secret that cannot be made leaves generated_len 0. */
static void load_generated(apr_pool_t *pconf, server_rec *s, const char *path)
{
    unsigned char *key = NULL;
    size_t len = 0;
    apr_status_t rv;

    if (!read_secret(pconf, path, &key, &len)) {
        memcpy(generated, key, len);     /* read_secret: at most
                                            HL_DEVICE_SECRET_MAX */
        generated_len = len;
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, s,
                     "HL01355: device cookies: secret read from %s", path);
        return;
    }
    rv = make_secret(pconf, path);
    /* No secret was kept at path (first start, or the file was lost):
     * device cookies signed by an earlier generated secret are not valid
     * any more, and account keys hashed under it (2.1) start anew. The
     * main server has no HotLimitSecretFile here (hl_device_post_config);
     * virtual hosts with their own keep theirs. */
    if (rv == APR_SUCCESS)
        ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, s,
                     "HL01350: no HotLimitSecretFile: generated a new secret "
                     "in %s (none was kept there); device cookies signed by "
                     "an earlier generated secret are no longer valid and "
                     "account counters keyed under it start anew%s", path,
                     vhost_has_own_secret(s)
                         ? " (virtual hosts with their own HotLimitSecretFile "
                           "keep theirs)" : "");
    else if (generated_len)
        ap_log_error(APLOG_MARK, APLOG_WARNING, rv, s,
                     "HL01351: device cookies: cannot store the secret in %s; "
                     "using one kept in memory until the next restart", path);
    else
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s,
                     "HL01352: device cookies: cannot make a secret; device "
                     "cookies are off unless HotLimitSecretFile is set");
}

/* Derives value_key from secret (slen bytes), or, with none, from random
 * bytes kept until the next restart (counters of client-sent keys do not
 * outlive it then), logging that for server s. Never fails. */
static void derive_value_key(server_rec *s, const unsigned char *secret,
                             size_t slen)
{
    unsigned char bytes[HL_DEVICE_VALUE_KEY];

    if (!secret || hl_device_value_key(bytes, secret, slen) != 0) {
        if (apr_generate_random_bytes(bytes, sizeof(bytes)) != APR_SUCCESS)
            memset(bytes, 0, sizeof(bytes));
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s,
                     "HL02051: no server secret: client-sent key values are "
                     "hashed under a key kept in memory until the next "
                     "restart (set HotLimitSecretFile)");
    }
    hl_siphash_key(&value_key, bytes);
    memset(bytes, 0, sizeof(bytes));
}

int hl_device_post_config(apr_pool_t *pconf, server_rec *s)
{
    const hl_server_conf_t *sc = ap_get_module_config(s->module_config,
                                                      &hotlimit_module);
    const char *path = ap_runtime_dir_relative(pconf, SECRET_NAME);

    if (!path)
        path = SECRET_NAME;
    /* Every virtual host without a HotLimitSecretFile of its own inherits
     * the main server's: with one there, no generated secret is used,
     * none is made, and nothing earlier is invalidated. */
    if (sc->device_secret) {
        generated_len = 0;
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, s,
                     "HL02050: the server's secret is HotLimitSecretFile's; "
                     "none is generated");
        derive_value_key(s, sc->device_secret, sc->device_secret_len);
        return OK;
    }
    load_generated(pconf, s, path);
    derive_value_key(s, generated_len ? generated : NULL, generated_len);
    /* A store shared with other servers (it holds concurrency slots for
     * them too) with a secret of this server's own: header, cookie, param
     * and json keys are hashed differently on each server, so those
     * quotas are not shared. Said once per start, at warn. */
    if (sc->store && sc->store->conc_take)
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s,
                     "HL02052: HotLimitStore %s is shared with other servers "
                     "but no HotLimitSecretFile is set: this server hashes "
                     "client-sent key values (header:, cookie:, param:, "
                     "json:, user, env:) under a secret of its own, so "
                     "quotas keyed by them are counted apart on each server; "
                     "give every server sharing the store the same "
                     "HotLimitSecretFile", sc->store->name);
    return OK;
}

uint64_t hl_secret_hash(const void *value, size_t len)
{
    return hl_siphash24(&value_key, value, len);
}

/* Returns the key for server sc and sets *len, or NULL when there is none. */
static const unsigned char *secret_of(const hl_server_conf_t *sc, size_t *len)
{
    if (sc->device_secret) {
        *len = sc->device_secret_len;
        return sc->device_secret;
    }
    *len = generated_len;
    return generated_len ? generated : NULL;
}

/* 1 once this process has taken a note: the thread that takes a
 * request's note is the one that later looks for it, so until then no
 * request of this process has one, and the look costs nothing. */
static int notes_taken;

/* Returns the note of r's client request, or NULL. */
static hl_device_note_t *note_of(request_rec *r)
{
    void *note = NULL;

    if (!notes_taken)
        return NULL;            /* none was ever taken in this process */
    apr_pool_userdata_get(&note, NOTE_KEY, hl_client_request(r)->pool);
    return note;
}

/* Notes, once per client request, that a success of r earns the cookie of
 * scope dc for account (len bytes, as sent) under the quota q bound by
 * bind (blen bytes, bind_scope), when q can tell a success. */
static void take_note(request_rec *r, const hl_dir_conf_t *dc,
                      const hl_quota_t *q, const char *bind, size_t blen,
                      const char *account, size_t len)
{
    request_rec *top = hl_client_request(r);
    hl_device_note_t *note;

    /* A count=all quota cannot tell a success (hl_device_success). */
    if (q->count == HL_COUNT_ALL || len > HL_DEVICE_ACCOUNT_MAX
        || blen > HL_DEVICE_SCOPE_MAX || note_of(r))
        return;
    note = apr_pcalloc(top->pool, sizeof(*note));
    note->name = dc->device_name;
    note->max_age = dc->device_max_age;
    note->scope = apr_pstrmemdup(top->pool, bind, blen);
    note->scope_len = blen;
    note->account = apr_pstrmemdup(top->pool, account, len);
    note->account_len = len;
    note->quota = *q;
    apr_pool_userdata_setn(note, NOTE_KEY, NULL, top->pool);
    notes_taken = 1;
}

/* Returns what a token binds quota q to: the virtual host (sc's tag), the
 * counted scope (scope_len bytes: a section's path, "#N" for its Nth
 * line, or a table route and plan) and the key q counts by, as in
 * "host:80|/login#2|param:user"; sets *len. Allocated from p. */
static const char *bind_scope(apr_pool_t *p, const hl_server_conf_t *sc,
                              const hl_quota_t *q, const char *scope,
                              size_t scope_len, size_t *len)
{
    char by[HL_BY_PARTS_MAX * (HL_BY_NAME_MAX + 8)];
    /* A combination binds its whole by= ("ip+param:log"), the token the
     * account part's value. */
    const char *b = q->by == HL_BY_PARTS
        ? apr_psprintf(p, "%s|%.*s|%s", sc->tag, (int)scope_len, scope,
                       hl_quota_by_text(q, by, sizeof(by)))
        : apr_psprintf(p, "%s|%.*s|%s:%s", sc->tag, (int)scope_len, scope,
                       hl_by_name(q->by), q->by_name);

    *len = strlen(b);
    return b;
}

const char *hl_device_client_part(request_rec *r, const hl_dir_conf_t *dc,
                                  const hl_server_conf_t *sc,
                                  const hl_quota_t *q, const char *scope,
                                  size_t scope_len, const char *value,
                                  size_t vlen, const char *account,
                                  size_t *len)
{
    const unsigned char *secret;
    const char *cookies, *bind;
    char token[HL_DEVICE_TOKEN_MAX + 2], *out;
    size_t slen, blen;
    long n;
    uint64_t h;

    if (!dc->device_name || !hl_device_account_quota(q))
        return account;
    secret = secret_of(sc, &slen);
    if (!secret)
        return account;
    bind = bind_scope(r->pool, sc, q, scope, scope_len, &blen);
    take_note(r, dc, q, bind, blen, value, vlen);
    cookies = apr_table_get(r->headers_in, "Cookie");
    if (!cookies)
        return account;
    /* A value longer than a token is cut to one byte more: refused. */
    n = hl_cookie_value(token, sizeof(token), cookies, dc->device_name);
    if (n <= 0 || !hl_device_verify(token, (size_t)n, secret, slen, bind, blen,
                                    value, vlen, hl_now_ms() / 1000))
        return account;
    /* This browser's own counter for the account: "ACCOUNT+d:" and 16 hex
     * digits of the token's keyed hash (the token itself is not stored). */
    h = hl_secret_hash(token, (size_t)n);
    out = apr_palloc(r->pool, *len + 3 + 16 + 1);
    memcpy(out, account, *len);
    memcpy(out + *len, "+d:", 3);
    hl_hash_hex16(out + *len + 3, h);
    *len += 3 + 16;
    out[*len] = '\0';
    ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r,
                  "HL01353: device cookie %s valid: counted under key %s",
                  dc->device_name, out);
    return out;
}

/* Sets the cookie of note on r's response: a new token for its account,
 * valid for its Max-Age from now. */
static void set_cookie(request_rec *r, hl_device_note_t *note)
{
    const hl_server_conf_t *sc = ap_get_module_config(r->server->module_config,
                                                      &hotlimit_module);
    char token[HL_DEVICE_TOKEN_MAX + 1];
    const unsigned char *secret;
    size_t slen;

    secret = secret_of(sc, &slen);
    if (!secret
        || !hl_device_make(token, sizeof(token), secret, slen, note->scope,
                           note->scope_len, note->account, note->account_len,
                           hl_now_ms() / 1000 + note->max_age))
        return;
    apr_table_addn(r->err_headers_out, "Set-Cookie",
                   apr_psprintf(r->pool, "%s=%s; Path=/; Max-Age=%d; HttpOnly; "
                                "SameSite=Lax%s", note->name, token,
                                note->max_age,
                                ap_ssl_conn_is_ssl(r->connection)
                                    ? "; Secure" : ""));
    note->issued = 1;
    ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r,
                  "HL01354: device cookie %s set for an account under %s "
                  "(status %d)", note->name,
                  ap_escape_logitem(r->pool, note->scope), r->status);
}

/* Returns 1 if a request r was redirected from (ErrorDocument after a
 * refusal, say) ended with an error: an error page is no success, whatever
 * status its own handler gives it. */
static int redirected_from_error(const request_rec *r)
{
    for (r = r->prev; r; r = r->prev)
        if (r->status >= 400)
            return 1;
    return 0;
}

/* The output filter: at the response's first data, before the HTTP header
 * filter sends the headers, the handler's status is final. Removes itself
 * and passes bb on. */
static apr_status_t device_filter(ap_filter_t *f, apr_bucket_brigade *bb)
{
    hl_device_note_t *note = f->ctx;
    request_rec *r = f->r;

    ap_remove_output_filter(f);
    if (!note->issued && hl_device_success(&note->quota, r->status)
        && !redirected_from_error(r))
        set_cookie(r, note);
    return ap_pass_brigade(f->next, bb);
}

/* insert_filter: adds the filter to a served request (not a subrequest)
 * whose client request noted an account. */
static void insert_device_filter(request_rec *r)
{
    hl_device_note_t *note;

    /* No note was ever taken in this process (note_of would say so
     * after a call): the usual request leaves at once. */
    if (!notes_taken || r->main)
        return;
    note = note_of(r);
    if (note && !note->issued)
        ap_add_output_filter_handle(filter_handle, note, r, r->connection);
}

void hl_device_register(void)
{
    filter_handle = ap_register_output_filter(FILTER_NAME, device_filter,
                                              NULL, AP_FTYPE_CONTENT_SET);
    ap_hook_insert_filter(insert_device_filter, NULL, NULL, APR_HOOK_MIDDLE);
}
