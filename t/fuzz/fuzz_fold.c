/*
 * fuzz_fold.c - libFuzzer target for the key forms of issue 25:
 * hl_keyform_fold (hl_keyform.c, hl_phone.c) under every norm= and
 * country code, and hl_json_num_php (hl_json_num.c). The value is copied
 * into a malloc'ed buffer of its exact size and the form written into
 * one of exactly n + HL_KEYFORM_ROOM bytes, so ASan catches any access
 * past either; the checks below abort on a broken invariant.
 *
 * Layout: byte 0 picks the norm (its low 2 bits: lower, digits, email,
 * exact), header or not (bit 2) and the country code (the other bits: 0,
 * or one of those digits:CC knows); the rest is the value.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hl_keyform.h"
#include "hl_json_num.h"

#define CHECK(cond) do { \
    if (!(cond)) { \
        fprintf(stderr, "fuzz_fold: check failed at line %d: %s\n", \
                __LINE__, #cond); \
        abort(); \
    } \
} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const unsigned ccs[] = { 0, 1, 7, 33, 39, 44, 49, 61, 86, 91 };
    char *v, *out, num[HL_JSON_NUM_MAX];
    hl_norm_t norm;
    unsigned cc;
    size_t n, len;

    if (size == 0)
        return 0;
    norm = (hl_norm_t)(data[0] & 3);
    cc = norm == HL_NORM_DIGITS ? ccs[(data[0] >> 3) % 10] : 0;
    n = size - 1;
    v = malloc(n ? n : 1);
    out = malloc(n + HL_KEYFORM_ROOM);
    CHECK(v && out);
    memcpy(v, data + 1, n);
    len = hl_keyform_fold(norm, cc, (data[0] >> 2) & 1, out, v, n);
    CHECK(len < n + HL_KEYFORM_ROOM && out[len] == '\0');
    if (norm == HL_NORM_DIGITS && len > 0) {
        size_t i;
        for (i = out[0] == '+'; i < len; i++)
            CHECK(out[i] >= '0' && out[i] <= '9');
    }
    len = hl_json_num_php(num, v, n);
    CHECK(len < HL_JSON_NUM_MAX && num[len] == '\0');
    free(v);
    free(out);
    return 0;
}
