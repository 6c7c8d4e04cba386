/*
 * hl_php.c - request variables read as PHP reads them (see hl_php.h).
 *
 * One pass over the input, no allocation (but for a multipart part's
 * Content-Disposition over 2 KiB, see scan_multipart). Each token's name is walked the
 * way php_register_variable_ex walks it (decoded on the fly; a ']' is
 * looked for ahead), and reduced to what the token does to the variable
 * asked for: set it to a string; make it an array and set, append or nest
 * its element `key`; delete it. That effect is applied to a small state
 * (the variable's type, its element `key`, its array's next free index).
 * Only where the raw bytes of the value that wins are is remembered (an
 * offset); they are read again and decoded into out at the end.
 *
 * The input is an hl_php_src_t: in memory, or read by offset through a
 * callback and a one-block cache (a request body spooled to a file), so
 * that no more than a block, PHP's multipart buffer and a name's first
 * bytes are ever held, whatever the body's size.
 *
 * Not followed: an append ("a[k][]") into a nested array that already
 * holds the key PHP_INT_MAX fails in PHP and ends that token early, which
 * could spare `a` from the deletion of a name nested deeper than 64
 * levels; only the variable's own array is tracked.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include "hl_php.h"
#include "hl_php_multipart.h"
#include "hl_php_src.h"
#include "hl_text.h"

/* The input (hl_php_src_t) is read through hl_php_src.h; a multipart
 * body's buffer and part headers through hl_php_multipart.h. */


/*
 * Returns the next byte (0..255) of the encoded text s up to offset n at
 * *pos, which must be < n, and moves *pos past it: "%XX" is a byte, '+' a
 * space when plus is set (urldecode; rawurldecode without), and anything
 * else, a '%' not followed by two hex digits too, is itself.
 */
static int url_next(hl_php_src_t *s, size_t n, size_t *pos, int plus)
{
    size_t i = *pos;
    int c = hl_php_src_at(s, i);

    if (plus && c == '+') {
        *pos = i + 1;
        return ' ';
    }
    if (c == '%' && n - i >= 3
        && hl_hex_value((char)hl_php_src_at(s, i + 1)) >= 0
        && hl_hex_value((char)hl_php_src_at(s, i + 2)) >= 0) {
        *pos = i + 3;
        return hl_hex_value((char)hl_php_src_at(s, i + 1)) * 16
               + hl_hex_value((char)hl_php_src_at(s, i + 2));
    }
    *pos = i + 1;
    return c;
}

/* A variable name being read: raw bytes s[pos, n), urldecoded or not. */
typedef struct {
    hl_php_src_t *s;
    size_t      n;
    size_t      pos;
    int         decode;      /* a $_GET name: urldecoded */
} cursor_t;

/* Returns the next byte of the name, or -1 at its end: the end of the raw
 * bytes or a decoded NUL (PHP reads names as C strings). */
static int cur_next(cursor_t *c)
{
    int ch;

    if (c->pos >= c->n)
        return -1;
    ch = c->decode ? url_next(c->s, c->n, &c->pos, 1)
                   : hl_php_src_at(c->s, c->pos++);
    if (ch == 0) {
        c->pos = c->n;
        return -1;
    }
    return ch;
}

/* Returns the byte cur_next would return, without moving. */
static int cur_peek(const cursor_t *c)
{
    cursor_t t = *c;

    return cur_next(&t);
}

#define WORD_HEAD 24   /* > the 20 bytes of the longest integer key */

/* A name or array key as it is read: its length, its first bytes, and
 * whether it equals `want` (when want is not NULL). */
typedef struct {
    const char   *want;
    size_t        matched;   /* bytes of want equal so far */
    int           same;
    size_t        len;
    unsigned char head[WORD_HEAD];
} word_t;

/* Starts an empty word compared with want (NULL: compared with nothing).
 * want is borrowed, not copied: it must outlive w. */
static void word_init(word_t *w, const char *want)
{
    w->want = want;
    w->matched = 0;
    w->same = want != NULL;
    w->len = 0;
}

/* Appends byte ch (1..255) to w; cannot fail (only WORD_HEAD bytes are
 * kept, the rest is only counted and compared). */
static void word_add(word_t *w, int ch)
{
    if (w->len < WORD_HEAD)
        w->head[w->len] = (unsigned char)ch;
    w->len++;
    if (w->same && (unsigned char)w->want[w->matched] == ch)
        w->matched++;
    else
        w->same = 0;
}

/* Returns 1 if the word read equals want. */
static int word_is(const word_t *w)
{
    return w->same && w->want[w->matched] == '\0';
}

/* Returns 1 if w starts with prefix (at most WORD_HEAD bytes), else 0. */
static int word_starts(const word_t *w, const char *prefix)
{
    size_t n = strlen(prefix);

    return w->len >= n && memcmp(w->head, prefix, n) == 0;
}

/*
 * Returns 1 and sets *v if the word is an integer array key for PHP
 * (ZEND_HANDLE_NUMERIC_STR: "0", "17", "-3"; not "01", "-0", "+1", " 1"
 * or anything beyond 64 bits), else 0.
 */
static int word_int(const word_t *w, int64_t *v)
{
    size_t i = 0, n = w->len;
    uint64_t u = 0;

    if (n == 0 || n > 20)
        return 0;
    if (w->head[0] == '-')
        i = 1;
    if (i == n || (w->head[i] == '0' && n > 1) || n - i > 19)
        return 0;
    for (; i < n; ++i) {
        if (w->head[i] < '0' || w->head[i] > '9')
            return 0;
        u = u * 10 + (uint64_t)(w->head[i] - '0');
    }
    if (w->head[0] == '-') {
        if (u - 1 > (uint64_t)INT64_MAX)
            return 0;
        *v = u - 1 == (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)u;
    } else {
        if (u > (uint64_t)INT64_MAX)
            return 0;
        *v = (int64_t)u;
    }
    return 1;
}

/* What one token does to the variable asked for. */
enum { FX_NONE, FX_STRING, FX_ARRAY };   /* to name */
enum { EL_NONE, EL_STRING, EL_ARRAY };   /* to its element k1 */

typedef struct {
    int     fx;
    int     el;         /* with FX_ARRAY */
    int     append;     /* k1 is "[]" */
    int     is_key;     /* k1 is `key` */
    int     k1_int;     /* k1 is the integer key k1_val */
    int64_t k1_val;
    size_t  k1_pos;     /* k1's raw bytes in the name: [k1_pos, k1_end) */
    size_t  k1_end;
    int     del;        /* then name is deleted (nested too deep) */
} effect_t;

/* PHP's __Host-/__Secure- rule: a name or key that mangling made start
 * with one of these prefixes, while the name as sent did not, is dropped.
 * orig holds the first bytes of the name as sent. */
static int forbidden(const word_t *w, const word_t *orig)
{
    return (word_starts(w, "__Host-") && !word_starts(orig, "__Host-"))
        || (word_starts(w, "__Secure-") && !word_starts(orig, "__Secure-"));
}

/* Reads a plain name (mangled, complete in w) into e. */
static void plain_name(effect_t *e, const word_t *w, const word_t *orig)
{
    if (!forbidden(w, orig) && word_is(w))
        e->fx = FX_STRING;
}

/* Sets the element k1 of e to a string unless k1 is a forbidden key. */
static void elem_string(effect_t *e, const word_t *k1, const word_t *orig)
{
    if (e->append || !forbidden(k1, orig))
        e->el = EL_STRING;
}

/*
 * Fills e with what the name read by c does to variable `name` (and its
 * element `key`, if not NULL), following php_register_variable_ex.
 */
static void parse_name(cursor_t c, const char *name, const char *key,
                       effect_t *e)
{
    word_t orig, base, k, prev;
    cursor_t t;
    int ch, level, prev_append = 0;

    memset(e, 0, sizeof(*e));
    while (cur_peek(&c) == ' ')
        cur_next(&c);
    word_init(&orig, NULL);
    t = c;
    while (orig.len < 9 && (ch = cur_next(&t)) >= 0)
        word_add(&orig, ch);
    word_init(&base, name);
    while ((ch = cur_next(&c)) >= 0 && ch != '[')
        word_add(&base, ch == ' ' || ch == '.' ? '_' : ch);
    if (base.len == 0)
        return;
    if (ch != '[') {
        plain_name(e, &base, &orig);
        return;
    }
    prev = base;
    for (level = 1; ; ++level) {
        cursor_t index = c;               /* just after '[' */
        int append = 0;

        word_init(&k, NULL);

        if (level > HL_PHP_MAX_NESTING) {
            e->del = 1;
            return;
        }
        t = c;
        ch = cur_next(&t);
        if (hl_php_is_space(ch))
            ch = cur_next(&t);
        if (ch == ']') {
            append = 1;
            c = t;
        } else {
            t = c;
            while ((ch = cur_next(&t)) >= 0 && ch != ']')
                ;
            if (ch < 0) {                 /* no ']': the '[' is a '_' */
                if (level == 1) {
                    word_add(&base, '_');
                    while ((ch = cur_next(&c)) >= 0)
                        word_add(&base, ch == ' ' || ch == '.' || ch == '['
                                        ? '_' : ch);
                    plain_name(e, &base, &orig);
                } else if (level == 2) {
                    elem_string(e, &prev, &orig);
                }
                return;
            }
            word_init(&k, level == 1 ? key : NULL);
            c = index;
            if (level == 1)
                e->k1_pos = e->k1_end = c.pos;
            while ((ch = cur_next(&c)) != ']') {
                word_add(&k, ch);
                if (level == 1)
                    e->k1_end = c.pos;
            }
        }
        /* The array at the previous key: name itself at level 1. */
        if (!prev_append && forbidden(&prev, &orig))
            return;
        if (level == 1) {
            if (!word_is(&base))
                return;
            e->fx = FX_ARRAY;
            e->append = append;
            if (!append) {
                e->is_key = word_is(&k);
                e->k1_int = word_int(&k, &e->k1_val);
            }
        } else if (level == 2) {
            e->el = EL_ARRAY;
        }
        if (append)
            word_init(&prev, NULL);
        else
            prev = k;
        prev_append = append;
        if (cur_peek(&c) != '[') {        /* the value goes here */
            if (level == 1)
                elem_string(e, &prev, &orig);
            return;
        }
        cur_next(&c);
    }
}

/* The variable asked for, after the tokens read so far. */
enum { T_ABSENT, T_STRING, T_ARRAY };

/* How a remembered value is decoded when it is written out. */
enum { DEC_NONE, DEC_RAWURL, DEC_URL };

typedef struct {
    int         type;
    int         dec;         /* DEC_*: how val and kval are decoded */
    size_t      val;         /* T_STRING: the raw value's offset */
    size_t      vlen;
    int         ktype;       /* T_ARRAY: its element `key` */
    size_t      kval;        /* its offset */
    size_t      kvlen;
    int         next_set;    /* T_ARRAY: next free index known */
    int64_t     next;
    int         has_max;     /* T_ARRAY: it holds the key INT64_MAX */
    int         fk_set;      /* T_ARRAY: its first key is known: */
    size_t      fk_len;
    char        fk[HL_PHP_KEY_MAX];   /* decoded, cut at HL_PHP_KEY_MAX */
} var_state_t;

/* Records the integer key h in the array (zend_hash's nNextFreeElement). */
static void add_int_key(var_state_t *st, int64_t h)
{
    if (!st->next_set || h >= st->next) {
        st->next = h < INT64_MAX ? h + 1 : INT64_MAX;
        st->next_set = 1;
    }
    if (h == INT64_MAX)
        st->has_max = 1;
}

/* Remembers the array's first key: the integer h when append is set, else
 * the key k1 of e, decoded from the name read by c. Cannot fail (a key
 * longer than HL_PHP_KEY_MAX is cut). */
static void first_key(var_state_t *st, const effect_t *e, const cursor_t *c,
                      int append, int64_t h)
{
    size_t pos = e->k1_pos, n = 0;
    uint64_t u;
    char digits[24];
    int i = 0;

    st->fk_set = 1;
    if (append) {
        u = h < 0 ? (uint64_t)0 - (uint64_t)h : (uint64_t)h;
        do {
            digits[i++] = (char)('0' + u % 10);
            u /= 10;
        } while (u);
        if (h < 0)
            digits[i++] = '-';
        while (i > 0)
            st->fk[n++] = digits[--i];
    } else {
        while (pos < e->k1_end && n < HL_PHP_KEY_MAX)
            st->fk[n++] = (char)(c->decode ? url_next(c->s, e->k1_end, &pos, 1)
                                           : hl_php_src_at(c->s, pos++));
    }
    st->fk_len = n;
}

/* Applies the effect e of a token whose name was read by c and whose raw
 * value is at offset val (vlen bytes) of the input; st keeps offsets. */
static void apply(var_state_t *st, const effect_t *e, const cursor_t *c,
                  int cookie, int key_int, int64_t key_val, size_t val,
                  size_t vlen)
{
    int hit, dec = st->dec;

    if (e->fx == FX_NONE)
        return;
    if (e->fx == FX_STRING) {
        if (cookie && st->type != T_ABSENT)   /* the first cookie wins */
            return;
        st->type = T_STRING;
        st->val = val;
        st->vlen = vlen;
        return;
    }
    if (st->type != T_ARRAY) {                /* a new, empty array */
        memset(st, 0, sizeof(*st));
        st->type = T_ARRAY;
        st->dec = dec;
    }
    if (e->el != EL_NONE) {
        if (e->append) {
            int64_t h = st->next_set ? st->next : 0;

            if (h == INT64_MAX && st->has_max)
                return;                       /* PHP cannot append: stops */
            add_int_key(st, h);
            hit = key_int && key_val == h;
            if (!st->fk_set)
                first_key(st, e, c, 1, h);
        } else {
            if (e->k1_int)
                add_int_key(st, e->k1_val);
            hit = e->is_key;
            if (!st->fk_set)
                first_key(st, e, c, 0, 0);
        }
        if (hit && e->el == EL_STRING) {
            st->ktype = T_STRING;
            st->kval = val;
            st->kvlen = vlen;
        } else if (hit) {
            st->ktype = T_ARRAY;
        }
    }
    if (e->del)
        st->type = T_ABSENT;
}

/* What is looked for: a variable, maybe one element of it. */
typedef struct {
    const char *name;
    const char *key;         /* NULL: the variable itself */
    int         key_int;     /* key is the integer key key_val */
    int64_t     key_val;
} want_t;

/* Fills w for name and key; returns -1 if name is NULL or "" or key is "". */
static int want_init(want_t *w, const char *name, const char *key)
{
    word_t kw;
    const char *q;

    if (name == NULL || name[0] == '\0' || (key != NULL && key[0] == '\0'))
        return -1;
    w->name = name;
    w->key = key;
    w->key_int = 0;
    w->key_val = 0;
    if (key != NULL) {
        word_init(&kw, NULL);
        for (q = key; *q; ++q)
            word_add(&kw, (unsigned char)*q);
        w->key_int = word_int(&kw, &w->key_val);
    }
    return 0;
}

/* Reads the tokens of input (a query string, a Cookie header or an
 * urlencoded body, as source says) into st, one token at a time. */
static void scan_tokens(var_state_t *st, hl_php_src_t *input,
                        hl_php_source_t source, const want_t *w)
{
    int cookie = source == HL_PHP_COOKIE, post = source == HL_PHP_POST;
    char sep = cookie ? ';' : '&';
    size_t p = 0, stop = input->len;
    long count = 0;

    memset(st, 0, sizeof(*st));
    st->dec = cookie ? DEC_RAWURL : DEC_URL;
    while (p < stop) {
        size_t tok, end, eq;
        int has_eq;
        cursor_t c;
        effect_t e;

        if (!post) {                          /* strtok: no empty tokens */
            while (p < stop && hl_php_src_at(input, p) == (unsigned char)sep)
                p++;
            if (p == stop)
                break;
        }
        tok = p;
        end = hl_php_src_find(input, tok, stop, sep);
        p = end < stop ? end + 1 : end;
        eq = hl_php_src_find(input, tok, end, '=');
        has_eq = eq < end;
        if (cookie) {
            while (tok < end && hl_php_is_space(hl_php_src_at(input, tok)))
                tok++;
            if (tok == end || (has_eq && tok == eq))
                continue;                     /* not counted */
        }
        /* $_GET counts before reading a token, $_POST after: PHP's POST
         * reader registers max_input_vars + 1 variables. */
        if (!post && ++count > HL_PHP_MAX_INPUT_VARS)
            break;
        c.s = input;
        c.n = has_eq ? eq : end;
        c.pos = tok;
        c.decode = !cookie;
        parse_name(c, w->name, w->key, &e);
        apply(st, &e, &c, cookie, w->key_int, w->key_val,
              has_eq ? eq + 1 : end, has_eq ? end - eq - 1 : 0);
        if (post && ++count > HL_PHP_MAX_INPUT_VARS)
            break;
    }
}

/* Writes the value at offset val of in (vlen raw bytes) decoded as dec says into out (outlen >= 2),
 * cut at outlen-1 bytes and NUL-terminated. Returns the bytes written. */
static long emit(char *out, size_t outlen, hl_php_src_t *in, size_t val,
                 size_t vlen, int dec)
{
    size_t pos = val, stop = val + vlen, n = 0;

    while (pos < stop && n < outlen - 1) {
        if (dec == DEC_NONE)
            out[n++] = (char)hl_php_src_at(in, pos++);
        else
            out[n++] = (char)url_next(in, stop, &pos, dec == DEC_URL);
    }
    out[n] = '\0';
    return (long)n;
}

/* Writes the result st holds for w (its values at offsets of in) into out: the variable, its element
 * w->key, or with array_key the first key of the array it is. Returns the
 * bytes written, or -1. */
static long result(char *out, size_t outlen, const var_state_t *st,
                   hl_php_src_t *in, const want_t *w, int array_key)
{
    if (w->key == NULL && st->type == T_STRING)
        return emit(out, outlen, in, st->val, st->vlen, st->dec);
    if (w->key != NULL && st->type == T_ARRAY && st->ktype == T_STRING)
        return emit(out, outlen, in, st->kval, st->kvlen, st->dec);
    if (w->key == NULL && array_key && st->type == T_ARRAY && st->fk_set) {
        hl_php_src_t fk = hl_php_mem_src(st->fk, st->fk_len);
        return emit(out, outlen, &fk, 0, st->fk_len, DEC_NONE);
    }
    return -1;
}

/* Returns -1 (and "" in out if outlen > 0) if absent, not a string,
 * outlen < 2, or an argument is NULL or "". Owns nothing. */
long hl_php_var(char *out, size_t outlen, const char *input,
                hl_php_source_t source, const char *name, const char *key)
{
    var_state_t st;
    want_t w;
    hl_php_src_t in;

    if (out != NULL && outlen > 0)
        out[0] = '\0';
    if (out == NULL || outlen < 2 || input == NULL
        || want_init(&w, name, key) < 0)
        return -1;
    in = hl_php_mem_src(input, strlen(input));
    scan_tokens(&st, &in, source, &w);
    return result(out, outlen, &st, &in, &w, 0);
}

/* Failure and ownership as hl_php_var. */
long hl_query_arg(char *out, size_t outlen, const char *query, const char *name)
{
    return hl_php_var(out, outlen, query, HL_PHP_GET, name, NULL);
}

/* Failure and ownership as hl_php_var. */
long hl_cookie_value(char *out, size_t outlen, const char *cookie_header,
                     const char *name)
{
    return hl_php_var(out, outlen, cookie_header, HL_PHP_COOKIE, name, NULL);
}

/* ---- multipart/form-data (main/rfc1867.c) ---- */

#define MP_MAX_UPLOADS   20                     /* max_file_uploads */
#define MP_UPLOAD_MAX    (2 * 1024 * 1024)      /* upload_max_filesize */
#define MP_PARTS_MAX     (HL_PHP_MAX_INPUT_VARS + MP_MAX_UPLOADS)

/* strtoll(value) as PHP reads MAX_FILE_SIZE: the value (at offset v of
 * in, vlen bytes) as a C string, white space and a sign first, saturating. */
static int64_t mp_strtoll(hl_php_src_t *in, size_t v, size_t vlen)
{
    size_t end = v + vlen;
    int neg = 0;
    uint64_t u = 0, lim;

    while (v < end && hl_php_is_space(hl_php_src_at(in, v)))
        v++;
    if (v < end && (hl_php_src_at(in, v) == '+' || hl_php_src_at(in, v) == '-'))
        neg = hl_php_src_at(in, v++) == '-';
    lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; v < end && hl_php_src_at(in, v) >= '0' && hl_php_src_at(in, v) <= '9'; ++v) {
        unsigned d = (unsigned)(hl_php_src_at(in, v) - '0');
        if (u > (lim - d) / 10)
            u = lim;
        else
            u = u * 10 + d;
    }
    if (neg)
        return u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
    return (int64_t)u;
}

/* Registers the text field name = the value at offset val of the body
 * (vlen bytes) into st. (PHP 8.2
 * registers it as sent: neither the normalization of rfc1867.c's
 * protected names nor their guard applies to text fields, as mod_php
 * shows; t/46-multipart-php.t checks both.) */
static void mp_register(var_state_t *st, const want_t *w, const char *name,
                        size_t val, size_t vlen)
{
    hl_php_src_t ns = hl_php_mem_src(name, strlen(name));
    cursor_t c;
    effect_t e;

    c.s = &ns;
    c.n = ns.len;
    c.pos = 0;
    c.decode = 0;
    parse_name(c, w->name, w->key, &e);
    apply(st, &e, &c, 0, w->key_int, w->key_val, val, vlen);
}

/* Reads the text fields of a multipart body (boundary b) into st as PHP's
 * rfc1867 handler registers them into $_POST, with PHP's defaults
 * (max_input_vars 1000, max_file_uploads 20, upload_max_filesize 2M,
 * max_multipart_body_parts -1). Borrows body; allocates (and frees) only
 * for a Content-Disposition over 2 KiB, at most mem_max bytes. Returns 0,
 * or -1 when out of memory or over mem_max (st then holds what was read so
 * far). */
static int scan_multipart(var_state_t *st, hl_php_src_t *body, const char *b,
                          const want_t *w, size_t mem_max)
{
    char delim[HL_PHP_BOUNDARY_MAX + 3], next[HL_PHP_BOUNDARY_MAX + 4];
    size_t blen = strlen(b), dlen = blen + 2, n, cdlen = 0, k, start, total;
    const char *line;
    long count = 0, parts_left = MP_PARTS_MAX, uploads_left = MP_MAX_UPLOADS;
    int64_t max_file_size = 0;
    int skip = 0;     /* rfc1867.c never clears skip_upload: once one file
                         part is skipped, every later one is too */
    int rc = 0;
    hl_mp_text_t cd, name;   /* a part's Content-Disposition; its name= */
    hl_mp_buf_t m;
    size_t len = body->len;

    memset(st, 0, sizeof(*st));
    st->dec = DEC_NONE;
    if (blen > HL_PHP_BOUNDARY_MAX)
        return 0;                         /* PHP: "Boundary too large" */
    hl_mp_text_init(&cd);
    hl_mp_text_init(&name);
    memcpy(delim, "--", 2);
    memcpy(delim + 2, b, blen + 1);
    next[0] = '\n';
    memcpy(next + 1, delim, dlen + 1);
    memset(&m, 0, offsetof(hl_mp_buf_t, buf));
    m.w = m.buf;
    m.body = body;
    m.len = len;
    m.size = blen + 6 > HL_MP_FILLUNIT ? blen + 6 : HL_MP_FILLUNIT;
    m.next = next;
    m.next_len = dlen + 1;

    while (!hl_mp_eof(&m)) {
        int header = 0, in_cd = 0, seen_cd = 0, cancel;
        hl_mp_disposition_t d;

        do {                              /* find_boundary */
            if (hl_mp_get_line(&m, &line, &n) < 0)
                goto done;
        } while (n != dlen || memcmp(line, delim, dlen) != 0);
        cdlen = 0;
        cd.p[0] = '\0';
        /* multipart_buffer_headers: the first Content-Disposition, with
         * the lines that continue it. */
        while (hl_mp_get_line(&m, &line, &n) == 0 && n > 0) {
            const char *colon = NULL, *s = line;

            if (!hl_php_is_space((unsigned char)line[0]))
                colon = memchr(line, ':', n);
            if (colon) {
                header = 1;
                in_cd = !seen_cd && colon - line == 19
                        && strncasecmp(line, "Content-Disposition", 19) == 0;
                if (!in_cd)
                    continue;
                seen_cd = 1;
                s = colon + 1;
                while (s < line + n && hl_php_is_space((unsigned char)*s))
                    s++;
            } else if (!header || !in_cd) {
                continue;
            }
            if (cdlen + (size_t)(line + n - s) + 1 > mem_max
                || hl_mp_text_reserve(&cd, cdlen + (size_t)(line + n - s) + 1,
                                   cdlen + 1) < 0) {
                rc = -1;
                goto done;
            }
            memcpy(cd.p + cdlen, s, (size_t)(line + n - s));
            cdlen += (size_t)(line + n - s);
            cd.p[cdlen] = '\0';
        }
        if (!seen_cd)
            continue;
        if (--parts_left < 0)
            goto done;
        if (hl_mp_text_reserve(&name, cdlen + 1, 0) < 0) {
            rc = -1;
            goto done;
        }
        hl_mp_disposition(cd.p, name.p, name.cap, &d);

        if (!d.has_file && d.has_name) {  /* a text field */
            start = m.begin;
            total = 0;
            while ((k = hl_mp_read(&m)) > 0)
                total += k;
            if (++count <= HL_PHP_MAX_INPUT_VARS)
                mp_register(st, w, name.p, start, total);
            if (strcasecmp(name.p, "MAX_FILE_SIZE") == 0)
                max_file_size = mp_strtoll(body, start, total);
            continue;
        }
        if (uploads_left <= 0)
            skip = 1;
        if (!d.has_name && !d.has_file)
            goto done;                    /* "Mime headers garbled" */
        if (!skip && d.has_name)          /* else a number: no brackets */
            skip = hl_mp_bad_brackets(name.p);
        if (skip)
            continue;                     /* its data is read as lines */
        cancel = d.file_empty;
        total = 0;
        k = 0;
        if (!cancel) {
            k = hl_mp_read(&m);
            uploads_left--;
        }
        while (!cancel && k > 0) {
            if (total + k > MP_UPLOAD_MAX
                || (max_file_size && (int64_t)(total + k) > max_file_size))
                cancel = 1;
            else
                total += k;
            k = hl_mp_read(&m);
        }
    }
done:
    hl_mp_text_free(&cd);
    hl_mp_text_free(&name);
    return rc;
}

/* Returns the form type; writes the boundary (or "") into boundary. */
hl_php_form_t hl_php_form_type(const char *content_type, char *boundary,
                               size_t boundary_size)
{
    static const char urlenc[] = "application/x-www-form-urlencoded";
    static const char multi[] = "multipart/form-data";
    const char *p, *bs, *be;
    size_t n;

    if (boundary != NULL && boundary_size > 0)
        boundary[0] = '\0';
    if (content_type == NULL)
        return HL_PHP_FORM_NONE;
    n = strcspn(content_type, ";, ");
    if (n == sizeof(urlenc) - 1 && strncasecmp(content_type, urlenc, n) == 0)
        return HL_PHP_FORM_URLENCODED;
    if (n != sizeof(multi) - 1 || strncasecmp(content_type, multi, n) != 0)
        return HL_PHP_FORM_NONE;
    /* rfc1867.c: strstr "boundary" (else the same without case: PHP
     * lowercases a copy and looks again), then '=', quoted or up to , or ; */
    p = strstr(content_type, "boundary");
    for (bs = content_type; p == NULL && *bs != '\0'; ++bs)
        if (strncasecmp(bs, "boundary", 8) == 0)
            p = bs;
    if (p == NULL || (p = strchr(p, '=')) == NULL)
        return HL_PHP_FORM_NONE;
    bs = p + 1;
    if (*bs == '"') {
        bs++;
        be = strchr(bs, '"');
        if (be == NULL)
            return HL_PHP_FORM_NONE;
    } else {
        be = bs + strcspn(bs, ",;");
    }
    n = (size_t)(be - bs);
    /* An empty boundary is one: PHP reads "--" lines as delimiters. */
    if (boundary == NULL || n >= boundary_size
        || n > HL_PHP_BOUNDARY_MAX)
        return HL_PHP_FORM_NONE;
    memcpy(boundary, bs, n);
    boundary[n] = '\0';
    return HL_PHP_FORM_MULTIPART;
}

/* Returns -1 (and "" in out if outlen > 0) if absent or on a bad argument;
 * HL_PHP_TOO_BIG or HL_PHP_READ_FAIL. Owns nothing. */
long hl_php_request_param_src(char *out, size_t outlen, const char *query,
                              hl_php_src_t *body, hl_php_form_t form,
                              const char *boundary, const char *name,
                              int array_key, size_t mem_max)
{
    var_state_t *g, *p, both[2];
    hl_php_src_t q;
    want_t w;
    int rc = 0;
    long n;

    if (out != NULL && outlen > 0)
        out[0] = '\0';
    if (out == NULL || outlen < 2 || want_init(&w, name, NULL) < 0)
        return -1;
    g = &both[0];
    p = &both[1];
    memset(g, 0, sizeof(*g));
    memset(p, 0, sizeof(*p));
    q = hl_php_mem_src(query ? query : "", query ? strlen(query) : 0);
    if (query != NULL)
        scan_tokens(g, &q, HL_PHP_GET, &w);
    if (body != NULL && form == HL_PHP_FORM_URLENCODED)
        scan_tokens(p, body, HL_PHP_POST, &w);
    else if (body != NULL && form == HL_PHP_FORM_MULTIPART && boundary != NULL)
        rc = scan_multipart(p, body, boundary, &w, mem_max);
    if (rc < 0 && mem_max != (size_t)-1)
        return HL_PHP_TOO_BIG;        /* in memory: what was read */
    /* request_order "GP": $_POST overwrites $_GET, arrays are merged (the
     * $_GET keys stay first). */
    if (p->type == T_ARRAY && g->type == T_ARRAY && g->fk_set)
        n = result(out, outlen, g, &q, &w, array_key);
    else if (p->type != T_ABSENT)
        n = result(out, outlen, p, body, &w, array_key);
    else
        n = result(out, outlen, g, &q, &w, array_key);
    if (body != NULL && body->failed) {
        out[0] = '\0';
        return HL_PHP_READ_FAIL;
    }
    return n;
}

/* Returns -1 (and "" in out if outlen > 0) if absent or on a bad argument.
 * Owns nothing. */
long hl_php_request_param(char *out, size_t outlen, const char *query,
                          const char *body, size_t body_len,
                          hl_php_form_t form, const char *boundary,
                          const char *name, int array_key)
{
    hl_php_src_t b = hl_php_mem_src(body, body_len);

    return hl_php_request_param_src(out, outlen, query, body ? &b : NULL,
                                    form, boundary, name, array_key,
                                    (size_t)-1);
}
