/*
 * hl_text.h - character classes of HTTP syntax (RFC 9110) shared by the
 * core parsers: header lists (hl_negotiate.c) and header/cookie names in
 * quotas (hl_quota.c). Pure: no allocation, no APR, no httpd headers.
 */
#ifndef HL_TEXT_H
#define HL_TEXT_H

/* Returns 1 if c may appear in an HTTP token (RFC 9110 5.6.2 tchar), else
 * 0 ('\0' included). Never fails. */
int hl_is_tchar(char c);

#endif
