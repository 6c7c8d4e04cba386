/*
 * fuzz_json_path.c - libFuzzer target for hl_json_path.c. The document is
 * copied into a malloc'ed buffer of its exact size, so ASan catches any
 * read past it; the checks below abort on a broken invariant.
 *
 * Layout: byte 0 picks the path (its low 2 bits: phone, user.email, a.b.c,
 * v) and a chunk size (the other bits, plus 1); the rest is the document.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hl_json_path.h"

#define CHECK(cond) do { \
    if (!(cond)) { \
        fprintf(stderr, "fuzz_json_path: check failed at line %d: %s\n", \
                __LINE__, #cond); \
        abort(); \
    } \
} while (0)

#define OUT_BIG   4096
#define OUT_SMALL 5

/* Reads doc for path in chunks of step bytes into out (size bytes).
 * Returns hl_json_path_finish's answer. Checks that feed's answer, once
 * -1, stays -1. */
static long read_doc(const char *path, const char *doc, size_t len,
                     size_t step, char *out, size_t size)
{
    hl_json_path_t s;
    size_t off = 0;
    int invalid = 0;
    long n;

    CHECK(hl_json_path_init(&s, path, out, size) == 0);
    while (off < len) {
        size_t k = len - off < step ? len - off : step;
        int rc = hl_json_path_feed(&s, doc + off, k);

        CHECK(rc == 0 || rc == -1);
        if (invalid)
            CHECK(rc == -1);
        invalid = rc == -1;
        off += k;
    }
    n = hl_json_path_finish(&s);
    CHECK(n >= -1 && n < (long)size);
    if (n >= 0)
        CHECK(out[n] == '\0');
    else
        CHECK(out[0] == '\0');
    if (invalid)
        CHECK(n == -1);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const paths[] = { "phone", "user.email", "a.b.c", "v" };
    static char whole[OUT_BIG], chunked[OUT_BIG], bytewise[OUT_BIG];
    char small[OUT_SMALL];
    const char *path;
    size_t step, len;
    long n_whole, n_chunked, n_bytewise, n_small;
    char *doc;

    if (size == 0)
        return 0;
    path = paths[data[0] & 3];
    step = (size_t)(data[0] >> 2) + 1;
    len = size - 1;
    doc = malloc(len ? len : 1);
    CHECK(doc != NULL);
    memcpy(doc, data + 1, len);

    /* However the document is cut, the answer is the same; a smaller
     * buffer holds its first bytes. */
    n_whole = read_doc(path, doc, len, len ? len : 1, whole, sizeof(whole));
    n_chunked = read_doc(path, doc, len, step, chunked, sizeof(chunked));
    n_bytewise = read_doc(path, doc, len, 1, bytewise, sizeof(bytewise));
    n_small = read_doc(path, doc, len, step, small, sizeof(small));
    CHECK(n_whole == n_chunked && n_whole == n_bytewise);
    if (n_whole >= 0) {
        CHECK(memcmp(whole, chunked, (size_t)n_whole) == 0);
        CHECK(memcmp(whole, bytewise, (size_t)n_whole) == 0);
        CHECK(n_small == (n_whole < OUT_SMALL - 1 ? n_whole : OUT_SMALL - 1));
        CHECK(memcmp(whole, small, (size_t)n_small) == 0);
    } else {
        CHECK(n_small == -1);
    }
    free(doc);
    return 0;
}
