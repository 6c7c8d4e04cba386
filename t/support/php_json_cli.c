/*
 * php_json_cli.c - prints what the module keys a JSON body by, for
 * t/support/php_json_diff.py. Reads records from stdin until its end:
 *
 *   body mode  (php_json_cli body):  "PATH\nLEN\n" and LEN bytes of body
 *   value mode (php_json_cli value): "LEN\n" and LEN bytes of a value
 *
 * and prints a line for each: in body mode "S:HEX" (the value at PATH as
 * mod_hotlimit_body.c's read_json gives it: hl_json_path, a number as
 * hl_json_num_php's text) or "ABSENT"; in both modes then, for norm=lower,
 * digits, digits:33, digits:1, email and exact, " HEX" of the folded key
 * (hl_keyform_fold) or " -" when it is empty (the key falls back to the
 * address). Exits 2 on bad input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hl_json_path.h"
#include "hl_json_num.h"
#include "hl_keyform.h"

static const struct { hl_norm_t norm; unsigned cc; } norms[] = {
    { HL_NORM_LOWER, 0 }, { HL_NORM_DIGITS, 0 }, { HL_NORM_DIGITS, 33 },
    { HL_NORM_DIGITS, 1 }, { HL_NORM_EMAIL, 0 }, { HL_NORM_EXACT, 0 }
};

/* Prints the n bytes at s in hex. */
static void hex(const char *s, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        printf("%02x", (unsigned char)s[i]);
}

/* Prints the folded keys of the n bytes of v. */
static void folds(const char *v, size_t n)
{
    char *form = malloc(n + HL_KEYFORM_ROOM);
    size_t i, len;

    for (i = 0; form && i < sizeof(norms) / sizeof(norms[0]); i++) {
        len = hl_keyform_fold(norms[i].norm, norms[i].cc, 0, form, v, n);
        putchar(' ');
        if (len == 0)
            putchar('-');
        hex(form, len);
    }
    free(form);
}

/* Reads a line (without its newline) into buf; returns 0 or -1. */
static int line(char *buf, size_t size)
{
    size_t n;

    if (!fgets(buf, (int)size, stdin))
        return -1;
    n = strlen(buf);
    if (n == 0 || buf[n - 1] != '\n')
        return -1;
    buf[n - 1] = '\0';
    return 0;
}

int main(int argc, char **argv)
{
    char path[HL_JSON_PATH_MAX + 2], num[32], *body, *out, nbuf[HL_JSON_NUM_MAX];
    int body_mode = argc == 2 && strcmp(argv[1], "body") == 0;
    hl_json_path_t s;
    size_t blen;
    long len;

    if (argc != 2 || (!body_mode && strcmp(argv[1], "value") != 0))
        return 2;
    for (;;) {
        if (body_mode && line(path, sizeof(path)) != 0)
            return 0;
        if (line(num, sizeof(num)) != 0)
            return body_mode ? 2 : 0;
        blen = strtoul(num, NULL, 10);
        body = malloc(blen + 1);
        out = malloc(blen + 1);
        if (!body || !out || fread(body, 1, blen, stdin) != blen)
            return 2;
        if (!body_mode) {
            folds(body, blen);
        } else {
            len = -1;
            if (hl_json_path_init(&s, path, out, blen + 1) == 0
                && hl_json_path_feed(&s, body, blen) == 0)
                len = hl_json_path_finish(&s);
            if (len > 0 && s.is_num) {
                len = (long)hl_json_num_php(nbuf, out, (size_t)len);
                memcpy(out, nbuf, (size_t)len + 1);
            }
            if (len < 0) {
                fputs("ABSENT", stdout);
            } else {
                fputs("S:", stdout);
                hex(out, (size_t)len);
                folds(out, (size_t)len);
            }
        }
        putchar('\n');
        free(body);
        free(out);
    }
}
