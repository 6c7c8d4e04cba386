/*
 * hl_fleet.c - one server's view of an attack as text, and the merge of
 * the other servers' refusals (see hl_fleet.h).
 *
 * Memory: the caller owns every buffer; nothing is allocated.
 */
#include <stdlib.h>
#include <string.h>

#include "hl_fleet.h"

#define HL_FLEET_MAGIC "hlv1\n"
#define HL_FLEET_WRITING UINT64_MAX   /* hl_banbook.c: being written */

void hl_fleet_bans_from_book(const hl_banbook_t *b, hl_fleet_view_t *v)
{
    uint64_t started = __atomic_load_n(&b->started, __ATOMIC_ACQUIRE), n;

    v->nbans = 0;
    for (n = started; n > 0 && started - n < HL_BANBOOK_MAX
                      && v->nbans < HL_FLEET_BANS; --n) {
        const hl_banbook_entry_t *e = &b->e[(n - 1) % HL_BANBOOK_MAX];
        hl_banbook_entry_t *out = &v->bans[v->nbans];

        if (__atomic_load_n(&e->stamp, __ATOMIC_ACQUIRE) != n)
            continue;   /* being written, or already reused */
        memset(out, 0, sizeof(*out));
        memcpy(out->key, e->key, sizeof(out->key) - 1);
        memcpy(out->line, e->line, sizeof(out->line) - 1);
        memcpy(out->rule, e->rule, sizeof(out->rule) - 1);
        out->since_ms = e->since_ms;
        out->refusals = __atomic_load_n(&e->refusals, __ATOMIC_RELAXED);
        /* Rewritten meanwhile: its texts may be torn. */
        if (__atomic_load_n(&e->stamp, __ATOMIC_ACQUIRE) == n)
            v->nbans++;
    }
}

/* ---- writing ---------------------------------------------------------- */

typedef struct {
    char  *p;
    size_t size, len;
    int    full;
} hl_out_t;

/* Appends n bytes of s as they are. */
static void put_raw(hl_out_t *o, const char *s, size_t n)
{
    if (o->full || o->size - o->len < n) {
        o->full = 1;
        return;
    }
    memcpy(o->p + o->len, s, n);
    o->len += n;
}

/* Appends a tab, then the text s (NUL-terminated, at most max bytes),
 * escaped. */
static void put_text(hl_out_t *o, const char *s, size_t max)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t i, n = strnlen(s, max);

    put_raw(o, "\t", 1);
    for (i = 0; i < n; ++i) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f || c == '%') {
            char esc[3] = { '%', hex[c >> 4], hex[c & 15] };
            put_raw(o, esc, 3);
        }
        else
            put_raw(o, s + i, 1);
    }
}

/* Appends a tab, then v in decimal. */
static void put_num(hl_out_t *o, uint64_t v)
{
    char digits[21];
    int i = (int)sizeof(digits);

    do {
        digits[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put_raw(o, "\t", 1);
    put_raw(o, digits + i, sizeof(digits) - (size_t)i);
}

size_t hl_fleet_encode(const hl_fleet_view_t *v, char *out, size_t size)
{
    hl_out_t o = { out, size, 0, 0 };
    int i;

    put_raw(&o, HL_FLEET_MAGIC, strlen(HL_FLEET_MAGIC));
    for (i = 0; i < v->nrefused && i < HL_FLEET_REFUSED; ++i) {
        const hl_refusal_rank_t *r = &v->refused[i];
        put_raw(&o, "r", 1);
        put_num(&o, r->now);
        put_num(&o, r->total);
        put_text(&o, r->key, sizeof(r->key) - 1);
        put_text(&o, r->route, sizeof(r->route) - 1);
        put_raw(&o, "\n", 1);
    }
    for (i = 0; i < v->nbans && i < HL_FLEET_BANS; ++i) {
        const hl_banbook_entry_t *b = &v->bans[i];
        put_raw(&o, "b", 1);
        put_num(&o, b->since_ms > 0 ? (uint64_t)b->since_ms : 0);
        put_num(&o, b->refusals);
        put_text(&o, b->key, sizeof(b->key) - 1);
        put_text(&o, b->line, sizeof(b->line) - 1);
        put_text(&o, b->rule, sizeof(b->rule) - 1);
        put_raw(&o, "\n", 1);
    }
    return o.full ? 0 : o.len;
}

/* ---- reading ---------------------------------------------------------- */

/* Returns the value of hex digit c, or -1. */
static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Reads the field f (n bytes) as a decimal that fits 64 bits into *v.
 * Returns 0, or -1. */
static int get_num(const char *f, size_t n, uint64_t *v)
{
    size_t i;

    if (n == 0 || n > 20)
        return -1;
    *v = 0;
    for (i = 0; i < n; ++i) {
        uint64_t d = (uint64_t)(f[i] - '0');
        if (f[i] < '0' || f[i] > '9' || *v > (UINT64_MAX - d) / 10)
            return -1;
        *v = *v * 10 + d;
    }
    return 0;
}

/* Reads the escaped field f (n bytes) into out (size bytes, NUL-
 * terminated). Returns 0, or -1 when it is badly escaped, holds a NUL or
 * does not fit. */
static int get_text(const char *f, size_t n, char *out, size_t size)
{
    size_t i, len = 0;

    for (i = 0; i < n; ++i) {
        int c = (unsigned char)f[i];
        if (c == '%') {
            if (n - i < 3 || hexval(f[i + 1]) < 0 || hexval(f[i + 2]) < 0)
                return -1;
            c = hexval(f[i + 1]) * 16 + hexval(f[i + 2]);
            i += 2;
        }
        if (c == 0 || len + 1 >= size)
            return -1;
        out[len++] = (char)c;
    }
    out[len] = '\0';
    return 0;
}

#define HL_FLEET_FIELDS 6

/* Splits the line s (n bytes, no newline) at its tabs into f[] and fl[].
 * Returns how many fields, at most HL_FLEET_FIELDS (-1: more). */
static int split(const char *s, size_t n, const char **f, size_t *fl)
{
    int k = 0;
    size_t start = 0, i;

    for (i = 0; i <= n; ++i)
        if (i == n || s[i] == '\t') {
            if (k == HL_FLEET_FIELDS)
                return -1;
            f[k] = s + start;
            fl[k++] = i - start;
            start = i + 1;
        }
    return k;
}

/* Reads one entry line (n bytes) into v. Skips it when it does not parse
 * or v is full. */
static void read_line(const char *s, size_t n, hl_fleet_view_t *v)
{
    const char *f[HL_FLEET_FIELDS];
    size_t fl[HL_FLEET_FIELDS];
    uint64_t a, b;
    int k = split(s, n, f, fl);

    if (k == 5 && fl[0] == 1 && f[0][0] == 'r' && v->nrefused < HL_FLEET_REFUSED
        && get_num(f[1], fl[1], &a) == 0 && a <= UINT32_MAX
        && get_num(f[2], fl[2], &b) == 0) {
        hl_refusal_rank_t *r = &v->refused[v->nrefused];
        if (get_text(f[3], fl[3], r->key, sizeof(r->key)) == 0 && r->key[0]
            && get_text(f[4], fl[4], r->route, sizeof(r->route)) == 0) {
            r->now = (uint32_t)a;
            r->total = b;
            v->nrefused++;
        }
    }
    else if (k == 6 && fl[0] == 1 && f[0][0] == 'b' && v->nbans < HL_FLEET_BANS
             && get_num(f[1], fl[1], &a) == 0 && a <= INT64_MAX
             && get_num(f[2], fl[2], &b) == 0) {
        hl_banbook_entry_t *e = &v->bans[v->nbans];
        memset(e, 0, sizeof(*e));
        if (get_text(f[3], fl[3], e->key, sizeof(e->key)) == 0 && e->key[0]
            && get_text(f[4], fl[4], e->line, sizeof(e->line)) == 0
            && get_text(f[5], fl[5], e->rule, sizeof(e->rule)) == 0) {
            e->since_ms = (int64_t)a;
            e->refusals = b;
            v->nbans++;
        }
    }
}

int hl_fleet_decode(const char *in, size_t len, hl_fleet_view_t *v)
{
    size_t m = strlen(HL_FLEET_MAGIC), at;

    v->nrefused = 0;
    v->nbans = 0;
    if (len < m || memcmp(in, HL_FLEET_MAGIC, m) != 0)
        return -1;
    for (at = m; at < len;) {
        const char *nl = memchr(in + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (in + at)) : len - at;
        read_line(in + at, n, v);
        at += n + 1;
    }
    return 0;
}

/* ---- merging ---------------------------------------------------------- */

/* qsort order of ranks: most refused now first, then most in all, then by
 * key (a stable page). */
static int most_first(const void *a, const void *b)
{
    const hl_refusal_rank_t *x = a, *y = b;

    if (x->now != y->now)
        return x->now > y->now ? -1 : 1;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* Returns a + b, held at the type's top. */
static uint32_t add32(uint32_t a, uint32_t b)
{
    return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

int hl_fleet_merge(hl_refusal_rank_t *rank, int n, int max,
                   const hl_refusal_rank_t *add, int nadd,
                   int (*keep)(const char *key, size_t len, void *baton),
                   void *baton)
{
    /* Room for every added key before the cut: the least refused go
     * after sorting, not before. */
    hl_refusal_rank_t all[HL_FLEET_MERGE_MAX + HL_FLEET_REFUSED];
    int i, j, total = n < 0 ? 0 : n;

    if (total > HL_FLEET_MERGE_MAX)
        total = HL_FLEET_MERGE_MAX;
    memcpy(all, rank, sizeof(*all) * (size_t)total);
    for (i = 0; i < nadd && i < HL_FLEET_REFUSED; ++i) {
        const hl_refusal_rank_t *a = &add[i];
        size_t len = strnlen(a->key, sizeof(a->key));

        if (a->now == 0 || len == 0 || len >= sizeof(a->key))
            continue;
        if (keep && !keep(a->key, len, baton))
            continue;
        for (j = 0; j < total && strcmp(all[j].key, a->key) != 0; ++j)
            ;
        if (j < total) {
            all[j].now = add32(all[j].now, a->now);
            all[j].total += a->total;
            if (!all[j].route[0])
                memcpy(all[j].route, a->route, sizeof(a->route));
        }
        else
            all[total++] = *a;
    }
    qsort(all, (size_t)total, sizeof(*all), most_first);
    if (total > max)
        total = max;
    memcpy(rank, all, sizeof(*all) * (size_t)total);
    return total;
}

const hl_banbook_entry_t *hl_fleet_find_ban(const hl_fleet_view_t *views,
                                            int n, const char *key)
{
    const hl_banbook_entry_t *found = NULL;
    int i, j;

    for (i = 0; i < n; ++i)
        for (j = 0; j < views[i].nbans; ++j) {
            const hl_banbook_entry_t *e = &views[i].bans[j];
            if (!strcmp(e->key, key) && (!found || e->since_ms > found->since_ms))
                found = e;
        }
    return found;
}
