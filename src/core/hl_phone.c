/*
 * hl_phone.c - phone numbers in one form (see hl_phone.h).
 *
 * The value is read as UTF-8 into its digits (any script's, as ASCII) and
 * whether it is international; then the country rules of the table below
 * drop a trunk prefix, read an international call prefix, or add the
 * configured country code.
 */
#include <string.h>
#include "hl_phone.h"

/* The zero of every run of ten decimal digits in Unicode 15 (category Nd,
 * U+0030 aside): a code point z..z+9 of this table is the digit 0..9. */
static const unsigned long nd_zeros[] = {
    0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66,
    0xCE6, 0xD66, 0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0,
    0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50,
    0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450,
    0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50,
    0x11DA0, 0x11F50, 0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2,
    0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E4F0, 0x1E950, 0x1FBF0
};

/* A country's rules, as E.164 formatting (libphonenumber's metadata)
 * applies them: the trunk prefix dropped from a national number ("" when
 * the country keeps its leading digits, as Italy keeps its 0), the
 * international call prefix, and the lengths of a national significant
 * number (without trunk prefix). */
typedef struct {
    unsigned    cc;
    const char *trunk;
    const char *idd;
    unsigned    nsn_min, nsn_max;
} country_t;

static const country_t countries[] = {
    { 1,  "1", "011",  10, 10 },    /* NANP: US, Canada, ... */
    { 7,  "8", "810",  10, 10 },    /* Russia, Kazakhstan */
    { 31, "0", "00",    9,  9 },    /* Netherlands */
    { 32, "0", "00",    8,  9 },    /* Belgium */
    { 33, "0", "00",    9,  9 },    /* France */
    { 34, "",  "00",    9,  9 },    /* Spain */
    { 39, "",  "00",    6, 11 },    /* Italy: the leading 0 is kept */
    { 41, "0", "00",    9,  9 },    /* Switzerland */
    { 43, "0", "00",    4, 13 },    /* Austria */
    { 44, "0", "00",    7, 10 },    /* United Kingdom */
    { 48, "",  "00",    9,  9 },    /* Poland */
    { 49, "0", "00",    5, 13 },    /* Germany */
    { 61, "0", "0011",  9,  9 },    /* Australia */
    { 81, "0", "010",   9, 10 },    /* Japan */
    { 86, "0", "00",    7, 11 },    /* China */
    { 90, "0", "00",   10, 10 },    /* Turkey */
    { 91, "0", "00",   10, 10 },    /* India */
};
#define NCOUNTRIES (sizeof(countries) / sizeof(countries[0]))

/* Returns the rules of country code cc, or NULL. */
static const country_t *country_of(unsigned cc)
{
    size_t i;

    for (i = 0; i < NCOUNTRIES; i++)
        if (countries[i].cc == cc)
            return &countries[i];
    return NULL;
}

int hl_phone_cc_known(unsigned cc)
{
    return country_of(cc) != NULL;
}

const char *hl_phone_cc_list(void)
{
    return "1, 7, 31, 32, 33, 34, 39, 41, 43, 44, 48, 49, 61, 81, 86, 90, 91";
}

/* Returns the code point of the UTF-8 character at v[*i] (of n bytes) and
 * moves *i past it; a byte that starts no well-formed character is
 * returned as 0xFFFD, one byte read. */
static unsigned long next_cp(const char *v, size_t n, size_t *i)
{
    const unsigned char *s = (const unsigned char *)v + *i;
    size_t left = n - *i, len, k;
    unsigned long cp, min;

    if (s[0] < 0x80) {
        *i += 1;
        return s[0];
    }
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        len = 2, cp = s[0] & 0x1F, min = 0x80;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF)
        len = 3, cp = s[0] & 0x0F, min = 0x800;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4)
        len = 4, cp = s[0] & 0x07, min = 0x10000;
    else
        len = 0, cp = 0, min = 0;
    for (k = 1; len && k < len; k++) {
        if (k >= left || (s[k] & 0xC0) != 0x80) {
            len = 0;
            break;
        }
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    if (len == 0 || cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        *i += 1;
        return 0xFFFD;
    }
    *i += len;
    return cp;
}

/* Returns the value 0..9 of decimal digit cp of any script, or -1. */
static int digit_of(unsigned long cp)
{
    size_t k;

    if (cp >= '0' && cp <= '9')
        return (int)(cp - '0');
    for (k = 0; k < sizeof(nd_zeros) / sizeof(nd_zeros[0]) && nd_zeros[k] <= cp; k++)
        if (cp < nd_zeros[k] + 10)
            return (int)(cp - nd_zeros[k]);
    return -1;
}

/* Returns 1 if the len digits d start with the digits of s. */
static int starts(const char *d, size_t len, const char *s)
{
    size_t k = strlen(s);

    return k > 0 && len >= k && memcmp(d, s, k) == 0;
}

/* Writes the digits of v into d (room for n bytes) and whether the number
 * is international into *intl; returns how many. */
static size_t read_digits(char *d, const char *v, size_t n, int *intl)
{
    size_t i = 0, len = 0, j;
    unsigned long cp;
    int dv;

    *intl = 0;
    while (i < n) {
        cp = next_cp(v, n, &i);
        if ((cp == '+' || cp == 0xFF0B) && len == 0)
            *intl = 1;
        else if ((dv = digit_of(cp)) >= 0)
            d[len++] = (char)('0' + dv);
        else if ((cp == '(' || cp == 0xFF08) && len > 0 && i < n) {
            /* "(0)": the trunk zero of a country, in any script */
            j = i;
            if (digit_of(next_cp(v, n, &j)) == 0 && j < n
                && ((cp = next_cp(v, n, &j)) == ')' || cp == 0xFF09))
                i = j;
        }
    }
    return len;
}

/* Writes into buf the decimal digits of cc; returns how many. */
static size_t cc_text(char *buf, unsigned cc)
{
    char tmp[8];
    size_t k = 0, len = 0;

    do {
        tmp[k++] = (char)('0' + cc % 10);
        cc /= 10;
    } while (cc && k < sizeof(tmp));
    while (k)
        buf[len++] = tmp[--k];
    buf[len] = '\0';
    return len;
}

/* The international number of *len digits at *d: drops the trunk prefix
 * written after a known country code. */
static void drop_trunk_after_cc(char *d, size_t *len)
{
    char code[8];
    size_t i, k, t;

    for (i = 0; i < NCOUNTRIES; i++) {
        const country_t *c = &countries[i];
        k = cc_text(code, c->cc);
        if (!starts(d, *len, code))
            continue;
        t = strlen(c->trunk);
        if (t && starts(d + k, *len - k, c->trunk)
            && *len - k - t >= c->nsn_min && *len - k - t <= c->nsn_max) {
            memmove(d + k, d + k + t, *len - k - t);
            *len -= t;
        }
        return;                 /* country codes are prefix-free */
    }
}

size_t hl_phone_fold(char *out, const char *v, size_t n, unsigned cc)
{
    char *d = out + HL_PHONE_ROOM - 1, code[8];
    const country_t *c = cc ? country_of(cc) : NULL;
    size_t len, k = 0, t, idd;
    int intl;

    len = read_digits(d, v, n, &intl);
    idd = c && !intl && starts(d, len, c->idd) ? strlen(c->idd)
          : !intl && starts(d, len, "00") ? 2 : 0;
    if (idd) {
        intl = 1;               /* the international call prefix */
        d += idd;
        len -= idd;
    }
    if (len == 0) {
        out[0] = '\0';
        return 0;
    }
    if (!intl && c) {
        k = cc_text(code, cc);
        t = strlen(c->trunk);
        if (t && starts(d, len, c->trunk) && len - t >= c->nsn_min
            && len - t <= c->nsn_max) {
            d += t;             /* the trunk prefix */
            len -= t;
        } else if (starts(d, len, code) && len - k >= c->nsn_min
                   && len - k <= c->nsn_max
                   && (strcmp(c->trunk, "0") == 0 || len > c->nsn_max)) {
            k = 0;              /* international, without its "+" */
        }
        intl = 1;
        memcpy(d - k, code, k);
        d -= k;
        len += k;
    }
    if (intl) {
        drop_trunk_after_cc(d, &len);
        *--d = '+';
        len++;
    }
    memmove(out, d, len);
    out[len] = '\0';
    return len;
}
