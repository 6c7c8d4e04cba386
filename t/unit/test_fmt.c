/* test_fmt.c - decimal formatting without stdio. */
#include <stdio.h>
#include <inttypes.h>
#include "hl_tap.h"
#include "hl_fmt.h"

int main(void)
{
    static const uint64_t values[] = {
        0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 12345, 65535, 99999,
        100000, 2000000000, 4294967295ULL, 4294967296ULL, 4294967300ULL,
        10000000000ULL, 429496729600ULL, 18446744073709551615ULL };
    char got[HL_FMT_U64_MAX], want[32], name[64];
    size_t i;
    uint64_t v;
    int mismatches = 0;

    for (i = 0; i < sizeof(values) / sizeof(values[0]); ++i) {
        size_t n = hl_fmt_u64(got, values[i]);
        snprintf(want, sizeof(want), "%" PRIu64, values[i]);
        snprintf(name, sizeof(name), "%s", want);
        is_str(got, want, name);
        is_int(n, strlen(want), "length of the digits");
    }
    /* Every value up to 100000 and a spread of large ones agree with printf. */
    for (v = 0; v <= 100000; ++v) {
        hl_fmt_u64(got, v);
        snprintf(want, sizeof(want), "%" PRIu64, v);
        mismatches += strcmp(got, want) != 0;
    }
    for (v = 1; v < UINT64_MAX / 3; v = v * 3 + 7) {
        hl_fmt_u64(got, v);
        snprintf(want, sizeof(want), "%" PRIu64, v);
        mismatches += strcmp(got, want) != 0;
    }
    is_int(mismatches, 0, "agrees with printf on 100,000 small and 40 large values");
    /* Each count of digits starts and ends where printf says (the digits
     * of a 32-bit value are counted before they are written in place). */
    mismatches = 0;
    for (v = 10; v <= UINT64_MAX / 10; v *= 10) {
        uint64_t around[3] = { v - 1, v, v + 1 };
        int k;

        for (k = 0; k < 3; ++k) {
            size_t n = hl_fmt_u64(got, around[k]);
            snprintf(want, sizeof(want), "%" PRIu64, around[k]);
            mismatches += strcmp(got, want) != 0 || n != strlen(want);
        }
    }
    is_int(mismatches, 0, "agrees with printf around every power of ten");
    {
        static const struct { uint64_t v; const char *s; } g[] = {
            { 0, "0" }, { 999, "999" }, { 1000, "1,000" }, { 1234, "1,234" },
            { 123456, "123,456" }, { 1234567, "1,234,567" },
            { 18446744073709551615ULL, "18,446,744,073,709,551,615" } };
        char out[HL_FMT_GROUPED_MAX];
        for (i = 0; i < sizeof(g) / sizeof(g[0]); ++i) {
            size_t n = hl_fmt_grouped(out, g[i].v);
            is_str(out, g[i].s, "grouped digits");
            is_int(n, strlen(g[i].s), "their length");
        }
    }
    return done_testing();
}
