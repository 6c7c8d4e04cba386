/*
 * mod_hotlimit_device.h - device cookies in httpd (HotLimitDeviceCookie,
 * HotLimitSecretFile): the secret, the device key a valid cookie gives an
 * account quota, and the cookie a successful response sets. The tokens
 * themselves are made and checked by the pure core (hl_device.h).
 *
 * Log tags: HL01350-HL01399.
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
 * post_config (parent, real pass): loads the generated secret from
 * DefaultRuntimeDir, or makes and stores it there (0600) the first time,
 * so children inherit it. Returns OK; a secret that cannot be made or
 * kept is logged (device cookies are then off, or last one run).
 */
int hl_device_post_config(apr_pool_t *pconf, server_rec *s);

/*
 * Returns the client part to count quota q under for r, given the one
 * the module made (account, *len bytes; never the client address: the
 * caller does not ask for by=ip or an absent account): that one, or, when
 * q is keyed by an account, r's scope has a device cookie (dc) and r
 * carries a valid token for this account, the device key
 * "ACCOUNT+d:HASH" (*len updated). Notes the account for the cookie a
 * success will set. Allocated from r->pool; never NULL.
 */
const char *hl_device_client_part(request_rec *r, const hl_dir_conf_t *dc,
                                  const hl_server_conf_t *sc,
                                  const hl_quota_t *q, const char *account,
                                  size_t *len);

/* Registers the output filter that sets the cookie and its insert_filter
 * hook. */
void hl_device_register(void);

#endif
