/*
 * hl_json_num.c - a JSON number as PHP's text of it (see hl_json_num.h).
 *
 * PHP's json scanner makes an int of an integer literal that fits in a
 * zend_long, else a double (zend_strtod, correctly rounded, as glibc's
 * strtod); (string) of a double is zend_gcvt(value, 14, '.', 'E'): the
 * value rounded to 14 significant digits, trailing zeros dropped, in
 * fixed notation when its decimal exponent is between -4 and 14, else
 * as "D.DDDE+X".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hl_json_num.h"

#define MANT_KEEP 767   /* significant digits that can decide a double's
                           rounding; past them only "any nonzero" counts */
#define EXP_CAP   100000L

/* Returns 1 if c is an ASCII digit. */
static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Returns the double the JSON number lit (n bytes) is, read by strtod
 * from a text without decimal point (so whatever the locale), or sets
 * *bad when lit is no JSON number. */
static double read_double(const char *lit, size_t n, int *bad)
{
    char buf[MANT_KEEP + 40];
    size_t i = 0, len = 0;
    long exp10 = 0, e = 0;
    int neg = 0, esign = 1, sticky = 0, seen = 0;

    if (i < n && lit[i] == '-')
        neg = 1, i++;
    for (; i < n && (is_digit(lit[i]) || lit[i] == '.'); i++) {
        if (lit[i] == '.') {
            seen = 1;
            continue;
        }
        if (len == 0 && lit[i] == '0') {
            exp10 -= seen;      /* a leading zero: only its place counts */
            continue;
        }
        if (len < MANT_KEEP) {
            buf[len++] = lit[i];
            exp10 -= seen;
        } else {
            sticky |= lit[i] != '0';
            exp10 += !seen;
        }
    }
    if (i < n && (lit[i] == 'e' || lit[i] == 'E')) {
        i++;
        if (i < n && (lit[i] == '+' || lit[i] == '-'))
            esign = lit[i++] == '-' ? -1 : 1;
        for (; i < n && is_digit(lit[i]); i++)
            if (e < EXP_CAP)
                e = e * 10 + (lit[i] - '0');
    }
    *bad = i != n;
    if (len == 0)
        return neg ? -0.0 : 0.0;
    if (sticky) {
        buf[len++] = '1';       /* more digits than MANT_KEEP, not all 0 */
        exp10--;
    }
    exp10 += esign * e;
    if (exp10 > EXP_CAP)
        exp10 = EXP_CAP;
    if (exp10 < -EXP_CAP)
        exp10 = -EXP_CAP;
    snprintf(buf + len, sizeof(buf) - len, "e%ld", exp10);
    return neg ? -strtod(buf, NULL) : strtod(buf, NULL);
}

/* Writes PHP's text of double d into out; returns its length. */
static size_t php_double(char *out, double d)
{
    char tmp[40], digits[16];
    size_t nd = 0, len = 0, i;
    int decpt, x;
    const char *p;

    if (isinf(d))
        return (size_t)snprintf(out, HL_JSON_NUM_MAX, "%sINF", d < 0 ? "-" : "");
    if (d == 0)
        return (size_t)snprintf(out, HL_JSON_NUM_MAX, "%s", signbit(d) ? "-0" : "0");
    snprintf(tmp, sizeof(tmp), "%.13e", fabs(d));
    for (p = tmp; *p && *p != 'e'; p++)
        if (is_digit(*p))
            digits[nd++] = *p;  /* the locale's decimal point skipped */
    decpt = atoi(p + 1) + 1;    /* d is 0.DIGITS x 10^decpt */
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = '\0';
    if (d < 0)
        out[len++] = '-';
    if (decpt < 0 ? decpt < -3 : decpt > 14) {
        x = decpt - 1;
        out[len++] = digits[0];
        out[len++] = '.';
        for (i = 1; i < nd; i++)
            out[len++] = digits[i];
        if (nd == 1)
            out[len++] = '0';
        len += (size_t)snprintf(out + len, HL_JSON_NUM_MAX - len, "E%c%d",
                                x < 0 ? '-' : '+', x < 0 ? -x : x);
        return len;
    }
    if (decpt <= 0) {
        out[len++] = '0';
        out[len++] = '.';
        for (x = decpt; x < 0; x++)
            out[len++] = '0';
        for (i = 0; i < nd; i++)
            out[len++] = digits[i];
    } else {
        for (x = 0; x < decpt; x++)
            out[len++] = (size_t)x < nd ? digits[x] : '0';
        if ((size_t)decpt < nd) {
            out[len++] = '.';
            for (i = (size_t)decpt; i < nd; i++)
                out[len++] = digits[i];
        }
    }
    out[len] = '\0';
    return len;
}

size_t hl_json_num_php(char *out, const char *lit, size_t n)
{
    static const char long_min[] = "9223372036854775808";
    size_t neg = n > 0 && lit[0] == '-', digits = n - neg, i;
    int bad = 0, integer = digits > 0;
    double d;

    out[0] = '\0';
    for (i = neg; i < n; i++)
        integer &= is_digit(lit[i]);
    if (integer && (digits < 19 || (digits == 19
        && (memcmp(lit + neg, long_min, 19) < 0
            || (neg && memcmp(lit + neg, long_min, 19) == 0))))) {
        if (digits > 1 && lit[neg] == '0')
            return 0;           /* no JSON integer */
        if (digits == 1 && lit[neg] == '0')
            neg = 0;            /* "-0" is int 0 */
        memcpy(out, lit + (neg ? 0 : n - digits), neg + digits);
        out[neg + digits] = '\0';
        return neg + digits;
    }
    d = read_double(lit, n, &bad);
    if (bad || n == neg)
        return 0;
    return php_double(out, d);
}
