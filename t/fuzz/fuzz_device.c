/*
 * fuzz_device.c - libFuzzer target for hl_device.c. The input is split at
 * the first '\n' into a token and an account (without '\n', the whole
 * input is the token and the account is empty); it is copied into a buffer
 * of its exact size, so a read past the token is caught by ASan.
 *
 * Checks: verify never crashes and accepts the input only when it is
 * exactly the token make builds for its expiry; the token made for the
 * account verifies, and not once one of its bytes is changed by the
 * input's first byte.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hl_device.h"

#define CHECK(cond) do { \
    if (!(cond)) { \
        fprintf(stderr, "fuzz_device: check failed at line %d: %s\n", \
                __LINE__, #cond); \
        abort(); \
    } \
} while (0)

static const unsigned char secret[] = "fuzz-secret-fuzz-secret-fuzz-secret!";
#define SLEN (sizeof(secret) - 1)
#define NOW 1700000000
#define SCOPE "|/login|param:user", 18

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t tlen = nl ? (size_t)(nl - data) : size;
    size_t alen = nl ? size - tlen - 1 : 0;
    char *token = malloc(tlen ? tlen : 1), *account = malloc(alen ? alen : 1);
    char made[HL_DEVICE_TOKEN_MAX + 1];
    size_t n;

    if (!token || !account)
        abort();
    memcpy(token, data, tlen);
    if (alen)
        memcpy(account, nl + 1, alen);

    if (hl_device_verify(token, tlen, secret, SLEN, SCOPE, account, alen, NOW)) {
        /* Only a real token passes: the fuzzer cannot forge one. */
        CHECK(tlen <= HL_DEVICE_TOKEN_MAX);
        CHECK(0 && "a token verified that the fuzzer made up");
    }
    n = hl_device_make(made, sizeof(made), secret, SLEN, SCOPE, account, alen,
                       NOW + 1 + (size ? data[0] : 0));
    if (alen <= HL_DEVICE_ACCOUNT_MAX) {
        size_t at;
        CHECK(n > 0 && n <= HL_DEVICE_TOKEN_MAX && strlen(made) == n);
        CHECK(hl_device_verify(made, n, secret, SLEN, SCOPE, account, alen, NOW));
        CHECK(!hl_device_verify(made, n, secret, SLEN, SCOPE, account, alen,
                                NOW + 1 + (size ? data[0] : 0)));
        at = size ? data[size - 1] % n : 0;
        made[at] ^= (char)(size > 1 && data[1] ? data[1] : 1);
        CHECK(!hl_device_verify(made, n, secret, SLEN, SCOPE, account, alen, NOW));
    }
    else
        CHECK(n == 0);
    free(token);
    free(account);
    return 0;
}
