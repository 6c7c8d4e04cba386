/*
 * hl_text.h - character classes of HTTP syntax (RFC 9110) shared by the
 * core parsers: header lists (hl_negotiate.c) and header/cookie names in
 * quotas (hl_quota.c); hex digits (hl_php.c, hl_json_path.c). Pure: no
 * allocation, no APR, no httpd headers.
 */
#ifndef HL_TEXT_H
#define HL_TEXT_H

/* Returns 1 if c may appear in an HTTP token (RFC 9110 5.6.2 tchar), else
 * 0 ('\0' included). Never fails. */
int hl_is_tchar(char c);

/* Returns the value of hex digit c (0-9, a-f, A-F), or -1. Never fails. */
int hl_hex_value(char c);

#endif
