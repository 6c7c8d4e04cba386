/*
 * hl_inflate.h - a gzip or deflate response body decoded as it passes
 * (cost=usage, issue 25), so its usage can be read; what the client gets
 * is never touched: the decoder only reads copies of the bytes.
 *
 * Pure core over zlib: no httpd headers. An hl_inflate_t holds zlib's
 * inflate state (zlib allocates its window, 32 KiB, and about 7 KiB more
 * with malloc: hl_inflate_end frees them). Decoded bytes are handed to a
 * callback in pieces of at most HL_INFLATE_CHUNK bytes from a buffer on
 * the stack, so memory stays bounded however large the body.
 *
 * gzip: one or more gzip members (RFC 1952), as gunzip reads them; bytes
 * after the last member are ignored. deflate: a zlib stream (RFC 1950), or
 * a raw deflate stream (RFC 1951) as some servers send it, told apart by
 * the first two bytes (a valid zlib header).
 */
#ifndef HL_INFLATE_H
#define HL_INFLATE_H

#include <stddef.h>
#include <zlib.h>

#define HL_INFLATE_CHUNK 8192

typedef enum { HL_INFLATE_GZIP = 0, HL_INFLATE_DEFLATE } hl_inflate_kind_t;

typedef struct {
    z_stream      z;
    int           kind;      /* hl_inflate_kind_t */
    int           started;   /* inflateInit2 was called */
    int           state;     /* 0 reading, 1 ended, 2 between gzip
                                members, -1 broken */
    unsigned char head[2];   /* deflate: the first bytes, to choose */
    unsigned      nhead;
} hl_inflate_t;

/* Takes the next n decoded bytes (valid during the call only). */
typedef void hl_inflate_out_fn(void *ctx, const char *data, size_t n);

/* Sets *s to the start of a body of kind. Cannot fail (zlib is started
 * with the first bytes). */
void hl_inflate_init(hl_inflate_t *s, hl_inflate_kind_t kind);

/*
 * Decodes the next n bytes of the body, handing what they give to out.
 * Returns 0 (also once the stream has ended: later bytes are ignored), or
 * -1 once the stream is broken or zlib is out of memory (then later calls
 * do nothing and return -1).
 */
int hl_inflate_feed(hl_inflate_t *s, const char *data, size_t n,
                    hl_inflate_out_fn *out, void *ctx);

/* Returns 1 once the stream ended well (the last gzip member, or the
 * deflate stream, is complete), else 0. */
int hl_inflate_ended(const hl_inflate_t *s);

/* Frees zlib's memory. Safe to call twice, and on a state never fed. */
void hl_inflate_end(hl_inflate_t *s);

#endif
