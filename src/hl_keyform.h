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

/* Account names (by=param:, by=user): lowercases the n bytes of v (ASCII)
 * and drops white space around them, in place. Returns the new length.
 * Never fails. */
size_t hl_keyform_account(char *v, size_t n);

/* Header values (by=header:): writes into out (room for n + 1 bytes) the
 * n bytes of v lowercased (ASCII), each run of white space made one
 * space, none at either end, so "Bearer tok" and "bearer   tok" are one
 * key. Returns the length written (out is NUL-terminated). Never fails. */
size_t hl_keyform_header(char *out, const char *v, size_t n);

#endif
