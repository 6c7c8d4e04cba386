/*
 * hl_usage.c - reads the "usage" an LLM answer reports, byte by byte as the
 * body passes (see hl_usage.h for what is read).
 *
 * Two layers. The JSON scanner is a state machine over one document that
 * keeps the nesting as a bit per level (object or array), the key under
 * which each of the first three levels sits, the key being read (only the
 * first HL_USAGE_KEY_MAX bytes: longer keys are none we want) and the
 * number being read. Strings are skipped byte by byte, escapes included, so
 * a "usage" in the model's text is never a key. The SSE layer splits the
 * stream into lines, feeds the value of each "data:" line (and the line
 * feed that joins data lines) to the scanner, and starts a new document at
 * each blank line (an event's end). A document's fields count (are
 * committed to u->found) when its top-level value closes without error.
 */
#include <string.h>

#include "hl_quota.h"
#include "hl_usage.h"

/* Scanner states: what the next byte may be. */
enum {
    JS_VALUE = 0,   /* a value (the document starts here) */
    JS_OBJ_FIRST,   /* after '{': a key or '}' */
    JS_OBJ_KEY,     /* after ',' in an object: a key */
    JS_COLON,       /* after a key: ':' */
    JS_ARR_FIRST,   /* after '[': a value or ']' */
    JS_AFTER,       /* after a value: ',' or the container's end */
    JS_STRING,      /* inside a string */
    JS_ESCAPE,      /* after a backslash inside a string */
    JS_NUMBER,      /* inside a number */
    JS_LITERAL,     /* inside true, false or null */
    JS_SKIP,        /* inside a value nested too deep: brackets counted */
    JS_SKIP_STRING, /* inside a string of such a value */
    JS_SKIP_ESCAPE, /* after a backslash there */
    JS_DONE,        /* the document closed: the rest is ignored */
    JS_BROKEN       /* a syntax error: the rest is ignored */
};

/* Key ids: the keys that matter, by where they may appear. */
enum {
    K_NONE = 0,     /* no key (array element, top level) */
    K_OTHER,        /* a key that does not matter */
    K_USAGE,
    K_RESPONSE,
    K_MESSAGE,
    K_FIELD         /* K_FIELD + HL_UF_*: a usage field */
};

/* Number flags. */
#define NUM_NEG    1u  /* a minus sign */
#define NUM_FRAC   2u  /* a fraction or an exponent */
#define NUM_DIGIT  4u  /* at least one digit */

/* SSE line states. */
enum {
    LS_START = 0,   /* at a line's first byte */
    LS_NAME,        /* reading a field name */
    LS_DATA_FIRST,  /* after "data:": an optional space */
    LS_DATA,        /* in a data line's value */
    LS_IGNORE       /* in any other line */
};

static const char *const key_names[] = {
    NULL, NULL, "usage", "response", "message",
    "total_tokens", "prompt_tokens", "completion_tokens",
    "input_tokens", "output_tokens"
};

/* Returns the id of the key j->kbuf holds (j->klen bytes). */
static uint8_t key_id(const hl_usage_json_t *j)
{
    uint8_t i;

    if (j->klen > HL_USAGE_KEY_MAX)
        return K_OTHER;
    for (i = K_USAGE; i < K_FIELD + HL_UF_COUNT; ++i) {
        if (strlen(key_names[i]) == j->klen
            && memcmp(key_names[i], j->kbuf, j->klen) == 0)
            return i;
    }
    return K_OTHER;
}

/* Returns 1 if the container at depth d (1..64) is an object. */
static int is_object(const hl_usage_json_t *j, uint32_t d)
{
    return (j->objects >> (d - 1)) & 1u;
}

/* Returns 1 if a number read now, under the current key, is a usage field:
 * the direct member of a top-level "usage" object, or (SSE) of the "usage"
 * object of a top-level "response" or "message" object. */
static int in_usage(const hl_usage_json_t *j, hl_usage_mode_t mode)
{
    if (j->key < K_FIELD || j->skip)
        return 0;
    if (j->depth == 2)
        return is_object(j, 1) && is_object(j, 2) && j->ckey[2] == K_USAGE;
    if (j->depth == 3 && mode == HL_USAGE_SSE)
        return is_object(j, 1) && is_object(j, 2) && is_object(j, 3)
               && (j->ckey[2] == K_RESPONSE || j->ckey[2] == K_MESSAGE)
               && j->ckey[3] == K_USAGE;
    return 0;
}

/* Starts a new document in *j. */
static void json_reset(hl_usage_json_t *j)
{
    memset(j, 0, sizeof(*j));
    j->state = JS_VALUE;
}

/* Adds the fields of from that were read to *to (the later value wins). */
static void merge_fields(hl_usage_fields_t *to, const hl_usage_fields_t *from)
{
    int f;

    for (f = 0; f < HL_UF_COUNT; ++f) {
        uint8_t bit = (uint8_t)(1u << f);

        if (!(from->seen & bit))
            continue;
        to->value[f] = from->value[f];
        to->seen |= bit;
        to->bad = (uint8_t)((to->bad & ~bit) | (from->bad & bit));
    }
}

/* A value ended: the scanner waits for what follows it, or the document
 * closed (its fields committed to u->found). */
static void value_done(hl_usage_t *u)
{
    hl_usage_json_t *j = &u->json;

    if (j->depth > 0) {
        j->state = JS_AFTER;
        return;
    }
    j->state = JS_DONE;
    merge_fields(&u->found, &j->doc);
}

/* The number being read ended: records it if it is a usage field. */
static void number_done(hl_usage_t *u)
{
    hl_usage_json_t *j = &u->json;

    if (in_usage(j, u->mode)) {
        int f = j->key - K_FIELD;
        uint8_t bit = (uint8_t)(1u << f);

        j->doc.seen |= bit;
        if ((j->num_flags & (NUM_NEG | NUM_FRAC)) || !(j->num_flags & NUM_DIGIT)) {
            j->doc.bad |= bit;
            j->doc.value[f] = 0;
        } else {
            j->doc.bad &= (uint8_t)~bit;
            j->doc.value[f] = (uint32_t)j->num;
        }
    }
    value_done(u);
}

/* Opens an object (obj 1) or array (obj 0) as the current value. */
static void open_container(hl_usage_json_t *j, int obj)
{
    uint8_t under = j->depth > 0 && is_object(j, j->depth) ? j->key : K_NONE;

    if (j->depth == HL_USAGE_DEPTH_MAX) {
        j->skip = 1;
        j->state = JS_SKIP;
        return;
    }
    ++j->depth;
    if (obj)
        j->objects |= (uint64_t)1 << (j->depth - 1);
    else
        j->objects &= ~((uint64_t)1 << (j->depth - 1));
    if (j->depth < sizeof(j->ckey))
        j->ckey[j->depth] = under;
    j->key = K_NONE;
    j->state = obj ? JS_OBJ_FIRST : JS_ARR_FIRST;
}

/* Closes the current container if it is an object (obj 1) or array (obj
 * 0); a mismatch breaks the document. */
static void close_container(hl_usage_t *u, int obj)
{
    hl_usage_json_t *j = &u->json;

    if (j->depth == 0 || is_object(j, j->depth) != obj) {
        j->state = JS_BROKEN;
        return;
    }
    --j->depth;
    j->key = K_NONE;
    value_done(u);
}

/* Returns 1 for JSON whitespace. */
static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Starts the value that byte c begins (in JS_VALUE). */
static void start_value(hl_usage_json_t *j, char c)
{
    if (c == '{' || c == '[') {
        open_container(j, c == '{');
    } else if (c == '"') {
        j->str_is_key = 0;
        j->state = JS_STRING;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        j->num = 0;
        j->num_flags = c == '-' ? NUM_NEG : 0;
        j->state = JS_NUMBER;
        if (c != '-') {
            j->num = (uint64_t)(c - '0');
            j->num_flags |= NUM_DIGIT;
        }
    } else if (c >= 'a' && c <= 'z') {
        j->state = JS_LITERAL;
    } else {
        j->state = JS_BROKEN;
    }
}

/* Reads the bytes of a string from p (up to end); returns where it
 * stopped: after the closing quote, at a backslash's next byte, or end. */
static const char *scan_string(hl_usage_t *u, const char *p, const char *end)
{
    hl_usage_json_t *j = &u->json;

    while (p < end) {
        unsigned char c = (unsigned char)*p++;

        if (c == '"') {
            if (j->str_is_key) {
                j->key = key_id(j);
                j->state = JS_COLON;
            } else {
                value_done(u);
            }
            return p;
        }
        if (c == '\\') {
            j->state = JS_ESCAPE;
            return p;
        }
        if (c < 0x20) {             /* a raw control byte: not JSON */
            j->state = JS_BROKEN;
            return p;
        }
        if (j->str_is_key && j->klen <= HL_USAGE_KEY_MAX) {
            if (j->klen < HL_USAGE_KEY_MAX)
                j->kbuf[j->klen] = (char)c;
            ++j->klen;
        }
    }
    return p;
}

/* Reads one byte c of a number; returns 0 when c is not part of it (the
 * number is then done and c must be read again). */
static int number_byte(hl_usage_t *u, char c)
{
    hl_usage_json_t *j = &u->json;

    if (c >= '0' && c <= '9') {
        j->num_flags |= NUM_DIGIT;
        if (j->num <= HL_COST_MAX)
            j->num = j->num * 10 + (uint64_t)(c - '0');
        if (j->num > HL_COST_MAX)
            j->num = (uint64_t)HL_COST_MAX + 1;
        return 1;
    }
    if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
        j->num_flags |= NUM_FRAC;
        return 1;
    }
    if (j->num > HL_COST_MAX)
        j->num = HL_COST_MAX;
    number_done(u);
    return 0;
}

/* Reads one byte of a value nested too deep to track. */
static void skip_byte(hl_usage_t *u, char c)
{
    hl_usage_json_t *j = &u->json;

    if (j->state == JS_SKIP_ESCAPE) {
        j->state = JS_SKIP_STRING;
    } else if (j->state == JS_SKIP_STRING) {
        if (c == '\\')
            j->state = JS_SKIP_ESCAPE;
        else if (c == '"')
            j->state = JS_SKIP;
    } else if (c == '"') {
        j->state = JS_SKIP_STRING;
    } else if (c == '{' || c == '[') {
        if (j->skip < UINT32_MAX)
            ++j->skip;
    } else if (c == '}' || c == ']') {
        if (--j->skip == 0)
            value_done(u);
    }
}

/* Feeds len bytes of one document to the JSON scanner. */
static void json_feed(hl_usage_t *u, const char *p, size_t len)
{
    hl_usage_json_t *j = &u->json;
    const char *end = p + len;

    while (p < end) {
        char c;

        switch (j->state) {
        case JS_DONE:
        case JS_BROKEN:
            return;
        case JS_STRING:
            p = scan_string(u, p, end);
            continue;
        case JS_ESCAPE:
            /* An escaped byte is never the string's end; a key with an
             * escape is none of those we want. */
            if (j->str_is_key)
                j->klen = HL_USAGE_KEY_MAX + 1;
            j->state = JS_STRING;
            ++p;
            continue;
        case JS_SKIP:
        case JS_SKIP_STRING:
        case JS_SKIP_ESCAPE:
            skip_byte(u, *p++);
            continue;
        default:
            break;
        }
        c = *p;
        if (j->state == JS_NUMBER) {
            if (number_byte(u, c))
                ++p;
            continue;
        }
        if (j->state == JS_LITERAL) {
            if (c >= 'a' && c <= 'z')
                ++p;
            else
                value_done(u);
            continue;
        }
        ++p;
        if (is_ws(c))
            continue;
        switch (j->state) {
        case JS_VALUE:
            start_value(j, c);
            break;
        case JS_ARR_FIRST:
            if (c == ']')
                close_container(u, 0);
            else
                start_value(j, c);
            break;
        case JS_OBJ_FIRST:
        case JS_OBJ_KEY:
            if (c == '"') {
                j->str_is_key = 1;
                j->klen = 0;
                j->state = JS_STRING;
            } else if (c == '}' && j->state == JS_OBJ_FIRST) {
                close_container(u, 1);
            } else {
                j->state = JS_BROKEN;
            }
            break;
        case JS_COLON:
            j->state = c == ':' ? JS_VALUE : JS_BROKEN;
            break;
        case JS_AFTER:
            if (c == ',') {
                if (is_object(j, j->depth)) {
                    j->state = JS_OBJ_KEY;
                } else {
                    j->key = K_NONE;
                    j->state = JS_VALUE;
                }
            } else if (c == '}' || c == ']') {
                close_container(u, c == '}');
            } else {
                j->state = JS_BROKEN;
            }
            break;
        default:
            j->state = JS_BROKEN;
            break;
        }
    }
}

/* Ends an SSE line: a data line's line feed goes to the document (data
 * lines join with "\n"); a blank line ends the event. */
static void sse_line_end(hl_usage_t *u)
{
    if (u->line_state == LS_START) {
        json_reset(&u->json);
    } else if (u->line_state == LS_DATA || u->line_state == LS_DATA_FIRST
               || (u->line_state == LS_NAME && u->name_len == 4
                   && memcmp(u->name, "data", 4) == 0)) {
        json_feed(u, "\n", 1);
    }
    u->line_state = LS_START;
    u->name_len = 0;
}

/* Feeds len bytes of an event stream. */
static void sse_feed(hl_usage_t *u, const char *p, size_t len)
{
    const char *end = p + len;

    while (p < end) {
        char c = *p;

        if (c == '\n' && u->after_cr) {     /* the LF of a CRLF */
            u->after_cr = 0;
            ++p;
            continue;
        }
        u->after_cr = 0;
        if (c == '\r' || c == '\n') {
            u->after_cr = c == '\r';
            sse_line_end(u);
            ++p;
            continue;
        }
        switch (u->line_state) {
        case LS_START:
        case LS_NAME:
            u->line_state = LS_NAME;
            if (c == ':') {
                u->line_state = u->name_len == 4
                                && memcmp(u->name, "data", 4) == 0
                                ? LS_DATA_FIRST : LS_IGNORE;
            } else if (u->name_len < sizeof(u->name)) {
                u->name[u->name_len++] = c;
            } else {
                u->line_state = LS_IGNORE;
            }
            ++p;
            break;
        case LS_DATA_FIRST:
            u->line_state = LS_DATA;
            if (c == ' ')
                ++p;
            break;
        case LS_DATA: {
            const char *q = p;

            while (q < end && *q != '\n' && *q != '\r')
                ++q;
            json_feed(u, p, (size_t)(q - p));
            p = q;
            break;
        }
        default:                /* LS_IGNORE */
            while (p < end && *p != '\n' && *p != '\r')
                ++p;
            break;
        }
    }
}

void hl_usage_init(hl_usage_t *u, hl_usage_mode_t mode)
{
    memset(u, 0, sizeof(*u));
    u->mode = mode;
    json_reset(&u->json);
}

void hl_usage_feed(hl_usage_t *u, const char *data, size_t len)
{
    if (len == 0 || data == NULL)
        return;
    if (u->mode == HL_USAGE_SSE)
        sse_feed(u, data, len);
    else
        json_feed(u, data, len);
}

int hl_usage_finished(const hl_usage_t *u)
{
    return u->mode == HL_USAGE_JSON
           && (u->json.state == JS_DONE || u->json.state == JS_BROKEN);
}

/* Reads the sum of fields a and b of *fs (a missing one counts 0) into
 * *cost. Returns 1, 0 when neither was seen, -1 when one seen is bad. */
static int pair_cost(const hl_usage_fields_t *fs, int a, int b, uint32_t *cost)
{
    uint8_t bits = (uint8_t)((1u << a) | (1u << b));
    uint64_t sum = 0;

    if (!(fs->seen & bits))
        return 0;
    if (fs->bad & fs->seen & bits)
        return -1;
    if (fs->seen & (1u << a))
        sum += fs->value[a];
    if (b != a && (fs->seen & (1u << b)))
        sum += fs->value[b];
    *cost = sum > HL_COST_MAX ? HL_COST_MAX : (uint32_t)sum;
    return 1;
}

int hl_usage_cost(const hl_usage_t *u, uint32_t *cost)
{
    const hl_usage_fields_t *fs = &u->found;
    int rc;

    rc = pair_cost(fs, HL_UF_TOTAL, HL_UF_TOTAL, cost);
    if (rc == 0)
        rc = pair_cost(fs, HL_UF_PROMPT, HL_UF_COMPLETION, cost);
    if (rc == 0)
        rc = pair_cost(fs, HL_UF_INPUT, HL_UF_OUTPUT, cost);
    return rc;
}
