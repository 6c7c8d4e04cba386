/*
 * hl_fmt.c - decimal formatting without stdio (see hl_fmt.h).
 */
#include <string.h>
#include "hl_fmt.h"

/* "00" "01" ... "99": two digits per division halves the divisions. */
static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Writes the digits of v in front of end (the last digit just before it)
 * and returns where they start. 32-bit arithmetic: a division by 100 is
 * a cheaper multiplication than in 64 bits. */
static inline __attribute__((always_inline)) char *digits_u32(char *end,
                                                              uint32_t v)
{
    char *p = end;

    while (v >= 100) {
        unsigned i = (v % 100) * 2;
        v /= 100;
        *--p = digit_pairs[i + 1];
        *--p = digit_pairs[i];
    }
    if (v >= 10) {
        *--p = digit_pairs[v * 2 + 1];
        *--p = digit_pairs[v * 2];
    }
    else
        *--p = (char)('0' + v);
    return p;
}

/* Returns how many decimal digits v has (1 for 0). */
static size_t digit_count_u32(uint32_t v)
{
    if (v < 100000)
        return v < 100 ? (v < 10 ? 1 : 2)
                       : v < 10000 ? (v < 1000 ? 3 : 4) : 5;
    return v < 10000000 ? (v < 1000000 ? 6 : 7)
                        : v < 1000000000 ? (v < 100000000 ? 8 : 9) : 10;
}

size_t hl_fmt_u64(char *out, uint64_t v)
{
    char rev[HL_FMT_U64_MAX];
    char *p = rev + sizeof(rev);
    size_t n;

    if (v <= UINT32_MAX) {      /* the usual number: written in place */
        n = digit_count_u32((uint32_t)v);
        out[n] = '\0';
        digits_u32(out + n, (uint32_t)v);
        return n;
    }

    /* 64-bit divisions only while the value needs them (counts, times and
     * remaining requests fit in 32 bits). */
    while (v > UINT32_MAX) {
        unsigned i = (unsigned)(v % 100) * 2;
        v /= 100;
        *--p = digit_pairs[i + 1];
        *--p = digit_pairs[i];
    }
    p = digits_u32(p, (uint32_t)v);
    n = (size_t)(rev + sizeof(rev) - p);
    memcpy(out, p, n);
    out[n] = '\0';
    return n;
}

size_t hl_fmt_grouped(char *out, uint64_t v)
{
    char digits[HL_FMT_U64_MAX];
    size_t n = hl_fmt_u64(digits, v), i, o = 0;

    for (i = 0; i < n; ++i) {
        if (i && (n - i) % 3 == 0)
            out[o++] = ',';
        out[o++] = digits[i];
    }
    out[o] = '\0';
    return o;
}
