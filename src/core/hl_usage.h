/*
 * hl_usage.h - the tokens an LLM answer reports in its body (cost=usage),
 * read incrementally as the body passes.
 *
 * Pure core: no httpd headers, no allocation. An hl_usage_t is a fixed-size
 * state the caller owns (under 1 KB); it is fed the response body in
 * chunks of any size, split anywhere: a streaming JSON scanner parses only
 * the (at most 3) objects on the way to a usage object and skips every
 * other value by counting its brackets, so it holds the key being read (at
 * most HL_USAGE_KEY_MAX bytes), the number being read and a few counters.
 * In an event stream a prefilter passes over whole events that cannot hold
 * a usage without scanning them, and copies at most HL_USAGE_CARRY bytes
 * (the start of the event open at a chunk's end) to decide on it when its
 * rest comes. Neither a huge or deeply nested JSON answer nor an endless
 * event stream grows it, and nothing is held back from the client: the
 * caller passes each chunk on as it is.
 *
 * What is read:
 * - a JSON body (HL_USAGE_JSON): its top-level "usage" object (Chat
 *   Completions, Responses, Anthropic Messages answers);
 * - a text/event-stream (HL_USAGE_SSE): each event's data lines, joined as
 *   the SSE format joins them, read as one JSON document per event; its
 *   top-level "usage" (Chat chunks with stream_options.include_usage,
 *   Anthropic message_delta), "response"."usage" (Responses'
 *   response.completed) and "message"."usage" (Anthropic message_start).
 * Fields, each the largest valid value seen across usage objects and
 * events (issue 25: an app that echoes user text into its stream cannot
 * lower its charge with a usage object of its own; Anthropic's
 * message_start input_tokens and message_delta output_tokens still add
 * up): total_tokens, prompt_tokens, completion_tokens, input_tokens,
 * output_tokens; a negative or fractional one counts only when the field
 * has no valid value. A "usage"
 * inside a string, or at another nesting, is not read; nor is a key
 * spelled with an escape ("us\u0061ge"): backends never send one. A
 * document's values count only once it closes without a syntax error.
 */
#ifndef HL_USAGE_H
#define HL_USAGE_H

#include <stddef.h>
#include <stdint.h>

#define HL_USAGE_KEY_MAX    17  /* longest key looked for: completion_tokens */
#define HL_USAGE_CARRY     512  /* SSE: longest event start carried over
                                   to the next chunk unread */

typedef enum {
    HL_USAGE_JSON = 0,  /* the body is one JSON document */
    HL_USAGE_SSE        /* the body is a text/event-stream */
} hl_usage_mode_t;

/* The usage fields, as bits of hl_usage_fields_t.seen / .bad. */
enum {
    HL_UF_TOTAL = 0,    /* total_tokens */
    HL_UF_PROMPT,       /* prompt_tokens */
    HL_UF_COMPLETION,   /* completion_tokens */
    HL_UF_INPUT,        /* input_tokens */
    HL_UF_OUTPUT,       /* output_tokens */
    HL_UF_COUNT
};

typedef struct {
    uint32_t value[HL_UF_COUNT]; /* capped at HL_COST_MAX */
    uint8_t  seen;               /* bit per field: a number was read */
    uint8_t  bad;                /* bit per field: it was negative or not
                                    a whole number */
} hl_usage_fields_t;

/* The streaming JSON scanner of one document (one body, or one event). */
typedef struct {
    uint8_t  state;               /* what the next byte may be */
    uint8_t  key;                 /* id of the key whose value comes next */
    uint8_t  klen;                /* key bytes read; > MAX: not one we want */
    uint8_t  str_is_key;          /* the string being read is a key */
    uint8_t  num_flags;           /* sign, fraction, digits of the number */
    uint8_t  ckey[4];             /* ckey[d]: the key under which the
                                     object at depth d (1..3) sits */
    uint32_t depth;               /* objects parsed and open, 0..3 */
    uint32_t skip;                /* brackets open in a skipped value */
    uint64_t num;                 /* the number being read, capped */
    char     kbuf[HL_USAGE_KEY_MAX];
    hl_usage_fields_t doc;        /* fields read in this document */
} hl_usage_json_t;

typedef struct {
    hl_usage_mode_t   mode;
    hl_usage_json_t   json;
    uint8_t           line_state;   /* SSE: where in a line we are */
    uint8_t           name_len;     /* SSE: field name bytes read */
    uint8_t           after_cr;     /* SSE: the last byte was a CR */
    char              name[4];      /* SSE: the field name ("data") */
    uint8_t           at_event;     /* SSE: at an event's first byte, so
                                       the prefilter may pass over whole
                                       events that cannot hold a usage */
    uint16_t          carry_len;    /* SSE: bytes in carry */
    char              carry[HL_USAGE_CARRY]; /* SSE: the start of the
                                       event open at the last chunk's end,
                                       when it holds no candidate yet */
    hl_usage_fields_t found;        /* committed from complete documents */
} hl_usage_t;

/* Sets *u to the start of a body read in mode. Cannot fail. */
void hl_usage_init(hl_usage_t *u, hl_usage_mode_t mode);

/*
 * Reads the next len bytes of the body (any split, any bytes; data may be
 * NULL when len is 0). Keeps no pointer into data. Cannot fail: bytes that
 * are not what is expected end the document (JSON) or the event (SSE)
 * without effect.
 */
void hl_usage_feed(hl_usage_t *u, const char *data, size_t len);

/*
 * Returns 1 when more bytes cannot change the result: a JSON body whose
 * document has ended (closed, or broken). Always 0 for SSE.
 */
int hl_usage_finished(const hl_usage_t *u);

/*
 * Reads the cost the body reported so far: total_tokens; else
 * prompt_tokens + completion_tokens; else input_tokens + output_tokens
 * (a missing half of a pair counts 0), capped at HL_COST_MAX.
 * Returns 1 and sets *cost; 0 when no field was reported; -1 when the
 * field(s) it would use were invalid (negative, fractional). Reads only.
 */
int hl_usage_cost(const hl_usage_t *u, uint32_t *cost);

#endif
