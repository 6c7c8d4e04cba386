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
#include <stdint.h>

/* norm=: how a non-address key value is folded before it is hashed. */
typedef enum {
    HL_NORM_LOWER = 0,  /* default: trimmed, ASCII lowercased (header
                           values: inner white space runs made one space) */
    HL_NORM_DIGITS,     /* phone numbers: the digits, "+" when international
                           (digits:CC: with a country code) */
    HL_NORM_EMAIL,      /* lower, a "+tag" dropped, Gmail folded */
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

/* Length of hl_keyform_hashed's form: "<prefix>:" and 16 hex digits. */
#define HL_KEYFORM_HASHED_LEN 18

/* Writes into out (room for HL_KEYFORM_HASHED_LEN + 1 bytes) the client
 * part of a hashed account value: prefix (the key's kind: 'h' header, 'c'
 * cookie, 'p' parameter, 'j' JSON, 'u' user, 'e' variable), ':' and the
 * 16 lowercase hex digits of h, most significant first, and a NUL.
 * Returns HL_KEYFORM_HASHED_LEN. Never fails. */
size_t hl_keyform_hashed(char *out, char prefix, uint64_t h);

/* Room hl_keyform_fold needs beyond the value's
 * length (hl_phone.h's). */
#define HL_KEYFORM_ROOM 6

/* E-mail addresses (norm=email): writes into out (room for n + 1 bytes)
 * the n bytes of v trimmed and lowercased, a quoted local part unquoted
 * ("\"a\\\"b\"@x" is "a\"b@x"), the "+tag" of the local part dropped, the
 * trailing dots of the domain dropped, and a Gmail address (gmail.com or
 * googlemail.com) as gmail.com without the dots of its local part:
 * " A.Lice+x@GoogleMail.com. " is "alice@gmail.com". A value without "@"
 * is only trimmed and lowercased. Returns the length written (out is
 * NUL-terminated). Never fails. */
size_t hl_keyform_email(char *out, const char *v, size_t n);

/* Writes into out (room for n + HL_KEYFORM_ROOM bytes) the n bytes of v in
 * the form norm gives them (under HL_NORM_DIGITS, with country code cc
 * when nonzero: norm=digits:CC, hl_phone.h); under HL_NORM_LOWER a header value (header nonzero) has
 * hl_keyform_header's form, any other hl_keyform_account's. Returns the
 * length written (out is NUL-terminated). Never fails. */
size_t hl_keyform_fold(hl_norm_t norm, unsigned cc, int header, char *out,
                       const char *v, size_t n);

/* Returns the norm= value named s ("lower", "digits", "email", "exact"),
 * or -1 when s names none. */
int hl_keyform_norm_of(const char *s);

/* Reads a norm= value: one hl_keyform_norm_of names, or "digits:CC" with
 * CC a country code hl_phone_cc_known knows (then *cc is CC; else 0).
 * Returns the norm, or -1 when s names none (-2: "digits:" with a country
 * code that has no rules here). */
int hl_keyform_norm_parse(const char *s, unsigned *cc);

/* Returns the name of norm ("lower" for an unknown value). */
const char *hl_keyform_norm_name(hl_norm_t norm);

#endif
