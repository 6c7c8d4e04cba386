/*
 * hl_usage.c - reads the "usage" an LLM answer reports, byte by byte as the
 * body passes (see hl_usage.h for what is read).
 *
 * Two layers. The JSON scanner is a state machine over one document. It
 * parses only the objects on the way to a usage object (the top level,
 * "usage", and in events "response" or "message" then "usage"), keeping
 * the key under which each sits, the key being read (only the first
 * HL_USAGE_KEY_MAX bytes: longer keys are none we want) and the number
 * being read. Every other object or array ("choices", "content", ...) is
 * skipped by counting its brackets, at any depth, with a tight loop (its
 * syntax is not checked: only where the usage is can a flaw break the
 * document). Strings are skipped up to their closing quote, escapes
 * honoured, so a "usage" in the model's text is never a key. The SSE layer
 * splits the stream into lines, feeds the value of each "data:" line (and
 * the line feed that joins data lines) to the scanner, and starts a new
 * document at each blank line (an event's end). A document's fields count
 * (are committed to u->found) when its top-level value closes without
 * error.
 *
 * The SSE prefilter: the scanner costs ~15 instructions per byte, and
 * nearly every event of a stream carries no usage, so at an event's first
 * byte the rest of the chunk is searched (memchr for the 'g' of "usage")
 * for a candidate: the raw bytes "usage" (the key exactly: the scanner
 * reads no key holding an escape) followed by blanks, then a line end, or
 * ':', blanks and '{' or a line end, or the chunk's end (data lines may
 * join between key and value; a truncated check counts as a candidate).
 * Every usage object the scanner could read has such a candidate in the
 * raw bytes of its event, so the complete events before the first
 * candidate are passed over unread (their end, a blank line, found by
 * looking back from the candidate, or from the chunk's end). The event
 * holding the candidate is read by the scanner as before, from its first
 * byte. The event still open at a chunk's end (no candidate so far) is
 * copied to u->carry (HL_USAGE_CARRY bytes at most) and its rest added
 * from the next chunks up to its blank line: passed over if still without
 * a candidate, else (or if it outgrows the carry) read by the scanner from
 * the carry, then on in the chunk. So a candidate split across chunks is
 * always seen whole, and the answers are the scanner's, byte for byte (a
 * carried event that never closes holds no candidate, so holds no usage).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE              /* memrchr */
#endif
#include <stddef.h>
#include <string.h>

#include "hl_quota.h"
#include "hl_usage.h"

/* Scanner states: what the next byte may be. */
enum {
    JS_VALUE = 0,   /* a value (the document starts here) */
    JS_OBJ_FIRST,   /* after '{': a key or '}' */
    JS_OBJ_KEY,     /* after ',' in an object: a key */
    JS_COLON,       /* after a key: ':' */
    JS_AFTER,       /* after a value: ',' or the container's end */
    JS_STRING,      /* inside a string */
    JS_ESCAPE,      /* after a backslash inside a string */
    JS_NUMBER,      /* inside a number */
    JS_LITERAL,     /* inside true, false or null */
    JS_SKIP,        /* inside an object or array not on the way to a
                       usage object: brackets counted */
    JS_SKIP_STRING, /* inside a string of such a value */
    JS_SKIP_ESCAPE, /* after a backslash there */
    JS_DONE,        /* the document closed: the rest is ignored */
    JS_BROKEN       /* a syntax error: the rest is ignored */
};

/* Key ids: the keys that matter, by where they may appear. */
enum {
    K_NONE = 0,     /* no key (the top level) */
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

static const struct {
    const char *name;
    uint8_t     len;
} key_names[] = {
    { NULL, 0 }, { NULL, 0 }, { "usage", 5 }, { "response", 8 },
    { "message", 7 }, { "total_tokens", 12 }, { "prompt_tokens", 13 },
    { "completion_tokens", 17 }, { "input_tokens", 12 },
    { "output_tokens", 13 }
};

/* Returns the id of the key j->kbuf holds (j->klen bytes). */
static uint8_t key_id(const hl_usage_json_t *j)
{
    uint8_t i;

    for (i = K_USAGE; i < K_FIELD + HL_UF_COUNT; ++i) {
        if (key_names[i].len == j->klen && key_names[i].name[0] == j->kbuf[0]
            && memcmp(key_names[i].name, j->kbuf, j->klen) == 0)
            return i;
    }
    return K_OTHER;
}

/* Byte classes, so the loops that pass over strings and skipped values
 * test one table entry per byte: C_STR ends a run of string bytes (a quote
 * or a backslash), C_SKIP matters in a skipped value (a quote or a
 * bracket). */
#define C_STR  1u
#define C_SKIP 2u
static const uint8_t byte_class[256] = {
    ['"'] = C_STR | C_SKIP, ['\\'] = C_STR,
    ['{'] = C_SKIP, ['}'] = C_SKIP, ['['] = C_SKIP, [']'] = C_SKIP
};

/* Returns the first byte of class cls in [p, end), or end. */
static const char *find_class(const char *p, const char *end, uint8_t cls)
{
    while (p < end && !(byte_class[(unsigned char)*p] & cls))
        ++p;
    return p;
}

/* Returns 1 if the object that the current key's value opens is on the
 * way to a usage object, so is parsed: the top-level object; under it
 * "usage", and in an event "response" or "message"; under those (events
 * only) "usage". */
static int worth_entering(const hl_usage_json_t *j, hl_usage_mode_t mode)
{
    int sse = mode == HL_USAGE_SSE;

    switch (j->depth) {
    case 0:
        return 1;
    case 1:
        return j->key == K_USAGE
               || (sse && (j->key == K_RESPONSE || j->key == K_MESSAGE));
    case 2:
        return sse && j->key == K_USAGE
               && (j->ckey[2] == K_RESPONSE || j->ckey[2] == K_MESSAGE);
    }
    return 0;
}

/* Returns 1 if a number read now, under the current key, is a usage field:
 * a direct member of a usage object entered (worth_entering). */
static int in_usage(const hl_usage_json_t *j)
{
    return j->key >= K_FIELD && j->depth >= 2 && j->depth < sizeof(j->ckey)
           && j->ckey[j->depth] == K_USAGE;
}

/* Starts a new document in *j. */
static void json_reset(hl_usage_json_t *j)
{
    memset(j, 0, sizeof(*j));
    j->state = JS_VALUE;
}

/* Records value v of field f in *fs (bad: it was negative or not whole):
 * the largest valid value of the field wins (issue 25: an echoed usage
 * object never lowers the charge), and a bad one counts only while the
 * field has no valid one. */
static void record_field(hl_usage_fields_t *fs, int f, uint32_t v, int bad)
{
    uint8_t bit = (uint8_t)(1u << f);
    int valid = (fs->seen & bit) && !(fs->bad & bit);

    if (bad) {
        if (!valid) {
            fs->bad |= bit;
            fs->value[f] = 0;
        }
    }
    else {
        if (!valid || v > fs->value[f])
            fs->value[f] = v;
        fs->bad &= (uint8_t)~bit;
    }
    fs->seen |= bit;
}

/* Adds the fields of from that were read to *to (record_field). */
static void merge_fields(hl_usage_fields_t *to, const hl_usage_fields_t *from)
{
    int f;

    for (f = 0; f < HL_UF_COUNT; ++f)
        if (from->seen & (1u << f))
            record_field(to, f, from->value[f], (from->bad >> f) & 1);
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

    if (in_usage(j))
        record_field(&j->doc, j->key - K_FIELD, (uint32_t)j->num,
                     (j->num_flags & (NUM_NEG | NUM_FRAC))
                     || !(j->num_flags & NUM_DIGIT));
    value_done(u);
}

/* Opens the object ('{') or array ('[') c begins as the current value:
 * parsed if it is an object on the way to a usage object, else skipped. */
static void open_container(hl_usage_t *u, char c)
{
    hl_usage_json_t *j = &u->json;

    if (c != '{' || !worth_entering(j, u->mode)) {
        j->skip = 1;
        j->state = JS_SKIP;
        return;
    }
    ++j->depth;                 /* at most 3: see worth_entering */
    j->ckey[j->depth] = j->key;
    j->key = K_NONE;
    j->state = JS_OBJ_FIRST;
}

/* Closes the current object. */
static void close_object(hl_usage_t *u)
{
    hl_usage_json_t *j = &u->json;

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
static void start_value(hl_usage_t *u, char c)
{
    hl_usage_json_t *j = &u->json;

    if (c == '{' || c == '[') {
        open_container(u, c);
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
    const char *run = p;
    unsigned char c;

    p = find_class(p, end, C_STR);
    if (j->str_is_key && j->klen <= HL_USAGE_KEY_MAX) {
        /* Keep the key's first bytes; a longer key is none we want. */
        size_t n = (size_t)(p - run);

        if (n > (size_t)(HL_USAGE_KEY_MAX - j->klen))
            j->klen = HL_USAGE_KEY_MAX + 1;
        else {
            memcpy(j->kbuf + j->klen, run, n);
            j->klen = (uint8_t)(j->klen + n);
        }
    }
    if (p == end)
        return p;
    c = (unsigned char)*p++;
    if (c == '"') {
        if (j->str_is_key) {
            j->key = key_id(j);
            j->state = JS_COLON;
        } else {
            value_done(u);
        }
    } else {
        j->state = JS_ESCAPE;
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

/* Reads the bytes of a skipped value from p (up to end): brackets counted,
 * strings passed over. Returns where it stopped: after the value's last
 * bracket, or end. */
static const char *skip_run(hl_usage_t *u, const char *p, const char *end)
{
    hl_usage_json_t *j = &u->json;

    while (p < end) {
        char c;

        if (j->state == JS_SKIP_ESCAPE) {
            j->state = JS_SKIP_STRING;
            ++p;
            continue;
        }
        if (j->state == JS_SKIP_STRING) {
            p = find_class(p, end, C_STR);
            if (p < end)
                j->state = *p++ == '"' ? JS_SKIP : JS_SKIP_ESCAPE;
            continue;
        }
        p = find_class(p, end, C_SKIP);
        if (p == end)
            break;
        c = *p++;
        if (c == '"') {
            j->state = JS_SKIP_STRING;
        } else if (c == '{' || c == '[') {
            if (j->skip < UINT32_MAX)
                ++j->skip;
        } else if (--j->skip == 0) {
            value_done(u);
            break;
        }
    }
    return p;
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
            p = skip_run(u, p, end);
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
            start_value(u, c);
            break;
        case JS_OBJ_FIRST:
        case JS_OBJ_KEY:
            if (c == '"') {
                j->str_is_key = 1;
                j->klen = 0;
                j->state = JS_STRING;
            } else if (c == '}' && j->state == JS_OBJ_FIRST) {
                close_object(u);
            } else {
                j->state = JS_BROKEN;
            }
            break;
        case JS_COLON:
            j->state = c == ':' ? JS_VALUE : JS_BROKEN;
            break;
        case JS_AFTER:
            /* Only objects are parsed: an array is skipped whole. */
            if (c == ',')
                j->state = JS_OBJ_KEY;
            else if (c == '}')
                close_object(u);
            else
                j->state = JS_BROKEN;
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
        u->at_event = 1;
    } else if (u->line_state == LS_DATA || u->line_state == LS_DATA_FIRST
               || (u->line_state == LS_NAME && u->name_len == 4
                   && memcmp(u->name, "data", 4) == 0)) {
        json_feed(u, "\n", 1);
    }
    u->line_state = LS_START;
    u->name_len = 0;
}

/* Returns the first CR or LF in [p, end), or end. */
static const char *line_end(const char *p, const char *end)
{
    const char *lf = memchr(p, '\n', (size_t)(end - p));
    const char *cr = memchr(p, '\r', (size_t)((lf ? lf : end) - p));

    return cr ? cr : lf ? lf : end;
}

/* Returns 1 for a line-end byte. */
static int is_eol(char c)
{
    return c == '\n' || c == '\r';
}

/* Returns 1 if the bytes from p (just after a raw "usage") may open a
 * usage object in the joined data: blanks, then ':', blanks and '{'; a
 * line end or end on the way may hide a joined next data line, so counts
 * too. */
static int may_open_usage(const char *p, const char *end)
{
    if (end - p >= 2 && p[0] == ':' && p[1] != ' ' && p[1] != '\t')
        return p[1] == '{' || p[1] == '\r' || p[1] == '\n';  /* "usage":x */
    while (p < end && (*p == ' ' || *p == '\t'))
        ++p;
    if (p == end || *p == '\r' || *p == '\n')
        return 1;
    if (*p++ != ':')
        return 0;
    while (p < end && (*p == ' ' || *p == '\t'))
        ++p;
    return p == end || *p == '{' || *p == '\r' || *p == '\n';
}

/* Returns the first candidate in [p, end): where a raw "usage" that may
 * open a usage object starts (also one cut short by end); else end. */
static const char *find_candidate(const char *p, const char *end)
{
    const char *g;

    if (end - p < 5)
        return end;             /* no room for a "usage" up to its 'g' */
    g = p + 4;                  /* the 'g' of a "usage" starting at p */
    while (g < end && (g = memchr(g, 'g', (size_t)(end - g))) != NULL) {
        const char *c = g - 4;

        if (end - c >= 9 && memcmp(c, "\"usage\":", 8) == 0) {
            /* The usual "usage":null or "usage":{, tested at once. */
            if (c[8] != '{' && c[8] != ' ' && c[8] != '\t' && !is_eol(c[8])) {
                g += 5;
                continue;
            }
            return c;
        }
        if (end - c < 7) {
            if (memcmp(c, "\"usage\"", (size_t)(end - c)) == 0)
                return c;
        } else if (memcmp(c, "\"usage\"", 7) == 0
                   && may_open_usage(c + 7, end)) {
            return c;
        }
        ++g;
    }
    return end;
}

/* Returns where an event starting in (p, q] begins: just after a blank
 * line whose two line ends both lie in [p, q) (any two line-end bytes in a
 * row but CR LF end a blank line), the last one found; NULL if there is
 * none. Sets *after_cr when that blank line ended with a CR (a LF next is
 * its CR LF's). A LF ending a blank line is looked for first (memrchr: one
 * call per line), then, in a stream without one, every byte. */
static const char *last_event_start(const char *p, const char *q,
                                     uint8_t *after_cr)
{
    const char *t = q, *s;

    while (t - p >= 2 && (t = memrchr(p + 1, '\n', (size_t)(t - p - 1)))) {
        if (t[-1] == '\n'
            || (t[-1] == '\r' && t - p >= 2 && (t[-2] == '\n' || t[-2] == '\r'))) {
            *after_cr = 0;
            return t + 1;
        }
    }
    for (s = q; s - p >= 2; --s) {
        char a = s[-2], b = s[-1];

        if ((b == '\n' || b == '\r') && (a == '\n' || a == '\r')
            && !(a == '\r' && b == '\n')) {
            *after_cr = b == '\r';
            return s;
        }
    }
    return NULL;
}

/* Sets u to an event's first byte at p, a blank line just read (after_cr:
 * it ended with a CR). Returns p, past the LF of that CR LF if p holds it
 * (before end; else u->after_cr says a LF next is still that CR's). */
static const char *at_event_start(hl_usage_t *u, const char *p,
                                  const char *end, uint8_t after_cr)
{
    json_reset(&u->json);
    u->line_state = LS_START;
    u->name_len = 0;
    u->after_cr = after_cr;
    u->at_event = 1;
    if (after_cr && p < end && *p == '\n') {
        u->after_cr = 0;
        ++p;
    }
    return p;
}

/* At an event's first byte p: passes over the complete events before the
 * first candidate in [p, end) (they hold no usage); when there is none,
 * keeps the event still open at end in u->carry if it fits (it holds no
 * candidate so far, so is read only if its rest brings one). Returns where
 * the scanner must go on: the start of the event holding the candidate or
 * still open at end (u set to that event's start), p itself, or end. */
static const char *pass_over_events(hl_usage_t *u, const char *p,
                                    const char *end)
{
    uint8_t after_cr = 0;
    const char *q, *s;

    if (u->after_cr && *p == '\n')     /* the LF of a CR LF */
        ++p;
    u->after_cr = 0;
    q = find_candidate(p, end);
    s = last_event_start(p, q, &after_cr);
    if (s != NULL)
        s = at_event_start(u, s, end, after_cr);
    else
        s = p;
    if (q == end && (size_t)(end - s) <= sizeof(u->carry)) {
        memcpy(u->carry, s, (size_t)(end - s));
        u->carry_len = (uint16_t)(end - s);
        return end;
    }
    u->at_event = 0;
    return s;
}

static void sse_scan(hl_usage_t *u, const char *p, const char *end, int fast);

/* Reads the carried event (u->carry) to the end by the scanner, then
 * empties the carry. */
static void scan_carry(hl_usage_t *u)
{
    size_t n = u->carry_len;

    u->carry_len = 0;
    u->at_event = 0;
    sse_scan(u, u->carry, u->carry + n, 0);
}

/* Returns the byte k (1 or 2) places before x in the carry followed by
 * [p, ...): x[-k], or a carried byte; NUL before the carry. */
static char byte_before(const hl_usage_t *u, const char *p, const char *x,
                        size_t k)
{
    if ((size_t)(x - p) >= k)
        return x[-(ptrdiff_t)k];
    k -= (size_t)(x - p);
    return u->carry_len >= k ? u->carry[u->carry_len - k] : '\0';
}

/* Returns the end of the first blank line in the carry followed by [p, end)
 * that ends in [p, end) -- a LF one looked for first (memchr; in a stream
 * of them it may pass over a CR one, which only makes the carried span
 * longer), then any, byte by byte -- or NULL. Sets *after_cr when it
 * ended with a CR. */
static const char *first_event_end(const hl_usage_t *u, const char *p,
                                   const char *end, uint8_t *after_cr)
{
    const char *t;
    char prev;

    *after_cr = 0;
    for (t = p; t < end && (t = memchr(t, '\n', (size_t)(end - t))); ++t) {
        char b1 = byte_before(u, p, t, 1);

        if (b1 == '\n' || (b1 == '\r' && is_eol(byte_before(u, p, t, 2))))
            return t + 1;
    }
    for (t = p, prev = byte_before(u, p, p, 1); t < end; prev = *t++) {
        if (is_eol(*t) && is_eol(prev) && !(prev == '\r' && *t == '\n')) {
            *after_cr = *t == '\r';
            return t + 1;
        }
    }
    return NULL;
}

/* With an event carried: adds its rest from [p, end) (up to its closing
 * blank line) to the carry; passes the event over once it is complete
 * without a candidate; reads it by the scanner as soon as it holds one,
 * or when it outgrows the carry. Returns where to go on in [p, end]. */
static const char *carry_on(hl_usage_t *u, const char *p, const char *end)
{
    uint8_t after_cr = 0;
    const char *e = first_event_end(u, p, end, &after_cr);
    size_t n = (size_t)((e ? e : end) - p), from;

    if (n > sizeof(u->carry) - u->carry_len) {
        scan_carry(u);          /* too long: read it all, and on */
        return p;
    }
    /* What was carried held no candidate, not even one cut short by its
     * end, but for a "usage" cut before its 'g': look from there. */
    from = u->carry_len > 6 ? u->carry_len - 6u : 0;
    memcpy(u->carry + u->carry_len, p, n);
    u->carry_len = (uint16_t)(u->carry_len + n);
    if (find_candidate(u->carry + from, u->carry + u->carry_len)
        != u->carry + u->carry_len) {
        scan_carry(u);
        return p + n;
    }
    if (e == NULL)
        return end;             /* still open */
    u->carry_len = 0;
    return at_event_start(u, e, end, after_cr);
}

/* Feeds [p, end) of an event stream to the line reader and the scanner;
 * with fast, whole events are passed over or carried by the prefilter
 * whenever an event starts. */
static void sse_scan(hl_usage_t *u, const char *p, const char *end, int fast)
{
    while (p < end) {
        char c;

        if (fast && u->at_event) {
            p = pass_over_events(u, p, end);
            if (p == end)
                break;
        }
        c = *p;

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
        u->at_event = 0;        /* the event has a byte */
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
            const char *q = line_end(p, end);

            json_feed(u, p, (size_t)(q - p));
            p = q;
            break;
        }
        default:                /* LS_IGNORE */
            p = line_end(p, end);
            break;
        }
    }
}

/* Feeds len bytes of an event stream. */
static void sse_feed(hl_usage_t *u, const char *p, size_t len)
{
    const char *end = p + len;

    if (u->carry_len > 0)
        p = carry_on(u, p, end);
    sse_scan(u, p, end, 1);
}

void hl_usage_init(hl_usage_t *u, hl_usage_mode_t mode)
{
    memset(u, 0, sizeof(*u));
    u->mode = mode;
    u->at_event = 1;
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
