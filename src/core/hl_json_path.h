/*
 * hl_json_path.h - the string or number at a dotted path ("phone",
 * "user.email") of a JSON request body, as PHP's json_decode($body, true)
 * gives it to the application (by=json: keys, HotLimitRouteFrom json:).
 *
 * Pure core: no httpd headers, no allocation. An hl_json_path_t is a
 * fixed-size state the caller owns (256 bytes on x86-64); it is fed the body
 * in chunks of any size, split anywhere (a spooled body comes in pieces),
 * and keeps of it only the value looked for, written into the caller's
 * buffer. Every other value is skipped: only the objects on the way to
 * the path are looked into, and a bit per open bracket says whether it
 * closes an array or an object.
 *
 * What the application sees is what is read (checked against php8.2's
 * json_decode, see t/unit/test_json_path.c):
 *  - The whole document must be valid JSON as PHP's parser reads it, or
 *    nothing is read (json_decode returns null then): trailing bytes other
 *    than white space, an unclosed bracket, a byte order mark, invalid
 *    UTF-8 or a control byte in a string, an unpaired UTF-16 surrogate
 *    escape, a bad escape or number, more than HL_JSON_DEPTH_MAX arrays
 *    and objects open at once.
 *  - The top level must be an object; each path segment names a key of
 *    the object the previous one named. Arrays are not looked into.
 *  - Keys are compared after unescaping: "ph\u006fne" is "phone".
 *  - A duplicate key replaces the earlier one, at every level (PHP and
 *    most parsers keep the last): {"phone":"1","phone":"2"} gives "2", and
 *    {"user":{"email":"a"},"user":5} gives nothing for user.email.
 *  - A string is unescaped exactly (\n, \/, \uXXXX, a surrogate pair to
 *    one 4-byte UTF-8 character; \u0000 gives a NUL byte). A number is its
 *    literal text ("1e3" stays "1e3"; is_num says it was a number, and
 *    hl_json_num_php gives the text PHP makes of it). true, false, null,
 *    objects and arrays are no value.
 *  - A value longer than the caller's buffer (less its NUL) is cut there.
 */
#ifndef HL_JSON_PATH_H
#define HL_JSON_PATH_H

#include <stddef.h>
#include <stdint.h>

#define HL_JSON_PATH_MAX  63    /* longest path, bytes */
#define HL_JSON_DEPTH_MAX 511   /* arrays and objects open at once: PHP's
                                   json_decode default depth (512) admits
                                   511 */

typedef struct {
    /* The path, its segments as offsets into it. */
    char     path[HL_JSON_PATH_MAX + 1];
    uint8_t  seg_off[(HL_JSON_PATH_MAX + 1) / 2];
    uint8_t  seg_len[(HL_JSON_PATH_MAX + 1) / 2];
    uint8_t  nseg;
    /* The value: the caller's buffer. */
    char    *out;
    size_t   out_size;
    size_t   out_len;
    uint8_t  found;      /* out holds the value of the last key so far */
    uint8_t  is_num;     /* ... and it is a number (hl_json_num.h gives
                            PHP's text of it) */
    /* The parser. */
    uint8_t  state;      /* what the next byte may be */
    uint8_t  in_key;     /* the string being read is a key */
    uint8_t  sink;       /* where string or number bytes go */
    uint8_t  key_match;  /* the key just read is the path's next segment */
    uint8_t  kpos;       /* key bytes matched so far */
    uint8_t  kbad;       /* the key is not the segment */
    uint8_t  hex_left;   /* \uXXXX digits still to read */
    uint8_t  utf8_left;  /* UTF-8 continuation bytes still to read */
    uint8_t  utf8_lo;    /* range of the next continuation byte */
    uint8_t  utf8_hi;
    uint8_t  num;        /* where in a number */
    uint8_t  lit;        /* which of true/false/null */
    uint8_t  lit_pos;    /* its bytes matched */
    uint32_t code;       /* the \uXXXX being read */
    uint32_t high;       /* a high surrogate waiting for its low half */
    uint32_t depth;      /* arrays and objects open */
    uint32_t on;         /* of those, the outer ones on the path */
    uint8_t  is_object[(HL_JSON_DEPTH_MAX + 7) / 8]; /* bit per depth */
} hl_json_path_t;

/*
 * Returns 0 if path is usable: 1..HL_JSON_PATH_MAX bytes of letters,
 * digits, '_', '-' and '.', the dots between non-empty segments; else -1.
 */
int hl_json_path_check(const char *path);

/*
 * Starts reading the value at path (see hl_json_path_check) into out
 * (out_size bytes, at least 1: room for the NUL). Returns 0, or -1 when
 * path or out is unusable (then nothing is ever found). Borrows out until
 * hl_json_path_finish.
 */
int hl_json_path_init(hl_json_path_t *s, const char *path, char *out,
                      size_t out_size);

/*
 * Reads the next n bytes of the document. Returns 0, or -1 once the
 * document is known invalid (then later calls do nothing). Never fails
 * otherwise.
 */
int hl_json_path_feed(hl_json_path_t *s, const char *data, size_t n);

/*
 * Ends the document. Returns the value's length (0 for "") with the value
 * NUL-terminated in out (it may hold NULs of its own), or -1, with "" in
 * out, when the document is invalid or incomplete, is not an object, or
 * has no string or number at the path.
 */
long hl_json_path_finish(hl_json_path_t *s);

/*
 * Returns 1 when the bytes fed so far are one whole valid document whose
 * top-level value (an object or array) has closed, white space after it
 * allowed; else 0 (invalid, cut off, or a bare scalar). Reads only.
 */
int hl_json_path_complete(const hl_json_path_t *s);

#endif
