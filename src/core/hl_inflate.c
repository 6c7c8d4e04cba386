/*
 * hl_inflate.c - gzip and deflate bodies decoded in pieces (see
 * hl_inflate.h).
 */
#include <string.h>
#include "hl_inflate.h"

void hl_inflate_init(hl_inflate_t *s, hl_inflate_kind_t kind)
{
    memset(s, 0, sizeof(*s));
    s->kind = kind;
}

/* Starts zlib for the stream: gzip, or for deflate a zlib stream when the
 * first two bytes b are a zlib header, else raw deflate. Returns 0, or -1
 * (out of memory). */
static int start(hl_inflate_t *s, const unsigned char *b)
{
    int bits = 15 + 16;        /* gzip only */

    if (s->kind == HL_INFLATE_DEFLATE)
        bits = (b[0] & 0x0F) == 8 && (b[0] >> 4) <= 7
               && ((b[0] << 8) | b[1]) % 31 == 0 ? 15 : -15;
    if (inflateInit2(&s->z, bits) != Z_OK)
        return -1;
    s->started = 1;
    return 0;
}

/* Runs zlib over data[0..n). Returns 0, or -1 when the stream is broken. */
static int run(hl_inflate_t *s, const unsigned char *data, size_t n,
               hl_inflate_out_fn *out, void *ctx)
{
    unsigned char buf[HL_INFLATE_CHUNK];

    while (n > 0) {
        uInt take = n > 0x40000000u ? 0x40000000u : (uInt)n;
        int rc;

        s->z.next_in = (Bytef *)data;
        s->z.avail_in = take;
        do {
            s->z.next_out = buf;
            s->z.avail_out = sizeof(buf);
            rc = inflate(&s->z, Z_NO_FLUSH);
            if (sizeof(buf) > s->z.avail_out)
                out(ctx, (const char *)buf, sizeof(buf) - s->z.avail_out);
            if (rc == Z_STREAM_END) {
                /* gzip: another member may follow (it starts with 1f),
                 * in these bytes or the next ones */
                if (s->kind == HL_INFLATE_GZIP && s->z.avail_in == 0) {
                    s->state = 2;
                    return 0;
                }
                if (s->kind == HL_INFLATE_GZIP && s->z.next_in[0] == 0x1f
                    && inflateReset(&s->z) == Z_OK)
                    continue;
                s->state = 1;
                return 0;
            }
            if (rc != Z_OK && rc != Z_BUF_ERROR)
                return -1;
        } while (s->z.avail_in > 0 || s->z.avail_out == 0);
        data += take;
        n -= take;
    }
    return 0;
}

int hl_inflate_feed(hl_inflate_t *s, const char *data, size_t n,
                    hl_inflate_out_fn *out, void *ctx)
{
    const unsigned char *p = (const unsigned char *)data;

    if (s->state < 0)
        return -1;
    if (s->state == 2 && n > 0)       /* between gzip members */
        s->state = p[0] == 0x1f && inflateReset(&s->z) == Z_OK ? 0 : 1;
    if (s->state > 0 || n == 0)
        return 0;
    if (!s->started) {
        /* deflate: the first two bytes choose zlib or raw */
        while (s->nhead < 2 && n > 0) {
            s->head[s->nhead++] = *p++;
            --n;
        }
        if (s->nhead < 2)
            return 0;
        if (start(s, s->head) != 0
            || run(s, s->head, 2, out, ctx) != 0) {
            s->state = -1;
            return -1;
        }
    }
    if (run(s, p, n, out, ctx) != 0)
        s->state = -1;
    return s->state < 0 ? -1 : 0;
}

int hl_inflate_ended(const hl_inflate_t *s)
{
    return s->state > 0;
}

void hl_inflate_end(hl_inflate_t *s)
{
    if (s->started)
        inflateEnd(&s->z);
    s->started = 0;
}
