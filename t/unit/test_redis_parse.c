/* test_redis_parse.c - the Redis store's reply, one string of integers
 * (hl_redis_call_parse): what the script writes is read back exactly,
 * anything else is refused whole. */
#include <stdio.h>
#include <string.h>
#include "hl_tap.h"
#include "hl_redis_call.h"

/* Returns what hl_redis_call_parse answers for the C string s, with room
 * for 9 numbers. */
static long parse(const char *s, long long *el)
{
    return hl_redis_call_parse(s, strlen(s), el, 9);
}

/* Texts refused, and why. */
static const char *const refused[][2] = {
    { "", "empty" },
    { "1  2", "two spaces" },
    { " 1", "a leading space" },
    { "1 ", "a trailing space" },
    { "1 2x", "a stray character" },
    { "1 -", "a sign without digits" },
    { "1 +2", "a plus sign" },
    { "1\r\n2", "a line break" },
    { "1.5", "a fraction" },
    { "1 1e3", "an exponent" },
    { "9223372036854775808", "19 digits: refused, not wrapped" },
    { "1234567890123456789", "19 digits below 2^63 too" },
};

int main(void)
{
    long long el[HL_REDIS_REPLY_MAX];
    size_t i;
    char text[64];
    long n;

    /* One decision of one window: admitted, lease, lease ms, then admit,
     * remaining, reset, retry, a gcra mark (a TAT in microseconds: 16
     * digits, past a double's 14 of tostring), held. */
    n = parse("1 0 0 1 41 60000 0 1733232000123456 0", el);
    is_int(n, 9, "nine numbers");
    ok(el[0] == 1 && el[1] == 0 && el[4] == 41 && el[5] == 60000,
       "each number in its place");
    ok(el[7] == 1733232000123456LL, "a 16-digit mark exactly");
    n = parse("0 -5 -1733232000123 7", el);
    ok(n == 4 && el[1] == -5 && el[2] == -1733232000123LL && el[3] == 7,
       "negative numbers");
    ok(parse("0", el) == 1 && el[0] == 0, "one number");
    ok(parse("999999999999999999", el) == 1 && el[0] == 999999999999999999LL,
       "18 digits read");

    /* Refused whole: not a reply of the script's. */
    for (i = 0; i < sizeof(refused) / sizeof(refused[0]); ++i)
        is_int(parse(refused[i][0], el), -1, refused[i][1]);
    is_int(parse("1 2 3 4 5 6 7 8 9 10", el), -1, "more numbers than room");
    is_int(parse("1 2 3 4 5 6 7 8 9", el), 9, "exactly the room");
    /* A length that stops inside the text reads only that part. */
    snprintf(text, sizeof(text), "12 34 56");
    n = hl_redis_call_parse(text, 5, el, 8);
    ok(n == 2 && el[0] == 12 && el[1] == 34, "reads len bytes, no NUL needed");
    n = hl_redis_call_parse(text, 3, el, 8);
    is_int(n, -1, "a cut after a space");
    return done_testing();
}
