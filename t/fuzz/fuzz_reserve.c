/*
 * fuzz_reserve.c - libFuzzer target for hl_reserve.c (reserve=max_tokens,
 * issue 25). The body is copied into a malloc'ed buffer of its exact size,
 * so ASan catches any read past it; the checks below abort on a broken
 * invariant.
 *
 * Layout: byte 0 picks a chunk size (plus 1); the rest is the body.
 * Invariants: however the body is cut, the same tokens; never below
 * DEFAULT unless a positive value was read; never above HL_COST_MAX; a
 * larger DEFAULT never gives less; the one-shot reading agrees.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hl_reserve.h"

#define CHECK(cond) do { \
    if (!(cond)) { \
        fprintf(stderr, "fuzz_reserve: check failed at line %d: %s\n", \
                __LINE__, #cond); \
        abort(); \
    } \
} while (0)

/* Returns the tokens body (len bytes) reserves with dflt, fed in pieces
 * of step bytes. */
static uint32_t tokens(const char *body, size_t len, size_t step, uint32_t dflt)
{
    hl_reserve_reader_t rd;
    size_t off;

    hl_reserve_reader_init(&rd);
    for (off = 0; off < len; off += step)
        hl_reserve_reader_feed(&rd, body + off, len - off < step ? len - off : step);
    return hl_reserve_reader_tokens(&rd, dflt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t whole, chunked, bytewise, big, found = 0;
    size_t step, len;
    char *body;
    int sure;

    if (size == 0)
        return 0;
    step = (size_t)data[0] + 1;
    len = size - 1;
    body = malloc(len ? len : 1);
    CHECK(body != NULL);
    memcpy(body, data + 1, len);
    whole = tokens(body, len, len ? len : 1, 1024);
    chunked = tokens(body, len, step, 1024);
    bytewise = tokens(body, len, 1, 1024);
    big = tokens(body, len, step, 100000);
    CHECK(whole == chunked && whole == bytewise);
    CHECK(whole >= 1 && whole <= HL_COST_MAX && big >= whole);
    sure = hl_reserve_find_max_tokens(body, len, &found);
    CHECK(sure ? found == whole && found > 0 : whole >= 1024);
    free(body);
    return 0;
}
