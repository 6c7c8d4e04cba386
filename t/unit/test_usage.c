/* test_usage.c - the usage an LLM answer reports (hl_usage.c): every shape
 * as JSON and as an event stream, split at every byte, strings holding a
 * fake usage, wrong nesting, bad numbers and garbage. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "hl_tap.h"
#include "hl_quota.h"
#include "hl_usage.h"

/* Reads doc (len bytes) in mode as chunks of at most step bytes (0: in
 * one piece); returns hl_usage_cost's answer, the cost in *cost (0 if
 * none). */
static int read_chunked(hl_usage_mode_t mode, const char *doc, size_t len,
                        size_t step, uint32_t *cost)
{
    hl_usage_t u;
    size_t off = 0;

    hl_usage_init(&u, mode);
    while (off < len) {
        size_t n = step == 0 || len - off < step ? len - off : step;
        hl_usage_feed(&u, doc + off, n);
        off += n;
    }
    *cost = 0;
    return hl_usage_cost(&u, cost);
}

/* Checks that doc gives rc and cost read whole, byte by byte and cut in
 * two at every byte. */
static void check(hl_usage_mode_t mode, const char *doc, int want_rc,
                  uint32_t want_cost, const char *name)
{
    size_t len = strlen(doc), cut;
    uint32_t cost;
    int rc, wrong = 0;

    rc = read_chunked(mode, doc, len, 0, &cost);
    okf(rc == want_rc && (rc != 1 || cost == want_cost),
        "%s: whole (rc %d, cost %u)", name, rc, (unsigned)cost);
    rc = read_chunked(mode, doc, len, 1, &cost);
    okf(rc == want_rc && (rc != 1 || cost == want_cost),
        "%s: byte by byte", name);
    for (cut = 0; cut <= len; ++cut) {
        hl_usage_t u;

        hl_usage_init(&u, mode);
        hl_usage_feed(&u, doc, cut);
        hl_usage_feed(&u, doc + cut, len - cut);
        cost = 0;
        rc = hl_usage_cost(&u, &cost);
        wrong += !(rc == want_rc && (rc != 1 || cost == want_cost));
    }
    okf(wrong == 0, "%s: cut at each of %zu bytes", name, len + 1);
}

#define J HL_USAGE_JSON
#define S HL_USAGE_SSE

static void shapes_json(void)
{
    check(J, "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\","
          "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
          "\"content\":\"Hello!\"},\"finish_reason\":\"stop\"}],"
          "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":388,"
          "\"total_tokens\":400,\"prompt_tokens_details\":{\"cached_tokens\":0},"
          "\"completion_tokens_details\":{\"reasoning_tokens\":0}}}",
          1, 400, "chat completion JSON: total_tokens");
    check(J, "{\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":30}}",
          1, 42, "chat JSON without total: prompt + completion");
    check(J, "{\"id\":\"resp_1\",\"object\":\"response\",\"output\":[{\"type\":"
          "\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"Hi\"}]}],"
          "\"usage\":{\"input_tokens\":100,\"input_tokens_details\":"
          "{\"cached_tokens\":0},\"output_tokens\":300,\"output_tokens_details\":"
          "{\"reasoning_tokens\":0},\"total_tokens\":400}}",
          1, 400, "Responses API JSON");
    check(J, "{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\","
          "\"content\":[{\"type\":\"text\",\"text\":\"Hi\"}],\"stop_reason\":"
          "\"end_turn\",\"usage\":{\"input_tokens\":25,\"output_tokens\":15}}",
          1, 40, "Anthropic Messages JSON: input + output");
    check(J, " \r\n\t{ \"usage\" : { \"total_tokens\" : 7 } } \n",
          1, 7, "whitespace everywhere");
    check(J, "{\"usage\":{\"output_tokens\":9}}", 1, 9,
          "one half of a pair counts alone");
}

static void shapes_sse(void)
{
    check(S, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\","
          "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}],"
          "\"usage\":null}\n\n"
          "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":"
          "{\"content\":\"lo\"},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n"
          "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":"
          "10,\"completion_tokens\":390,\"total_tokens\":400}}\n\n"
          "data: [DONE]\n\n",
          1, 400, "chat SSE with include_usage");
    check(S, "event: response.created\ndata: {\"type\":\"response.created\","
          "\"response\":{\"id\":\"r\",\"status\":\"in_progress\",\"usage\":null}}"
          "\n\nevent: response.output_text.delta\ndata: {\"type\":"
          "\"response.output_text.delta\",\"delta\":\"Hi\"}\n\n"
          "event: response.completed\ndata: {\"type\":\"response.completed\","
          "\"response\":{\"id\":\"r\",\"status\":\"completed\",\"output\":[],"
          "\"usage\":{\"input_tokens\":50,\"output_tokens\":350,"
          "\"output_tokens_details\":{\"reasoning_tokens\":0},"
          "\"total_tokens\":400}}}\n\n",
          1, 400, "Responses SSE: response.completed");
    check(S, "event: message_start\ndata: {\"type\":\"message_start\","
          "\"message\":{\"id\":\"m\",\"type\":\"message\",\"content\":[],"
          "\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\n\n"
          "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
          "\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"
          "event: ping\ndata: {\"type\": \"ping\"}\n\n"
          "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":"
          "{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":15}}\n\n"
          "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
          1, 40, "Anthropic SSE: message_start input + message_delta output");
    check(S, "data:{\"usage\":{\"total_tokens\":5}}\r\n\r\n", 1, 5,
          "CRLF lines, no space after data:");
    check(S, "data: {\"usage\":{\"total_tokens\":6}}\r\r", 1, 6,
          "CR-only lines");
    check(S, ": keep-alive\n\nid: 1\nretry: 10\ndata: {\"usage\":\n"
          "data: {\"total_tokens\":8}}\n\n", 1, 8,
          "comments, other fields, one event over two data lines");
    check(S, "data: {\"usage\":{\"total_tokens\":9}}", 1, 9,
          "the last event without its blank line still counts");
    check(S, "data: {\"usage\":{\"total_tokens\":3}}\n\ndata: {\"usage\":"
          "{\"total_tokens\":4}}\n\n", 1, 4, "the larger usage wins");
    /* issue 25: an echoed usage object never lowers the charge */
    check(S, "data: {\"usage\":{\"total_tokens\":400}}\n\ndata: {\"usage\":"
          "{\"total_tokens\":1}}\n\n", 1, 400,
          "SSE: a smaller usage after the real one: the largest is charged");
    check(S, "data: {\"usage\":{\"total_tokens\":400}}\n\ndata: {\"usage\":"
          "{\"total_tokens\":-1}}\n\n", 1, 400,
          "SSE: an invalid usage after a valid one: the valid one");
    check(S, "data: {\"usage\":{\"total_tokens\":1.5}}\n\ndata: {\"usage\":"
          "{\"total_tokens\":400}}\n\n", 1, 400,
          "SSE: a valid usage after an invalid one: the valid one");
    check(J, "{\"usage\":{\"total_tokens\":400},\"usage\":{\"total_tokens\":2}}",
          1, 400, "JSON: duplicate usage objects: the largest");
    check(J, "{\"usage\":{\"total_tokens\":400,\"total_tokens\":2}}",
          1, 400, "JSON: duplicate fields: the largest");
    check(S, "data: {\"usage\":{\"total_tokens\":11}}\n\ndata: {\"usage\":"
          "{\"total_tokens\":99}\n\ndata: [DONE]\n\n", 1, 11,
          "an event cut short does not count");
}

static void not_fooled(void)
{
    check(J, "{\"choices\":[{\"message\":{\"content\":\"say \\\"usage\\\":"
          "{\\\"total_tokens\\\":1}\"}}],\"usage\":{\"total_tokens\":400}}",
          1, 400, "JSON: a fake usage in the model's text is text");
    check(J, "{\"choices\":[{\"message\":{\"content\":\"{\\\"usage\\\":"
          "{\\\"total_tokens\\\":1}}\"}}]}", 0, 0,
          "JSON: only a fake usage: nothing found");
    check(J, "{\"a\":\"x\\\\\",\"usage\":{\"total_tokens\":12}}", 1, 12,
          "an escaped backslash before the closing quote");
    check(J, "{\"a\":\"\\\"usage\\\":{\\\"total_tokens\\\":1}}\\\\\"}", 0, 0,
          "escaped quotes then a real end");
    check(S, "data: {\"choices\":[{\"delta\":{\"content\":\"\\\"usage\\\":"
          "{\\\"total_tokens\\\":1}\"}}],\"usage\":null}\n\n"
          "data: {\"choices\":[],\"usage\":{\"total_tokens\":400}}\n\n",
          1, 400, "SSE: a fake usage in a delta is text");
    check(S, "data: {\"choices\":[{\"delta\":{\"content\":\"data: {\\\"usage"
          "\\\":{\\\"total_tokens\\\":1}}\"}}]}\n\n", 0, 0,
          "SSE: a fake data line inside a string");
    check(J, "{\"choices\":[{\"usage\":{\"total_tokens\":7}}]}", 0, 0,
          "usage inside choices is not read");
    check(J, "{\"foo\":{\"usage\":{\"total_tokens\":7}}}", 0, 0,
          "usage under another key is not read");
    check(J, "{\"response\":{\"usage\":{\"total_tokens\":7}}}", 0, 0,
          "JSON: response.usage is an event's, not read in a JSON body");
    check(S, "data: {\"data\":{\"usage\":{\"total_tokens\":7}}}\n\n", 0, 0,
          "SSE: usage under another key is not read");
    check(S, "data: {\"message\":{\"content\":[{\"usage\":{\"input_tokens\":7}}]"
          "}}\n\n", 0, 0, "SSE: message.content[].usage is not read");
    check(J, "{\"usage\":{\"details\":{\"total_tokens\":7}}}", 0, 0,
          "a field nested inside usage is not read");
    check(J, "{\"usage\":[{\"total_tokens\":7}]}", 0, 0,
          "usage as an array is not read");
    check(J, "[{\"usage\":{\"total_tokens\":7}}]", 0, 0,
          "a top-level array is not read");
    check(J, "{\"usage\":{\"total_tokens\":\"400\"}}", 0, 0,
          "a string field is not a number");
    check(J, "{\"usage\":{\"total_tokens\":null,\"input_tokens\":3}}", 1, 3,
          "null total: falls to the next pair");
    check(J, "{\"usag\\u0065\":{\"total_tokens\":7}}", 0, 0,
          "an escaped key is not read");
    check(J, "{\"usage_tokens_and_more\":{\"total_tokens\":7}}", 0, 0,
          "a longer key with the same start is not usage");
    check(J, "{\"usage\":{\"completion_tokens_total\":7}}", 0, 0,
          "a key longer than any field is not one");
    check(J, "{\"usage\":{\"total_tokens\":7}", 0, 0,
          "a document cut short does not count");
    check(J, "{\"usage\":{\"total_tokens\":7}}}garbage", 1, 7,
          "what follows the document is ignored");
    check(J, "{\"usage\":{\"total_tokens\":7]}", 0, 0,
          "a mismatched bracket breaks the document");
    check(J, "{\"a\":\"raw\nline\",\"usage\":{\"total_tokens\":7}}", 1, 7,
          "a raw line feed in a string is passed over (leniently)");
}

/* Checks that an event stream gives rc and cost read in chunks of every
 * size from 1 to its length (so each event and each "usage" is split at
 * every place, over two or more chunks), on top of check's cuts. */
static void check_steps(const char *doc, int want_rc, uint32_t want_cost,
                        const char *name)
{
    size_t len = strlen(doc), step;
    int wrong = 0;

    check(S, doc, want_rc, want_cost, name);
    for (step = 1; step <= len; ++step) {
        uint32_t cost;
        int rc = read_chunked(S, doc, len, step, &cost);

        wrong += !(rc == want_rc && (rc != 1 || cost == want_cost));
    }
    okf(wrong == 0, "%s: in chunks of each size 1..%zu", name, len);
}

/* The SSE prefilter passes over whole events holding no candidate (a raw
 * "usage", blanks, ':', blanks, '{'): the answers stay the scanner's. */
static void prefilter(void)
{
#define NOISE "data: {\"choices\":[{\"delta\":{\"content\":\"g\"}}]," \
              "\"usage\":null}\n\n"
    check_steps(NOISE NOISE "data: {\"usage\":{\"total_tokens\":21}}\n\n"
                NOISE "data: [DONE]\n\n", 1, 21,
                "prefilter: usage:null events around a usage event");
    check_steps(NOISE "data: {\"usage\" :\t {\"total_tokens\":22}}\n\n",
                1, 22, "prefilter: blanks around the colon");
    check_steps(NOISE "data: {\"usage\":null}\n\n" NOISE, 0, 0,
                "prefilter: only usage:null");
    check_steps(NOISE "data: {\"usage\" : null}\n\n", 0, 0,
                "prefilter: usage : null with blanks");
    check_steps(NOISE "data: {\"a\":\"\\\"usage\\\":{\\\"total_tokens"
                "\\\":1}\"}\n\n" NOISE, 0, 0,
                "prefilter: an escaped usage:{ in a string is text");
    check_steps(NOISE "data: {\"a\":\"x\\\"\",\"usage\":{\"total_tokens\":23}}"
                "\n\n", 1, 23,
                "prefilter: a real key after a string ending in an escaped quote");
    check_steps(NOISE "data: {\"choices\":[{\"usage\":{\"total_tokens\":"
                "1}}]}\n\n" NOISE, 0, 0,
                "prefilter: a usage key nested in choices does not count");
    check_steps(NOISE "data: {\"usage\"\ndata: :{\"total_tokens\":24}}\n\n"
                NOISE, 1, 24, "prefilter: key and colon on two data lines");
    check_steps(NOISE "data: {\"usage\":\r\nid: 7\r\ndata: {\"total_tokens\""
                ":25}}\r\n\r\n" NOISE, 1, 25,
                "prefilter: value on the next data line, CRLF, a field "
                "between");
    check_steps(NOISE "data: {\"usage\"  \r: x\rdata:\t:\r"
                "data: {\"total_tokens\":26}}\r\r" NOISE, 1, 26,
                "prefilter: CR-only lines, a comment between data lines");
    check_steps(": \"usage\":{\"total_tokens\":2}\n\n" NOISE, 0, 0,
                "prefilter: a candidate in a comment is not data");
    check_steps("data: {\"usage\":{\"total_tokens\":27}}\n\r\n"
                "data: {\"usage\":null}\r\r" NOISE
                "data: {\"usage\":{\"total_tokens\":28}}\r\n\n" NOISE,
                1, 28, "prefilter: mixed blank lines (LF CR LF, CR CR, "
                "CR LF LF)");
    check_steps("\n\ndata: {\"usage\":{\"total_tokens\":32}}\n\n" NOISE "\r\n"
                "data: {\"usage\":{\"total_tokens\":33}}\n\n", 1, 33,
                "prefilter: extra blank lines before events");
    check_steps(NOISE "data: {\"a\":1,\r\ndata: \"usage\":{\"total_tokens\":34}}"
                "\r\n\r\n" NOISE, 1, 34,
                "prefilter: an object over two CRLF data lines");
    check_steps(NOISE "data: {\"usage\":{\"total_tokens\":29}}", 1, 29,
                "prefilter: the stream ends inside the usage event");
    check_steps(NOISE "data: {\"usage\":{\"total_tokens\":30}\n\n"
                NOISE, 0, 0, "prefilter: a usage event cut short");
    {
        /* Events longer than the carry, so each is read by the scanner
         * when it outgrows it, split everywhere. */
        static char doc[4 * HL_USAGE_CARRY];
        char pad[HL_USAGE_CARRY + 64];

        memset(pad, 'g', sizeof(pad) - 1);
        pad[sizeof(pad) - 1] = '\0';
        snprintf(doc, sizeof(doc), NOISE "data: {\"a\":\"%s\",\"usage\":null}"
                 "\n\n" "data: {\"a\":\"%s\",\"usage\":{\"total_tokens\":"
                 "31}}\n\n" NOISE, pad, pad);
        check_steps(doc, 1, 31, "prefilter: events longer than the carry");
    }
#undef NOISE
}

static void numbers(void)
{
    uint32_t cost;

    check(J, "{\"usage\":{\"total_tokens\":-5}}", -1, 0, "negative: invalid");
    check(J, "{\"usage\":{\"total_tokens\":4.5}}", -1, 0, "fraction: invalid");
    check(J, "{\"usage\":{\"total_tokens\":4e2}}", -1, 0, "exponent: invalid");
    check(J, "{\"usage\":{\"total_tokens\":-}}", -1, 0, "no digit: invalid");
    check(J, "{\"usage\":{\"input_tokens\":5,\"output_tokens\":-1}}", -1, 0,
          "one bad half: invalid");
    check(J, "{\"usage\":{\"total_tokens\":-5,\"total_tokens\":6}}", 1, 6,
          "a later value replaces an invalid one");
    check(J, "{\"usage\":{\"total_tokens\":2147483647}}", 1, HL_COST_MAX,
          "HL_COST_MAX itself");
    check(J, "{\"usage\":{\"total_tokens\":2147483648}}", 1, HL_COST_MAX,
          "one over: capped");
    check(J, "{\"usage\":{\"total_tokens\":"
          "99999999999999999999999999999999999999}}", 1, HL_COST_MAX,
          "an overflowing number: capped");
    check(J, "{\"usage\":{\"prompt_tokens\":2147483647,\"completion_tokens\":"
          "2147483647}}", 1, HL_COST_MAX, "an overflowing sum: capped");
    check(J, "{\"usage\":{\"total_tokens\":0}}", 1, 0, "zero is a cost");
    is_int(read_chunked(J, "", 0, 0, &cost), 0, "empty body: nothing");
}

static void deep_and_garbage(void)
{
    char doc[4096];
    size_t n = 0;
    int i, rc;
    uint32_t cost;
    hl_usage_t u;
    unsigned seed = 12345;

    n += (size_t)sprintf(doc + n, "{\"a\":");
    for (i = 0; i < 200; ++i)       /* {"k":[{"k":[ ... */
        n += (size_t)sprintf(doc + n, "%s", i % 2 ? "[" : "{\"k\":");
    doc[n++] = '1';
    for (i = 199; i >= 0; --i)
        doc[n++] = i % 2 ? ']' : '}';
    n += (size_t)sprintf(doc + n, ",\"s\":\"}]\\\"\",\"usage\":{\"total_tokens\":31}}");
    doc[n] = '\0';
    rc = read_chunked(J, doc, n, 0, &cost);
    ok(rc == 1 && cost == 31, "200 levels deep: skipped, the usage after it read");
    rc = read_chunked(J, doc, n, 3, &cost);
    ok(rc == 1 && cost == 31, "200 levels deep, in 3-byte chunks");

    /* Random bytes: no crash, and (with no brace at all) nothing found. */
    for (i = 0; i < 2000; ++i) {
        char junk[257];
        size_t k, len = (size_t)(i % 257);

        for (k = 0; k < len; ++k) {
            seed = seed * 1103515245u + 12345u;
            junk[k] = (char)(seed >> 16);
            if (junk[k] == '{')
                junk[k] = '(';
        }
        hl_usage_init(&u, i % 2 ? S : J);
        hl_usage_feed(&u, junk, len);
        if (hl_usage_cost(&u, &cost) != 0)
            break;
    }
    is_int(i, 2000, "2000 runs of random bytes without a brace: nothing found");

    hl_usage_init(&u, J);
    hl_usage_feed(&u, "<html>", 6);
    ok(hl_usage_finished(&u), "JSON: a body that is not JSON is finished at once");
    hl_usage_init(&u, J);
    hl_usage_feed(&u, "{\"usage\":{\"total_tokens\":2}}", 28);
    ok(hl_usage_finished(&u), "JSON: finished when the document closes");
    hl_usage_init(&u, S);
    hl_usage_feed(&u, "<html>", 6);
    ok(!hl_usage_finished(&u), "SSE: never finished before the end");
    ok(sizeof(hl_usage_t) <= 256 + HL_USAGE_CARRY,
       "the state is a fixed, small size (the SSE carry and a few hundred "
       "bytes)");
    hl_usage_feed(&u, NULL, 0);
    ok(1, "feeding nothing is harmless");
}

/* cost=usage in a quota line and in the table's "cost" value. */
static void quota_spec(void)
{
    const char *argv[] = { "1000/1m", "cost=usage" };
    const char *hdr[] = { "1000/1m", "cost=usage", "cost=header:X-T" };
    char err[HL_ERR_MAX] = "";
    hl_quota_t q;

    is_int(hl_quota_parse_args(&q, 2, argv, err, sizeof(err)), 0,
           "HotLimitQuota 1000/1m cost=usage parses");
    ok(q.cost_usage == 1 && q.cost_name[0] == '\0', "cost=usage is set");
    ok(hl_quota_after_response(&q), "cost=usage is counted after the response");
    is_int(hl_quota_parse_args(&q, 3, hdr, err, sizeof(err)), 0,
           "a later cost=header: replaces cost=usage");
    ok(q.cost_usage == 0 && strcmp(q.cost_name, "X-T") == 0,
       "cost=header:X-T after cost=usage");
    is_int(hl_quota_set_cost(&q, "usage", err, sizeof(err)), 0,
           "the table's \"cost\": \"usage\"");
    ok(q.cost_usage == 1 && q.cost_name[0] == '\0', "usage replaces header:");
    is_int(hl_quota_set_cost(&q, "1", err, sizeof(err)), 0, "cost 1");
    ok(q.cost_usage == 0 && !hl_quota_after_response(&q),
       "cost=1 after usage: counted at the decision");
    is_int(hl_quota_set_cost(&q, "usages", err, sizeof(err)), -1,
           "cost=usages is refused");
    is_str(err, "unknown cost 'usages' (use 1, header:NAME or usage)",
           "the message names the bad value");
    q.cost_usage = 2;
    is_int(hl_quota_validate(&q, err, sizeof(err)), -1,
           "a corrupt cost_usage does not validate");
}

int main(void)
{
    quota_spec();
    shapes_json();
    shapes_sse();
    not_fooled();
    prefilter();
    numbers();
    deep_and_garbage();
    return done_testing();
}
