/*
 * hl_php.c - request variables read as PHP reads them (see hl_php.h).
 *
 * One pass over the input, no allocation. Each token's name is walked the
 * way php_register_variable_ex walks it (decoded on the fly; a ']' is
 * looked for ahead), and reduced to what the token does to the variable
 * asked for: set it to a string; make it an array and set, append or nest
 * its element `key`; delete it. That effect is applied to a small state
 * (the variable's type, its element `key`, its array's next free index).
 * Only the raw bytes of the value that wins are remembered; they are
 * decoded into out at the end.
 *
 * Not followed: an append ("a[k][]") into a nested array that already
 * holds the key PHP_INT_MAX fails in PHP and ends that token early, which
 * could spare `a` from the deletion of a name nested deeper than 64
 * levels; only the variable's own array is tracked.
 */
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include "hl_php.h"

/* Returns the value of hex digit c, or -1. */
static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/*
 * Returns the next byte (0..255) of the encoded text s (n bytes) at *pos,
 * which must be < n, and moves *pos past it: "%XX" is a byte, '+' a space
 * when plus is set (urldecode; rawurldecode without), and anything else,
 * a '%' not followed by two hex digits too, is itself.
 */
static int url_next(const char *s, size_t n, size_t *pos, int plus)
{
    size_t i = *pos;

    if (plus && s[i] == '+') {
        *pos = i + 1;
        return ' ';
    }
    if (s[i] == '%' && n - i >= 3
        && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
        *pos = i + 3;
        return hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]);
    }
    *pos = i + 1;
    return (unsigned char)s[i];
}

/* Returns 1 for the bytes C's isspace() accepts in the "C" locale. */
static int is_space(int c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* A variable name being read: raw bytes, urldecoded or not. */
typedef struct {
    const char *s;
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
                   : (unsigned char)c->s[c->pos++];
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
        if (is_space(ch))
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
    const char *val;         /* T_STRING: the raw value */
    size_t      vlen;
    int         ktype;       /* T_ARRAY: its element `key` */
    const char *kval;
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
                                           : (unsigned char)c->s[pos++]);
    }
    st->fk_len = n;
}

/* Applies the effect e of a token whose name was read by c and whose raw
 * value is val (vlen bytes); st keeps pointers into the caller's input
 * (borrowed, never freed). */
static void apply(var_state_t *st, const effect_t *e, const cursor_t *c,
                  int cookie, int key_int, int64_t key_val, const char *val,
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

/* Reads the tokens of input (len bytes: a query string, a Cookie header or
 * an urlencoded body, as source says) into st. Borrows input. */
static void scan_tokens(var_state_t *st, const char *input, size_t len,
                        hl_php_source_t source, const want_t *w)
{
    int cookie = source == HL_PHP_COOKIE, post = source == HL_PHP_POST;
    char sep = cookie ? ';' : '&';
    const char *p = input, *stop = input + len;
    long count = 0;

    memset(st, 0, sizeof(*st));
    st->dec = cookie ? DEC_RAWURL : DEC_URL;
    while (p < stop) {
        const char *tok, *end, *eq;
        cursor_t c;
        effect_t e;

        if (!post) {                          /* strtok: no empty tokens */
            while (p < stop && *p == sep)
                p++;
            if (p == stop)
                break;
        }
        tok = p;
        end = memchr(tok, sep, (size_t)(stop - tok));
        if (end == NULL)
            end = stop;
        p = end < stop ? end + 1 : end;
        eq = memchr(tok, '=', (size_t)(end - tok));
        if (cookie) {
            while (tok < end && is_space((unsigned char)*tok))
                tok++;
            if (tok == end || tok == eq)
                continue;                     /* not counted */
        }
        /* $_GET counts before reading a token, $_POST after: PHP's POST
         * reader registers max_input_vars + 1 variables. */
        if (!post && ++count > HL_PHP_MAX_INPUT_VARS)
            break;
        c.s = tok;
        c.n = (size_t)((eq ? eq : end) - tok);
        c.pos = 0;
        c.decode = !cookie;
        parse_name(c, w->name, w->key, &e);
        apply(st, &e, &c, cookie, w->key_int, w->key_val, eq ? eq + 1 : end,
              eq ? (size_t)(end - eq - 1) : 0);
        if (post && ++count > HL_PHP_MAX_INPUT_VARS)
            break;
    }
}

/* Writes val (vlen raw bytes) decoded as dec says into out (outlen >= 2),
 * cut at outlen-1 bytes and NUL-terminated. Returns the bytes written. */
static long emit(char *out, size_t outlen, const char *val, size_t vlen,
                 int dec)
{
    size_t pos = 0, n = 0;

    while (pos < vlen && n < outlen - 1) {
        if (dec == DEC_NONE)
            out[n++] = val[pos++];
        else
            out[n++] = (char)url_next(val, vlen, &pos, dec == DEC_URL);
    }
    out[n] = '\0';
    return (long)n;
}

/* Writes the result st holds for w into out: the variable, its element
 * w->key, or with array_key the first key of the array it is. Returns the
 * bytes written, or -1. */
static long result(char *out, size_t outlen, const var_state_t *st,
                   const want_t *w, int array_key)
{
    if (w->key == NULL && st->type == T_STRING)
        return emit(out, outlen, st->val, st->vlen, st->dec);
    if (w->key != NULL && st->type == T_ARRAY && st->ktype == T_STRING)
        return emit(out, outlen, st->kval, st->kvlen, st->dec);
    if (w->key == NULL && array_key && st->type == T_ARRAY && st->fk_set)
        return emit(out, outlen, st->fk, st->fk_len, DEC_NONE);
    return -1;
}

/* Returns -1 (and "" in out if outlen > 0) if absent, not a string,
 * outlen < 2, or an argument is NULL or "". Owns nothing. */
long hl_php_var(char *out, size_t outlen, const char *input,
                hl_php_source_t source, const char *name, const char *key)
{
    var_state_t st;
    want_t w;

    if (out != NULL && outlen > 0)
        out[0] = '\0';
    if (out == NULL || outlen < 2 || input == NULL
        || want_init(&w, name, key) < 0)
        return -1;
    scan_tokens(&st, input, strlen(input), source, &w);
    return result(out, outlen, &st, &w, 0);
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

/* A line of body from *pos: up to '\n' (excluded), a '\r' before it
 * dropped. Returns 0 and moves *pos past the '\n', or -1 when no '\n' is
 * left (PHP's get_line fails on a last line without one). */
static int next_line(const char *b, size_t len, size_t *pos,
                     const char **line, size_t *n)
{
    const char *nl = memchr(b + *pos, '\n', len - *pos);

    if (nl == NULL)
        return -1;
    *line = b + *pos;
    *n = (size_t)(nl - *line);
    if (*n > 0 && (*line)[*n - 1] == '\r')
        (*n)--;
    *pos = (size_t)(nl - b) + 1;
    return 0;
}

/* Returns the first occurrence of needle (nlen bytes) in hay (hlen bytes),
 * or NULL. */
static const char *find_bytes(const char *hay, size_t hlen, const char *needle,
                              size_t nlen)
{
    const char *p = hay, *stop = hay + hlen;

    while (nlen > 0 && (size_t)(stop - p) >= nlen
           && (p = memchr(p, needle[0], (size_t)(stop - p) - nlen + 1))) {
        if (memcmp(p, needle, nlen) == 0)
            return p;
        p++;
    }
    return NULL;
}

/* php_ap_memstr's partial match: returns the first position in the last
 * nlen-1 bytes of hay where the rest of hay is a prefix of needle, or
 * NULL. (At the end of the body PHP takes such a tail for a boundary.) */
static const char *partial_tail(const char *hay, size_t hlen,
                                const char *needle, size_t nlen)
{
    size_t i = hlen >= nlen ? hlen - nlen + 1 : 0;

    for (; i < hlen; ++i)
        if (memcmp(hay + i, needle, hlen - i) == 0)
            return hay + i;
    return NULL;
}

/* php_ap_getword: returns the end of the word at s (NUL-terminated) that
 * ends at `stop` outside quotes, or at the NUL. */
static const char *word_end(const char *s, char stop)
{
    char quote;

    while (*s && *s != stop) {
        if ((quote = *s) == '"' || quote == '\'') {
            ++s;
            while (*s && *s != quote)
                s += (*s == '\\' && s[1] == quote) ? 2 : 1;
            if (*s)
                ++s;
        } else {
            ++s;
        }
    }
    return s;
}

/* php_ap_getword_conf: copies the parameter value at s (up to end) into
 * out (outlen bytes), unquoted. Returns its length, or -1 if it does not
 * fit. */
static long conf_value(const char *s, const char *end, char *out, size_t outlen)
{
    char quote = 0;
    size_t n = 0;

    while (s < end && is_space((unsigned char)*s))
        s++;
    if (s < end && (*s == '"' || *s == '\''))
        quote = *s++;
    else {
        const char *t = s;
        while (t < end && !is_space((unsigned char)*t))
            t++;
        end = t;
    }
    for (; s < end && *s != quote; ++s) {
        if (*s == '\\' && s + 1 < end
            && (s[1] == '\\' || (quote && s[1] == quote)))
            ++s;
        if (n + 1 >= outlen)
            return -1;
        out[n++] = *s;
    }
    out[n] = '\0';
    return (long)n;
}

/* Reads a Content-Disposition value (cd, NUL-terminated) as rfc1867.c
 * does: writes its name= into name (namelen bytes) and sets *has_name, and
 * *has_file when it has a filename=. A name too long for the buffer is
 * treated as absent. */
static void disposition(const char *cd, char *name, size_t namelen,
                        int *has_name, int *has_file)
{
    *has_name = *has_file = 0;
    while (is_space((unsigned char)*cd))
        cd++;
    while (*cd) {
        const char *pair = cd, *pend = word_end(cd, ';'), *eq;

        cd = pend;
        while (*cd == ';')
            cd++;
        while (is_space((unsigned char)*cd))
            cd++;
        eq = memchr(pair, '=', (size_t)(pend - pair));
        if (eq == NULL)
            continue;
        {
            const char *kend = word_end(pair, '='), *v = kend;
            size_t klen = (size_t)(kend - pair);

            while (v < pend && *v == '=')
                v++;
            if (klen == 4 && strncasecmp(pair, "name", 4) == 0)
                *has_name = conf_value(v, pend, name, namelen) >= 0;
            else if (klen == 8 && strncasecmp(pair, "filename", 8) == 0)
                *has_file = 1;
        }
    }
}

#define MP_HEADER_MAX 2048   /* one part's Content-Disposition, kept */
#define MP_PARTS_MAX  (HL_PHP_MAX_INPUT_VARS + 20)  /* max_multipart_body_parts */

/* Reads the text fields of a multipart body (len bytes, boundary b) into
 * st as PHP's rfc1867 handler registers them into $_POST. Borrows body. */
static void scan_multipart(var_state_t *st, const char *body, size_t len,
                           const char *b, const want_t *w)
{
    char delim[HL_PHP_BOUNDARY_MAX + 3], next[HL_PHP_BOUNDARY_MAX + 4];
    char cd[MP_HEADER_MAX], name[MP_HEADER_MAX];
    size_t blen = strlen(b), pos = 0, n;
    const char *line;
    long count = 0, parts = 0;

    memset(st, 0, sizeof(*st));
    st->dec = DEC_NONE;
    if (blen == 0 || blen > HL_PHP_BOUNDARY_MAX)
        return;
    delim[0] = delim[1] = '-';
    memcpy(delim + 2, b, blen + 1);
    next[0] = '\n';
    memcpy(next + 1, delim, blen + 3);
    for (;;) {
        int in_cd = 0, seen_cd = 0, too_long = 0, has_name, has_file;
        size_t cdlen = 0;
        const char *val, *vend;

        do {                                  /* find_boundary */
            if (next_line(body, len, &pos, &line, &n) < 0)
                return;
        } while (n != blen + 2 || memcmp(line, delim, n) != 0);
        if (++parts > MP_PARTS_MAX)
            return;
        cd[0] = '\0';
        for (;;) {                            /* multipart_buffer_headers */
            const char *colon = NULL, *s, *nul;
            size_t m;

            if (next_line(body, len, &pos, &line, &n) < 0)
                break;
            if ((nul = memchr(line, '\0', n)) != NULL)   /* C strings */
                n = (size_t)(nul - line);
            if (n == 0)
                break;
            if (!is_space((unsigned char)line[0]))
                colon = memchr(line, ':', n);
            s = line;
            if (colon) {                      /* a new header */
                in_cd = !seen_cd && colon - line == 19
                        && strncasecmp(line, "Content-Disposition", 19) == 0;
                if (!in_cd)
                    continue;
                seen_cd = 1;
                s = colon + 1;
                while (s < line + n && is_space((unsigned char)*s))
                    s++;
            } else if (!in_cd) {              /* goes to another header */
                continue;
            }
            m = (size_t)(line + n - s);
            if (cdlen + m >= sizeof(cd)) {
                too_long = 1;
                continue;
            }
            memcpy(cd + cdlen, s, m);
            cdlen += m;
            cd[cdlen] = '\0';
        }
        if (!seen_cd || too_long)
            continue;                         /* skipped by find_boundary */
        disposition(cd, name, sizeof(name), &has_name, &has_file);
        if (!has_name && !has_file)
            return;                           /* "Mime headers garbled" */
        val = body + pos;
        vend = find_bytes(val, len - pos, next, blen + 3);
        if (vend == NULL)
            vend = partial_tail(val, len - pos, next, blen + 3);
        if (vend == NULL) {
            vend = body + len;
            pos = len;
        } else {
            pos = (size_t)(vend - body) + 1;
            if (vend > val && vend[-1] == '\r')
                vend--;
        }
        if (has_file || ++count > HL_PHP_MAX_INPUT_VARS)
            continue;
        {
            cursor_t c;
            effect_t e;

            c.s = name;
            c.n = strlen(name);
            c.pos = 0;
            c.decode = 0;
            parse_name(c, w->name, w->key, &e);
            apply(st, &e, &c, 0, w->key_int, w->key_val, val,
                  (size_t)(vend - val));
        }
    }
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
    if (n == 0 || boundary == NULL || n >= boundary_size
        || n > HL_PHP_BOUNDARY_MAX)
        return HL_PHP_FORM_NONE;
    memcpy(boundary, bs, n);
    boundary[n] = '\0';
    return HL_PHP_FORM_MULTIPART;
}

/* Returns -1 (and "" in out if outlen > 0) if absent or on a bad argument.
 * Owns nothing. */
long hl_php_request_param(char *out, size_t outlen, const char *query,
                          const char *body, size_t body_len,
                          hl_php_form_t form, const char *boundary,
                          const char *name, int array_key)
{
    var_state_t *g, *p, both[2];
    want_t w;

    if (out != NULL && outlen > 0)
        out[0] = '\0';
    if (out == NULL || outlen < 2 || want_init(&w, name, NULL) < 0)
        return -1;
    g = &both[0];
    p = &both[1];
    memset(g, 0, sizeof(*g));
    memset(p, 0, sizeof(*p));
    if (query != NULL)
        scan_tokens(g, query, strlen(query), HL_PHP_GET, &w);
    if (body != NULL && form == HL_PHP_FORM_URLENCODED)
        scan_tokens(p, body, body_len, HL_PHP_POST, &w);
    else if (body != NULL && form == HL_PHP_FORM_MULTIPART && boundary != NULL)
        scan_multipart(p, body, body_len, boundary, &w);
    /* request_order "GP": $_POST overwrites $_GET, arrays are merged (the
     * $_GET keys stay first). */
    if (p->type == T_ARRAY && g->type == T_ARRAY && g->fk_set)
        return result(out, outlen, g, &w, array_key);
    if (p->type != T_ABSENT)
        return result(out, outlen, p, &w, array_key);
    return result(out, outlen, g, &w, array_key);
}
