/*
 * test_inflate.c - gzip and deflate answers decoded for cost=usage (issue
 * 25): hl_inflate (gzip, several members, zlib-wrapped and raw deflate,
 * any split, broken streams) and hl_encoding (Content-Encoding told apart,
 * Accept-Encoding narrowed to what can be read), with the usage read from
 * the decoded bytes.
 */
#include <stdio.h>
#include <string.h>
#include <zlib.h>
#include "hl_tap.h"
#include "hl_encoding.h"
#include "hl_inflate.h"
#include "hl_usage.h"

static const char doc[] =
    "{\"id\":\"chatcmpl-1\",\"choices\":[{\"message\":{\"content\":\"hello\"}}],"
    "\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":300,"
    "\"total_tokens\":400}}";

/* Compresses src (n bytes) into out with windowBits bits (31 gzip, 15
 * zlib, -15 raw). Returns the length. */
static size_t pack(const char *src, size_t n, int bits, unsigned char *out,
                   size_t size)
{
    z_stream z;

    memset(&z, 0, sizeof(z));
    deflateInit2(&z, 6, Z_DEFLATED, bits, 8, Z_DEFAULT_STRATEGY);
    z.next_in = (Bytef *)src;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)size;
    deflate(&z, Z_FINISH);
    deflateEnd(&z);
    return size - z.avail_out;
}

/* hl_inflate_out_fn into an hl_usage_t. */
static void to_usage(void *ctx, const char *data, size_t n)
{
    hl_usage_feed(ctx, data, n);
}

/* Decodes buf (n bytes, kind) fed in pieces of step bytes into a JSON
 * usage reader. Returns the cost read, or -1 when the stream broke or no
 * usage was read. */
static long decode(const unsigned char *buf, size_t n, hl_inflate_kind_t kind,
                   size_t step)
{
    hl_inflate_t s;
    hl_usage_t u;
    uint32_t cost = 0;
    size_t off;
    int broken = 0;

    hl_inflate_init(&s, kind);
    hl_usage_init(&u, HL_USAGE_JSON);
    for (off = 0; off < n && !broken; off += step)
        broken = hl_inflate_feed(&s, (const char *)buf + off,
                                 n - off < step ? n - off : step,
                                 to_usage, &u) != 0;
    hl_inflate_end(&s);
    hl_inflate_end(&s);
    return broken || hl_usage_cost(&u, &cost) != 1 ? -1 : (long)cost;
}

/* Checks buf decodes to cost 400 at every piece size up to 7 and whole. */
static void decodes(const unsigned char *buf, size_t n, hl_inflate_kind_t kind,
                    const char *name)
{
    size_t step;
    int wrong = 0;

    for (step = 1; step <= 7; ++step)
        wrong += decode(buf, n, kind, step) != 400;
    okf(!wrong && decode(buf, n, kind, n) == 400, "%s: usage 400 read", name);
}

static void test_inflate(void)
{
    unsigned char gz[1024], zl[1024], raw[1024], two[2048], bad[1024];
    size_t ngz = pack(doc, sizeof(doc) - 1, 31, gz, sizeof(gz));
    size_t nzl = pack(doc, sizeof(doc) - 1, 15, zl, sizeof(zl));
    size_t nraw = pack(doc, sizeof(doc) - 1, -15, raw, sizeof(raw));
    size_t half = (sizeof(doc) - 1) / 2, n1;

    decodes(gz, ngz, HL_INFLATE_GZIP, "gzip");
    decodes(zl, nzl, HL_INFLATE_DEFLATE, "deflate (zlib-wrapped)");
    decodes(raw, nraw, HL_INFLATE_DEFLATE, "deflate (raw)");
    /* two gzip members, the document split between them */
    n1 = pack(doc, half, 31, two, sizeof(two));
    n1 += pack(doc + half, sizeof(doc) - 1 - half, 31, two + n1, sizeof(two) - n1);
    decodes(two, n1, HL_INFLATE_GZIP, "gzip in two members");
    /* broken: a corrupted body, a gzip body said to be deflate */
    memcpy(bad, gz, ngz);
    memset(bad + 12, 0xff, 8);
    ok(decode(bad, ngz, HL_INFLATE_GZIP, 5) == -1, "a corrupted gzip: broken");
    ok(decode((const unsigned char *)doc, sizeof(doc) - 1, HL_INFLATE_GZIP, 5) == -1,
       "plain text said to be gzip: broken");
    /* cut short: no usage, not broken */
    ok(decode(gz, ngz / 2, HL_INFLATE_GZIP, 3) == -1, "a gzip cut short: no usage");
}

static void test_encoding(void)
{
    static const struct { const char *in, *out; } c[] = {
        { "gzip, deflate, br, zstd", "gzip, deflate" },
        { "br;q=1.0, gzip;q=0.8, *;q=0.1", "gzip;q=0.8" },
        { "br", "identity" },
        { "", "identity" },
        { "GZIP , x-gzip;q=0.5,identity;q=0", "GZIP, x-gzip;q=0.5, identity;q=0" },
        { "*", "identity" },
        { "gzipx, gzip ;q=1, ;q=1", "gzip ;q=1" },
        { ",,,deflate,,,", "deflate" },
    };
    char out[256];
    size_t i;

    for (i = 0; i < sizeof(c) / sizeof(c[0]); ++i) {
        size_t n = hl_accept_encoding_narrow(c[i].in, out, sizeof(out));
        okf(n == strlen(c[i].out) && strcmp(out, c[i].out) == 0,
            "Accept-Encoding '%s' narrowed to '%s'", c[i].in, out);
    }
    ok(hl_accept_encoding_narrow("gzip, br", out, 5) == 0 && out[0] == '\0',
       "too small an out: nothing");
    ok(hl_encoding_of(NULL) == HL_ENC_IDENTITY
       && hl_encoding_of(" Identity ") == HL_ENC_IDENTITY
       && hl_encoding_of("gzip") == HL_ENC_GZIP
       && hl_encoding_of("X-GZIP") == HL_ENC_GZIP
       && hl_encoding_of("deflate") == HL_ENC_DEFLATE
       && hl_encoding_of("br") == HL_ENC_OTHER
       && hl_encoding_of("gzip, gzip") == HL_ENC_OTHER,
       "Content-Encoding: identity, gzip, deflate, the rest unreadable");
}

int main(void)
{
    test_inflate();
    test_encoding();
    return done_testing();
}
