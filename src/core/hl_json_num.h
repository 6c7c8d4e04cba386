/*
 * hl_json_num.h - a JSON number as the text PHP makes of it: the string
 * (string)$v gives for json_decode's int or float (precision=14, PHP's
 * default), so a JSON number and a string of the same text are one key.
 * Pure: no allocation, no APR, no httpd headers.
 */
#ifndef HL_JSON_NUM_H
#define HL_JSON_NUM_H

#include <stddef.h>

#define HL_JSON_NUM_MAX 32      /* room for any answer, with its NUL */

/*
 * Writes into out (HL_JSON_NUM_MAX bytes) PHP's text of the JSON number
 * whose n bytes of literal text are lit (valid JSON number grammar):
 *  - an integer that fits in 64 bits is itself ("-0" is "0");
 *  - any other number is the double zend_strtod reads, as PHP 8 prints a
 *    float at precision 14: "1e3" is "1000", "0.10" is "0.1", "1e15" is
 *    "1.0E+15", "1e-5" is "1.0E-5", 9223372036854775808 is
 *    "9.2233720368548E+18", "-0.0" is "-0", "1e999" is "INF".
 * Returns the length written (out is NUL-terminated), or 0, with "" in
 * out, when lit is not a JSON number.
 */
size_t hl_json_num_php(char *out, const char *lit, size_t n);

#endif
