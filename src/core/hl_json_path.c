/*
 * hl_json_path.c - the value at a dotted path of a JSON document read in
 * chunks, as PHP's json_decode gives it (see hl_json_path.h).
 *
 * One byte at a time through a state machine whose whole state is the
 * hl_json_path_t: the grammar of PHP's scanner (ext/json/json_scanner.re)
 * and parser, a bit per open bracket (array or object), and how many of
 * the outer objects lie on the path ("on"). In an object on the path at
 * depth d, each key is compared with segment d as it is unescaped; the
 * value of a key that matches replaces whatever an earlier duplicate gave,
 * and is written out when d is the last segment and it is a string or a
 * number, or is the next object on the path when it is an object.
 */
#include <string.h>

#include "hl_json_path.h"
#include "hl_text.h"

/* What the next byte may be. */
enum {
    S_VALUE = 0,       /* a value (at the start, after ':' or ',' in an array) */
    S_VALUE_OR_CLOSE,  /* after '[' */
    S_KEY_OR_CLOSE,    /* after '{' */
    S_KEY,             /* after ',' in an object */
    S_COLON,           /* after a key */
    S_NEXT,            /* after a value inside a bracket: ',' or its close */
    S_END,             /* after the top-level value: white space only */
    S_STRING,          /* inside a string */
    S_ESCAPE,          /* after '\' */
    S_HEX,             /* inside \uXXXX */
    S_LOW_SLASH,       /* after a high surrogate: '\' of its low half */
    S_LOW_U,           /* then 'u' */
    S_UTF8,            /* inside a multi-byte UTF-8 character */
    S_NUMBER,          /* inside a number */
    S_LITERAL,         /* inside true, false or null */
    S_ERROR            /* invalid: nothing more is read */
};

/* Where string and number bytes go. */
enum { SINK_NONE = 0, SINK_KEY, SINK_VALUE };

/* Where in a number: after '-', a leading 0, integer digits, '.',
 * fraction digits, 'e', the exponent's sign, exponent digits. */
enum { N_MINUS = 0, N_ZERO, N_INT, N_DOT, N_FRAC, N_E, N_ESIGN, N_EXP };

static const char *const literals[] = { "true", "false", "null" };

int hl_json_path_check(const char *path)
{
    size_t i, len = path ? strlen(path) : 0;

    if (len == 0 || len > HL_JSON_PATH_MAX || path[0] == '.'
        || path[len - 1] == '.')
        return -1;
    for (i = 0; i < len; i++) {
        char c = path[i];
        if (c == '.' ? path[i + 1] == '.'
                     : !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                         || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return -1;
    }
    return 0;
}

int hl_json_path_init(hl_json_path_t *s, const char *path, char *out,
                      size_t out_size)
{
    size_t i, len;

    memset(s, 0, sizeof(*s));
    s->state = S_ERROR;
    if (out == NULL || out_size == 0 || hl_json_path_check(path) != 0)
        return -1;
    len = strlen(path);
    memcpy(s->path, path, len + 1);
    for (i = 0; i <= len; i++) {
        if (i == len || path[i] == '.') {
            s->seg_len[s->nseg] = (uint8_t)(i - s->seg_off[s->nseg]);
            s->nseg++;
            if (i < len)
                s->seg_off[s->nseg] = (uint8_t)(i + 1);
        }
    }
    s->out = out;
    s->out_size = out_size;
    out[0] = '\0';
    s->state = S_VALUE;
    return 0;
}

/* Returns 1 for JSON's white space. */
static int is_ws(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Passes one byte of a string or number to where it goes: the key
 * comparison, or the value (cut at the buffer). */
static void emit(hl_json_path_t *s, unsigned char c)
{
    if (s->sink == SINK_KEY) {
        uint8_t seg = (uint8_t)(s->depth - 1);
        if (!s->kbad && s->kpos < s->seg_len[seg]
            && (unsigned char)s->path[s->seg_off[seg] + s->kpos] == c)
            s->kpos++;
        else
            s->kbad = 1;
    } else if (s->sink == SINK_VALUE && s->out_len + 1 < s->out_size) {
        s->out[s->out_len++] = (char)c;
    }
}

/* Passes code point cp (never a surrogate) on as UTF-8. */
static void emit_code_point(hl_json_path_t *s, uint32_t cp)
{
    if (cp < 0x80) {
        emit(s, (unsigned char)cp);
    } else if (cp < 0x800) {
        emit(s, (unsigned char)(0xC0 | (cp >> 6)));
        emit(s, (unsigned char)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        emit(s, (unsigned char)(0xE0 | (cp >> 12)));
        emit(s, (unsigned char)(0x80 | ((cp >> 6) & 0x3F)));
        emit(s, (unsigned char)(0x80 | (cp & 0x3F)));
    } else {
        emit(s, (unsigned char)(0xF0 | (cp >> 18)));
        emit(s, (unsigned char)(0x80 | ((cp >> 12) & 0x3F)));
        emit(s, (unsigned char)(0x80 | ((cp >> 6) & 0x3F)));
        emit(s, (unsigned char)(0x80 | (cp & 0x3F)));
    }
}

/* Returns 1 if the bracket open at depth d (1-based) is an object. */
static int object_at(const hl_json_path_t *s, uint32_t d)
{
    return (s->is_object[(d - 1) / 8] >> ((d - 1) % 8)) & 1;
}

/* A value ended: what may follow it. */
static void value_done(hl_json_path_t *s)
{
    if (s->sink == SINK_VALUE)
        s->found = 1;
    s->sink = SINK_NONE;
    s->state = s->depth ? S_NEXT : S_END;
}

/* Opens an array or object (c). Returns 0, or -1 when too deep. */
static int open_bracket(hl_json_path_t *s, unsigned char c, int on_path)
{
    uint32_t d = s->depth;

    if (d >= HL_JSON_DEPTH_MAX)
        return -1;
    if (c == '{')
        s->is_object[d / 8] |= (uint8_t)(1u << (d % 8));
    else
        s->is_object[d / 8] &= (uint8_t)~(1u << (d % 8));
    s->depth = d + 1;
    if (on_path && c == '{')
        s->on = s->depth;
    s->state = c == '{' ? S_KEY_OR_CLOSE : S_VALUE_OR_CLOSE;
    return 0;
}

/* Closes the innermost bracket with c. Returns 0, or -1 when c does not
 * close it. */
static int close_bracket(hl_json_path_t *s, unsigned char c)
{
    if (s->depth == 0 || (c == '}') != object_at(s, s->depth))
        return -1;
    if (s->on == s->depth)
        s->on--;
    s->depth--;
    s->sink = SINK_NONE;
    value_done(s);
    return 0;
}

/* Starts the value whose first byte is c. Returns 0, or -1 when c starts
 * no value. The value of a key on the path replaces the one an earlier
 * duplicate gave. */
static int start_value(hl_json_path_t *s, unsigned char c)
{
    int matched = s->key_match, target;
    uint8_t i;

    s->key_match = 0;
    if (matched) {
        s->found = 0;
        s->out_len = 0;
    }
    target = matched && s->depth == s->nseg;
    if (target)
        s->is_num = c == '-' || (c >= '0' && c <= '9');
    if (c == '{' || c == '[')
        return open_bracket(s, c, s->depth == 0 || (matched && !target));
    s->sink = target ? SINK_VALUE : SINK_NONE;
    if (c == '"') {
        s->in_key = 0;
        s->state = S_STRING;
        return 0;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        s->num = c == '-' ? N_MINUS : c == '0' ? N_ZERO : N_INT;
        emit(s, c);
        s->state = S_NUMBER;
        return 0;
    }
    s->sink = SINK_NONE;
    for (i = 0; i < 3; i++) {
        if (c == (unsigned char)literals[i][0]) {
            s->lit = i;
            s->lit_pos = 1;
            s->state = S_LITERAL;
            return 0;
        }
    }
    return -1;
}

/* Starts a key: compared with the path's segment when its object is on
 * the path. */
static void start_key(hl_json_path_t *s)
{
    s->in_key = 1;
    s->sink = s->on == s->depth ? SINK_KEY : SINK_NONE;
    s->kpos = 0;
    s->kbad = 0;
    s->state = S_STRING;
}

/* A string ended (its closing quote read). */
static void string_done(hl_json_path_t *s)
{
    if (s->in_key) {
        s->key_match = s->sink == SINK_KEY && !s->kbad
                       && s->kpos == s->seg_len[s->depth - 1];
        s->sink = SINK_NONE;
        s->state = S_COLON;
        return;
    }
    value_done(s);
}

/* Reads byte c of a string (not an escape). Returns 0 or -1. */
static int string_byte(hl_json_path_t *s, unsigned char c)
{
    if (c == '"') {
        string_done(s);
        return 0;
    }
    if (c == '\\') {
        s->state = S_ESCAPE;
        return 0;
    }
    if (c < 0x20)
        return -1;                  /* a control byte */
    if (c >= 0x80) {
        /* The first byte of a UTF-8 character: how many follow, and the
         * range of the next (no overlong form, no surrogate, <= U+10FFFF). */
        s->utf8_lo = 0x80;
        s->utf8_hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF)
            s->utf8_left = 1;
        else if (c >= 0xE0 && c <= 0xEF) {
            s->utf8_left = 2;
            if (c == 0xE0)
                s->utf8_lo = 0xA0;
            else if (c == 0xED)
                s->utf8_hi = 0x9F;
        }
        else if (c >= 0xF0 && c <= 0xF4) {
            s->utf8_left = 3;
            if (c == 0xF0)
                s->utf8_lo = 0x90;
            else if (c == 0xF4)
                s->utf8_hi = 0x8F;
        }
        else
            return -1;
        s->state = S_UTF8;
    }
    emit(s, c);
    return 0;
}

/* Reads the byte after a '\'. Returns 0 or -1. */
static int escape_byte(hl_json_path_t *s, unsigned char c)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *p;

    s->state = S_STRING;
    if (c == 'u') {
        s->hex_left = 4;
        s->code = 0;
        s->state = S_HEX;
        return 0;
    }
    if (c == '\0' || (p = strchr(from, c)) == NULL)
        return -1;
    emit(s, (unsigned char)to[p - from]);
    return 0;
}

/* Reads a digit of \uXXXX. Returns 0 or -1 (not a hex digit, an unpaired
 * surrogate). */
static int hex_byte(hl_json_path_t *s, unsigned char c)
{
    int v = hl_hex_value((char)c);

    if (v < 0)
        return -1;
    s->code = s->code * 16 + (uint32_t)v;
    if (--s->hex_left > 0)
        return 0;
    if (s->high) {
        if (s->code < 0xDC00 || s->code > 0xDFFF)
            return -1;
        emit_code_point(s, 0x10000 + ((s->high - 0xD800) << 10)
                           + (s->code - 0xDC00));
        s->high = 0;
    } else if (s->code >= 0xD800 && s->code <= 0xDBFF) {
        s->high = s->code;
        s->state = S_LOW_SLASH;
        return 0;
    } else if (s->code >= 0xDC00 && s->code <= 0xDFFF) {
        return -1;
    } else {
        emit_code_point(s, s->code);
    }
    s->state = S_STRING;
    return 0;
}

/* Reads byte c of a number. Returns 1 when c is part of it, 0 when the
 * number ended before c (c is read again), -1 when it is invalid. */
static int number_byte(hl_json_path_t *s, unsigned char c)
{
    int digit = c >= '0' && c <= '9';
    uint8_t next;

    switch (s->num) {
    case N_MINUS:
        next = c == '0' ? N_ZERO : digit ? N_INT : 0xFF;
        break;
    case N_ZERO:
    case N_INT:
        next = digit && s->num == N_INT ? N_INT
               : c == '.' ? N_DOT : (c == 'e' || c == 'E') ? N_E : 0xFE;
        break;
    case N_DOT:
        next = digit ? N_FRAC : 0xFF;
        break;
    case N_FRAC:
        next = digit ? N_FRAC : (c == 'e' || c == 'E') ? N_E : 0xFE;
        break;
    case N_E:
        next = digit ? N_EXP : (c == '+' || c == '-') ? N_ESIGN : 0xFF;
        break;
    case N_ESIGN:
        next = digit ? N_EXP : 0xFF;
        break;
    default:                       /* N_EXP */
        next = digit ? N_EXP : 0xFE;
        break;
    }
    if (next == 0xFF)
        return -1;                 /* a number cannot end here */
    if (next == 0xFE) {
        value_done(s);             /* it ended before c */
        return 0;
    }
    s->num = next;
    emit(s, c);
    return 1;
}

/* Reads byte c outside strings, numbers and literals. Returns 0 or -1. */
static int structure_byte(hl_json_path_t *s, unsigned char c)
{
    if (is_ws(c))
        return 0;
    switch (s->state) {
    case S_VALUE_OR_CLOSE:
        if (c == ']')
            return close_bracket(s, c);
        /* fall through */
    case S_VALUE:
        return start_value(s, c);
    case S_KEY_OR_CLOSE:
        if (c == '}')
            return close_bracket(s, c);
        /* fall through */
    case S_KEY:
        if (c != '"')
            return -1;
        start_key(s);
        return 0;
    case S_COLON:
        if (c != ':')
            return -1;
        s->state = S_VALUE;
        return 0;
    case S_NEXT:
        if (c == ']' || c == '}')
            return close_bracket(s, c);
        if (c != ',')
            return -1;
        s->state = object_at(s, s->depth) ? S_KEY : S_VALUE;
        return 0;
    default:                       /* S_END: only white space */
        return -1;
    }
}

int hl_json_path_feed(hl_json_path_t *s, const char *data, size_t n)
{
    const unsigned char *p = (const unsigned char *)data;
    const unsigned char *end = p + n;
    int rc = 0;

    while (p < end && s->state != S_ERROR) {
        unsigned char c = *p;

        switch (s->state) {
        case S_STRING:
            /* The common case: plain bytes of a string nobody reads. */
            if (s->sink == SINK_NONE) {
                while (c >= 0x20 && c < 0x80 && c != '"' && c != '\\'
                       && ++p < end)
                    c = *p;
                if (p == end)
                    continue;
            }
            rc = string_byte(s, c);
            break;
        case S_ESCAPE:
            rc = escape_byte(s, c);
            break;
        case S_HEX:
            rc = hex_byte(s, c);
            break;
        case S_LOW_SLASH:
            rc = c == '\\' ? 0 : -1;
            s->state = S_LOW_U;
            break;
        case S_LOW_U:
            rc = c == 'u' ? 0 : -1;
            s->hex_left = 4;
            s->code = 0;
            s->state = S_HEX;
            break;
        case S_UTF8:
            rc = c >= s->utf8_lo && c <= s->utf8_hi ? 0 : -1;
            emit(s, c);
            s->utf8_lo = 0x80;
            s->utf8_hi = 0xBF;
            if (--s->utf8_left == 0)
                s->state = S_STRING;
            break;
        case S_NUMBER:
            rc = number_byte(s, c);
            if (rc == 0)
                continue;          /* c is read again */
            rc = rc < 0 ? -1 : 0;
            break;
        case S_LITERAL:
            if (c != (unsigned char)literals[s->lit][s->lit_pos])
                rc = -1;
            else if (literals[s->lit][++s->lit_pos] == '\0')
                value_done(s);
            break;
        default:
            rc = structure_byte(s, c);
            break;
        }
        if (rc < 0)
            s->state = S_ERROR;
        p++;
    }
    return s->state == S_ERROR ? -1 : 0;
}

long hl_json_path_finish(hl_json_path_t *s)
{
    /* A top-level number ends with the document. */
    if (s->state == S_NUMBER && s->depth == 0
        && (s->num == N_ZERO || s->num == N_INT || s->num == N_FRAC
            || s->num == N_EXP))
        value_done(s);
    if (s->out == NULL)
        return -1;
    if (s->state != S_END || !s->found) {
        s->out[0] = '\0';
        return -1;
    }
    s->out[s->out_len] = '\0';
    return (long)s->out_len;
}

int hl_json_path_complete(const hl_json_path_t *s)
{
    return s->state == S_END;
}
