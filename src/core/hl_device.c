/*
 * hl_device.c - device cookie tokens: make, verify, and when a response
 * earns one (see hl_device.h for the format and why it is safe).
 */
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "hl_device.h"
#include "hl_quota_by.h"

#define MAC_BYTES 32

/* Writes the base64url form (no padding) of the n bytes at in into out
 * (room for 4 * n / 3 + 1 bytes); returns its length. */
static size_t base64url(char *out, const unsigned char *in, size_t n)
{
    static const char abc[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t i, o = 0;

    for (i = 0; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o++] = abc[v >> 18 & 63];
        out[o++] = abc[v >> 12 & 63];
        out[o++] = abc[v >> 6 & 63];
        out[o++] = abc[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)in[i] << 16;
        out[o++] = abc[v >> 18 & 63];
        out[o++] = abc[v >> 12 & 63];
    }
    else if (n - i == 2) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
        out[o++] = abc[v >> 18 & 63];
        out[o++] = abc[v >> 12 & 63];
        out[o++] = abc[v >> 6 & 63];
    }
    out[o] = '\0';
    return o;
}

/* Writes the decimal digits of v into out (room for 21 bytes), then a NUL;
 * returns their number. */
static size_t decimal(char *out, uint64_t v)
{
    char tmp[21];
    size_t n = 0, i;

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    for (i = 0; i < n; ++i)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
    return n;
}

size_t hl_device_make(char *out, size_t outlen,
                      const unsigned char *secret, size_t slen,
                      const char *scope, size_t scope_len,
                      const char *account, size_t alen, int64_t expires)
{
    static const int64_t limit = 1000000000000LL;   /* 12 digits */
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int maclen = 0;
    char msg[2 + HL_DEVICE_EXPIRY_DIGITS + 1 + 21 + 1 + HL_DEVICE_SCOPE_MAX
             + HL_DEVICE_ACCOUNT_MAX];
    size_t hlen, mlen;

    if (out && outlen > 0)
        out[0] = '\0';
    if (!out || outlen < HL_DEVICE_TOKEN_MAX + 1 || !secret || slen == 0
        || slen > HL_DEVICE_SECRET_MAX || (!account && alen)
        || (!scope && scope_len) || alen > HL_DEVICE_ACCOUNT_MAX
        || scope_len > HL_DEVICE_SCOPE_MAX || expires <= 0 || expires >= limit)
        return 0;
    /* "2.EXPIRY" is the token's head; the MAC covers it, "|", the scope's
     * length (so no scope and account pair reads as another) and ":",
     * the scope and the account. */
    memcpy(msg, HL_DEVICE_VERSION ".", 2);
    hlen = 2 + decimal(msg + 2, (uint64_t)expires);
    mlen = hlen;
    msg[mlen++] = '|';
    mlen += decimal(msg + mlen, (uint64_t)scope_len);
    msg[mlen++] = ':';
    if (scope_len)
        memcpy(msg + mlen, scope, scope_len);
    mlen += scope_len;
    if (alen)
        memcpy(msg + mlen, account, alen);
    mlen += alen;
    if (!HMAC(EVP_sha256(), secret, (int)slen, (const unsigned char *)msg,
              mlen, mac, &maclen) || maclen != MAC_BYTES)
        return 0;
    memcpy(out, msg, hlen);
    out[hlen] = '.';
    return hlen + 1 + base64url(out + hlen + 1, mac, MAC_BYTES);
}

int hl_device_value_key(unsigned char *out, const unsigned char *secret,
                        size_t slen)
{
    static const char label[] = "hotlimit key values 1";
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int maclen = 0;

    if (!out)
        return -1;
    memset(out, 0, HL_DEVICE_VALUE_KEY);
    if (!secret || slen == 0 || slen > HL_DEVICE_SECRET_MAX
        || !HMAC(EVP_sha256(), secret, (int)slen, (const unsigned char *)label,
                 sizeof(label) - 1, mac, &maclen) || maclen < HL_DEVICE_VALUE_KEY)
        return -1;
    memcpy(out, mac, HL_DEVICE_VALUE_KEY);
    OPENSSL_cleanse(mac, sizeof(mac));
    return 0;
}

/* Returns the expiry a token of len bytes names ("1.EXPIRY.MAC", EXPIRY 1
 * to HL_DEVICE_EXPIRY_DIGITS digits without a leading zero, MAC exactly
 * HL_DEVICE_MAC_CHARS base64url characters), or -1 when it is not shaped
 * so. Reads only. */
static int64_t token_expiry(const char *token, size_t len)
{
    size_t i = 2, digits;
    int64_t expiry = 0;

    if (len < 2 + 1 + 1 + HL_DEVICE_MAC_CHARS || len > HL_DEVICE_TOKEN_MAX
        || memcmp(token, HL_DEVICE_VERSION ".", 2) != 0)
        return -1;
    while (i < len && token[i] >= '0' && token[i] <= '9')
        expiry = expiry * 10 + (token[i++] - '0');
    digits = i - 2;
    if (digits == 0 || digits > HL_DEVICE_EXPIRY_DIGITS || token[2] == '0'
        || i >= len || token[i] != '.' || len - i - 1 != HL_DEVICE_MAC_CHARS)
        return -1;
    return expiry;
}

int hl_device_verify(const char *token, size_t len,
                     const unsigned char *secret, size_t slen,
                     const char *scope, size_t scope_len,
                     const char *account, size_t alen, int64_t now)
{
    char want[HL_DEVICE_TOKEN_MAX + 1];
    int64_t expiry;
    size_t wlen;

    if (!token || !secret || slen == 0)
        return 0;
    expiry = token_expiry(token, len);
    if (expiry <= 0 || expiry <= now)
        return 0;
    wlen = hl_device_make(want, sizeof(want), secret, slen, scope, scope_len,
                          account, alen, expiry);
    /* The lengths are public (the head was parsed from the token); the
     * contents are compared in constant time. */
    return wlen == len && CRYPTO_memcmp(want, token, len) == 0;
}

int hl_device_success(const hl_quota_t *q, int status)
{
    if (q->count == HL_COUNT_ALL || status < 100 || status >= 400)
        return 0;
    return !hl_quota_counts_status(q, status);
}

int hl_device_account_quota(const hl_quota_t *q)
{
    /* Every key but the address, the global bucket and an environment
     * variable names an account (a json: key too, where there is one). */
    return hl_quota_keys_account(q);
}

int hl_device_parse_max_age(const char *s, uint32_t *seconds,
                            char *err, size_t errlen)
{
    uint64_t v = 0, unit = 1;
    const char *p = s;

    if (!s || !*s)
        goto bad;
    while (*p >= '0' && *p <= '9' && v <= HL_DEVICE_MAX_AGE_MAX)
        v = v * 10 + (uint64_t)(*p++ - '0');
    if (p == s)
        goto bad;
    switch (*p) {
    case '\0': break;
    case 's': unit = 1; ++p; break;
    case 'm': unit = 60; ++p; break;
    case 'h': unit = 3600; ++p; break;
    case 'd': unit = 86400; ++p; break;
    default: goto bad;
    }
    if (*p != '\0' || v == 0 || v * unit > HL_DEVICE_MAX_AGE_MAX)
        goto bad;
    *seconds = (uint32_t)(v * unit);
    return 0;
bad:
    if (err && errlen)
        snprintf(err, errlen, "bad cookie lifetime '%s': a whole number of "
                 "s, m, h or d, from 1s to 400d", s ? s : "");
    return -1;
}

int hl_device_valid_name(const char *name)
{
    static const char extra[] = "!#$%&'*+-.^_`|~";
    size_t i;

    if (!name || !*name)
        return 0;
    for (i = 0; name[i]; ++i) {
        unsigned char c = (unsigned char)name[i];
        if (i + 1 >= HL_DEVICE_NAME_MAX)
            return 0;
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z') || (c && strchr(extra, c))))
            return 0;
    }
    return 1;
}
