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
            while ((ch = cur_next(&c)) != ']')
                word_add(&k, ch);
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

typedef struct {
    int         type;
    const char *val;         /* T_STRING: the raw value */
    size_t      vlen;
    int         ktype;       /* T_ARRAY: its element `key` */
    const char *kval;
    size_t      kvlen;
    int         next_set;    /* T_ARRAY: next free index known */
    int64_t     next;
    int         has_max;     /* T_ARRAY: it holds the key INT64_MAX */
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

/* Applies the effect e of a token whose raw value is val (vlen bytes);
 * st keeps pointers into the caller's input (borrowed, never freed). */
static void apply(var_state_t *st, const effect_t *e, int cookie,
                  int key_int, int64_t key_val, const char *val, size_t vlen)
{
    int hit;

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
    }
    if (e->el != EL_NONE) {
        if (e->append) {
            int64_t h = st->next_set ? st->next : 0;

            if (h == INT64_MAX && st->has_max)
                return;                       /* PHP cannot append: stops */
            add_int_key(st, h);
            hit = key_int && key_val == h;
        } else {
            if (e->k1_int)
                add_int_key(st, e->k1_val);
            hit = e->is_key;
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

/* Returns -1 (and "" in out if outlen > 0) if absent, not a string,
 * outlen < 2, or an argument is NULL or "". Owns nothing. */
long hl_php_var(char *out, size_t outlen, const char *input,
                hl_php_source_t source, const char *name, const char *key)
{
    int cookie = source == HL_PHP_COOKIE, key_int = 0;
    char sep = cookie ? ';' : '&';
    const char *p = input, *val;
    size_t vlen, pos = 0, n = 0;
    var_state_t st;
    int64_t key_val = 0;
    long count = 0;

    if (out != NULL && outlen > 0)
        out[0] = '\0';
    if (out == NULL || outlen < 2 || input == NULL || name == NULL
        || name[0] == '\0' || (key != NULL && key[0] == '\0'))
        return -1;
    if (key != NULL) {
        word_t kw;
        const char *q;

        word_init(&kw, NULL);
        for (q = key; *q; ++q)
            word_add(&kw, (unsigned char)*q);
        key_int = word_int(&kw, &key_val);
    }
    memset(&st, 0, sizeof(st));
    while (*p) {
        const char *tok, *end, *eq;
        cursor_t c;
        effect_t e;

        while (*p == sep)                     /* strtok: no empty tokens */
            p++;
        if (*p == '\0')
            break;
        tok = p;
        end = strchr(tok, sep);
        if (end == NULL)
            end = tok + strlen(tok);
        p = *end ? end + 1 : end;
        eq = memchr(tok, '=', (size_t)(end - tok));
        if (cookie) {
            while (tok < end && is_space((unsigned char)*tok))
                tok++;
            if (tok == end || tok == eq)
                continue;                     /* not counted */
        }
        if (++count > HL_PHP_MAX_INPUT_VARS)
            break;
        c.s = tok;
        c.n = (size_t)((eq ? eq : end) - tok);
        c.pos = 0;
        c.decode = !cookie;
        parse_name(c, name, key, &e);
        apply(&st, &e, cookie, key_int, key_val, eq ? eq + 1 : end,
              eq ? (size_t)(end - eq - 1) : 0);
    }
    if (key == NULL && st.type == T_STRING) {
        val = st.val;
        vlen = st.vlen;
    } else if (key != NULL && st.type == T_ARRAY && st.ktype == T_STRING) {
        val = st.kval;
        vlen = st.kvlen;
    } else {
        return -1;
    }
    while (pos < vlen && n < outlen - 1)
        out[n++] = (char)url_next(val, vlen, &pos, !cookie);
    out[n] = '\0';
    return (long)n;
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
