/*
 * hl_reserve.c - the units a cost= request reserves at admission (see
 * hl_reserve.h).
 *
 * One byte at a time through a small state machine that follows the keys
 * of the top-level object (each unescaped and compared, as it is read,
 * with the three wanted names) and reads the number a wanted key's value
 * holds; every other value is passed over by counting its brackets. The
 * same bytes go through hl_json_path, which says whether the document is
 * one PHP's json_decode accepts.
 */
#include <string.h>
#include "hl_reserve.h"

/* What the next byte may be. */
enum {
    ST_START = 0,      /* the document's first value: '{' */
    ST_KEY,            /* a key, or the object's close */
    ST_COLON,          /* after a key */
    ST_VALUE,          /* a value of the top-level object */
    ST_NEXT,           /* after a value: ',' or '}' */
    ST_END,            /* after the object: nothing more is read */
    ST_STRING,         /* inside a string (a key or a top-level value) */
    ST_ESC,            /* after its '\' */
    ST_HEX,            /* inside \uXXXX */
    ST_UTF8,           /* inside a multi-byte UTF-8 character */
    ST_NUMBER,         /* inside a wanted key's number */
    ST_TOKEN,          /* inside another number or literal */
    ST_SKIP,           /* inside an object or array value */
    ST_DEAD            /* not one JSON object: nothing more is read */
};

/* Where in a number: before it (strings: white space), after its sign,
 * integer digits, '.', fraction digits, 'e', the exponent's sign and
 * digits, white space after it (strings), not a number. */
enum { NP_START = 0, NP_SIGN, NP_INT, NP_DOT, NP_FRAC, NP_E, NP_ESIGN,
       NP_EXP, NP_TRAIL, NP_BAD };

#define KEPT_MAX  18             /* significant digits kept: fit uint64 */
#define SATURATE  1000000000u    /* digit counters stop here */
#define BAD_CP    0xFFFDu        /* what an invalid character reads as */

static const char *const names[] = {
    "max_tokens", "max_completion_tokens", "max_output_tokens"
};
#define ALL_NAMES 7u

/* The zero of each run of ten Unicode decimal digits (category Nd), as
 * Python's int() reads them (Unicode 15). */
static const uint32_t nd_zero[] = {
    0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6,
    0xC66, 0xCE6, 0xD66, 0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0,
    0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50,
    0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10, 0x104A0,
    0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0,
    0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0,
    0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6,
    0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0
};

/* Returns the digit cp is (json: ASCII only; else any Nd digit), or -1. */
static int digit_of(uint32_t cp, int json)
{
    size_t i;

    if (cp >= '0' && cp <= '9')
        return (int)(cp - '0');
    for (i = 1; !json && i < sizeof(nd_zero) / sizeof(nd_zero[0]); ++i)
        if (cp >= nd_zero[i] && cp < nd_zero[i] + 10)
            return (int)(cp - nd_zero[i]);
    return -1;
}

/* Returns 1 if cp is white space around a number in a string: Python's
 * str.isspace() set (PHP's numeric strings take " \t\n\r\v\f"). */
static int string_space(uint32_t cp)
{
    return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20)
           || cp == 0x85 || cp == 0xA0 || cp == 0x1680
           || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029
           || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

/* The body's encoding: not told yet (fewer than 4 bytes read), UTF-8, or
 * UTF-16 / UTF-32 of either byte order (read into code points, each fed
 * on as UTF-8). */
enum {
    ENC_UNKNOWN = 0,
    ENC_UTF8,
    ENC_UTF16LE,
    ENC_UTF16BE,
    ENC_UTF32LE,
    ENC_UTF32BE
};

/* Returns 1 if c is JSON white space. */
static int json_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* ---- numbers ------------------------------------------------------------ */

/* Adds mantissa digit d (frac: after the point) to n. */
static void num_mantissa(hl_reserve_num_t *n, int d, int frac)
{
    n->digits = 1;
    if (frac && n->nfrac < SATURATE)
        ++n->nfrac;
    if (n->nsig == 0 && d == 0)
        return;                       /* a leading zero */
    if (n->nsig < SATURATE)
        ++n->nsig;
    if (n->nkept < KEPT_MAX) {
        n->sig = n->sig * 10 + (uint64_t)d;
        ++n->nkept;
    }
    else if (d != 0)
        n->rest_nz = 1;
}

/* Reads digit d into n (json: JSON's grammar, no leading zeros). */
static void num_digit(hl_reserve_num_t *n, int d, int json)
{
    n->under = 0;
    switch (n->phase) {
    case NP_START: case NP_SIGN:
        n->lead0 = d == 0;
        n->phase = NP_INT;
        num_mantissa(n, d, 0);
        return;
    case NP_INT:
        if (json && n->lead0)
            n->phase = NP_BAD;
        else
            num_mantissa(n, d, 0);
        return;
    case NP_DOT: case NP_FRAC:
        n->phase = NP_FRAC;
        num_mantissa(n, d, 1);
        return;
    case NP_E: case NP_ESIGN: case NP_EXP:
        n->phase = NP_EXP;
        if (n->exp < SATURATE)
            n->exp = n->exp * 10 + (uint32_t)d;
        return;
    default:
        n->phase = NP_BAD;
    }
}

/* Returns 1 if n may end here (json: JSON's grammar). */
static int num_complete(const hl_reserve_num_t *n, int json)
{
    if (n->under || !n->digits)
        return 0;
    return n->phase == NP_INT || n->phase == NP_FRAC || n->phase == NP_EXP
           || n->phase == NP_TRAIL || (!json && n->phase == NP_DOT);
}

/* Reads code point cp of a number into n: a JSON number's byte (json), or
 * a character of a string, read as Python's int()/float() and PHP's
 * numeric strings read it (white space around, a '+', '_' between
 * digits, Unicode digits). Anything else makes n no number. */
static void num_cp(hl_reserve_num_t *n, uint32_t cp, int json)
{
    int d = digit_of(cp, json);

    if (n->phase == NP_BAD)
        return;
    if (cp >= 0x80 || cp == '_' || (cp >= 0x1C && cp <= 0x1F))
        n->odd = 1;
    if (d >= 0) {
        num_digit(n, d, json);
        return;
    }
    if (!json && cp == '_' && !n->under && n->digits
        && (n->phase == NP_INT || n->phase == NP_FRAC || n->phase == NP_EXP)) {
        n->under = 1;
        return;
    }
    if (n->under) {
        n->phase = NP_BAD;
        return;
    }
    if (!json && string_space(cp)) {
        if (n->phase != NP_START)
            n->phase = num_complete(n, json) ? NP_TRAIL : NP_BAD;
        return;
    }
    switch (cp) {
    case '-': case '+':
        if (n->phase == NP_START && (cp == '-' || !json)) {
            n->neg = cp == '-';
            n->phase = NP_SIGN;
        }
        else if (n->phase == NP_E) {
            n->exp_neg = cp == '-';
            n->phase = NP_ESIGN;
        }
        else
            n->phase = NP_BAD;
        return;
    case '.':
        n->phase = n->phase == NP_INT
                   || (!json && (n->phase == NP_START || n->phase == NP_SIGN))
                   ? NP_DOT : NP_BAD;
        return;
    case 'e': case 'E':
        n->phase = n->phase == NP_INT || n->phase == NP_FRAC
                   || (!json && n->phase == NP_DOT && n->digits)
                   ? NP_E : NP_BAD;
        return;
    default:
        n->phase = NP_BAD;
    }
}

/* Reads the value of number n (json: a JSON number): returns 1 and sets
 * *out to it rounded up (0 when under 1 or negative), capped at
 * HL_COST_MAX;
 * 0 when n is not a complete number. */
static int num_value(const hl_reserve_num_t *n, int json, uint32_t *out)
{
    int64_t shift;
    uint64_t v, p = 1;
    int i;

    if (!num_complete(n, json))
        return 0;
    if (n->sig == 0 || n->neg) {
        *out = 0;
        return 1;
    }
    /* value = sig * 10^shift (+ the digits not kept) */
    shift = (int64_t)n->nsig - n->nkept - n->nfrac
            + (n->exp_neg ? -(int64_t)n->exp : (int64_t)n->exp);
    if ((int64_t)n->nkept + shift > 10) {
        *out = HL_COST_MAX;
        return 1;
    }
    if (shift >= 0) {
        for (v = n->sig, i = 0; i < shift; ++i)
            v *= 10;
    }
    else if (shift < -19)
        v = 0;
    else {
        for (i = 0; i < -shift; ++i)
            p *= 10;
        v = n->sig / p;
        /* A fraction rounds up, but one under 1 is 0 (a float underflows
         * to 0, an int() cut gives 0: the backend's default). */
        v += v > 0 && (n->sig % p != 0 || n->rest_nz);
    }
    *out = v > HL_COST_MAX ? HL_COST_MAX : (uint32_t)v;
    return 1;
}

/* ---- the reader --------------------------------------------------------- */

void hl_reserve_reader_init(hl_reserve_reader_t *rd)
{
    memset(rd, 0, sizeof(*rd));
    rd->state = ST_START;
    hl_json_path_init(&rd->json, "max_tokens", rd->json_out,
                      sizeof(rd->json_out));
}

/* A wanted key's value ended: its number counts (json: a JSON number, else
 * a string's text). Zero, negative, unreadable or odd makes the body
 * unsure. */
static void value_read(hl_reserve_reader_t *rd, int json)
{
    uint32_t v = 0;

    if (!num_value(&rd->num, json, &v) || v == 0 || rd->num.odd)
        rd->unsure = 1;
    if (v > rd->largest)
        rd->largest = v;
}

/* Code point cp of a string: the key's next (its names still matched), or
 * a wanted key's value's next. */
static void string_cp(hl_reserve_reader_t *rd, uint32_t cp)
{
    size_t k;

    if (rd->high) {                   /* a high surrogate left alone */
        rd->high = 0;
        string_cp(rd, BAD_CP);
    }
    if (rd->in_key) {
        for (k = 0; k < sizeof(names) / sizeof(names[0]); ++k)
            if (rd->kpos >= strlen(names[k])
                || (unsigned char)names[k][rd->kpos] != cp)
                rd->cand &= (uint8_t)~(1u << k);
        if (rd->kpos < SATURATE)
            ++rd->kpos;
    }
    else if (rd->match)
        num_cp(&rd->num, cp, 0);
}

/* The string ended: a key waits for its ':', a value for what follows. */
static void string_end(hl_reserve_reader_t *rd)
{
    size_t k;

    if (rd->high) {
        rd->high = 0;
        string_cp(rd, BAD_CP);
    }
    if (rd->in_key) {
        rd->match = 0;
        for (k = 0; k < sizeof(names) / sizeof(names[0]); ++k)
            if ((rd->cand & (1u << k)) && strlen(names[k]) == rd->kpos)
                rd->match = 1;
        rd->state = ST_COLON;
        return;
    }
    if (rd->match)
        value_read(rd, 0);
    rd->state = ST_NEXT;
}

/* The \uXXXX just read: a code point, or half of a surrogate pair. */
static void escape_done(hl_reserve_reader_t *rd)
{
    uint32_t c = rd->code;

    rd->state = ST_STRING;
    if (c >= 0xD800 && c <= 0xDBFF) {
        if (rd->high)
            string_cp(rd, BAD_CP);    /* flushes the earlier one */
        rd->high = c;
    }
    else if (c >= 0xDC00 && c <= 0xDFFF && rd->high) {
        c = 0x10000 + ((rd->high - 0xD800) << 10) + (c - 0xDC00);
        rd->high = 0;
        string_cp(rd, c);
    }
    else
        string_cp(rd, c >= 0xDC00 && c <= 0xDFFF ? BAD_CP : c);
}

/* Reads byte c of a string. */
static void string_byte(hl_reserve_reader_t *rd, unsigned char c)
{
    static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
    const char *e;

    switch (rd->state) {
    case ST_ESC:
        rd->state = ST_STRING;
        if (c == 'u') {
            rd->state = ST_HEX;
            rd->hex_left = 4;
            rd->code = 0;
        }
        else if (c != '\0' && (e = strchr(esc_in, c)) != NULL)
            string_cp(rd, (unsigned char)esc_out[e - esc_in]);
        else
            string_cp(rd, BAD_CP);
        return;
    case ST_HEX:
        rd->code = rd->code * 16
                   + (uint32_t)(c >= '0' && c <= '9' ? c - '0'
                                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 0);
        if (--rd->hex_left == 0)
            escape_done(rd);
        return;
    case ST_UTF8:
        rd->code = (rd->code << 6) | (c & 0x3Fu);
        if (--rd->utf8_left == 0) {
            rd->state = ST_STRING;
            string_cp(rd, rd->code);
        }
        return;
    default:
        break;
    }
    if (c == '"')
        string_end(rd);
    else if (c == '\\')
        rd->state = ST_ESC;
    else if (c < 0x80)
        string_cp(rd, c);
    else if (c >= 0xC2 && c <= 0xF4) {
        rd->utf8_left = c < 0xE0 ? 1 : c < 0xF0 ? 2 : 3;
        rd->code = c & (c < 0xE0 ? 0x1Fu : c < 0xF0 ? 0x0Fu : 0x07u);
        rd->state = ST_UTF8;
    }
    else
        string_cp(rd, BAD_CP);
}

/* Starts the value whose first byte is c (not white space) of the
 * top-level object. */
static void value_start(hl_reserve_reader_t *rd, unsigned char c)
{
    if (c == '"') {
        rd->state = ST_STRING;
        rd->in_key = 0;
        memset(&rd->num, 0, sizeof(rd->num));
    }
    else if (c == '{' || c == '[') {
        rd->state = ST_SKIP;
        rd->skip = 1;
        rd->unsure |= rd->match;
    }
    else if (c == '-' || (c >= '0' && c <= '9')) {
        rd->state = rd->match ? ST_NUMBER : ST_TOKEN;
        memset(&rd->num, 0, sizeof(rd->num));
        num_cp(&rd->num, c, 1);
    }
    else {                            /* null, true, false, or not JSON */
        rd->state = ST_TOKEN;
        rd->unsure |= rd->match;
    }
}

/* Reads byte c of a skipped object or array. */
static void skip_byte(hl_reserve_reader_t *rd, unsigned char c)
{
    if (rd->skip_str) {
        if (rd->skip_esc)
            rd->skip_esc = 0;
        else if (c == '\\')
            rd->skip_esc = 1;
        else if (c == '"')
            rd->skip_str = 0;
    }
    else if (c == '"')
        rd->skip_str = 1;
    else if (c == '{' || c == '[')
        ++rd->skip;
    else if ((c == '}' || c == ']') && --rd->skip == 0)
        rd->state = ST_NEXT;
}

/* Reads byte c between the values of the top-level object. */
static void structure_byte(hl_reserve_reader_t *rd, unsigned char c)
{
    if (json_space(c))
        return;
    switch (rd->state) {
    case ST_START:
        rd->state = c == '{' ? ST_KEY : ST_DEAD;
        return;
    case ST_KEY:
        if (c == '"') {
            rd->state = ST_STRING;
            rd->in_key = 1;
            rd->cand = ALL_NAMES;
            rd->kpos = 0;
        }
        else
            rd->state = c == '}' ? ST_END : ST_DEAD;
        return;
    case ST_COLON:
        rd->state = c == ':' ? ST_VALUE : ST_DEAD;
        return;
    case ST_VALUE:
        value_start(rd, c);
        return;
    default:                          /* ST_NEXT */
        rd->state = c == ',' ? ST_KEY : c == '}' ? ST_END : ST_DEAD;
    }
}

/* Reads byte c of the body as UTF-8. */
static void utf8_byte(hl_reserve_reader_t *rd, unsigned char c)
{
    switch (rd->state) {
    case ST_END: case ST_DEAD:
        return;
    case ST_STRING: case ST_ESC: case ST_HEX: case ST_UTF8:
        string_byte(rd, c);
        break;
    case ST_SKIP:
        skip_byte(rd, c);
        break;
    case ST_NUMBER: case ST_TOKEN:
        if (c == ',' || c == '}' || c == ']' || json_space(c)) {
            if (rd->state == ST_NUMBER)
                value_read(rd, 1);
            rd->state = ST_NEXT;
            structure_byte(rd, c);
        }
        else if (rd->state == ST_NUMBER)
            num_cp(&rd->num, c, 1);
        break;
    default:
        structure_byte(rd, c);
    }
}

/* Feeds code point cp (U+FFFD for an unpaired surrogate) on as UTF-8. */
static void code_point(hl_reserve_reader_t *rd, uint32_t cp)
{
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        cp = 0xFFFD;
    if (cp < 0x80)
        utf8_byte(rd, (unsigned char)cp);
    else if (cp < 0x800) {
        utf8_byte(rd, (unsigned char)(0xC0 | cp >> 6));
        utf8_byte(rd, (unsigned char)(0x80 | (cp & 0x3F)));
    }
    else if (cp < 0x10000) {
        utf8_byte(rd, (unsigned char)(0xE0 | cp >> 12));
        utf8_byte(rd, (unsigned char)(0x80 | ((cp >> 6) & 0x3F)));
        utf8_byte(rd, (unsigned char)(0x80 | (cp & 0x3F)));
    }
    else {
        utf8_byte(rd, (unsigned char)(0xF0 | cp >> 18));
        utf8_byte(rd, (unsigned char)(0x80 | ((cp >> 12) & 0x3F)));
        utf8_byte(rd, (unsigned char)(0x80 | ((cp >> 6) & 0x3F)));
        utf8_byte(rd, (unsigned char)(0x80 | (cp & 0x3F)));
    }
}

/* Reads UTF-16 code unit u: a surrogate pair makes one code point. */
static void utf16_unit(hl_reserve_reader_t *rd, uint32_t u)
{
    if (rd->high16) {
        uint32_t high = rd->high16;

        rd->high16 = 0;
        if (u >= 0xDC00 && u <= 0xDFFF) {
            code_point(rd, 0x10000 + ((high - 0xD800) << 10) + (u - 0xDC00));
            return;
        }
        code_point(rd, 0xFFFD);
    }
    if (u >= 0xD800 && u <= 0xDBFF)
        rd->high16 = u;
    else
        code_point(rd, u);
}

/* Reads byte c of the body in its (told) encoding. */
static void encoded_byte(hl_reserve_reader_t *rd, unsigned char c)
{
    const uint8_t *u = rd->pre;

    if (rd->enc == ENC_UTF8) {
        utf8_byte(rd, c);
        return;
    }
    rd->pre[rd->npre++] = c;
    if (rd->enc == ENC_UTF16LE && rd->npre == 2)
        utf16_unit(rd, (uint32_t)u[0] | (uint32_t)u[1] << 8);
    else if (rd->enc == ENC_UTF16BE && rd->npre == 2)
        utf16_unit(rd, (uint32_t)u[0] << 8 | u[1]);
    else if (rd->enc == ENC_UTF32LE && rd->npre == 4)
        code_point(rd, (uint32_t)u[0] | (uint32_t)u[1] << 8
                       | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24);
    else if (rd->enc == ENC_UTF32BE && rd->npre == 4)
        code_point(rd, (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16
                       | (uint32_t)u[2] << 8 | u[3]);
    else
        return;
    rd->npre = 0;
}

/* Tells the encoding from the body's first 4 bytes (pre[]) as Python's
 * json.detect_encoding does, and reads them. */
static void tell_encoding(hl_reserve_reader_t *rd)
{
    const uint8_t *b = rd->pre;
    uint8_t first[4];
    size_t i, skip = 0;

    if (b[0] == 0 && b[1] == 0 && b[2] == 0xFE && b[3] == 0xFF)
        rd->enc = ENC_UTF32BE, skip = 4;
    else if (b[0] == 0xFF && b[1] == 0xFE && b[2] == 0 && b[3] == 0)
        rd->enc = ENC_UTF32LE, skip = 4;
    else if (b[0] == 0xFE && b[1] == 0xFF)
        rd->enc = ENC_UTF16BE, skip = 2;
    else if (b[0] == 0xFF && b[1] == 0xFE)
        rd->enc = ENC_UTF16LE, skip = 2;
    else if (b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF)
        rd->enc = ENC_UTF8, skip = 3;
    else if (b[0] == 0)
        rd->enc = b[1] ? ENC_UTF16BE : ENC_UTF32BE;
    else if (b[1] == 0)
        rd->enc = b[2] || b[3] ? ENC_UTF16LE : ENC_UTF32LE;
    else
        rd->enc = ENC_UTF8;
    memcpy(first, b, sizeof(first));
    rd->npre = 0;
    for (i = skip; i < 4; ++i)
        encoded_byte(rd, first[i]);
}

void hl_reserve_reader_feed(hl_reserve_reader_t *rd, const char *data,
                            size_t n)
{
    const unsigned char *p = (const unsigned char *)data;
    size_t i;

    if (n == 0)
        return;
    hl_json_path_feed(&rd->json, data, n);
    for (i = 0; i < n; ++i) {
        if (rd->enc != ENC_UNKNOWN)
            encoded_byte(rd, p[i]);
        else {
            rd->pre[rd->npre++] = p[i];
            if (rd->npre == 4)
                tell_encoding(rd);
        }
    }
}

/* Returns 1 when the body read so far is one whole valid JSON object whose
 * wanted keys all held a positive number, at least one of them. */
static int reader_sure(const hl_reserve_reader_t *rd)
{
    return rd->largest > 0 && !rd->unsure && rd->state == ST_END
           && hl_json_path_complete(&rd->json);
}

uint32_t hl_reserve_reader_tokens(const hl_reserve_reader_t *rd,
                                  uint32_t dflt)
{
    uint32_t tokens = rd->largest;

    if (!reader_sure(rd) && tokens < dflt)
        tokens = dflt;
    return tokens > HL_COST_MAX ? HL_COST_MAX : tokens;
}

int hl_reserve_find_max_tokens(const char *json, size_t len, uint32_t *out)
{
    hl_reserve_reader_t rd;

    hl_reserve_reader_init(&rd);
    hl_reserve_reader_feed(&rd, json, json ? len : 0);
    if (!reader_sure(&rd))
        return 0;
    *out = rd.largest;
    return 1;
}

uint32_t hl_reserve_units(const hl_quota_t *q, const hl_reserve_reader_t *rd,
                          uint64_t body_len, unsigned bytes_per_token)
{
    uint32_t tokens = q->reserve;
    uint64_t units, prompt;

    if (!hl_quota_reserves(q))
        return 0;
    if (!q->reserve_max_tokens)
        return q->reserve;
    if (rd != NULL)
        tokens = hl_reserve_reader_tokens(rd, q->reserve);
    prompt = body_len / (bytes_per_token ? bytes_per_token
                                         : HL_PROMPT_ESTIMATE_DEFAULT);
    units = (uint64_t)tokens + (prompt > HL_COST_MAX ? HL_COST_MAX : prompt);
    if (units == 0)
        units = 1;     /* a reservation is never empty: it is settled */
    return units > HL_COST_MAX ? HL_COST_MAX : (uint32_t)units;
}
