/*
 * hl_reserve.h - reserve= (issue 19, issue 25): how many units a cost=
 * request takes at admission. reserve=N takes N; reserve=max_tokens[:DEFAULT]
 * takes the largest of the request body's top-level max_tokens,
 * max_completion_tokens and max_output_tokens (the OpenAI Chat Completions,
 * Responses and Anthropic names), DEFAULT when none is a positive number,
 * plus the body's length / HotLimitPromptEstimate for the prompt.
 *
 * The body is read as a JSON decoder reads it, or more generously, so that
 * whichever value the backend honours is covered:
 *  - keys are unescaped ("max\u005ftokens" is max_tokens);
 *  - every duplicate counts (PHP, Python and Go keep the last, others the
 *    first: the largest of all is taken);
 *  - a number in any JSON form (4000, 4e3, 4000.0, 4.0E+3; a fraction is
 *    rounded up), a string holding one ("4000", " 4_000 ", as Python's
 *    int() reads it, with the decimal digits of every Unicode script: as
 *    PHP's numeric strings do not take those, at least DEFAULT then too);
 *  - zero, a negative number or one under 1 (a float that underflows to
 *    0, an int() that cuts to 0), null, true and false: the backend may
 *    take it as "not set", so at least DEFAULT;
 *  - a value that cannot be read as a number (an object, Infinity, "x"),
 *    a body that is not one JSON object, an invalid or cut-off document:
 *    at least DEFAULT (the backend refuses the request or guesses; it is
 *    never reserved less than DEFAULT);
 *  - huge numbers (1e400, 99999999999999999999) are capped at HL_COST_MAX,
 *    never wrapped;
 *  - the encodings Python's json.loads() takes from bytes (Starlette's
 *    request.json(), so vLLM and other FastAPI backends; express too):
 *    a UTF-8 byte order mark is skipped, and UTF-16 or UTF-32 (LE or BE,
 *    with or without a byte order mark, told from the first 4 bytes as
 *    json.detect_encoding does) is read as the characters it encodes.
 *    PHP's json_decode takes none of these: such a body is unsure (at
 *    least DEFAULT) whatever it holds.
 *
 * Pure core: no httpd headers, no allocation. An hl_reserve_reader_t is a
 * fixed-size state the caller owns (about 400 bytes), fed the body in
 * chunks of any size. Whether the document is valid is left to
 * hl_json_path (PHP's json_decode grammar); this reader only follows the
 * top-level object's keys and the values of the wanted ones.
 */
#ifndef HL_RESERVE_H
#define HL_RESERVE_H

#include <stddef.h>
#include <stdint.h>
#include "hl_quota.h"
#include "hl_json_path.h"

#define HL_PROMPT_ESTIMATE_DEFAULT 4   /* HotLimitPromptEstimate: bytes per
                                          prompt token */

/* A number being read (a JSON number, or the text of a string). */
typedef struct {
    uint8_t  phase;      /* where in the number */
    uint8_t  neg;        /* a '-' sign */
    uint8_t  exp_neg;    /* the exponent's '-' */
    uint8_t  rest_nz;    /* a non-zero digit beyond the kept ones */
    uint8_t  nkept;      /* significant digits kept in sig */
    uint8_t  under;      /* the last byte was a '_' (strings only) */
    uint8_t  digits;     /* a mantissa digit was met */
    uint8_t  lead0;      /* the integer part began with '0' */
    uint8_t  odd;        /* a string only some decoders read as a number
                            (a '_', a non-ASCII digit or space): PHP's
                            (int) reads 0 */
    uint32_t nsig;       /* significant digits met (saturating) */
    uint32_t nfrac;      /* digits after the point (saturating) */
    uint32_t exp;        /* the exponent's digits (saturating) */
    uint64_t sig;        /* the first significant digits */
} hl_reserve_num_t;

typedef struct {
    uint8_t  enc;        /* the body's encoding (hl_reserve.c: ENC_*) */
    uint8_t  npre;       /* bytes of pre[] (the first ones, while the
                            encoding is not told; then a code unit's) */
    uint8_t  pre[4];
    uint32_t high16;     /* a UTF-16 high surrogate waiting for its pair */
    uint8_t  state;      /* what the next byte may be */
    uint8_t  in_key;     /* the string being read is a key */
    uint8_t  cand;       /* bit per name the key still matches */
    uint8_t  match;      /* the value being read is a wanted key's */
    uint8_t  hex_left;   /* \uXXXX digits still to read */
    uint8_t  utf8_left;  /* UTF-8 continuation bytes still to read */
    uint8_t  skip_str;   /* inside a string of a skipped container */
    uint8_t  skip_esc;   /* after its '\' */
    uint8_t  unsure;     /* DEFAULT at least: an unreadable value, an
                            invalid or cut-off document */
    uint32_t kpos;       /* key code points read */
    uint32_t code;       /* the code point being read */
    uint32_t high;       /* a high surrogate waiting for its low half */
    uint32_t skip;       /* brackets open in a skipped value */
    uint32_t largest;    /* the largest value read, capped */
    hl_reserve_num_t num;
    hl_json_path_t   json;      /* the same bytes through hl_json_path:
                                   whether PHP's json_decode takes them */
    char             json_out[1];
} hl_reserve_reader_t;

/* Sets *rd to the start of a body. Cannot fail. *rd holds a pointer into
 * itself: it is not to be copied once started. */
void hl_reserve_reader_init(hl_reserve_reader_t *rd);

/* Reads the next n bytes of the body (any split; data may be NULL when n
 * is 0). Keeps no pointer into data. Cannot fail. */
void hl_reserve_reader_feed(hl_reserve_reader_t *rd, const char *data,
                            size_t n);

/*
 * Returns the max_tokens the body read so far asks for, the document
 * ending there: the largest positive value of a wanted key, at least dflt
 * when the body is unsure (see above) and dflt when none was positive;
 * capped at HL_COST_MAX. Reads only (may be asked again after more feed).
 */
uint32_t hl_reserve_reader_tokens(const hl_reserve_reader_t *rd,
                                  uint32_t dflt);

/*
 * One-shot reading of a whole body of len bytes (json may be NULL when len
 * is 0). Returns 1 and sets *out to the largest positive value read when
 * the document is sure (see hl_reserve_reader_tokens), else 0 (*out
 * untouched).
 */
int hl_reserve_find_max_tokens(const char *json, size_t len, uint32_t *out);

/*
 * Returns the units a request of quota q reserves: q->reserve for
 * reserve=N; for reserve=max_tokens, hl_reserve_reader_tokens(rd,
 * q->reserve) (q->reserve when rd is NULL: the body was not read), plus
 * body_len / bytes_per_token (4 when 0); at least 1, capped at
 * HL_COST_MAX. 0 when q reserves nothing. Reads only.
 */
uint32_t hl_reserve_units(const hl_quota_t *q, const hl_reserve_reader_t *rd,
                          uint64_t body_len, unsigned bytes_per_token);

#endif
