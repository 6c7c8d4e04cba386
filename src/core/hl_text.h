/*
 * hl_text.h - character classes of HTTP syntax (RFC 9110) shared by the
 * core parsers: header lists (hl_negotiate.c) and header/cookie names in
 * quotas (hl_quota_by.c); hex digits (hl_php.c, hl_json_path.c); the digit
 * readers and the error message writer of the quota parsers (hl_window.c,
 * hl_quota*.c). Pure: no allocation, no APR, no httpd headers, no locale.
 */
#ifndef HL_TEXT_H
#define HL_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* Returns 1 if c may appear in an HTTP token (RFC 9110 5.6.2 tchar), else
 * 0 ('\0' included). Never fails. */
int hl_is_tchar(char c);

/* Returns the value of hex digit c (0-9, a-f, A-F), or -1. Never fails. */
int hl_hex_value(char c);

/*
 * Reads the len characters at s as an unsigned decimal number (digits
 * only: no sign, no space, no locale). Returns 0 and sets *out; -1 if len
 * is 0 or a character is not a digit; -2 if the value is above cap (*out
 * is then not written). Reads only.
 */
int hl_digits_parse(const char *s, size_t len, uint64_t cap, uint64_t *out);

/* Returns the number of leading ASCII digits of the len characters at s. */
size_t hl_digits_count(const char *s, size_t len);

/* Returns 1 if the len characters at s equal the NUL-terminated word w,
 * else 0. Reads only. */
int hl_span_is(const char *s, size_t len, const char *w);

/*
 * Formats a message into err when err is non-NULL and errlen > 0
 * (truncated to fit, always NUL-terminated). Returns -1, so that a parser
 * can "return hl_errf(...)". The caller owns err.
 */
int hl_errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
