/*
 * hl_phone.h - a phone number in one form (norm=digits, norm=digits:CC),
 * so that spellings a phone library such as libphonenumber reads as one
 * number are one key. Pure: no allocation, no APR, no httpd headers.
 */
#ifndef HL_PHONE_H
#define HL_PHONE_H

#include <stddef.h>

/* Room hl_phone_fold needs beyond the value's length: "+", a country code
 * of up to 3 digits, and the NUL. */
#define HL_PHONE_ROOM 6

/*
 * Writes into out (room for n + HL_PHONE_ROOM bytes) the number the n
 * bytes of v spell:
 *  - its decimal digits, of any script (Unicode category Nd: full-width
 *    "３", Arabic-Indic "٣", Devanagari "३"... are "3"), in UTF-8; every
 *    other character is dropped;
 *  - after a "+" when it is international: a "+" or full-width "＋"
 *    before the first digit, or a leading "00" (dropped); a "(0)" after
 *    the first digit (the trunk zero of "+33 (0)6 ...") is dropped;
 *  - an international number whose country code is one hl_phone_cc_known
 *    knows loses the trunk prefix written after it ("+33 06 12 34 56 78"
 *    is "+33612345678");
 *  - with cc nonzero (norm=digits:CC), a national number is made
 *    international with country code cc, its trunk prefix dropped as
 *    E.164 formatting drops it (under 33, "06 12 34 56 78" is
 *    "+33612345678"; under 1, "(555) 010-0001" and "1 555 010 0001" are
 *    "+15550100001"), and the country's international call prefix
 *    ("011" under 1, "810" under 7) read as "+"; a national number that
 *    starts with cc and is too long to be national is taken as
 *    international without its "+".
 * Returns the length written (0 when v has no digit; out is
 * NUL-terminated). Never fails. cc must be 0 or known (hl_phone_cc_known).
 */
size_t hl_phone_fold(char *out, const char *v, size_t n, unsigned cc);

/* Returns 1 if country code cc has trunk-prefix rules here, else 0. */
int hl_phone_cc_known(unsigned cc);

/* Returns the known country codes, as "1, 7, 31, ..." (static). */
const char *hl_phone_cc_list(void);

#endif
