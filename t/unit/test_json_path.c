/*
 * test_json_path.c - the value at a dotted path of a JSON body, as PHP's
 * json_decode($body, true) gives it: every case is read whole, cut at every
 * byte, and a byte at a time, with the same answer. The expected answers
 * of the table were checked against php8.2's json_decode.
 */
#include <stdlib.h>
#include <string.h>
#include "hl_tap.h"
#include "hl_json_path.h"

#define ABSENT NULL

typedef struct {
    const char *path;
    const char *doc;
    const char *want;   /* ABSENT: no value */
    size_t      doc_len;  /* 0: strlen(doc) */
    size_t      want_len; /* 0: strlen(want) */
} json_case_t;

static const json_case_t cases[] = {
    /* Plain values. */
    { "phone", "{\"phone\":\"+33 6 12 34 56 78\"}", "+33 6 12 34 56 78", 0, 0 },
    { "phone", " \t\r\n{ \"phone\" :\n\"x\" } \r\n", "x", 0, 0 },
    { "phone", "{\"a\":1,\"phone\":\"x\",\"b\":[1,{\"phone\":\"y\"}]}", "x", 0, 0 },
    { "phone", "{\"phone\":\"\"}", "", 0, 0 },
    { "user.email", "{\"user\":{\"name\":\"n\",\"email\":\"A@b.org\"}}", "A@b.org", 0, 0 },
    { "a.b.c.d", "{\"a\":{\"b\":{\"x\":[],\"c\":{\"d\":\"deep\"}}}}", "deep", 0, 0 },
    { "model", "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"model\":\"gpt-4o\"}", "gpt-4o", 0, 0 },
    /* Numbers: their literal text. */
    { "phone", "{\"phone\":33612345678}", "33612345678", 0, 0 },
    { "n", "{\"n\":-1.5e+3}", "-1.5e+3", 0, 0 },
    { "n", "{\"n\":0}", "0", 0, 0 },
    { "n", "{\"n\":-0}", "-0", 0, 0 },
    { "n", "{\"n\":1E5 }", "1E5", 0, 0 },
    { "n", "{\"n\":0.25,\"m\":1}", "0.25", 0, 0 },
    { "n", "{\"n\":12345678901234567890123}", "12345678901234567890123", 0, 0 },
    /* No string or number there. */
    { "phone", "{\"phone\":true}", ABSENT, 0, 0 },
    { "phone", "{\"phone\":false}", ABSENT, 0, 0 },
    { "phone", "{\"phone\":null}", ABSENT, 0, 0 },
    { "phone", "{\"phone\":{\"a\":\"b\"}}", ABSENT, 0, 0 },
    { "phone", "{\"phone\":[\"x\"]}", ABSENT, 0, 0 },
    { "phone", "{}", ABSENT, 0, 0 },
    { "phone", "[{\"phone\":\"x\"}]", ABSENT, 0, 0 },
    { "phone", "\"phone\"", ABSENT, 0, 0 },
    { "phone", "12", ABSENT, 0, 0 },
    { "phone", "{\"x\":{\"phone\":\"1\"}}", ABSENT, 0, 0 },
    { "phone", "{\"x\":{\"phone\":\"1\"},\"phone\":\"2\"}", "2", 0, 0 },
    { "phone", "{\"x\":\"phone\",\"y\":\"\\\"phone\\\":\\\"z\\\"\"}", ABSENT, 0, 0 },
    { "user.email", "{\"user\":[{\"email\":\"a\"}]}", ABSENT, 0, 0 },
    { "user.email", "{\"user\":\"a@b\"}", ABSENT, 0, 0 },
    { "user.email", "{\"email\":\"a@b\"}", ABSENT, 0, 0 },
    { "user", "{\"user\":{\"email\":\"a@b\"}}", ABSENT, 0, 0 },
    { "user.email", "{\"x\":{\"user\":{\"email\":\"a\"}}}", ABSENT, 0, 0 },
    /* Duplicates: the last one, at every level. */
    { "phone", "{\"phone\":\"+331\",\"phone\":\"+332\"}", "+332", 0, 0 },
    { "phone", "{\"phone\":\"+331\",\"x\":1,\"phone\":2}", "2", 0, 0 },
    { "phone", "{\"phone\":\"+331\",\"phone\":null}", ABSENT, 0, 0 },
    { "phone", "{\"phone\":\"+331\",\"phone\":{\"a\":\"b\"}}", ABSENT, 0, 0 },
    { "phone", "{\"phone\":[1],\"phone\":\"x\"}", "x", 0, 0 },
    { "phone", "{\"phone\":\"a-long-first-value\",\"phone\":\"b\"}", "b", 0, 0 },
    { "user.email", "{\"user\":{\"email\":\"a\"},\"user\":{\"email\":\"b\"}}", "b", 0, 0 },
    { "user.email", "{\"user\":{\"email\":\"a\"},\"user\":5}", ABSENT, 0, 0 },
    { "user.email", "{\"user\":{\"email\":\"a\"},\"user\":{\"name\":\"n\"}}", ABSENT, 0, 0 },
    { "user.email", "{\"user\":{\"email\":\"a\",\"email\":\"c\"}}", "c", 0, 0 },
    { "user.email", "{\"user\":{\"email\":\"a\"},\"x\":{\"user\":{\"email\":\"b\"}}}", "a", 0, 0 },
    /* Keys compared after unescaping, byte for byte. */
    { "phone", "{\"ph\\u006fne\":\"x\"}", "x", 0, 0 },
    { "phone", "{\"ph\\u006Fne\":\"x\"}", "x", 0, 0 },
    { "phone", "{\"\\u0070\\u0068\\u006f\\u006e\\u0065\":\"x\"}", "x", 0, 0 },
    { "phone", "{\"phone\":\"a\",\"phon\\u0065\":\"b\"}", "b", 0, 0 },
    { "user.email", "{\"us\\u0065r\":{\"em\\u0061il\":\"a\"}}", "a", 0, 0 },
    { "a-b", "{\"a\\u002db\":\"x\"}", "x", 0, 0 },
    { "phone", "{\"phone\\u0000\":\"x\"}", ABSENT, 0, 0 },
    { "phone", "{\"Phone\":\"x\"}", ABSENT, 0, 0 },
    { "phone", "{\"phone \":\"x\"}", ABSENT, 0, 0 },
    { "phone", "{\"phon\":\"x\"}", ABSENT, 0, 0 },
    { "phone", "{\"phones\":\"x\"}", ABSENT, 0, 0 },
    { "phone", "{\"\":\"x\"}", ABSENT, 0, 0 },
    { "user.email", "{\"user.email\":\"x\"}", ABSENT, 0, 0 },
    /* Values unescaped exactly. */
    { "v", "{\"v\":\"a\\nb\\t\\\"\\\\\\/\\b\\f\\r\"}", "a\nb\t\"\\/\b\f\r", 0, 0 },
    { "v", "{\"v\":\"\\u00e9\\u00E9\"}", "\xc3\xa9\xc3\xa9", 0, 0 },
    { "v", "{\"v\":\"\\u20AC\\u007f\\u0080\\u07ff\\u0800\\uffff\"}",
      "\xe2\x82\xac\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf", 0, 0 },
    { "v", "{\"v\":\"\\ud83d\\ude00\"}", "\xf0\x9f\x98\x80", 0, 0 },
    { "v", "{\"v\":\"\\uDBFF\\uDFFF\"}", "\xf4\x8f\xbf\xbf", 0, 0 },
    { "v", "{\"v\":\"\\u0000x\"}", "\0x", 0, 2 },
    { "v", "{\"v\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\x7f\"}",
      "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\x7f", 0, 0 },
    { "v", "{\"v\":\"\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf\"}",
      "\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf", 0, 0 },
    /* Invalid anywhere: nothing (PHP's json_decode returns null). */
    { "v", "{\"v\":\"\\ud83d\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"\\ude00\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"\\ud83dx\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"\\ud83d\\n\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"\\ud83d\\ud83d\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\",\"w\":\"\\udfff\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"\\x\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"\\u00\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"\\u00g0\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"\\U00e9\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"a\tb\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"a\x1f\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"a\0b\"}", ABSENT, 10, 0 },
    { "v", "{\"v\":\"a\"}\0", ABSENT, 10, 0 },
    { "v", "{\"v\":\"\xc0\xaf\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"\xc1\xbf\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"\xe0\x80\x80\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"\xed\xa0\x80\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"\xf0\x80\x80\x80\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"\xf4\x90\x80\x80\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"\xf5\x80\x80\x80\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"\xc3\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"\xe2\x82\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"\x80\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\",\"w\":\"\xff\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\"} x", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\"}}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\"}{}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\"},", ABSENT, 0, 0 },
    { "v", "\xef\xbb\xbf{\"v\":\"x\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\"", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\",", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\",}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\",\"a\":[1,]}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\",\"a\":[,1]}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\",\"a\":[}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\",\"a\":{]}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\",\"a\":{\"b\"}}", ABSENT, 0, 0 },
    { "v", "{\"v\" \"x\"}", ABSENT, 0, 0 },
    { "v", "{\"v\"::\"x\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\" \"w\":1}", ABSENT, 0, 0 },
    { "v", "{'v':'x'}", ABSENT, 0, 0 },
    { "v", "{v:\"x\"}", ABSENT, 0, 0 },
    { "v", "{1:\"x\"}", ABSENT, 0, 0 },
    { "v", "{\"v\":01}", ABSENT, 0, 0 },
    { "v", "{\"v\":1.}", ABSENT, 0, 0 },
    { "v", "{\"v\":.5}", ABSENT, 0, 0 },
    { "v", "{\"v\":+1}", ABSENT, 0, 0 },
    { "v", "{\"v\":1e}", ABSENT, 0, 0 },
    { "v", "{\"v\":1e+}", ABSENT, 0, 0 },
    { "v", "{\"v\":-}", ABSENT, 0, 0 },
    { "v", "{\"v\":0x10}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\",\"n\":1 2}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\",\"n\":TRUE}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\",\"n\":nul}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\",\"n\":truex}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\",\"n\":NaN}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\"\x0b}", ABSENT, 0, 0 },
    { "v", "{\"v\":\"x\"\xc2\xa0}", ABSENT, 0, 0 },
    { "v", "", ABSENT, 0, 0 },
    { "v", " \n", ABSENT, 0, 0 },
    { "v", "{", ABSENT, 0, 0 },
    { "v", "}", ABSENT, 0, 0 },
};

/* Reads doc (len bytes) for path, fed in pieces of step bytes (0: at split
 * then the rest), into out (size bytes). Returns hl_json_path_finish's. */
static long read_doc(const char *path, const char *doc, size_t len,
                     size_t step, size_t split, char *out, size_t size)
{
    hl_json_path_t s;
    size_t off = 0;

    hl_json_path_init(&s, path, out, size);
    if (step == 0) {
        hl_json_path_feed(&s, doc, split);
        hl_json_path_feed(&s, doc + split, len - split);
    } else {
        while (off < len) {
            size_t n = len - off < step ? len - off : step;
            hl_json_path_feed(&s, doc + off, n);
            off += n;
        }
    }
    return hl_json_path_finish(&s);
}

/* Returns 1 if the answer (n, out) is want (want_len bytes; NULL: -1). */
static int answer_is(long n, const char *out, const char *want, size_t want_len)
{
    if (want == NULL)
        return n == -1 && out[0] == '\0';
    return n == (long)want_len && memcmp(out, want, want_len) == 0
           && out[n] == '\0';
}

static void test_cases(void)
{
    size_t i, split;
    char out[256];

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const json_case_t *c = &cases[i];
        size_t len = c->doc_len ? c->doc_len : strlen(c->doc);
        size_t wlen = c->want ? (c->want_len ? c->want_len : strlen(c->want)) : 0;
        long n = read_doc(c->path, c->doc, len, len ? len : 1, 0, out, sizeof(out));
        int splits_ok = 1;

        okf(answer_is(n, out, c->want, wlen), "case %zu: %s in %s -> %s", i,
            c->path, c->doc, c->want ? c->want : "(absent)");
        if (!answer_is(n, out, c->want, wlen))
            printf("#   got %ld '%s'\n", n, out);
        for (split = 0; split <= len; split++)
            if (!answer_is(read_doc(c->path, c->doc, len, 0, split, out,
                                    sizeof(out)), out, c->want, wlen))
                splits_ok = 0;
        okf(splits_ok && answer_is(read_doc(c->path, c->doc, len, 1, 0, out,
                                            sizeof(out)), out, c->want, wlen),
            "case %zu: the same cut at every byte and a byte at a time", i);
    }
}

/* A document of depth nested arrays under "d", beside "v". */
static char *nested(size_t depth)
{
    char *doc = malloc(2 * depth + 32), *p = doc;

    p += sprintf(p, "{\"v\":\"x\",\"d\":");
    memset(p, '[', depth);
    p += depth;
    memset(p, ']', depth);
    p += depth;
    strcpy(p, "}");
    return doc;
}

static void test_depth(void)
{
    char out[16];
    char *ok_doc = nested(HL_JSON_DEPTH_MAX - 1), *deep = nested(HL_JSON_DEPTH_MAX);

    /* PHP's json_decode (depth 512) admits 511 brackets open at once: the
     * object and 510 arrays, not 511 arrays. */
    is_int(read_doc("v", ok_doc, strlen(ok_doc), 7, 0, out, sizeof(out)), 1,
           "511 brackets open at once are read");
    is_int(read_doc("v", deep, strlen(deep), 7, 0, out, sizeof(out)), -1,
           "512 brackets open at once: invalid, nothing read");
    free(ok_doc);
    free(deep);
}

static void test_cut(void)
{
    char out[4];
    const char *doc = "{\"v\":\"abcdef\",\"w\":\"\\u00e9\\u00e9\",\"n\":123456}";

    is_int(read_doc("v", doc, strlen(doc), 3, 0, out, sizeof(out)), 3,
           "a value is cut at the buffer, less its NUL");
    is_str(out, "abc", "... to its first bytes");
    is_int(read_doc("w", doc, strlen(doc), 1, 0, out, sizeof(out)), 3,
           "an escaped value is cut at the buffer too");
    ok(memcmp(out, "\xc3\xa9\xc3", 4) == 0, "... by the bytes of its UTF-8");
    is_int(read_doc("n", doc, strlen(doc), 1, 0, out, sizeof(out)), 3,
           "a number is cut too");
    is_int(read_doc("v", doc, strlen(doc), 1, 0, out, 1), 0,
           "a buffer of 1 byte holds the empty cut");
}

static void test_big(void)
{
    size_t fill = 2 * 1024 * 1024, len;
    char *doc = malloc(fill + 64), out[32];

    /* A 2 MiB body with the field at its end, in 64 KiB pieces. */
    len = (size_t)sprintf(doc, "{\"pad\":\"");
    memset(doc + len, 'a', fill);
    len += fill;
    len += (size_t)sprintf(doc + len, "\",\"phone\":\"+33612345678\"}");
    is_int(read_doc("phone", doc, len, 65536, 0, out, sizeof(out)), 12,
           "2 MiB of body before the value");
    is_str(out, "+33612345678", "... read in 64 KiB pieces");
    free(doc);
}

static void test_paths(void)
{
    char long_path[HL_JSON_PATH_MAX + 2], out[8];
    hl_json_path_t s;

    memset(long_path, 'a', sizeof(long_path));
    long_path[HL_JSON_PATH_MAX] = '\0';
    is_int(hl_json_path_check("phone"), 0, "path: phone");
    is_int(hl_json_path_check("user.email"), 0, "path: user.email");
    is_int(hl_json_path_check("a-b_C.d9.0"), 0, "path: letters, digits, - and _");
    is_int(hl_json_path_check(long_path), 0, "path: 63 bytes");
    long_path[HL_JSON_PATH_MAX] = 'a';
    long_path[HL_JSON_PATH_MAX + 1] = '\0';
    is_int(hl_json_path_check(long_path), -1, "path: 64 bytes is too long");
    is_int(hl_json_path_check(""), -1, "path: empty");
    is_int(hl_json_path_check(NULL), -1, "path: NULL");
    is_int(hl_json_path_check(".a"), -1, "path: an empty first segment");
    is_int(hl_json_path_check("a."), -1, "path: an empty last segment");
    is_int(hl_json_path_check("a..b"), -1, "path: an empty inner segment");
    is_int(hl_json_path_check("a b"), -1, "path: a space");
    is_int(hl_json_path_check("a/b"), -1, "path: a slash");
    is_int(hl_json_path_check("a[0]"), -1, "path: brackets");
    is_int(hl_json_path_check("\xc3\xa9"), -1, "path: non-ASCII");
    is_int(hl_json_path_init(&s, "a..b", out, sizeof(out)), -1, "init: a bad path");
    is_int(hl_json_path_feed(&s, "{\"a\":1}", 7), -1, "... reads nothing");
    is_int(hl_json_path_init(&s, "a", out, 0), -1, "init: no room");
    is_int(hl_json_path_init(&s, "a", NULL, 8), -1, "init: no buffer");
    is_int(hl_json_path_finish(&s), -1, "... finds nothing");

    /* A path of 32 one-letter segments. */
    {
        char path[64], doc[512], *p = doc;
        int i;

        for (i = 0; i < 32; i++) {
            path[2 * i] = 'k';
            path[2 * i + 1] = '.';
            p += sprintf(p, "{\"k\":");
        }
        path[63] = '\0';
        p += sprintf(p, "\"z\"");
        for (i = 0; i < 32; i++)
            *p++ = '}';
        *p = '\0';
        is_int(read_doc(path, doc, strlen(doc), 5, 0, out, sizeof(out)), 1,
               "a path of 32 segments");
    }
}

static void test_feed_errors(void)
{
    hl_json_path_t s;
    char out[8];

    hl_json_path_init(&s, "v", out, sizeof(out));
    is_int(hl_json_path_feed(&s, "{\"v\":", 5), 0, "feed: 0 while valid");
    is_int(hl_json_path_feed(&s, "x", 1), -1, "feed: -1 once invalid");
    is_int(hl_json_path_feed(&s, "\"y\"}", 4), -1, "feed: -1 after");
    is_int(hl_json_path_finish(&s), -1, "finish: nothing");
}


int main(void)
{
    test_cases();
    test_depth();
    test_cut();
    test_big();
    test_paths();
    test_feed_errors();
    return done_testing();
}
