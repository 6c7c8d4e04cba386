/*
 * mod_hotlimit_device.h - device cookies in httpd (HotLimitDeviceCookie,
 * HotLimitSecretFile): the secret, the device key a valid cookie gives an
 * account quota, and the cookie a successful response sets. The tokens
 * themselves are made and checked by the pure core (hl_device.h).
 *
 * Log tags: HL01350-HL01399, HL02050-HL02099.
 */
#ifndef MOD_HOTLIMIT_DEVICE_H
#define MOD_HOTLIMIT_DEVICE_H

#include "httpd.h"
#include "http_config.h"

#include "mod_hotlimit_conf.h"

/* HotLimitDeviceCookie NAME DURATION (server, directory, .htaccess). */
const char *hl_device_set_cookie(cmd_parms *cmd, void *dconf,
                                 const char *name, const char *duration);

/* HotLimitSecretFile PATH (server): reads the key at once, so a missing,
 * unreadable or short file fails configtest. */
const char *hl_device_set_secret_file(cmd_parms *cmd, void *dconf,
                                      const char *path);

/*
 * post_config (parent, real pass): without a HotLimitSecretFile in the
 * main server, loads the generated secret from DefaultRuntimeDir, or makes
 * and stores it there (0600) the first time; then derives the key of
 * hl_secret_hash from the main server's secret, so children inherit both.
 * Returns OK; a secret that cannot be made or kept is logged (device
 * cookies are then off, or last one run).
 */
int hl_device_post_config(apr_pool_t *pconf, server_rec *s);

/*
 * Returns the client part to count quota q under for r, given the one
 * the module made (account, *len bytes; never the client address: the
 * caller does not ask for by=ip or an absent account) from value (vlen
 * bytes, as the client sent it, before norm= folding) under the counted
 * scope (scope_len bytes: a section's count scope or a table route): that
 * one, or, when q is keyed by an account, r's scope has a device cookie
 * (dc) and r carries a valid token earned under this very quota (server,
 * scope, by=) for this very value, the device key "ACCOUNT+d:HASH" (*len
 * updated). Notes the value and quota for the cookie a success will set.
 * Allocated from r->pool; never NULL.
 */
const char *hl_device_client_part(request_rec *r, const hl_dir_conf_t *dc,
                                  const hl_server_conf_t *sc,
                                  const hl_quota_t *q, const char *scope,
                                  size_t scope_len, const char *value,
                                  size_t vlen, const char *account,
                                  size_t *len);

/*
 * Returns the keyed hash (SipHash-2-4, hl_siphash.h) of the len bytes at
 * value under the key derived from the main server's secret
 * (HotLimitSecretFile, or the generated one): the hash of every
 * client-sent key value (by=header:, cookie:, param:, json:, user, env:),
 * the same in every child and, with the same secret file, on every server
 * sharing a store. Never fails; reads only.
 */
uint64_t hl_secret_hash(const void *value, size_t len);

/* Registers the output filter that sets the cookie and its insert_filter
 * hook. */
void hl_device_register(void);

#endif
