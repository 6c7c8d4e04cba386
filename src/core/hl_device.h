/*
 * hl_device.h - device cookies (HotLimitDeviceCookie): the token a browser
 * earns by one successful login to an account, which lets it count its
 * later attempts on that account under a key of its own instead of the
 * account's shared key (OWASP "device cookies"), so an attacker guessing
 * the account never locks that browser out.
 *
 * A token is "2.EXPIRY.MAC": the format version, the expiry in seconds
 * since the epoch (decimal), and the base64url (no padding) of
 * HMAC-SHA256(secret, "2.EXPIRY|" + LEN + ":" + scope + account), where
 * scope (LEN bytes, in decimal) names the quota the token was earned
 * under (its virtual host, section and line, or table route) and account
 * is the value exactly as the client sent it, before any folding (norm=):
 * a token earned by a login as "ALICE" is worth nothing for "alice", nor
 * one earned in another section here. Nothing secret travels in the
 * token.
 *
 * Pure core: OpenSSL's libcrypto for the HMAC and the constant-time
 * comparison; no httpd headers, no allocation; time is an argument.
 */
#ifndef HL_DEVICE_H
#define HL_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "hl_quota.h"

#define HL_DEVICE_VERSION      "2"  /* "1": bound to the folded key */
#define HL_DEVICE_MAC_CHARS    43   /* base64url of 32 bytes, no padding */
#define HL_DEVICE_EXPIRY_DIGITS 12  /* seconds since the epoch: ample */
/* Longest token: "1." + expiry + "." + MAC. */
#define HL_DEVICE_TOKEN_MAX    (2 + HL_DEVICE_EXPIRY_DIGITS + 1 + HL_DEVICE_MAC_CHARS)
#define HL_DEVICE_SECRET_MIN   32   /* bytes of key, at least */
#define HL_DEVICE_SECRET_MAX   1024 /* bytes of key read from a file, at most */
#define HL_DEVICE_MAX_AGE_MAX  (400 * 86400)  /* browsers cap Max-Age there */
#define HL_DEVICE_NAME_MAX     64   /* cookie name, NUL included */
#define HL_DEVICE_ACCOUNT_MAX  512  /* longest account value a token binds */
#define HL_DEVICE_SCOPE_MAX    1024 /* longest scope a token binds */
#define HL_DEVICE_VALUE_KEY    16   /* bytes of the keyed hash's key */

/*
 * Writes into out (outlen bytes, at least HL_DEVICE_TOKEN_MAX + 1) the
 * NUL-terminated token for account (alen bytes) under scope (scope_len
 * bytes) expiring at expires (seconds since the epoch, 1..10^12-1), made
 * with secret (slen bytes, 1..HL_DEVICE_SECRET_MAX). Returns its length,
 * or 0 (out "" when outlen > 0) on a bad argument, an account longer than
 * HL_DEVICE_ACCOUNT_MAX or a scope longer than HL_DEVICE_SCOPE_MAX, or
 * when the HMAC fails. Owns nothing.
 */
size_t hl_device_make(char *out, size_t outlen,
                      const unsigned char *secret, size_t slen,
                      const char *scope, size_t scope_len,
                      const char *account, size_t alen, int64_t expires);

/*
 * Returns 1 if token (len bytes, not necessarily NUL-terminated) is a
 * token hl_device_make made with secret for account under scope and it
 * has not expired at now (seconds since the epoch); 0 for anything else:
 * another secret, scope or account (another spelling of it too), expired,
 * malformed, truncated, too long, a bad argument. The MAC is compared in
 * constant time. Reads only.
 */
int hl_device_verify(const char *token, size_t len,
                     const unsigned char *secret, size_t slen,
                     const char *scope, size_t scope_len,
                     const char *account, size_t alen, int64_t now);

/*
 * Writes into out (HL_DEVICE_VALUE_KEY bytes) the key of the keyed hash
 * of client-sent key values (hl_siphash.h) derived from secret (slen
 * bytes, 1..HL_DEVICE_SECRET_MAX): the first bytes of
 * HMAC-SHA256(secret, "hotlimit key values 1"), so it reveals nothing of
 * the secret that signs device cookies. Returns 0, or -1 (out zeroed) on
 * a bad argument or when the HMAC fails.
 */
int hl_device_value_key(unsigned char *out, const unsigned char *secret,
                        size_t slen);

/*
 * Returns 1 if a response with final status earns a device cookie under
 * the account quota q: a success, i.e. a status below 400 (one
 * count=failures would not count) that q does not count. Only a quota
 * that says what a failure is (count=failures, count=status:...) can tell:
 * under count=all nothing earns a cookie (an application answering a
 * failed login with 200 would hand one to every guesser). An application
 * that answers a failed login with 200 says count=status:200, and then no
 * 200 earns a cookie. Else 0.
 */
int hl_device_success(const hl_quota_t *q, int status);

/* Returns 1 if quota q is keyed by an account (user, header:, cookie:,
 * param:, json:: anything but ip, global and env:), the quotas a device
 * cookie applies to; else 0. */
int hl_device_account_quota(const hl_quota_t *q);

/*
 * Parses a cookie lifetime: a whole number with unit s, m, h or d ("30d",
 * "12h"), or bare seconds, 1 s up to HL_DEVICE_MAX_AGE_MAX. Returns 0 and
 * sets *seconds, or -1 with a message naming the bad token in err.
 */
int hl_device_parse_max_age(const char *s, uint32_t *seconds,
                            char *err, size_t errlen);

/* Returns 1 if name (NUL-terminated) is a cookie name: 1..63 token
 * characters (RFC 9110 tchar). Else 0. */
int hl_device_valid_name(const char *name);

#endif
