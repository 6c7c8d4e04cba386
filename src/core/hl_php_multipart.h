/*
 * hl_php_multipart.h - a multipart/form-data body as PHP's rfc1867.c reads
 * it: its buffer (lines and pieces of data, up to a boundary), a part's
 * Content-Disposition, and a growing text for its headers. hl_php.c's
 * scan_multipart drives them. Pure: no httpd header; memory only in an
 * hl_mp_text_t that outgrows its own buffer.
 */
#ifndef HL_PHP_MULTIPART_H
#define HL_PHP_MULTIPART_H

#include <stddef.h>
#include "hl_php.h"

/*
 * PHP reads a multipart body through a buffer of FILLUNIT (5,120) bytes, or
 * the boundary's length + 6 if larger, and what it sees depends on where
 * that buffer stands: a line longer than the buffer is cut into pieces, and
 * the piece may be a boundary line. hl_mp_buf_t is that buffer: its window w
 * holds body[begin, begin + avail), and begin + avail is always how far
 * PHP has read (mod_php's read_post fills the buffer whole until the body
 * ends).
 */
#define HL_MP_FILLUNIT   5120

#define HL_MP_BUF_MAX (HL_PHP_BOUNDARY_MAX + 6)  /* >= HL_MP_FILLUNIT */

typedef struct {
    hl_php_src_t *body;
    size_t      len;
    size_t      begin;      /* buf_begin, as an offset into body */
    size_t      avail;      /* bytes_in_buffer */
    size_t      size;       /* bufsize */
    const char *next;       /* "\n--BOUNDARY" */
    size_t      next_len;
    char       *w;          /* the window: body[begin, begin + avail) */
    char        buf[HL_MP_BUF_MAX];
} hl_mp_buf_t;

/* What a part's Content-Disposition says (rfc1867.c reads its pairs in
 * order; a later name= or filename= replaces an earlier one). */
typedef struct {
    int has_name;
    int has_file;
    int file_empty;      /* filename="": no file sent, its data left unread */
} hl_mp_disposition_t;

/* A text that grows: in buf until it needs more, then in memory of its
 * own (malloc'd; hl_mp_text_free frees it). Not to be copied. */
#define HL_MP_TEXT_STACK 2048

typedef struct {
    char   *p;
    size_t  cap;
    char    buf[HL_MP_TEXT_STACK];
} hl_mp_text_t;

/* multipart_buffer_eof: 1 when the window is empty and the body ends. */
int hl_mp_eof(hl_mp_buf_t *m);

/* get_line: next_line, refilling the window once if needed. */
int hl_mp_get_line(hl_mp_buf_t *m, const char **line, size_t *n);

/* multipart_buffer_read(bytes = FILLUNIT): consumes the part's next
 * piece of data, up to a boundary. Returns its length (0: the part ends).
 * A '\r' just before a boundary is left in the window, so the pieces
 * together are one run of the body. */
size_t hl_mp_read(hl_mp_buf_t *m);

/* Reads a Content-Disposition value (cd, NUL-terminated) as rfc1867.c
 * does into *d, and its name= into name (namelen bytes, at least strlen(cd)
 * + 1, so it always fits). */
void hl_mp_disposition(const char *cd, char *name, size_t namelen,
                       hl_mp_disposition_t *d);

/* rfc1867.c's "never repair potential malicious user input": returns 1 if
 * a file part named v is skipped (brackets not closed, or text after a
 * ']' that does not open another). */
int hl_mp_bad_brackets(const char *v);

/* Makes t empty, in its own buf. Cannot fail; owns nothing yet. */
void hl_mp_text_init(hl_mp_text_t *t);

/* Makes t hold at least need bytes, keeping its first keep bytes. Returns
 * 0, or -1 when out of memory (t unchanged). */
int hl_mp_text_reserve(hl_mp_text_t *t, size_t need, size_t keep);

/* Frees the memory t took, if any (t then unusable until hl_mp_text_init). */
void hl_mp_text_free(hl_mp_text_t *t);

#endif
