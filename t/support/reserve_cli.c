/*
 * reserve_cli.c - prints the max_tokens reserve=max_tokens reads from each
 * of many bodies (hl_reserve_reader_tokens, DEFAULT 1024), for
 * t/support/php_reserve_diff.py. Reads stdin: one body per line, in hex;
 * prints one number per line. Exits 2 on bad input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hl_reserve.h"

static char line[1 << 22], body[1 << 21];

/* Returns the value of hex digit c, or -1. */
static int hex(int c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int main(void)
{
    hl_reserve_reader_t rd;

    while (fgets(line, sizeof(line), stdin)) {
        size_t n = strcspn(line, "\n"), i;

        if (n % 2 || n / 2 > sizeof(body))
            return 2;
        for (i = 0; i < n; i += 2) {
            int hi = hex(line[i]), lo = hex(line[i + 1]);
            if (hi < 0 || lo < 0)
                return 2;
            body[i / 2] = (char)(hi * 16 + lo);
        }
        /* fed in two pieces split in the middle: any split reads alike */
        hl_reserve_reader_init(&rd);
        hl_reserve_reader_feed(&rd, body, n / 4);
        hl_reserve_reader_feed(&rd, body + n / 4, n / 2 - n / 4);
        printf("%u\n", (unsigned)hl_reserve_reader_tokens(&rd, 1024));
    }
    return 0;
}
