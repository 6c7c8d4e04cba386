/*
 * hl_keyform.h - the form a client's value takes before it becomes part
 * of a counter key, so that spellings an application reads as one value
 * are one key: a stricter limit when the application tells them apart,
 * never a way around one when it does not. Pure: no allocation, no APR,
 * no httpd headers.
 */
#ifndef HL_KEYFORM_H
#define HL_KEYFORM_H

#include <stddef.h>

/* norm=: how a non-address key value is folded before it is hashed. */
typedef enum {
    HL_NORM_LOWER = 0,  /* default: trimmed, ASCII lowercased (header
                           values: inner white space runs made one space) */
    HL_NORM_DIGITS,     /* phone numbers: the digits, "+" when international */
    HL_NORM_EMAIL,      /* lower, and a "+tag" in the local part dropped */
    HL_NORM_EXACT       /* as sent */
} hl_norm_t;

/* Account names (by=param:, by=user): lowercases the n bytes of v (ASCII)
 * and drops white space around them, in place. Returns the new length.
 * Never fails. */
size_t hl_keyform_account(char *v, size_t n);

/* Header values (by=header:): writes into out (room for n + 1 bytes) the
 * n bytes of v lowercased (ASCII), each run of white space made one
 * space, none at either end, so "Bearer tok" and "bearer   tok" are one
 * key. Returns the length written (out is NUL-terminated). Never fails. */
size_t hl_keyform_header(char *out, const char *v, size_t n);

/* Phone numbers (norm=digits): writes into out (room for n + 2 bytes) the
 * digits of the n bytes of v, after a "+" when the number is international:
 * a "+" before the first digit, or a leading "00" (dropped). A "(0)" after
 * the first digit (the trunk zero of "+33 (0)6 ...") is dropped. So
 * "+33 6 12 34 56 78", "0033612345678" and "(+33) 6-12-34-56-78" are all
 * "+33612345678". Returns the length written (0 when v has no digit; out
 * is NUL-terminated). Never fails. */
size_t hl_keyform_digits(char *out, const char *v, size_t n);

/* E-mail addresses (norm=email): writes into out (room for n + 1 bytes)
 * the n bytes of v trimmed and lowercased, with a "+tag" of the local part
 * dropped: "Alice+x@Example.org " is "alice@example.org". A value without
 * "@" is only trimmed and lowercased. Returns the length written (out is
 * NUL-terminated). Never fails. */
size_t hl_keyform_email(char *out, const char *v, size_t n);

/* Writes into out (room for n + 2 bytes) the n bytes of v in the form norm
 * gives them; under HL_NORM_LOWER a header value (header nonzero) has
 * hl_keyform_header's form, any other hl_keyform_account's. Returns the
 * length written (out is NUL-terminated). Never fails. */
size_t hl_keyform_fold(hl_norm_t norm, int header, char *out, const char *v,
                       size_t n);

/* Returns the norm= value named s ("lower", "digits", "email", "exact"),
 * or -1 when s names none. */
int hl_keyform_norm_of(const char *s);

/* Returns the name of norm ("lower" for an unknown value). */
const char *hl_keyform_norm_name(hl_norm_t norm);

#endif
