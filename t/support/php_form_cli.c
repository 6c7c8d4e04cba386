/*
 * php_form_cli.c - prints hl_php_request_param's answer for one request,
 * for t/support/php_form_diff.py. Usage: php_form_cli NAME < INPUT, where
 * INPUT is "QUERY\nCONTENT-TYPE\nBODY". Prints "S:value" (a string),
 * "A:key" (an array: its first key) or "ABSENT". Exits 2 on bad input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hl_php.h"

static char in[1 << 20], out[1 << 20], alt[1 << 20];

int main(int argc, char **argv)
{
    char boundary[HL_PHP_BOUNDARY_MAX + 1], *nl1, *nl2, *body;
    size_t n = fread(in, 1, sizeof(in) - 1, stdin), blen;
    hl_php_form_t form;
    long r, s;

    if (argc != 2 || (nl1 = memchr(in, '\n', n)) == NULL
        || (nl2 = memchr(nl1 + 1, '\n', n - (size_t)(nl1 + 1 - in))) == NULL)
        return 2;
    in[n] = '\0';
    *nl1 = *nl2 = '\0';
    body = nl2 + 1;
    blen = n - (size_t)(body - in);
    form = hl_php_form_type(nl1 + 1, boundary, sizeof(boundary));
    r = hl_php_request_param(out, sizeof(out), *in ? in : NULL, body, blen,
                             form, boundary, argv[1], 1);
    s = hl_php_request_param(alt, sizeof(alt), *in ? in : NULL, body, blen,
                             form, boundary, argv[1], 0);
    if (r < 0) {
        fputs("ABSENT", stdout);
        return 0;
    }
    fputs(s < 0 ? "A:" : "S:", stdout);
    fwrite(out, 1, (size_t)r, stdout);
    return 0;
}
