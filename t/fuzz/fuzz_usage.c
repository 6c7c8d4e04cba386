/*
 * fuzz_usage.c - libFuzzer target for hl_usage.c. The body is copied into
 * a malloc'ed buffer of its exact size, so ASan catches any read past it;
 * the checks below abort on a broken invariant.
 *
 * Layout: byte 0 picks the mode (bit 0: SSE) and a chunk size (the other
 * bits, plus 1); the rest is the response body.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hl_quota.h"
#include "hl_usage.h"

#define CHECK(cond) do { \
    if (!(cond)) { \
        fprintf(stderr, "fuzz_usage: check failed at line %d: %s\n", \
                __LINE__, #cond); \
        abort(); \
    } \
} while (0)

/* Reads body in chunks of step bytes; returns hl_usage_cost's answer and
 * the cost in *cost. Checks that finished, once set, stays set. */
static int read_body(hl_usage_mode_t mode, const char *body, size_t len,
                     size_t step, uint32_t *cost)
{
    hl_usage_t u;
    size_t off = 0;
    int finished = 0, rc;

    hl_usage_init(&u, mode);
    while (off < len) {
        size_t n = len - off < step ? len - off : step;

        hl_usage_feed(&u, body + off, n);
        off += n;
        if (finished)
            CHECK(hl_usage_finished(&u));
        finished = hl_usage_finished(&u);
        if (mode == HL_USAGE_SSE)
            CHECK(!finished);
    }
    *cost = 0;
    rc = hl_usage_cost(&u, cost);
    CHECK(rc >= -1 && rc <= 1);
    CHECK(*cost <= HL_COST_MAX);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hl_usage_mode_t mode;
    size_t step, len;
    uint32_t whole, chunked, bytewise;
    int rc_whole, rc_chunked, rc_bytewise;
    char *body;

    if (size == 0)
        return 0;
    mode = data[0] & 1 ? HL_USAGE_SSE : HL_USAGE_JSON;
    step = (size_t)(data[0] >> 1) + 1;
    len = size - 1;
    body = malloc(len ? len : 1);
    CHECK(body != NULL);
    memcpy(body, data + 1, len);

    /* However the body is cut, the answer is the same. */
    rc_whole = read_body(mode, body, len, len ? len : 1, &whole);
    rc_chunked = read_body(mode, body, len, step, &chunked);
    rc_bytewise = read_body(mode, body, len, 1, &bytewise);
    CHECK(rc_whole == rc_chunked && rc_whole == rc_bytewise);
    if (rc_whole == 1)
        CHECK(whole == chunked && whole == bytewise);
    free(body);
    return 0;
}
