/* test_json_num.c - a JSON number keyed by the text PHP makes of it
 * (issue 25: a JSON number and a string of the same text are one key).
 * The expected texts are php8.2's (string)json_decode(LITERAL). */
#include <string.h>
#include "hl_tap.h"
#include "hl_json_num.h"

static const struct { const char *lit, *php; } cases[] = {
    { "0", "0" },
    { "-0", "0" },
    { "1", "1" },
    { "-1", "-1" },
    { "33612345678", "33612345678" },
    { "9223372036854775807", "9223372036854775807" },
    { "-9223372036854775808", "-9223372036854775808" },
    { "9223372036854775808", "9.2233720368548E+18" },
    { "-9223372036854775809", "-9.2233720368548E+18" },
    { "12345678901234567890123", "1.2345678901235E+22" },
    { "1e3", "1000" },
    { "1E3", "1000" },
    { "1e+3", "1000" },
    { "1.0", "1" },
    { "-0.0", "-0" },
    { "0.0", "0" },
    { "0.1", "0.1" },
    { "0.10", "0.1" },
    { "1.5", "1.5" },
    { "1e14", "1.0E+14" },
    { "1e13", "10000000000000" },
    { "1e15", "1.0E+15" },
    { "123456789012345.0", "1.2345678901234E+14" },
    { "12345678901234.5", "12345678901234" },
    { "1e-4", "0.0001" },
    { "1e-5", "1.0E-5" },
    { "0.00012345678901234567", "0.00012345678901235" },
    { "-1.5e-7", "-1.5E-7" },
    { "1e999", "INF" },
    { "-1e999", "-INF" },
    { "1e-999", "0" },
    { "-1e-999", "-0" },
    { "3.3612345678e10", "33612345678" },
    { "100000000000000000000", "1.0E+20" },
    { "0.30000000000000004", "0.3" },
    { "1.23456789012345678", "1.2345678901235" },
    { "2.5e-3", "0.0025" },
    { "99999999999999.99", "1.0E+14" },
    { "999999999999999", "999999999999999" },
    { "9.99999999999995e14", "1.0E+15" },
    { "1.00000000000005", "1" },
    { "4e3", "4000" },
    { "0e0", "0" },
    { "-0e5", "-0" },
    { "0.000", "0" },
    { "1.7976931348623157e308", "1.7976931348623E+308" },
    { "4.9e-324", "4.9406564584125E-324" },
    { "2.2250738585072014e-308", "2.2250738585072E-308" },
    { "1e100", "1.0E+100" },
    { "1e-100", "1.0E-100" },
    { "123e-2", "1.23" },
    { "-123.456e+7", "-1234560000" },
};

int main(void)
{
    char out[HL_JSON_NUM_MAX], big[1000];
    size_t i, n;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        n = hl_json_num_php(out, cases[i].lit, strlen(cases[i].lit));
        is_str(out, cases[i].php, cases[i].lit);
        ok(n == strlen(out), "... its length");
    }
    /* Past the 767 digits that can decide a double, only "nonzero" counts:
     * 1, 800 zeros and 5, times 10^-800, is just over 10. */
    big[0] = '1';
    memset(big + 1, '0', 800);
    memcpy(big + 801, "5e-800", 7);
    hl_json_num_php(out, big, strlen(big));
    is_str(out, "10", "802 digits: 10 (php says so)");
    memcpy(big, "0.", 2);
    memset(big + 2, '0', 900);
    memcpy(big + 902, "1e901", 6);
    hl_json_num_php(out, big, strlen(big));
    is_str(out, "1", "900 leading zeros of a fraction");
    is_int((int)hl_json_num_php(out, "", 0), 0, "empty: no number");
    is_int((int)hl_json_num_php(out, "-", 1), 0, "-: no number");
    is_int((int)hl_json_num_php(out, "01", 2), 0, "01: no JSON number");
    is_int((int)hl_json_num_php(out, "1x", 2), 0, "1x: no number");
    return done_testing();
}
