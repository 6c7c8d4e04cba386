/*
 * fuzz_form.c - libFuzzer target for the $_POST readers of hl_php.c.
 * Input: a first line "QUERY", a second line "CONTENT-TYPE", then the body
 * (the rest, binary). The body is copied into a buffer of exactly its
 * length, with no NUL after it, so ASan catches a read past its end; every
 * output buffer is malloc'ed at exactly outlen bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hl_php.h"

#define CHECK(cond) do { \
    if (!(cond)) { \
        fprintf(stderr, "fuzz_form: check failed at line %d: %s\n", \
                __LINE__, #cond); \
        abort(); \
    } \
} while (0)

static const size_t outlens[] = { 2, 3, 8, 64, HL_PHP_KEY_MAX + 8 };
static const char *const names[] = { "do", "email", "a", "d_o", "0" };

/* Returns a malloc'd NUL-terminated copy of s (n bytes). */
static char *dup_n(const uint8_t *s, size_t n)
{
    char *c = malloc(n + 1);

    CHECK(c != NULL);
    memcpy(c, s, n);
    c[n] = '\0';
    return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl1 = memchr(data, '\n', size), *nl2;
    char *query, *ctype, *body, boundary[HL_PHP_BOUNDARY_MAX + 1];
    size_t blen, i, j;
    hl_php_form_t form;

    if (nl1 == NULL)
        return 0;
    nl2 = memchr(nl1 + 1, '\n', size - (size_t)(nl1 + 1 - data));
    if (nl2 == NULL)
        return 0;
    query = dup_n(data, (size_t)(nl1 - data));
    ctype = dup_n(nl1 + 1, (size_t)(nl2 - nl1 - 1));
    blen = size - (size_t)(nl2 + 1 - data);
    body = malloc(blen ? blen : 1);
    CHECK(body != NULL);
    memcpy(body, nl2 + 1, blen);
    form = hl_php_form_type(ctype, boundary, sizeof(boundary));
    CHECK(form != HL_PHP_FORM_MULTIPART
          || strlen(boundary) <= HL_PHP_BOUNDARY_MAX);
    for (i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
        for (j = 0; j < sizeof(outlens) / sizeof(outlens[0]); ++j) {
            char *out = malloc(outlens[j]);
            long n, m;

            CHECK(out != NULL);
            n = hl_php_request_param(out, outlens[j], query, body, blen, form,
                                     boundary, names[i], 1);
            CHECK(n >= -1 && n < (long)outlens[j]);
            CHECK(out[n < 0 ? 0 : n] == '\0');
            m = hl_php_request_param(out, outlens[j], query, body, blen, form,
                                     boundary, names[i], 0);
            CHECK(m == -1 || m == n);
            free(out);
        }
    }
    free(body);
    free(ctype);
    free(query);
    return 0;
}
